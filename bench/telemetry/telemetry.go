package telemetry

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Flavors of metrics a server exports.
const (
	FlavorVLLM     = "vllm"
	FlavorLlamaCpp = "llamacpp"
	FlavorSGLang   = "sglang"
	FlavorNone     = "none" // no /metrics (404), or none of the names this package knows
)

// Value is one reading that may be absent.
type Value struct {
	V  float64
	OK bool // the server exported it
}

// Ptr does return &V, or nil when absent (the shape of results' optional numbers).
func (v Value) Ptr() *float64 {
	if !v.OK {
		return nil
	}
	x := v.V
	return &x
}

func present(v float64) Value { return Value{V: v, OK: true} }

// Snapshot is one scrape of /metrics. Each value is the sum over all label sets of its metric
// (several models or engines on one server add up).
type Snapshot struct {
	At     time.Time
	Flavor string
	// Err is set when the scrape failed; every value is then absent.
	Err error

	Running Value // requests running (vllm:num_requests_running, llamacpp:requests_processing)
	Waiting Value // requests queued (vllm:num_requests_waiting, llamacpp:requests_deferred)
	// KVUsage is the KV cache in use, 0..1 (vllm:kv_cache_usage_perc, else gpu_cache_usage_perc).
	KVUsage Value
	// KVCapacityTokens is block_size × num_gpu_blocks (× context-parallel size) from
	// vllm:cache_config_info, summed over engines; BlockSize and NumGPUBlocks are from the
	// first label set.
	KVCapacityTokens Value
	BlockSize        int
	NumGPUBlocks     int

	Preemptions      Value // counter
	PrefixQueries    Value // counter, tokens looked up in the prefix cache
	PrefixHits       Value // counter, tokens found there
	GenerationTokens Value // counter
	PromptTokens     Value // counter
	SpecDrafts       Value // counter, speculative draft steps
	SpecDraftTokens  Value // counter
	SpecAccepted     Value // counter, accepted draft tokens
	// Finished counts the requests the server has ended, whatever the reason (a counter).
	Finished Value
	// SimLost is the built-in simulator's speedmatrix_sim_lost_seconds_total: the wall-clock
	// seconds of model time it skipped because the machine did not give it the CPU to keep its
	// step clock (a counter; absent for every other server).
	SimLost Value
	// SimBehind is its speedmatrix_sim_behind_seconds: how far its step clock lags the wall
	// clock now, tokens owed to come late (a gauge).
	SimBehind Value
	// SimLate is its speedmatrix_sim_late_seconds_total: the wall seconds by which its steps
	// handed out tokens after their scheduled end, summed over steps (a counter).
	SimLate Value
	// SimSpeedup is its speedmatrix_sim_speedup: how many times faster than its profile it
	// runs (a gauge).
	SimSpeedup Value
}

// names maps each Snapshot field to the metric names that feed it, first match wins.
type names struct {
	running, waiting, kvUsage, preempt, prefixQ, prefixH, gen, prompt, drafts, draftToks, accepted, finished []string
}

var vllmNames = names{
	running:   []string{"vllm:num_requests_running"},
	waiting:   []string{"vllm:num_requests_waiting"},
	kvUsage:   []string{"vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc"},
	preempt:   []string{"vllm:num_preemptions_total", "vllm:num_preemptions"},
	prefixQ:   []string{"vllm:prefix_cache_queries_total", "vllm:prefix_cache_queries", "vllm:gpu_prefix_cache_queries_total"},
	prefixH:   []string{"vllm:prefix_cache_hits_total", "vllm:prefix_cache_hits", "vllm:gpu_prefix_cache_hits_total"},
	gen:       []string{"vllm:generation_tokens_total", "vllm:generation_tokens"},
	prompt:    []string{"vllm:prompt_tokens_total", "vllm:prompt_tokens"},
	drafts:    []string{"vllm:spec_decode_num_drafts_total", "vllm:spec_decode_num_drafts"},
	draftToks: []string{"vllm:spec_decode_num_draft_tokens_total", "vllm:spec_decode_num_draft_tokens"},
	accepted:  []string{"vllm:spec_decode_num_accepted_tokens_total", "vllm:spec_decode_num_accepted_tokens"},
	finished:  []string{"vllm:request_success_total", "vllm:request_success"},
}

var llamaNames = names{
	running:   []string{"llamacpp:requests_processing"},
	waiting:   []string{"llamacpp:requests_deferred"},
	kvUsage:   []string{"llamacpp:kv_cache_usage_ratio"},
	gen:       []string{"llamacpp:tokens_predicted_total"},
	prompt:    []string{"llamacpp:prompt_tokens_total"},
	drafts:    []string{"llamacpp:spec_decode_num_drafts_total"},
	draftToks: []string{"llamacpp:spec_decode_num_draft_tokens_total"},
	accepted:  []string{"llamacpp:spec_decode_num_accepted_tokens_total"},
}

var sglangNames = names{
	running: []string{"sglang:num_running_reqs"},
	waiting: []string{"sglang:num_queue_reqs"},
	kvUsage: []string{"sglang:token_usage"},
	gen:     []string{"sglang:generation_tokens_total"},
	prompt:  []string{"sglang:prompt_tokens_total"},
}

// ErrParse wraps every failure to read the exposition text.
var ErrParse = errors.New("metrics text not parsable")

// Parse does read Prometheus text exposition from r into a Snapshot stamped at.
func Parse(r io.Reader, at time.Time) (Snapshot, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(r)
	if err != nil {
		return Snapshot{At: at, Flavor: FlavorNone}, fmt.Errorf("%w: %v", ErrParse, err)
	}
	return FromFamilies(fams, at), nil
}

// FromFamilies does map parsed metric families onto a Snapshot.
func FromFamilies(fams map[string]*dto.MetricFamily, at time.Time) Snapshot {
	s := Snapshot{At: at, Flavor: FlavorNone}
	var n names
	for name := range fams {
		switch {
		case strings.HasPrefix(name, "vllm:"):
			s.Flavor = FlavorVLLM
		case strings.HasPrefix(name, "llamacpp:") && s.Flavor != FlavorVLLM:
			s.Flavor = FlavorLlamaCpp
		case strings.HasPrefix(name, "sglang:") && s.Flavor == FlavorNone:
			s.Flavor = FlavorSGLang
		}
	}
	s.SimLost = sum(fams, []string{"speedmatrix_sim_lost_seconds_total"})
	s.SimBehind = sum(fams, []string{"speedmatrix_sim_behind_seconds"})
	s.SimSpeedup = sum(fams, []string{"speedmatrix_sim_speedup"})
	s.SimLate = sum(fams, []string{"speedmatrix_sim_late_seconds_total"})
	switch s.Flavor {
	case FlavorVLLM:
		n = vllmNames
		s.KVCapacityTokens, s.BlockSize, s.NumGPUBlocks = cacheConfig(fams["vllm:cache_config_info"])
	case FlavorLlamaCpp:
		n = llamaNames
	case FlavorSGLang:
		n = sglangNames
		s.KVCapacityTokens = sum(fams, []string{"sglang:max_total_num_tokens"})
	default:
		return s
	}
	s.Running = sum(fams, n.running)
	s.Waiting = sum(fams, n.waiting)
	s.KVUsage = sum(fams, n.kvUsage)
	s.Preemptions = sum(fams, n.preempt)
	s.PrefixQueries = sum(fams, n.prefixQ)
	s.PrefixHits = sum(fams, n.prefixH)
	s.GenerationTokens = sum(fams, n.gen)
	s.PromptTokens = sum(fams, n.prompt)
	s.SpecDrafts = sum(fams, n.drafts)
	s.SpecDraftTokens = sum(fams, n.draftToks)
	s.SpecAccepted = sum(fams, n.accepted)
	s.Finished = sum(fams, n.finished)
	if s.Flavor == FlavorLlamaCpp {
		// llama.cpp counts evaluated prompt tokens and cache-served ones apart: a prompt's
		// tokens are their sum, the cache hits the cached part.
		if cached := sum(fams, []string{"llamacpp:prompt_tokens_cached_total"}); cached.OK && s.PromptTokens.OK {
			s.PrefixHits = cached
			s.PrefixQueries = present(cached.V + s.PromptTokens.V)
		}
	}
	return s
}

// sum does add up every sample of the first family in candidates that exists.
func sum(fams map[string]*dto.MetricFamily, candidates []string) Value {
	for _, name := range candidates {
		f, ok := fams[name]
		if !ok || len(f.GetMetric()) == 0 {
			continue
		}
		total, any := 0.0, false
		for _, m := range f.GetMetric() {
			v, ok := sampleValue(m)
			if !ok {
				continue
			}
			total += v
			any = true
		}
		if any {
			return present(total)
		}
	}
	return Value{}
}

// sampleValue does read the value of a gauge, counter or untyped sample; NaN counts as absent.
func sampleValue(m *dto.Metric) (float64, bool) {
	var v float64
	switch {
	case m.Gauge != nil:
		v = m.GetGauge().GetValue()
	case m.Counter != nil:
		v = m.GetCounter().GetValue()
	case m.Untyped != nil:
		v = m.GetUntyped().GetValue()
	default:
		return 0, false
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, false
	}
	return v, true
}

// cpLabels are the cache_config_info labels that may hold a context-parallel size, first wins.
var cpLabels = []string{"context_parallel_size", "decode_context_parallel_size", "dcp_size", "cp_size"}

// cacheConfig does compute the KV capacity from vllm:cache_config_info's labels, summed over its
// label sets (one per engine).
func cacheConfig(f *dto.MetricFamily) (capacity Value, blockSize, numBlocks int) {
	if f == nil {
		return Value{}, 0, 0
	}
	total := 0.0
	found := false
	for _, m := range f.GetMetric() {
		labels := map[string]string{}
		for _, lp := range m.GetLabel() {
			labels[lp.GetName()] = lp.GetValue()
		}
		bs, err1 := strconv.Atoi(labels["block_size"])
		nb, err2 := strconv.Atoi(labels["num_gpu_blocks"])
		if err1 != nil || err2 != nil || bs <= 0 || nb <= 0 {
			continue
		}
		cp := 1
		for _, l := range cpLabels {
			if v, err := strconv.Atoi(labels[l]); err == nil && v > 1 {
				cp = v
				break
			}
		}
		if !found {
			blockSize, numBlocks = bs, nb
		}
		found = true
		total += float64(bs) * float64(nb) * float64(cp)
	}
	if !found {
		return Value{}, 0, 0
	}
	return present(total), blockSize, numBlocks
}
