// Package sim is the built-in simulated inference server: an OpenAI-compatible HTTP server that
// behaves like vLLM wherever a benchmark can observe it (streaming chunks and usage, /metrics
// with vLLM's names, /tokenize, /v1/models with max_model_len, error shapes), driven by a
// performance profile (sim/profile) through an engine model (sim/engine) stepped by one
// scheduler goroutine on an injectable clock, faster than real time with a speedup. It injects
// noise, slow-downs and faults (sim/inject) deterministically under a seed, which is how the
// benchmark client, the statistics and the bot are tested end to end without a GPU.
//
// It must not share code paths with the benchmark client (package bench) that would hide client
// bugs: it parses requests and writes streams with its own code, and nothing here measures.
package sim
