// Package profile defines the simulator's performance profiles: YAML files that say how fast a
// modelled server is (prefill rate by context, decode step time by batch and context, the API
// server's per-request work, speculative-decoding acceptance) and how its vLLM engine is
// configured (max_num_seqs, KV cache size, token budget). It embeds the shipped profiles, reads
// user files strictly (unknown keys are errors), converts a profile to an engine configuration,
// and fits a profile to a measured or imported results file. It must not run the engine or
// serve anything.
package profile
