package adaptive_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/speedmatrix/speedmatrix/adaptive"
	"github.com/speedmatrix/speedmatrix/results"
)

// TestCostModel checks the price of a rerun from the first pass's time budget: setup and the
// context's scout once, then per decode trial the window, drain and bookkeeping averaged over
// the trials and a readiness share ∝ concurrency × context; per prefill trial a request ∝ its
// context; plus the caller's overhead.
func TestCostModel(t *testing.T) {
	f := &results.File{Run: results.Run{SecondsPerMeasurement: 30, Budget: &results.Budget{
		SetupSeconds: 10, PrefillSeconds: 12, ReadinessSeconds: 36, WindowSeconds: 120, DrainSeconds: 8, OtherSeconds: 4,
	}}}
	// Four decode trials (8K × 1, 8K × 8, 32K × 1, 32K × 8): Σ C·ctx = 8K·9 + 32K·9 = 360K;
	// prefill requests at 8K and 32K: Σ ctx = 40K.
	for _, d := range []struct {
		ctx   string
		tok   int
		c     int
		trial int
	}{{"8K", 8192, 1, 1}, {"8K", 8192, 8, 1}, {"32K", 32768, 1, 1}, {"32K", 32768, 8, 1}} {
		f.Decode = append(f.Decode, results.DecodeCell{Context: d.tok, ContextLabel: d.ctx, Concurrency: d.c, Status: results.StatusValid})
	}
	f.Prefill = []results.PrefillCell{{Context: 8192, ContextLabel: "8K", Status: results.StatusValid}, {Context: 32768, ContextLabel: "32K", Status: results.StatusValid}}
	cost := adaptive.CostModel(f, time.Minute)
	sec := func(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
	perTrial := sec((120.0 + 8 + 4) / 4)                                                  // 33 s
	ready := func(cx int) time.Duration { return sec(36.0 / (360 * 1024) * float64(cx)) } // 0.1 ms per C·token
	scout := func(ctx int) time.Duration { return sec(12.0 / (40 * 1024) * float64(ctx)) }
	got := map[string]time.Duration{
		"decode/32K/8 × 3": cost("decode/32K/8", 3),
		"decode/8K/1 × 1":  cost("decode/8K/1", 1),
		"prefill/32K × 4":  cost("prefill/32K", 4),
		"bad cell × 2":     cost("decode/zz", 2),
	}
	want := map[string]time.Duration{
		"decode/32K/8 × 3": time.Minute + 10*time.Second + scout(32768) + 3*(perTrial+ready(8*32768)),
		"decode/8K/1 × 1":  time.Minute + 10*time.Second + scout(8192) + perTrial + ready(8192),
		"prefill/32K × 4":  time.Minute + 10*time.Second + 5*scout(32768),
		"bad cell × 2":     time.Minute + 10*time.Second + 2*perTrial,
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("CostModel (-want +got):\n%s", d)
	}
	// Without a time budget (an imported file): twice the window per trial.
	f.Run.Budget = nil
	if got, want := adaptive.CostModel(f, 0)("decode/8K/1", 2), 2*time.Minute; got != want {
		t.Errorf("imported file: %v, want %v", got, want)
	}
}
