package compare

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestHeavyTails checks the heavy-tail test of the history's null scores on 520 scores (52
// cells × 10 runs, the full matrix): normal scores pass at any scale, Student-t scores are
// caught, also when they are narrower than normal overall (scale 0.8), where the tail excess
// beyond ±2 alone misses most of them and the likelihood-ratio fit, free in its scale, does not;
// too few scores decide nothing.
func TestHeavyTails(t *testing.T) {
	draw := func(seed uint64, nu, scale float64) []float64 {
		r := rand.New(rand.NewPCG(seed, 1))
		out := make([]float64, 520)
		for i := range out {
			z := r.NormFloat64()
			if nu > 0 { // t_ν = z / √(χ²_ν/ν)
				var chi float64
				for range int(nu) {
					g := r.NormFloat64()
					chi += g * g
				}
				z /= math.Sqrt(chi / nu)
			}
			out[i] = scale * z
		}
		return out
	}
	cases := []struct {
		name      string
		nu, scale float64
		min, max  int // of 200 draws called heavy
	}{
		{"normal", 0, 1, 0, 6},
		{"normal, narrow", 0, 0.8, 0, 6},
		{"normal, wide", 0, 1.1, 0, 200}, // the excess test reads a wide normal as heavy: conservative
		{"t3", 3, 1, 198, 200},
		{"t3, narrow", 3, 0.8, 198, 200},
		{"t6, narrow", 6, 0.8, 190, 200}, // the tail excess alone: 104 of 200
	}
	for _, tc := range cases {
		hits := 0
		for seed := range uint64(200) {
			if heavyTails(draw(seed, tc.nu, tc.scale)) {
				hits++
			}
		}
		if hits < tc.min || hits > tc.max {
			t.Errorf("%s: heavy tails in %d of 200, want %d–%d", tc.name, hits, tc.min, tc.max)
		}
	}
	if heavyTails(draw(1, 3, 1)[:39]) || tailFit([]float64{0, 0, 0}) {
		t.Errorf("too few or degenerate scores decided heavy tails")
	}
}
