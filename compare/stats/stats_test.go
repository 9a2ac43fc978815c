package stats

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func near(t *testing.T, name string, got, want, tol float64) {
	t.Helper()
	if math.Abs(got-want) > tol {
		t.Errorf("%s = %.10g, want %.10g (±%g)", name, got, want, tol)
	}
}

// Reference values of R's wilcox.test.
func TestMannWhitneyR(t *testing.T) {
	// Hollander & Wolfe (1973), p. 69f: permeability of the human chorioamnion; the example of
	// R's ?wilcox.test. R: wilcox.test(x, y, alternative = "g") → W = 35, p-value = 0.1272
	// (exact: no ties, n < 50).
	hwx := []float64{0.80, 0.83, 1.89, 1.04, 1.45, 1.38, 1.91, 1.64, 0.73, 1.46}
	hwy := []float64{1.15, 0.88, 0.90, 0.74, 1.21}
	// https://endmemo.com/r/wilcoxon.php: x, y with ties → normal approximation with tie and
	// continuity correction. R: W = 51.5, p-value = 0.5966, and with y2: W = 0, p-value = 0.001364.
	emx := []float64{1, 5, 9, 24, 56, 21, 3, 7, 21, 4}
	emy := []float64{12, 15, 5, 9, 9, 14, 56, 22, 3, 7, 32, 5}
	emy2 := []float64{1233, 4356, 987, 39999, 1111, 200000}
	tests := []struct {
		name      string
		x, y      []float64
		alt       Alternative
		u, p, tol float64
		exact     bool
	}{
		{"H&W greater", hwx, hwy, Greater, 35, 0.1272, 5e-5, true},
		{"H&W two-sided", hwx, hwy, TwoSided, 35, 0.2544, 1e-4, true},
		{"H&W less", hwx, hwy, Less, 35, 1 - 0.1272 + 1.0/3003*cnt(t, hwx, hwy, 35), 1e-4, true},
		{"endmemo ties", emx, emy, TwoSided, 51.5, 0.5966, 5e-5, false},
		{"endmemo W=0", emx, emy2, TwoSided, 0, 0.001364, 5e-7, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := MannWhitney(tc.x, tc.y, tc.alt)
			if err != nil {
				t.Fatal(err)
			}
			near(t, "U", r.U, tc.u, 0)
			near(t, "p", r.P, tc.p, tc.tol)
			if r.Exact != tc.exact {
				t.Errorf("exact = %v, want %v", r.Exact, tc.exact)
			}
		})
	}
}

// cnt returns the number of the 3003 arrangements of the pooled H&W sample with U exactly u, by
// brute force: an independent check of the exact distribution.
func cnt(t *testing.T, x, y []float64, u float64) float64 {
	t.Helper()
	pooled := append(append([]float64(nil), x...), y...)
	n, m := len(pooled), len(x)
	var c float64
	var rec func(start int, chosen []int)
	rec = func(start int, chosen []int) {
		if len(chosen) == m {
			in := make([]bool, n)
			for _, i := range chosen {
				in[i] = true
			}
			var uu float64
			for i := range n {
				for j := range n {
					if in[i] && !in[j] && pooled[i] > pooled[j] {
						uu++
					}
				}
			}
			if uu == u {
				c++
			}
			return
		}
		for i := start; i < n; i++ {
			rec(i+1, append(chosen, i))
		}
	}
	rec(0, nil)
	return c
}

// The exact distribution matches brute-force enumeration for small samples.
func TestUCDFBruteForce(t *testing.T) {
	for n1 := 1; n1 <= 4; n1++ {
		for n2 := 1; n2 <= 4; n2++ {
			cdf := uCDF(n1, n2)
			// Enumerate subsets of {0..n1+n2-1} of size n1 as ranks of x.
			n := n1 + n2
			counts := make([]float64, n1*n2+1)
			var total float64
			for mask := 0; mask < 1<<n; mask++ {
				if popcount(mask) != n1 {
					continue
				}
				u := 0
				for i := range n {
					if mask>>i&1 == 1 {
						for j := range i {
							if mask>>j&1 == 0 {
								u++
							}
						}
					}
				}
				counts[u]++
				total++
			}
			var acc float64
			for u := range counts {
				acc += counts[u]
				near(t, "cdf", cdf[u], acc/total, 1e-12)
			}
		}
	}
}

func popcount(v int) int {
	c := 0
	for ; v > 0; v >>= 1 {
		c += v & 1
	}
	return c
}

func TestMannWhitneyErrors(t *testing.T) {
	if _, err := MannWhitney(nil, []float64{1}, TwoSided); err == nil {
		t.Error("empty x: want error")
	}
	if _, err := MannWhitney([]float64{math.NaN()}, []float64{1}, TwoSided); err == nil {
		t.Error("NaN: want error")
	}
	r, err := MannWhitney([]float64{2, 2}, []float64{2, 2, 2}, TwoSided)
	if err != nil || r.P != 1 {
		t.Errorf("all equal: got %+v, %v; want p = 1", r, err)
	}
}

// Reference values of R's p.adjust(p, method = "BH"), as printed in the documentation of CRAN
// package c212 (c212.BH.adjust.pvals, whose p_adj is p.adjust's BH): Mehrotra & Heyse (2004).
func TestAdjustBHR(t *testing.T) {
	p := []float64{0.135005, 0.010000, 0.001000, 0.005000, 0.153501, 0.020000, 0.0013, 0.0023,
		0.011, 0.023000, 0.016, 0.0109, 0.559111, 0.751986, 0.308339, 0.837154, 0.325882}
	got := AdjustBH(p)
	want := map[float64]float64{
		0.001: 0.01105000, 0.0013: 0.01105000, 0.0023: 0.01303333, 0.005: 0.02125000,
		0.01: 0.02671429, 0.0109: 0.02671429, 0.011: 0.02671429, 0.016: 0.03400000,
	}
	for i, v := range p {
		if w, ok := want[v]; ok {
			near(t, "BH", got[i], w, 5e-9)
		}
	}
	// By definition: the largest p-value is its own adjustment; every adjusted value is ≥ p.
	near(t, "max", got[15], 0.837154, 1e-12)
	for i := range p {
		if got[i] < p[i] {
			t.Errorf("adjusted %g < raw %g", got[i], p[i])
		}
	}
	// p.adjust(c(0.01, 0.02, 0.03, 0.04, 0.05), "BH") = 0.05 each.
	if diff := cmp.Diff([]float64{0.05, 0.05, 0.05, 0.05, 0.05}, AdjustBH([]float64{0.01, 0.02, 0.03, 0.04, 0.05}), cmpopts.EquateApprox(0, 1e-12)); diff != "" {
		t.Error(diff)
	}
	nan := AdjustBH([]float64{0.02, math.NaN(), 0.04})
	if !math.IsNaN(nan[1]) || math.Abs(nan[0]-0.04) > 1e-12 || math.Abs(nan[2]-0.04) > 1e-12 {
		t.Errorf("NaN handling: %v", nan)
	}
}

// Reference values of R's t.test(extra ~ group, data = sleep) (Welch Two Sample t-test, the
// example of ?t.test): t = -1.8608, df = 17.776, p-value = 0.07939, 95 percent confidence
// interval -3.3654832 0.2054832.
func TestWelchSleepR(t *testing.T) {
	g1 := []float64{0.7, -1.6, -0.2, -1.2, -0.1, 3.4, 3.7, 0.8, 0.0, 2.0}
	g2 := []float64{1.9, 0.8, 1.1, 0.1, -0.1, 4.4, 5.5, 1.6, 4.6, 3.4}
	r, err := WelchT(g1, g2, 0, TwoSided, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "t", r.T, -1.8608, 5e-5)
	near(t, "df", r.DF, 17.776, 5e-4)
	near(t, "p", r.P, 0.07939, 5e-6)
	near(t, "lo", r.CILow, -3.3654832, 5e-7)
	near(t, "hi", r.CIHigh, 0.2054832, 5e-7)
	if _, err := WelchT([]float64{1}, g2, 0, TwoSided, 0.95); err == nil {
		t.Error("one value: want error")
	}
}

// Reference values of R's qt and qnorm.
func TestQuantilesR(t *testing.T) {
	for _, tc := range []struct{ p, df, want float64 }{
		{0.975, 10, 2.228139},          // qt(0.975, 10)
		{0.975, 1, 12.706205},          // qt(0.975, 1)
		{0.95, 5, 2.015048},            // qt(0.95, 5)
		{0.995, 30, 2.749996},          // qt(0.995, 30)
		{0.975, math.Inf(1), 1.959964}, // qnorm(0.975)
	} {
		near(t, "qt", TQuantile(tc.p, tc.df), tc.want, 5e-6)
	}
}

// TOST agrees with its definition (the larger one-sided p-value) and with the 1 − 2α interval.
func TestTOST(t *testing.T) {
	g1 := []float64{0.7, -1.6, -0.2, -1.2, -0.1, 3.4, 3.7, 0.8, 0.0, 2.0}
	g2 := []float64{1.9, 0.8, 1.1, 0.1, -0.1, 4.4, 5.5, 1.6, 4.6, 3.4}
	e, _ := WelchEstimate(g1, g2)
	// With bounds ±4 the 90 % interval (about −3.05, −0.11) lies inside: equivalent at 5 %.
	p := e.TOST(-4, 4)
	lo := e.Test(-4, Greater, 0.9)
	hi := e.Test(4, Less, 0.9)
	near(t, "tost", p, math.Max(lo.P, hi.P), 1e-15)
	ci := e.Test(0, TwoSided, 0.90)
	inside := ci.CILow > -4 && ci.CIHigh < 4
	if (p <= 0.05) != inside {
		t.Errorf("TOST p %g disagrees with 90%% CI [%g, %g] inside ±4", p, ci.CILow, ci.CIHigh)
	}
	// Bounds ±2 do not contain the interval: not equivalent.
	if p2 := e.TOST(-2, 2); p2 <= 0.05 {
		t.Errorf("TOST(±2) = %g, want > 0.05", p2)
	}
	// Welch's lower one-sided p at mu = −1 equals pt((diff + 1)/se, df, lower = FALSE).
	want := TSurvival((e.Diff+1)/e.SE, e.DF)
	near(t, "one-sided", e.Test(-1, Greater, 0.95).P, want, 1e-15)
}

func TestSatterthwaite(t *testing.T) {
	inf := math.Inf(1)
	near(t, "known", Satterthwaite([]float64{1, 2}, []float64{inf, inf}), inf, 0)
	near(t, "one", Satterthwaite([]float64{1, 0}, []float64{4, inf}), 4, 1e-12)
	near(t, "two equal", Satterthwaite([]float64{1, 1}, []float64{4, 4}), 8, 1e-12)
}

func TestBatchMeans(t *testing.T) {
	x := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9}
	m, v, df, err := BatchMeans(x, 3)
	if err != nil {
		t.Fatal(err)
	}
	// Batch means 2, 5, 8: variance 9, over 3 batches → 3.
	near(t, "mean", m, 5, 1e-12)
	near(t, "var", v, 3, 1e-12)
	if df != 2 {
		t.Errorf("df = %d, want 2", df)
	}
	if _, _, _, err := BatchMeans([]float64{1, 2, 3}, 0); err != nil {
		t.Errorf("auto batches of 3 values: %v", err)
	}
	if _, _, _, err := BatchMeans([]float64{1}, 0); err == nil {
		t.Error("one value: want error")
	}
}

// The classic two-look boundaries (Jennison & Turnbull 2000, Tables 2.1 and 2.3; two-sided
// α = 0.05, equal group sizes): Pocock 2.178 at both looks; O'Brien–Fleming 2.797 then 1.977.
func TestSecondLookBoundary(t *testing.T) {
	c2, err := SecondLookBoundary(2.178, 0.05, 0.5)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "pocock c2", c2, 2.178, 2e-3)
	c2, err = SecondLookBoundary(2.797, 0.05, 0.5)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "obf c2", c2, 1.977, 2e-3)
	if _, err := SecondLookBoundary(1.9, 0.05, 0.5); err == nil {
		t.Error("first look spent everything: want error")
	}
	// Lan–DeMets O'Brien–Fleming-type spending at t = 1/2 gives c1 = z(1 − spent/2) = 1.96·√2.
	plan, err := PlanTwoLooks(0.05, 0.5, SpendOBrienFleming)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "obf-type c1", plan.C1, 1.959964*math.Sqrt2, 1e-5)
	// Pocock-type: α·ln(1 + (e − 1)/2) = 0.0310 at the first look.
	plan, err = PlanTwoLooks(0.05, 0.5, SpendPocock)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "pocock-type level1", plan.Level1, 0.05*math.Log(1+(math.E-1)/2), 1e-12)
	if plan.Level2 <= 0.05-plan.Level1 || plan.Level2 >= 0.05 {
		t.Errorf("level2 %g should exceed the Bonferroni rest %g (correlated looks) and stay below α", plan.Level2, 0.05-plan.Level1)
	}
	// The plan keeps the total at α.
	near(t, "total", plan.Level1+CrossSecond(plan.C1, plan.C2, math.Sqrt(0.5)), 0.05, 1e-6)
}
