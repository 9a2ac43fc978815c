package stats

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

// TestPairedEstimate checks the paired estimate against hand-computed values: the one-sample t
// of the differences (R: t.test(d)) when every pair ran in one order, and the two-period
// crossover (the mean of the two order groups' mean differences, pooled within-group variance,
// n − 2 degrees of freedom; R: t.test(dAB, −dBA, var.equal = TRUE) has the same t and twice the
// estimate) when both orders occur.
func TestPairedEstimate(t *testing.T) {
	tests := []struct {
		name                 string
		d                    []float64
		headFirst            []bool
		diff, se, df, period float64
		adjusted             bool
	}{
		// R: t.test(c(0.01, 0.03, 0.02, 0.04)) → mean 0.025, se = sd/2 = 0.0129099/2, df 3.
		{"one order", []float64{0.01, 0.03, 0.02, 0.04}, []bool{false, false, false, false}, 0.025, 0.012909944 / 2, 3, 0, false},
		// Base first: 0.02, 0.04, 0.03 (mean 0.03); head first: −0.01, 0, 0.01 (mean 0): Δ =
		// 0.015, period effect (the later block's gain) 0.015; pooled s² = 0.0004/4 = 1e-4,
		// Var(Δ) = 1e-4/4·(1/3 + 1/3) → se 0.0040825, df 4.
		{"crossover", []float64{0.02, -0.01, 0.04, 0, 0.03, 0.01}, []bool{false, true, false, true, false, true}, 0.015, 0.0040824829, 4, 0.015, true},
		// A linear drift that makes every later block 5 % slower, no change: the crossover
		// removes it entirely (Δ 0, se 0), the differences alone would swing ±0.05.
		{"pure drift", []float64{-0.05, 0.05, -0.05, 0.05}, []bool{false, true, false, true}, 0, 0, 2, -0.05, true},
		// Both orders but only two pairs: no degree of freedom left for a period effect.
		{"two pairs", []float64{0.01, 0.03}, []bool{false, true}, 0.02, 0.01, 1, 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := PairedEstimate(tc.d, tc.headFirst)
			if err != nil {
				t.Fatal(err)
			}
			near(t, "diff", r.Diff, tc.diff, 1e-12)
			near(t, "se", r.SE, tc.se, 1e-9)
			near(t, "df", r.DF, tc.df, 0)
			near(t, "period", r.Period, tc.period, 1e-12)
			if r.PeriodAdjusted != tc.adjusted || r.Pairs != len(tc.d) {
				t.Errorf("adjusted %v pairs %d, want %v %d", r.PeriodAdjusted, r.Pairs, tc.adjusted, len(tc.d))
			}
		})
	}
	// R: t.test(c(0.01, 0.03, 0.02, 0.04)) → t = 3.873, p-value = 0.03047.
	r, _ := PairedEstimate([]float64{0.01, 0.03, 0.02, 0.04}, nil)
	res := r.Test(0, TwoSided, 0.95)
	near(t, "t", res.T, 3.872983, 1e-6)
	near(t, "p", res.P, 0.03047, 5e-5)
	if _, err := PairedEstimate([]float64{0.1}, nil); !errors.Is(err, ErrTooFewSamples) {
		t.Errorf("one pair: err = %v, want ErrTooFewSamples", err)
	}
	if _, err := PairedEstimate([]float64{0.1, 0.2}, []bool{true}); err == nil {
		t.Error("orders of the wrong length: no error")
	}
}

// TestSignFlip checks the exact sign-flip permutation test against counts done by hand.
func TestSignFlip(t *testing.T) {
	tests := []struct {
		name string
		d    []float64
		p    float64
	}{
		// All four positive: only the all-plus and all-minus flips reach |Σ| = 10: 2/16.
		{"all positive", []float64{1, 2, 3, 4}, 2.0 / 16},
		// 1, 2, 3, −4: Σ = 2; flips with |Σ| ≥ 2: every sign vector but those summing to 0
		// (±(1 + 2 + 3 − 4)... enumerated: sums of ±1±2±3±4 are −10,−8,−6,−4,−4,−2,−2,0,0,2,2,4,4,6,8,10;
		// |s| ≥ 2 for 14 of 16.
		{"mixed", []float64{1, 2, 3, -4}, 14.0 / 16},
		{"seven pairs", []float64{1, 1, 1, 1, 1, 1, 1}, 2.0 / 128},
		{"zero", []float64{0, 0, 0}, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := SignFlip(tc.d)
			if err != nil {
				t.Fatal(err)
			}
			near(t, "p", p, tc.p, 1e-12)
		})
	}
	if _, err := SignFlip(make([]float64, MaxSignFlipPairs+1)); err == nil {
		t.Error("too many pairs: no error")
	}
	if _, err := SignFlip(nil); !errors.Is(err, ErrTooFewSamples) {
		t.Error("no pairs: want ErrTooFewSamples")
	}
}

// TestPairedEstimateLevel checks by simulation that the crossover estimate keeps its level under
// drift: with no change, a drift of 3 noise SDs per block and ABBA pairs, the 5 % test rejects
// in about 5 % of 4000 runs (binomial SE 0.34 %), and the one-sample t of the raw differences,
// which the drift inflates, would reject far less (it loses power, not level). With a change of
// two noise SDs the crossover detects it most of the time.
func TestPairedEstimateLevel(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	const runs, pairs = 4000, 6
	reject := func(change float64, adjust bool) float64 {
		n := 0
		for range runs {
			d := make([]float64, pairs)
			hf := make([]bool, pairs)
			for i := range d {
				hf[i] = i%2 == 1 // ABBA: pair 1 AB, pair 2 BA, …
				drift := 3.0     // the later block's gain
				if hf[i] {
					drift = -drift
				}
				d[i] = change + drift + r.NormFloat64()*math.Sqrt2
			}
			if !adjust {
				hf = nil
			}
			e, err := PairedEstimate(d, hf)
			if err != nil {
				t.Fatal(err)
			}
			if e.Test(0, TwoSided, 0.95).P <= 0.05 {
				n++
			}
		}
		return float64(n) / runs
	}
	level, raw, power := reject(0, true), reject(0, false), reject(2, true)
	t.Logf("no change: crossover rejects %.3f, raw differences %.3f; change of 2 SD: crossover detects %.3f", level, raw, power)
	if got := level; got < 0.04 || got > 0.06 {
		t.Errorf("crossover under drift, no change: rejects %.3f, want 0.05 ± 0.01", got)
	}
	if got := raw; got > 0.02 {
		t.Errorf("raw differences under drift: rejects %.3f, want far below 0.05 (the drift swamps them)", got)
	}
	if got := power; got < 0.6 {
		t.Errorf("crossover, change of 2 SD: detects %.3f, want most", got)
	}
}
