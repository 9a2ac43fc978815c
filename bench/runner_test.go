package bench

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/speedmatrix/speedmatrix/bench/benchtest"
	"github.com/speedmatrix/speedmatrix/results"
)

// steady is a fake server whose requests outlast the short windows of these tests, so the
// server runs exactly C requests throughout.
func steady() benchtest.Config {
	return benchtest.Config{MaxModelLen: 1 << 20, TTFT: 20 * time.Millisecond, TBT: 5 * time.Millisecond, ChunkTokens: 2}
}

// shortConfig is a one-cell run with a 600 ms window.
func shortConfig(c int) Config {
	cfg := testConfig([]int{1024}, []int{c}, 600*time.Millisecond, 1001)
	cfg.Timeouts.Readiness = 400 * time.Millisecond
	return cfg
}

// afterReady returns a /metrics override that reports the real counts until the window opens
// (open is set), and f(k) for the k-th report after that.
func afterReady(open *atomic.Bool, f func(k int) (running, waiting int)) func(int, int) (int, int) {
	var n atomic.Int64
	return func(run, wait int) (int, int) {
		if !open.Load() {
			return run, wait
		}
		return f(int(n.Add(1)))
	}
}

// windowWatch is a Progress that sets open while a decode window is open.
type windowWatch struct {
	noProgress
	open *atomic.Bool
}

func (w windowWatch) Phase(_ results.CellID, phase string) { w.open.Store(phase == PhaseWindow) }

// TestStatusFromMetrics drives each rule of the queued status through a fake /metrics and
// checks the cell's status and the rule that fired.
func TestStatusFromMetrics(t *testing.T) {
	const c = 4
	cases := []struct {
		name    string
		server  func(s *benchtest.Config, open *atomic.Bool)
		want    results.Status
		rule    string
		timeout bool
	}{
		{name: "valid", server: func(*benchtest.Config, *atomic.Bool) {}, want: results.StatusValid},
		{name: "server runs only half: real queueing", server: func(s *benchtest.Config, open *atomic.Bool) { s.MaxRunning = c / 2 },
			want: results.StatusQueued, rule: "requests waited while running stopped rising"},
		{name: "running never reaches C", server: func(s *benchtest.Config, open *atomic.Bool) {
			s.Metrics = func(run, wait int) (int, int) { return min(run, c-1), wait }
		}, want: results.StatusQueued, rule: "readiness timed out"},
		{name: "max running below C inside the window", server: func(s *benchtest.Config, open *atomic.Bool) {
			s.Metrics = afterReady(open, func(int) (int, int) { return c - 1, 0 })
		}, want: results.StatusQueued, rule: "max running below concurrency"},
		{name: "mean running below 0.95 C", server: func(s *benchtest.Config, open *atomic.Bool) {
			s.Metrics = afterReady(open, func(k int) (int, int) {
				if k%2 == 0 {
					return c, 0
				}
				return c / 2, 0
			})
		}, want: results.StatusQueued, rule: "mean running below 0.95 × concurrency"},
		{name: "waiting requests in two samples in a row", server: func(s *benchtest.Config, open *atomic.Bool) {
			s.Metrics = afterReady(open, func(k int) (int, int) {
				if k == 2 || k == 3 {
					return c, 1
				}
				return c, 0
			})
		}, want: results.StatusQueued, rule: "requests waiting"},
		// A restarted request waits a scheduler step before it is admitted: one sample that
		// sees it does not make the cell queued (issue 9).
		{name: "a waiting request in one sample", server: func(s *benchtest.Config, open *atomic.Bool) {
			s.Metrics = afterReady(open, func(k int) (int, int) {
				if k == 2 {
					return c, 1
				}
				return c, 0
			})
		}, want: results.StatusValid},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			scfg := steady()
			var open atomic.Bool
			tc.server(&scfg, &open)
			h := newHarness(t, scfg)
			h.runner.Progress = windowWatch{open: &open}
			f, err := h.runner.Run(context.Background(), shortConfig(c))
			if err != nil {
				t.Fatal(err)
			}
			if err := results.Validate(f); err != nil {
				t.Fatal(err)
			}
			cell := decodeCell(t, f, "1K", c)
			if cell.Status != tc.want {
				t.Fatalf("status %s (%s), want %s; log:\n%s", cell.Status, cell.Error, tc.want, h.logs.String())
			}
			logs := h.logs.String()
			if tc.rule != "" && !strings.Contains(logs, `rules="`+tc.rule+`"`) {
				t.Errorf("rule %q did not fire; log:\n%s", tc.rule, logs)
			}
			if tc.rule == "" && strings.Contains(logs, "cell queued") {
				t.Errorf("a queued rule fired for a valid cell; log:\n%s", logs)
			}
			if cell.TotalTokPerS == nil || len(cell.Trials[0].RunningSamples) < 3 {
				t.Errorf("a queued cell is measured anyway with its samples; got %+v", cell.DecodeMetrics)
			}
		})
	}
}

// TestOverCapacity checks that cells whose C·(context + max_tokens) exceeds the KV cache from
// vllm:cache_config_info are marked over_capacity, and that no request is sent for them.
func TestOverCapacity(t *testing.T) {
	scfg := steady()
	scfg.KVBlocks, scfg.BlockSize = 16, 256 // 4096 tokens
	h := newHarness(t, scfg)
	cfg := testConfig([]int{512, 1024}, []int{1, 2, 4}, 300*time.Millisecond, 101)
	f, err := h.runner.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := results.Validate(f); err != nil {
		t.Fatal(err)
	}
	want := map[string]results.Status{"512/1": "valid", "512/2": "valid", "512/4": "valid", "1K/1": "valid", "1K/2": "valid", "1K/4": "over_capacity"}
	for _, c := range f.Decode {
		key := c.ContextLabel + "/" + strconv.Itoa(c.Concurrency)
		if c.Status != want[key] {
			t.Errorf("cell %s: %s, want %s", key, c.Status, want[key])
		}
		delete(want, key)
	}
	if len(want) > 0 {
		t.Errorf("cells missing: %v", want)
	}
	if f.Server.KVCacheTokens != 4096 {
		t.Errorf("server kv_cache_tokens %d, want 4096", f.Server.KVCacheTokens)
	}

	// A plan of over-capacity cells only sends nothing but the warm-up.
	h2 := newHarness(t, scfg)
	cfg = testConfig([]int{1024}, []int{4, 8}, 300*time.Millisecond, 101)
	cfg.PrefillFromDecode = false
	f, err = h2.runner.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if n := h2.srv.Requests(); n != cfg.Warmup {
		t.Errorf("%d stream requests, want only the %d warm-up", n, cfg.Warmup)
	}
	if len(f.Decode) != 2 || f.Decode[0].Status != results.StatusOverCapacity || f.Decode[1].Status != results.StatusOverCapacity {
		t.Errorf("cells %+v, want two over capacity", f.Decode)
	}
}

// TestFaults checks that each kind of failed stream marks its cell error with the reason while
// the run goes on to the next cell.
func TestFaults(t *testing.T) {
	cases := []struct {
		name  string
		fault benchtest.Fault
		scout bool // fail the scout instead of a decode stream
		// stallAll applies the fault to every decode stream of the context.
		stallAll bool
		reason   string
	}{
		{name: "HTTP 500", fault: benchtest.FaultHTTP500, reason: "HTTP 500"},
		{name: "truncated body", fault: benchtest.FaultTruncate, reason: "stream"},
		{name: "repetition loop", fault: benchtest.FaultRepeat, reason: "repeat"},
		{name: "malformed chunk", fault: benchtest.FaultStreamJunk, reason: "malformed"},
		{name: "stalled streams", fault: benchtest.FaultStall, reason: "no output token arrived", stallAll: true},
		{name: "scout fails", fault: benchtest.FaultHTTP500, scout: true, reason: "scout request failed"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			scfg := steady()
			var n atomic.Int64
			scfg.Fault = func(_, promptTokens, maxTokens int) benchtest.Fault {
				if promptTokens != 1024 {
					return benchtest.FaultNone
				}
				if tc.scout && maxTokens == 1 {
					return tc.fault
				}
				if !tc.scout && maxTokens > 1 && (n.Add(1) == 2 || tc.stallAll) {
					return tc.fault
				}
				return benchtest.FaultNone
			}
			h := newHarness(t, scfg)
			// Requests end inside the window: the stream client checks for loops at the end.
			cfg := testConfig([]int{1024, 2048}, []int{2}, 500*time.Millisecond, 101)
			cfg.Timeouts.Readiness = 300 * time.Millisecond
			f, err := h.runner.Run(context.Background(), cfg)
			if err != nil {
				t.Fatalf("a failed cell ended the run: %v", err)
			}
			if err := results.Validate(f); err != nil {
				t.Fatal(err)
			}
			bad := decodeCell(t, f, "1K", 2)
			if bad.Status != results.StatusError || !strings.Contains(strings.ToLower(bad.Error), strings.ToLower(tc.reason)) {
				t.Errorf("1K×2: %s %q, want error with %q", bad.Status, bad.Error, tc.reason)
			}
			if bad.TotalTokPerS != nil {
				t.Errorf("a failed cell carries a throughput")
			}
			// Short requests turn over inside the window, which a loaded machine may show as
			// queued; what matters is that the run went on and measured the next cell.
			if good := decodeCell(t, f, "2K", 2); !good.Status.Measured() {
				t.Errorf("2K×2 after the failure: %s %q, want measured", good.Status, good.Error)
			}
			if tc.scout && (f.Prefill[0].Status != results.StatusError || f.Prefill[1].Status != results.StatusValid) {
				t.Errorf("prefill cells %+v, want 1K error and 2K valid", f.Prefill)
			}
			if f.Run.Partial {
				t.Errorf("run marked partial by a failed cell")
			}
		})
	}
}

// TestRunEndsEarly checks the ends of a run that cannot go on: a dead server (health failing,
// or connections refused) and an interruption; each returns the cells done so far, marked
// partial.
func TestRunEndsEarly(t *testing.T) {
	cases := []struct {
		name    string
		act     func(h *harness, cancel context.CancelFunc)
		want    error
		reason  string
		lastErr bool // the cell it happened in is recorded as an error
	}{
		{name: "engine dead: health 503", act: func(h *harness, _ context.CancelFunc) { h.srv.Kill() }, want: ErrServerDead, reason: "stopped answering", lastErr: true},
		{name: "connection refused", act: func(h *harness, _ context.CancelFunc) { go h.srv.Refuse() }, want: ErrServerDead, reason: "stopped answering", lastErr: true},
		{name: "interrupted", act: func(_ *harness, cancel context.CancelFunc) { cancel() }, want: ErrInterrupted, reason: "interrupted"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			scfg := steady()
			var h *harness
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var once atomic.Bool
			scfg.Fault = func(_, promptTokens, maxTokens int) benchtest.Fault {
				if promptTokens == 2048 && maxTokens > 1 && once.CompareAndSwap(false, true) {
					go func() {
						time.Sleep(100 * time.Millisecond)
						tc.act(h, cancel)
					}()
				}
				return benchtest.FaultNone
			}
			h = newHarness(t, scfg)
			var checkpoints atomic.Int64
			h.runner.Checkpoint = func(f *results.File) error {
				checkpoints.Add(1)
				return results.Validate(f)
			}
			cfg := testConfig([]int{1024, 2048, 4096}, []int{1}, 500*time.Millisecond, 1001)
			f, err := h.runner.Run(ctx, cfg)
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			if f == nil {
				t.Fatal("no results returned")
			}
			if err := results.Validate(f); err != nil {
				t.Fatal(err)
			}
			if !f.Run.Partial || !strings.Contains(f.Run.PartialReason, tc.reason) {
				t.Errorf("partial %v %q, want partial with %q", f.Run.Partial, f.Run.PartialReason, tc.reason)
			}
			if c := decodeCell(t, f, "1K", 1); c.Status != results.StatusValid {
				t.Errorf("the cell before the end: %s, want valid", c.Status)
			}
			for _, c := range f.Decode {
				if c.ContextLabel == "4K" {
					t.Errorf("cell 4K measured after the end")
				}
				if c.ContextLabel == "2K" && (!tc.lastErr || c.Status != results.StatusError) {
					t.Errorf("cell 2K: %s, want it recorded as error only for a dead server", c.Status)
				}
			}
			if checkpoints.Load() < 2 {
				t.Errorf("%d checkpoints, want one per cell", checkpoints.Load())
			}
		})
	}
}

// TestTrials checks that --trials repeats every cell, keeps each trial's raw samples and sums
// them in the cell, and that each prefill trial uses a prompt no cache holds.
func TestTrials(t *testing.T) {
	h := newHarness(t, steady())
	cfg := testConfig([]int{1024}, []int{2}, 400*time.Millisecond, 1001)
	cfg.Trials = 3
	f, err := h.runner.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := results.Validate(f); err != nil {
		t.Fatal(err)
	}
	cell := decodeCell(t, f, "1K", 2)
	if len(cell.Trials) != 3 {
		t.Fatalf("%d trials, want 3", len(cell.Trials))
	}
	sum, secs := 0, 0.0
	for _, tr := range cell.Trials {
		sum += *tr.OutputTokens
		secs += tr.WindowSeconds
		if len(tr.BinOutputTokens) != 2 || len(tr.Requests) < 2 {
			t.Errorf("trial without its raw samples: %d bins, %d requests", len(tr.BinOutputTokens), len(tr.Requests))
		}
	}
	if cell.Telemetry == nil || cell.Telemetry.Source != "server" || *cell.Telemetry.MaxRunning != 2 {
		t.Errorf("cell telemetry %+v, want the trials' combined, max running 2", cell.Telemetry)
	}
	if *cell.OutputTokens != sum || !within(*cell.TotalTokPerS, float64(sum)/secs, 1e-9, 0) {
		t.Errorf("cell output %d tokens at %.1f tok/s, trials sum to %d over %.3f s", *cell.OutputTokens, *cell.TotalTokPerS, sum, secs)
	}
	p := f.Prefill[0]
	if len(p.Trials) != 3 || *p.CompletedRequests != 3 {
		t.Errorf("prefill trials %d, want 3", len(p.Trials))
	}
	scouts := 0
	for _, r := range h.srv.RequestLog() {
		if r.MaxTokens == 1 {
			scouts++
		}
	}
	if scouts != 3+1 {
		t.Errorf("%d requests of max_tokens 1, want 3 scouts and the context's warm-up", scouts)
	}
}

// TestNoMetrics checks the degradation without /metrics: average active requests from the
// client's count, a note, readiness from the streams alone.
func TestNoMetrics(t *testing.T) {
	scfg := steady()
	scfg.NoMetrics = true
	h := newHarness(t, scfg)
	f, err := h.runner.Run(context.Background(), shortConfig(3))
	if err != nil {
		t.Fatal(err)
	}
	if err := results.Validate(f); err != nil {
		t.Fatal(err)
	}
	cell := decodeCell(t, f, "1K", 3)
	if cell.Status != results.StatusValid || !within(*cell.AvgActiveRequests, 3, 0.01, 0) || cell.Telemetry == nil || cell.Telemetry.Source != "client" {
		t.Errorf("cell %+v, want valid with 3 active requests counted by the client", cell.DecodeMetrics)
	}
	if f.Server.Metrics != "none" || !strings.Contains(strings.Join(f.Notes, "\n"), "no server metrics") {
		t.Errorf("server metrics %q, notes %q: want none with a note", f.Server.Metrics, f.Notes)
	}
}

// TestRaceManyStreams runs a cell of 128 streams for the race detector and the leak checks,
// without timing tolerances (TestAccuracy has those).
func TestRaceManyStreams(t *testing.T) {
	if testing.Short() {
		t.Skip("128 streams: skipped with -short")
	}
	h := newHarness(t, benchtest.Config{MaxModelLen: 1 << 20, TTFT: 100 * time.Millisecond, TBT: 20 * time.Millisecond, ChunkTokens: 5})
	cfg := testConfig([]int{1024}, []int{128}, time.Second, 51)
	f, err := h.runner.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := results.Validate(f); err != nil {
		t.Fatal(err)
	}
	cell := decodeCell(t, f, "1K", 128)
	if !cell.Status.Measured() || *cell.OutputTokens == 0 || *cell.CompletedRequests == 0 {
		t.Errorf("cell %s with %v", cell.Status, cell.DecodeMetrics)
	}
	if *cell.TotalTokPerS > 1.02*128**cell.PerRequestTokPerS {
		t.Errorf("total %.1f tok/s > C × per-request %.1f", *cell.TotalTokPerS, 128**cell.PerRequestTokPerS)
	}
}

// TestFinalUsageOnly checks a server that reports usage only at the end of a stream: tokens are
// still counted from usage (spread over the chunks), and the results say how.
func TestFinalUsageOnly(t *testing.T) {
	scfg := steady()
	scfg.FinalUsage = true
	scfg.ChunkTokens = 3
	h := newHarness(t, scfg)
	cfg := testConfig([]int{1024}, []int{2}, 500*time.Millisecond, 61)
	f, err := h.runner.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(f.Notes, "\n"), "usage only at the end") {
		t.Errorf("notes %q lack the one on final usage", f.Notes)
	}
	cell := decodeCell(t, f, "1K", 2)
	if !cell.Status.Measured() || *cell.CompletedRequests == 0 {
		t.Fatalf("cell %s with %d completed requests", cell.Status, deref(cell.CompletedRequests))
	}
	// A completed request's 61 tokens come from its final usage, not from its 21 chunks.
	for _, r := range cell.Trials[0].Requests {
		if r.Completed && r.TTFTMs != nil && r.OutputTokens != 61 {
			t.Errorf("a request wholly inside the window counted %d tokens in %d chunks, want 61", r.OutputTokens, r.Chunks)
		}
	}
}
