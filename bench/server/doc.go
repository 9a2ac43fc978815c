// Package server reads facts from an OpenAI-compatible inference server for the benchmark: the
// served models and their max_model_len (GET /v1/models), liveness (GET /health), the engine
// version (GET /version), llama.cpp's slots and context (GET /props), and the server's own
// tokenizer (POST /tokenize, /detokenize). It speaks vLLM's shapes and llama.cpp's where they
// differ, and reports a missing endpoint as ErrNotSupported so the caller can degrade with a
// note. It does no streaming (package bench/stream) and no /metrics scraping (bench/telemetry).
package server
