package compare

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/speedmatrix/speedmatrix/results"
)

// TestAcceptanceSamplingVar checks acceptanceSamplingVar against the spread of windows drawn
// from geometric acceptance: 2000 windows of 400 draft steps each, for several k and α.
func TestAcceptanceSamplingVar(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, tc := range []struct {
		k int
		a float64
	}{{1, 0.5}, {3, 0.8}, {7, 0.68}, {5, 0.3}} {
		const steps, windows = 400, 2000
		var logs []float64
		for range windows {
			accepted := 0
			for range steps {
				for range tc.k {
					if rng.Float64() >= tc.a {
						break
					}
					accepted++
				}
			}
			logs = append(logs, math.Log(1+float64(accepted)/steps))
		}
		want := varianceOf(logs)
		mu := 1.0 // the true mean length: 1 + Σ α^i
		for i := 1; i <= tc.k; i++ {
			mu += math.Pow(tc.a, float64(i))
		}
		tokens := int(math.Round(steps * mu))
		cell := &results.DecodeCell{}
		cell.OutputTokens = &tokens
		cell.Telemetry = &results.Telemetry{SpecAcceptanceLength: &mu, SpecAcceptancePct: ptr(100 * (mu - 1) / float64(tc.k))}
		got := acceptanceSamplingVar(cell)
		if math.Abs(got/want-1) > 0.1 {
			t.Errorf("k %d α %.2f: sampling variance %.4g, the windows' %.4g", tc.k, tc.a, got, want)
		}
	}
	if v := acceptanceSamplingVar(&results.DecodeCell{}); v != 0 {
		t.Errorf("a cell without telemetry: %g, want 0", v)
	}
}
