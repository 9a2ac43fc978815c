package results

import (
	"testing"
	"time"
)

// TestMeasurePriceRun checks the price of one run of several cells: the setup once, each
// context's warm-up (where the settings asked for one) and scout once however many of its
// cells are measured, then per trial a decode trial's mean window, drain and bookkeeping plus
// its readiness share, or a prefill request.
func TestMeasurePriceRun(t *testing.T) {
	f := &File{Run: Run{SecondsPerMeasurement: 30, Settings: &Settings{ContextWarmup: true}, Budget: &Budget{
		SetupSeconds: 14, WarmupSeconds: 4, PrefillSeconds: 10, ReadinessSeconds: 20, WindowSeconds: 60, DrainSeconds: 2, OtherSeconds: 2,
	}}}
	// Two decode trials (8K × 1, 32K × 1: Σ C·ctx = 40K) and prefill at 8K and 32K (Σ ctx = 40K):
	// 32 s a trial, 0.5 ms of readiness per C·token, 0.25 ms per prompt token, warm-up 2 s a
	// context, setup 10 s.
	f.Decode = []DecodeCell{{Context: 8192, ContextLabel: "8K", Concurrency: 1, Status: StatusValid}, {Context: 32768, ContextLabel: "32K", Concurrency: 1, Status: StatusValid}}
	f.Prefill = []PrefillCell{{Context: 8192, ContextLabel: "8K", Status: StatusValid}, {Context: 32768, ContextLabel: "32K", Status: StatusValid}}
	p := NewMeasurePrice(f)
	ready := func(c, ctx int) float64 { return 20.0 / (40 * 1024) * float64(c*ctx) }
	scout := func(ctx int) float64 { return 10.0 / (40 * 1024) * float64(ctx) }
	for _, tc := range []struct {
		name   string
		cells  []string
		trials int
		want   float64
	}{
		{"one decode cell", []string{"decode/8K/4"}, 3, 10 + 2 + scout(8192) + 3*(32+ready(4, 8192))},
		{"a row shares its context's scout and warm-up", []string{"decode/8K/1", "decode/8K/2", "prefill/8K"}, 2,
			10 + 2 + scout(8192) + 2*(32+ready(1, 8192)) + 2*(32+ready(2, 8192)) + 2*scout(8192)},
		{"two contexts", []string{"prefill/8K", "prefill/32K"}, 1, 10 + 2*2 + 2*scout(8192) + 2*scout(32768)},
		{"a cell that does not parse", []string{"decode/zz"}, 2, 10 + 2*32},
	} {
		got := p.Run(tc.cells, tc.trials)
		if want := seconds(tc.want); got.Round(time.Microsecond) != want.Round(time.Microsecond) {
			t.Errorf("%s: %v, want %v", tc.name, got, want)
		}
	}
	// Without a time budget (an imported file): twice the window per trial.
	f.Run.Budget = nil
	if got, want := NewMeasurePrice(f).Run([]string{"decode/8K/1", "prefill/8K"}, 2), 4*time.Minute; got != want {
		t.Errorf("imported file: %v, want %v", got, want)
	}
}
