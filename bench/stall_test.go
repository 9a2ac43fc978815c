package bench

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/speedmatrix/speedmatrix/bench/benchtest"
	"github.com/speedmatrix/speedmatrix/bench/telemetry"
	"github.com/speedmatrix/speedmatrix/results"
)

// stuckMetrics returns a /metrics override that reports at least one request running while
// stuck() says so, as a server whose engine stopped keeps its gauges where they were.
func stuckMetrics(stuck func() bool) func(int, int) (int, int) {
	return func(running, waiting int) (int, int) {
		if stuck() {
			return max(running, 1), waiting
		}
		return running, waiting
	}
}

// TestDrainOnHungServerProbes checks that a server which hangs in the middle of a run (its
// streams stop, its /metrics go on reporting a request running, /health answers) ends the run
// soon after the cell: the drain sees nothing move for the stall span, probes, gets no answer
// and ends the run as for a dead server, instead of waiting its whole timeout and then the next
// cell's readiness.
func TestDrainOnHungServerProbes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		scfg := steady()
		var hung atomic.Bool
		var once sync.Once
		scfg.Fault = func(_, promptTokens, maxTokens int) benchtest.Fault {
			if hung.Load() {
				return benchtest.FaultStall
			}
			if promptTokens == 1024 && maxTokens > 2 {
				once.Do(func() { time.AfterFunc(150*time.Millisecond, func() { hung.Store(true) }) })
			}
			return benchtest.FaultNone
		}
		scfg.Metrics = stuckMetrics(hung.Load)
		h := newHarnessSim(t, scfg)
		cfg := testConfig([]int{1024}, []int{1, 2}, 400*time.Millisecond, 1001)
		cfg.Timeouts.Drain = 20 * time.Second
		cfg.Timeouts.Readiness = 300 * time.Millisecond
		cfg.Timeouts.Probe = 300 * time.Millisecond
		cfg.Timeouts.Stall = 300 * time.Millisecond
		f, took := runDead(t, h, cfg, "hangs", "saying the server hangs")
		if f == nil || !f.Run.Partial {
			t.Fatal("want the partial results")
		}
		if limit := 2 * time.Second; took > limit {
			t.Errorf("the run took %v, want under %v: the drain must probe once nothing moved for 300ms", took, limit)
		}
	})
}

// TestDrainProbeAnsweredKeepsWaiting checks that a server whose /metrics show a request
// running long after the client's streams ended, with nothing else moving, is not judged hung
// when it answers the probe: the drain goes on waiting, and the run measures every cell.
func TestDrainProbeAnsweredKeepsWaiting(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		scfg := steady()
		var (
			mu         sync.Mutex
			stuckUntil time.Time
			probes     atomic.Int64
		)
		scfg.Fault = func(_, promptTokens, maxTokens int) benchtest.Fault {
			switch {
			case maxTokens == 2:
				probes.Add(1)
			case promptTokens == 1024 && maxTokens > 2:
				mu.Lock()
				if stuckUntil.IsZero() { // the first cell's request: stuck metrics for 2 s after it began
					stuckUntil = time.Now().Add(2 * time.Second)
				}
				mu.Unlock()
			}
			return benchtest.FaultNone
		}
		scfg.Metrics = stuckMetrics(func() bool {
			mu.Lock()
			defer mu.Unlock()
			return time.Now().Before(stuckUntil)
		})
		h := newHarnessSim(t, scfg)
		cfg := testConfig([]int{1024}, []int{1, 2}, 300*time.Millisecond, 1001)
		cfg.Timeouts.Drain = 20 * time.Second
		cfg.Timeouts.Probe = 2 * time.Second
		cfg.Timeouts.Stall = 200 * time.Millisecond
		f, err := h.runner.Run(context.Background(), cfg)
		if err != nil {
			t.Fatalf("run: %v", err)
		}
		for _, c := range []int{1, 2} {
			if cell := decodeCell(t, f, "1K", c); !cell.Status.Measured() {
				t.Errorf("1K×%d: %s %q, want measured", c, cell.Status, cell.Error)
			}
		}
		if probes.Load() == 0 {
			t.Error("no probe was sent: the drain never saw the stall")
		}
	})
}

// TestHungAtStartEndsAtWarmup checks that a server hung from the start (streams stall, /metrics
// frozen, /health answers) ends the run during the warm-up request, instead of after the
// warm-up's bound (Timeouts.Scout, 30 minutes by default).
func TestHungAtStartEndsAtWarmup(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		scfg := steady()
		scfg.Fault = func(int, int, int) benchtest.Fault { return benchtest.FaultStall }
		scfg.Metrics = stuckMetrics(func() bool { return true })
		h := newHarnessSim(t, scfg)
		cfg := testConfig([]int{1024}, []int{1}, 300*time.Millisecond, 1001)
		cfg.Timeouts.Scout = 20 * time.Second
		cfg.Timeouts.Probe = 300 * time.Millisecond
		cfg.Timeouts.Stall = 300 * time.Millisecond
		_, took := runDead(t, h, cfg, "warm-up", "after a warm-up request")
		if limit := time.Second; took > limit {
			t.Errorf("the run took %v, want under %v", took, limit)
		}
	})
}

// TestHungDuringReadinessEnds checks that a server that hangs as a cell's requests arrive ends
// the run during readiness, once nothing moved for the stall span and the probe got no answer,
// instead of after the readiness timeout, the window and the probe.
func TestHungDuringReadinessEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		scfg := steady()
		var decodes atomic.Int64
		var hung atomic.Bool
		scfg.Fault = func(_, promptTokens, maxTokens int) benchtest.Fault {
			if promptTokens == 1024 && maxTokens > 2 && decodes.Add(1) > 1 {
				hung.Store(true) // the second cell's first request
			}
			if hung.Load() {
				return benchtest.FaultStall
			}
			return benchtest.FaultNone
		}
		scfg.Metrics = stuckMetrics(hung.Load)
		h := newHarnessSim(t, scfg)
		// max_tokens large enough that the first cell's one stream never restarts inside its window.
		cfg := testConfig([]int{1024}, []int{1, 2}, 300*time.Millisecond, 100001)
		cfg.Timeouts.Readiness = 20 * time.Second
		cfg.Timeouts.Probe = 300 * time.Millisecond
		cfg.Timeouts.Stall = 300 * time.Millisecond
		f, took := runDead(t, h, cfg, "hangs", "saying the server hangs")
		if c := decodeCell(t, f, "1K", 1); c.Status != results.StatusValid {
			t.Errorf("1K×1: %s %q, want valid", c.Status, c.Error)
		}
		if c := decodeCell(t, f, "1K", 2); c.Status != results.StatusError || !strings.Contains(c.Error, "hangs") {
			t.Errorf("1K×2: %s %q, want an error saying the server hangs", c.Status, c.Error)
		}
		if limit := 2 * time.Second; took > limit {
			t.Errorf("the run took %v, want under %v", took, limit)
		}
	})
}

// TestStallWatch checks what counts as progress: a counter, the KV cache use, a fall of the
// requests held or the client's own tokens restart the span; a rise of requests held does not;
// servers other than vLLM, or without the KV cache use, are never judged.
func TestStallWatch(t *testing.T) {
	t0 := time.Unix(1000, 0)
	base := Sample{Kind: telemetry.FlavorVLLM, HasQueue: true, Running: 4, Waiting: 2, HasKVUsage: true, KVUsage: 0.5}
	with := func(f func(*Sample)) Sample { s := base; f(&s); return s }
	for _, tc := range []struct {
		name string
		next Sample
		own  int64
		want bool // stalled at t0 + 2 s, after base at t0 and t0 + 1 s
	}{
		{"nothing moves", base, 0, true},
		{"more requests arrive", with(func(s *Sample) { s.Waiting = 5 }), 0, true},
		{"a request ends", with(func(s *Sample) { s.Running = 3 }), 0, false},
		{"tokens generated", with(func(s *Sample) { s.Counters.GenerationTokens.V = 7 }), 0, false},
		{"prompt tokens", with(func(s *Sample) { s.Counters.PromptTokens.V = 7 }), 0, false},
		{"a prefill chunk", with(func(s *Sample) { s.KVUsage = 0.51 }), 0, false},
		{"the client's streams", base, 3, false},
		{"not vLLM", with(func(s *Sample) { s.Kind = telemetry.FlavorLlamaCpp }), 0, false},
		{"no KV cache use", with(func(s *Sample) { s.HasKVUsage = false }), 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newStallWatch(1500*time.Millisecond, t0)
			first := base
			if tc.next.Kind != base.Kind || !tc.next.HasKVUsage {
				first = tc.next
			}
			if w.observe(t0, first, 0) || w.observe(t0.Add(time.Second), first, 0) {
				t.Fatal("stalled before the span passed")
			}
			if got := w.observe(t0.Add(2*time.Second), tc.next, tc.own); got != tc.want {
				t.Errorf("stalled = %v, want %v", got, tc.want)
			}
		})
	}
}

// runDead runs cfg on h's server, which is to die: the error must be ErrServerDead and contain
// want (what the test expects it to say, why). It returns the results and the run's time, in
// the bubble's time where h's server is simulated.
func runDead(t *testing.T, h *harness, cfg Config, want, why string) (*results.File, time.Duration) {
	t.Helper()
	began := time.Now()
	f, err := h.runner.Run(context.Background(), cfg)
	took := time.Since(began)
	if !errors.Is(err, ErrServerDead) || !strings.Contains(err.Error(), want) {
		t.Fatalf("err = %v, want ErrServerDead %s", err, why)
	}
	return f, took
}
