package bench

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/speedmatrix/speedmatrix/bench/benchtest"
	"github.com/speedmatrix/speedmatrix/results"
)

// slowHealth is a ServerInfo whose /health answers after delay.
type slowHealth struct {
	ServerInfo
	delay time.Duration
	tries atomic.Int64
}

func (s *slowHealth) Health(ctx context.Context) error {
	s.tries.Add(1)
	select {
	case <-time.After(s.delay):
		return s.ServerInfo.Health(ctx)
	case <-ctx.Done():
		return ctx.Err()
	}
}

// TestHealthTimeout checks that /health slower than Timeouts.Health fails the start with a
// message naming the timeout and the tries, and that a longer Timeouts.Health lets it run.
func TestHealthTimeout(t *testing.T) {
	h := newHarness(t, steady())
	slow := &slowHealth{ServerInfo: h.runner.Server, delay: 300 * time.Millisecond}
	h.runner.Server = slow
	cfg := testConfig([]int{1024}, []int{1}, 300*time.Millisecond, 101)
	cfg.Timeouts.Health = 100 * time.Millisecond
	f, err := h.runner.Run(context.Background(), cfg)
	if f != nil || err == nil || !strings.Contains(err.Error(), "/health did not answer within 100ms (3 tries)") {
		t.Fatalf("file %v, err %v; want no file and an error saying /health did not answer within 100ms (3 tries)", f != nil, err)
	}
	if n := slow.tries.Load(); n != 3 {
		t.Errorf("%d tries, want 3", n)
	}
	cfg.Timeouts.Health = time.Second
	if _, err := h.runner.Run(context.Background(), cfg); err != nil {
		t.Errorf("with a 1s health timeout: %v", err)
	}
}

// TestRunStalledServerEnds checks a server whose streams stall while /health still answers:
// after the stalled cell one short probe request gets no answer, so the run ends as for a dead
// server (ErrServerDead, partial results), within the cell's timeouts, instead of going on
// cell after cell.
func TestRunStalledServerEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		scfg := steady()
		var hung atomic.Bool
		scfg.Fault = func(_, promptTokens, maxTokens int) benchtest.Fault {
			if promptTokens == 2048 && maxTokens > 1 {
				hung.Store(true)
			}
			if hung.Load() {
				return benchtest.FaultStall
			}
			return benchtest.FaultNone
		}
		h := newHarnessSim(t, scfg)
		cfg := testConfig([]int{1024, 2048, 4096}, []int{1}, 300*time.Millisecond, 1001)
		cfg.Timeouts.Readiness = 300 * time.Millisecond
		cfg.Timeouts.Probe = 300 * time.Millisecond
		began := time.Now()
		f, err := h.runner.Run(context.Background(), cfg)
		took := time.Since(began)
		if !errors.Is(err, ErrServerDead) || !strings.Contains(err.Error(), "2-token request") {
			t.Fatalf("err = %v, want ErrServerDead saying the probe request got no answer", err)
		}
		if f == nil || !f.Run.Partial {
			t.Fatal("want the partial results")
		}
		if err := results.Validate(f); err != nil {
			t.Fatal(err)
		}
		if c := decodeCell(t, f, "1K", 1); c.Status != results.StatusValid {
			t.Errorf("1K×1: %s, want valid", c.Status)
		}
		if c := decodeCell(t, f, "2K", 1); c.Status != results.StatusError || !strings.Contains(c.Error, "stalled") {
			t.Errorf("2K×1: %s %q, want error: stalled", c.Status, c.Error)
		}
		for _, c := range f.Decode {
			if c.ContextLabel == "4K" {
				t.Errorf("4K measured after the server stalled")
			}
		}
		// The 1K context, then at most readiness + window + probe for the stalled cell (+ margin),
		// in the bubble's time (1.6 s measured).
		if limit := 2500 * time.Millisecond; took > limit {
			t.Errorf("the run took %v, want under %v once the server stalled", took, limit)
		}
	})
}
