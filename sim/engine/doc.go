// Package engine is the simulator's model of a vLLM engine core: a scheduler stepping a virtual
// GPU with continuous batching, a paged KV cache with prefix caching, chunked prefill,
// preemption by recomputation and speculative decoding. It runs in virtual time: Step plans one
// engine step at a given instant and says how long it takes, and the caller decides when that
// is in real time. It does no I/O, starts no goroutines and knows nothing of HTTP or text; the
// sim package drives it from its scheduler loop, tests drive it directly.
package engine
