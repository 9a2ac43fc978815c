package sim

import (
	"bytes"
	"net/http"
	"strconv"
	"strings"
)

// LostMetric is the counter of /metrics in which the simulator reports the time it lost to a
// machine that could not keep up with it (the client checks it over each measurement).
const LostMetric = "speedmatrix_sim_lost_seconds_total"

// BehindMetric is the gauge of /metrics in which the simulator reports how far its step clock
// lags the wall clock now (a client compares it at a window's two ends)."
const BehindMetric = "speedmatrix_sim_behind_seconds"

// LateMetric is the counter of /metrics in which the simulator reports the wall time by which
// its steps handed out tokens after their scheduled end, summed over those steps: a client checks it
// over a prefill, whose TTFT it lengthens.
const LateMetric = "speedmatrix_sim_late_seconds_total"

// SpeedupMetric is the gauge of /metrics in which the simulator reports how many times faster
// than its profile it runs: a client learns from it the speed of the server it measures, for its
// time estimates and its advice when the machine cannot keep up.
const SpeedupMetric = "speedmatrix_sim_speedup"

// handleMetrics writes the engine's gauges and counters in the Prometheus text format with
// vLLM's metric names, help texts and label sets.
func (s *Server) handleMetrics(w http.ResponseWriter, _ *http.Request) {
	st := s.snapshot()
	var b bytes.Buffer
	model := labels("engine", "0", "model_name", s.prof.ServedModel)
	metric := func(name, typ, help string, value float64, lbl string) {
		b.WriteString("# HELP " + name + " " + help + "\n# TYPE " + name + " " + typ + "\n")
		sample(&b, name, lbl, value)
	}
	kv := s.prof.KVCache
	metric("vllm:cache_config_info", "gauge", "Information of the LLMEngine CacheConfig", 1, labels(
		"block_size", strconv.Itoa(kv.BlockSize),
		"cache_dtype", kv.Dtype,
		"enable_prefix_caching", "True",
		"engine", "0",
		"gpu_memory_utilization", "0.9",
		"num_cpu_blocks", "0",
		"num_gpu_blocks", strconv.Itoa(kv.NumGPUBlocks),
		"num_gpu_blocks_override", "None",
		"prefix_caching_hash_algo", "sha256",
		"sliding_window", "None",
	))
	metric("vllm:num_requests_running", "gauge", "Number of requests in model execution batches.", float64(st.Running), model)
	metric("vllm:num_requests_waiting", "gauge", "Number of requests waiting to be processed.", float64(st.Waiting), model)
	metric("vllm:kv_cache_usage_perc", "gauge", "KV-cache usage. 1 means 100 percent usage.", st.KVUsage(), model)
	metric("vllm:num_preemptions_total", "counter", "Cumulative number of preemption from the engine.", float64(st.Preemptions), model)
	metric("vllm:prefix_cache_queries_total", "counter", "Prefix cache queries, in terms of number of queried tokens.", float64(st.PrefixQueries), model)
	metric("vllm:prefix_cache_hits_total", "counter", "Prefix cache hits, in terms of number of cached tokens.", float64(st.PrefixHits), model)
	metric("vllm:prompt_tokens_total", "counter", "Number of prefill tokens processed.", float64(st.PromptTokens), model)
	metric("vllm:generation_tokens_total", "counter", "Number of generation tokens processed.", float64(st.GenerationTokens), model)
	b.WriteString("# HELP vllm:request_success_total Count of successfully processed requests.\n# TYPE vllm:request_success_total counter\n")
	for _, r := range []struct {
		reason string
		n      uint64
	}{{"abort", st.Aborted}, {"length", st.FinishedLength}, {"stop", st.FinishedStop}} {
		sample(&b, "vllm:request_success_total", labels("engine", "0", "finished_reason", r.reason, "model_name", s.prof.ServedModel), float64(r.n))
	}
	if s.prof.SpecDecode.NumSpeculativeTokens > 0 {
		metric("vllm:spec_decode_num_drafts_total", "counter", "Number of spec decoding drafts.", float64(st.SpecDrafts), model)
		metric("vllm:spec_decode_num_draft_tokens_total", "counter", "Number of draft tokens.", float64(st.SpecDraftTokens), model)
		metric("vllm:spec_decode_num_accepted_tokens_total", "counter", "Number of accepted tokens.", float64(st.SpecAccepted), model)
		b.WriteString("# HELP vllm:spec_decode_num_accepted_tokens_per_pos_total Accepted tokens per draft position.\n# TYPE vllm:spec_decode_num_accepted_tokens_per_pos_total counter\n")
		for i, n := range st.SpecAcceptedPerPos {
			sample(&b, "vllm:spec_decode_num_accepted_tokens_per_pos_total", labels("engine", "0", "model_name", s.prof.ServedModel, "position", strconv.Itoa(i)), float64(n))
		}
	}
	metric(LostMetric, "counter", "Wall-clock seconds of model time the simulator skipped because the machine did not let it keep its step clock (or a starve fault took): measurements over that time read the engine slower than it is.", float64(s.lost.Load())/1e9, "")
	metric(BehindMetric, "gauge", "Wall-clock seconds the simulator's step clock lags the wall clock while it has work: tokens owed, to come late (it catches up, or past 1 s skips ahead and counts the time lost).", s.behind().Seconds(), "")
	metric(LateMetric, "counter", "Wall-clock seconds by which the simulator's steps handed out their tokens after their scheduled end, summed over the steps that handed out tokens (a lag that lasts several steps counts in each): the machine kept its loop off the CPU, and times measured meanwhile (a prefill's TTFT) read that much longer.", float64(s.late.Load())/1e9, "")
	metric(SpeedupMetric, "gauge", "How many times faster than its profile the simulator runs (--sim-speedup): a second of the wall clock is this many seconds of the profile's.", s.cfg.Speedup, "")
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	_, _ = w.Write(b.Bytes())
}

// sample writes one sample line.
func sample(b *bytes.Buffer, name, lbl string, v float64) {
	b.WriteString(name)
	b.WriteString(lbl)
	b.WriteByte(' ')
	b.WriteString(strconv.FormatFloat(v, 'g', -1, 64))
	b.WriteByte('\n')
}

// labels formats label pairs as {k="v",…}, escaping values as the text format requires.
func labels(kv ...string) string {
	var b strings.Builder
	b.WriteByte('{')
	for i := 0; i+1 < len(kv); i += 2 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(kv[i])
		b.WriteString(`="`)
		b.WriteString(labelEscaper.Replace(kv[i+1]))
		b.WriteByte('"')
	}
	b.WriteByte('}')
	return b.String()
}

var labelEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
