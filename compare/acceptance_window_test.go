package compare_test

import (
	"math/rand/v2"
	"testing"

	"github.com/speedmatrix/speedmatrix/compare"
	"github.com/speedmatrix/speedmatrix/results"
)

// windowAcceptance draws the mean acceptance length of a window of steps draft steps of k draft
// tokens each, every position accepted with probability a once the one before was (geometric
// acceptance, as the simulator draws it), and returns the cell's telemetry as the client reads
// it from the server's counters: length, percentage accepted and the window's output tokens.
func windowAcceptance(rng *rand.Rand, k int, a float64, steps int) (length, pct float64, tokens int) {
	accepted := 0
	for range steps {
		for range k {
			if rng.Float64() >= a {
				break
			}
			accepted++
		}
	}
	length = 1 + float64(accepted)/float64(steps)
	return length, 100 * float64(accepted) / float64(steps*k), steps + accepted
}

// shortWindowFile is a run of one decode cell at 32K × 8 whose window held steps draft steps.
func shortWindowFile(rng *rand.Rand, id string, steps int, a, drop float64) *results.File {
	l, pct, tokens := windowAcceptance(rng, 7, a, steps)
	l *= 1 - drop
	cell := results.DecodeCell{Context: 32768, ContextLabel: "32K", Concurrency: 8, Status: results.StatusValid}
	m := &cell.DecodeMetrics
	r := 1 + 0.01*rng.NormFloat64() // the run's speed: runs of the history differ a little
	m.TotalTokPerS, m.PerRequestTokPerS, m.TTFTMs, m.TBTMs = f64(600*r), f64(75*r), f64(500/r), f64(13/r)
	m.OutputTokens = &tokens
	m.Telemetry = &results.Telemetry{SpecAcceptanceLength: f64(l), SpecAcceptancePct: f64(pct), Source: "server"}
	f := specFile([]results.DecodeCell{cell}, nil)
	f.Run.ID = id
	f.Engine.Commit = id
	return f
}

// TestAcceptanceOfAShortWindow: a head whose decode is four times slower (a real slowdown) holds
// a quarter of the draft steps in its window, so its mean acceptance length is twice as noisy as
// the history's runs'; with three runs of history (two degrees of freedom) the history's spread
// alone put the noise at a fraction of that, and an unchanged acceptance was flagged a regression
// beside the real one (bot_flow, once in a few runs on a loaded machine). The window's own
// sampling variance now floors the head's share: the 95 % interval of an unchanged acceptance
// leaves out no change about 5 % of the time (11.5 % before: the history's spread alone, a
// quarter of the head's noise), an unchanged acceptance is flagged rarely, and a real drop of
// 4δ is caught 85 % of the time in such a window (10 % before: its t quantile had the
// history's two degrees of freedom, where the head's noise is the model's).
func TestAcceptanceOfAShortWindow(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	const a = 0.68 // about 3 tokens per draft step of 7
	th := compare.DefaultThresholds()
	th.MinHistory = 3
	const n = 1000
	flagged, caught, missed := 0, 0, 0
	for i := range n {
		hist := []*results.File{shortWindowFile(rng, "h1", 2000, a, 0), shortWindowFile(rng, "h2", 2000, a, 0)}
		base := shortWindowFile(rng, "base", 2000, a, 0)
		for _, drop := range []float64{0, 4 * compare.DefaultAcceptanceDelta} {
			head := shortWindowFile(rng, "head", 500, a, drop)
			c, err := compare.Compare(compare.Input{Base: []*results.File{base}, Head: []*results.File{head}, History: append(hist, base)}, th)
			if err != nil {
				t.Fatal(err)
			}
			mc := find(t, c, "decode/32K/8", results.MetricSpecAcceptance)
			if i == 0 {
				t.Logf("drop %.0f %%: %s (%s), noise %s CV %.2f %%", 100*drop, mc.Verdict, mc.Reason, mc.Noise.Source, 100*mc.Noise.CV)
			}
			if drop == 0 && mc.Change != nil && (mc.Change.Low > 0 || mc.Change.High < 0) {
				missed++
			}
			switch {
			case drop == 0 && mc.Verdict == results.VerdictRegression:
				flagged++
			case drop > 0 && mc.Verdict == results.VerdictRegression:
				caught++
			}
		}
	}
	t.Logf("unchanged acceptance in a window of a quarter of the steps flagged %d of %d; a %.0f %% drop caught %d of %d", flagged, n, 400*compare.DefaultAcceptanceDelta, caught, n)
	t.Logf("unchanged acceptance: its 95 %% interval left out no change %d of %d times", missed, n)
	if missed > n*8/100 {
		t.Errorf("unchanged acceptance in a short window: the 95 %% interval left out no change %d of %d times, want at most 8 %%", missed, n)
	}
	if flagged > n/50 {
		t.Errorf("an unchanged acceptance in a short window was flagged a regression %d of %d times, want at most 2 %%", flagged, n)
	}
	if caught < n*8/10 {
		t.Errorf("a %.0f %% acceptance drop in a short window was caught %d of %d times, want at least 80 %%", 400*compare.DefaultAcceptanceDelta, caught, n)
	}
}
