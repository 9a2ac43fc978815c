// Package telemetry reads an inference server's Prometheus /metrics: it parses the text format
// with prometheus/common/expfmt, maps vLLM, llama.cpp and SGLang metric names onto one Snapshot
// (request counts, KV cache, preemptions, prefix cache, speculative decoding, token counters),
// computes what changed between two snapshots (Delta), and scrapes about once a second in a
// Scraper. A metric the server does not export is reported absent, never as zero, so the caller
// can fall back to a client-side estimate and say so. It makes no decision about cell status
// (that is the runner's) and keeps no history.
//
// # Names
//
// Every value is summed over all label sets of its metric (several engines or models). Counters
// are looked up with and without the _total suffix.
//
//	Snapshot field     vLLM                                      llama.cpp
//	Running            vllm:num_requests_running                 llamacpp:requests_processing
//	Waiting            vllm:num_requests_waiting                 llamacpp:requests_deferred
//	KVUsage            vllm:kv_cache_usage_perc (0..1), else     llamacpp:kv_cache_usage_ratio
//	                   vllm:gpu_cache_usage_perc
//	KVCapacityTokens   vllm:cache_config_info labels block_size × num_gpu_blocks
//	                   (× context-parallel size), summed over engines
//	Preemptions        vllm:num_preemptions_total                absent
//	PrefixQueries      vllm:prefix_cache_queries_total           prompt_tokens_total + prompt_tokens_cached_total
//	PrefixHits         vllm:prefix_cache_hits_total              llamacpp:prompt_tokens_cached_total
//	GenerationTokens   vllm:generation_tokens_total              llamacpp:tokens_predicted_total
//	PromptTokens       vllm:prompt_tokens_total                  llamacpp:prompt_tokens_total
//	SpecDrafts         vllm:spec_decode_num_drafts_total         llamacpp:spec_decode_num_drafts_total
//	SpecDraftTokens    vllm:spec_decode_num_draft_tokens_total   llamacpp:spec_decode_num_draft_tokens_total
//	SpecAccepted       vllm:spec_decode_num_accepted_tokens_total llamacpp:spec_decode_num_accepted_tokens_total
//	Finished           vllm:request_success_total (every           absent
//	                   finished_reason: stop, length, abort)
//
// SGLang: sglang:num_running_reqs, sglang:num_queue_reqs, sglang:token_usage,
// sglang:max_total_num_tokens (capacity) and its token counters. A server without /metrics
// (Ollama answers 404) or with none of these names is FlavorNone.
package telemetry
