package bench

import (
	"context"
	"testing"
	"time"

	"github.com/speedmatrix/speedmatrix/bench/benchtest"
	"github.com/speedmatrix/speedmatrix/results"
)

// TestBudgetAdmission checks the split of readiness into the server's admission and the
// client's decision: a server that starts requests one at a time (100 ms each) is charged for
// the ramp, a queued cell for the rise of its running count, and a readiness that timed out
// (no metrics) for nothing.
func TestBudgetAdmission(t *testing.T) {
	serial := steady()
	serial.TTFT, serial.SerialPrefill = 100*time.Millisecond, true
	queued := steady()
	queued.MaxRunning = 2
	blind := queued
	blind.NoMetrics = true
	for _, tc := range []struct {
		name             string
		scfg             benchtest.Config
		status           results.Status
		minAdm, maxAdm   time.Duration // bounds of the admission
		maxDecide        time.Duration // readiness − admission at most
		readinessTimeout time.Duration
	}{
		{"valid, serial server", serial, results.StatusValid, 350 * time.Millisecond, time.Second, 150 * time.Millisecond, 5 * time.Second},
		{"queued", queued, results.StatusQueued, 10 * time.Millisecond, 500 * time.Millisecond, time.Second, 5 * time.Second},
		{"no metrics, timed out", blind, results.StatusQueued, 0, 0, time.Second, 300 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, f, cell := runFourStreams(t, tc.scfg, tc.readinessTimeout)
			if cell.Status != tc.status {
				t.Fatalf("status %s, want %s; log:\n%s", cell.Status, tc.status, h.logs.String())
			}
			b := f.Run.Budget
			adm := time.Duration(b.AdmissionSeconds * float64(time.Second))
			ready := time.Duration(b.ReadinessSeconds * float64(time.Second))
			if adm < tc.minAdm || adm > tc.maxAdm || adm > ready || ready-adm > tc.maxDecide {
				t.Errorf("admission %v of readiness %v; want admission in [%v, %v] and the rest ≤ %v", adm, ready, tc.minAdm, tc.maxAdm, tc.maxDecide)
			}
			want := b.WallSeconds / (b.WindowSeconds + b.PrefillSeconds + b.WarmupSeconds + b.AdmissionSeconds)
			if !within(b.WallPerServerBound, want, 1e-9, 0) {
				t.Errorf("wall per server bound %g, want %g: %+v", b.WallPerServerBound, want, b)
			}
		})
	}
}

// TestBudgetWarmup checks that the context warm-up requests are counted apart (inside setup)
// when they are sent, and not at all when they are not.
func TestBudgetWarmup(t *testing.T) {
	for _, on := range []bool{true, false} {
		h := newHarness(t, steady())
		cfg := testConfig([]int{1024, 2048}, []int{1}, 200*time.Millisecond, 1001)
		cfg.ContextWarmup = on
		f, err := h.runner.Run(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		b := f.Run.Budget
		switch {
		case on && (b.WarmupSeconds < 0.04 || b.WarmupSeconds >= b.SetupSeconds):
			t.Errorf("warm-up on: warm-up %g s, setup %g s; want two 20 ms prefills inside setup", b.WarmupSeconds, b.SetupSeconds)
		case !on && b.WarmupSeconds != 0:
			t.Errorf("warm-up off: warm-up %g s, want 0", b.WarmupSeconds)
		}
		if err := results.Validate(f); err != nil {
			t.Error(err)
		}
	}
}
