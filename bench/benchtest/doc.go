// Package benchtest is a scripted OpenAI-compatible server for tests of the benchmark runner:
// it streams tokens on its own clock at exactly the injected time to first token and time
// between tokens, in chunks of a set number of tokens with continuous usage, serves vLLM-style
// /metrics, /health, /version, /v1/models, /tokenize and /detokenize, and injects faults. It
// logs every chunk it sends, so a test can compute the truth of any window. It models no
// engine (that is package sim); it must not be used outside tests and tools that test.
package benchtest
