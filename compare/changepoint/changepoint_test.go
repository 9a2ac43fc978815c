package changepoint

import (
	stdcmp "cmp"
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// delta is the throughput δ of package compare (3 %) that the synthetic series are measured in.
const delta = 0.03

// noiseKind draws one relative error.
type noiseKind func(r *rand.Rand) float64

// gaussian is normal noise with a CV of cv.
func gaussian(cv float64) noiseKind {
	return func(r *rand.Rand) float64 { return cv * r.NormFloat64() }
}

// studentT3 is Student's t noise with 3 degrees of freedom (infinite kurtosis), scaled so that
// its standard deviation is cv.
func studentT3(cv float64) noiseKind {
	return func(r *rand.Rand) float64 {
		var chi2 float64
		for range 3 {
			z := r.NormFloat64()
			chi2 += z * z
		}
		// Var t3 = 3.
		return cv / math.Sqrt(3) * r.NormFloat64() / math.Sqrt(chi2/3)
	}
}

// step is a level change: from index At on, the level is multiplied by Factor.
type step struct {
	At     int
	Factor float64
}

// series draws n values around 1000 with the steps applied and noise.
func series(seed uint64, n int, noise noiseKind, steps ...step) []float64 {
	r := rand.New(rand.NewPCG(seed, 0xc4a7))
	xs := make([]float64, n)
	for i := range xs {
		level := 1000.0
		for _, s := range steps {
			if i >= s.At {
				level *= s.Factor
			}
		}
		xs[i] = level * math.Max(0.05, 1+noise(r))
	}
	return xs
}

// throughput returns the settings for a throughput metric at δ.
func throughput() Settings {
	s := DefaultSettings()
	s.MinChange, s.HigherIsBetter = delta, true
	return s
}

// detect runs Detect with a generator seeded by seed.
func detect(t testing.TB, xs []float64, s Settings, seed uint64) []ChangePoint {
	t.Helper()
	cps, err := Detect(xs, s, rand.New(rand.NewPCG(seed, 1)))
	if err != nil {
		t.Fatal(err)
	}
	return cps
}

// TestDetectShifts checks that shifts of 2δ and more are found, with the right direction and
// size, within two commits of the truth when the noise's CV is at most δ/2 (a 2δ step is then
// 4σ), and within four commits, two in 90 % of series, when the CV is δ (a 2σ step), over 20
// seeded series each.
func TestDetectShifts(t *testing.T) {
	tests := []struct {
		name  string
		n     int
		noise noiseKind
		steps []step
		want  []Direction
		// tol is the largest location error allowed (2 when 0); within2 the share of series
		// whose every change point is within 2 (1 when 0).
		tol     int
		within2 float64
	}{
		{"drop 2δ, noise δ/2", 40, gaussian(delta / 2), []step{{20, 1 - 2*delta}}, []Direction{Regression}, 0, 0},
		{"rise 2δ, noise δ/2", 40, gaussian(delta / 2), []step{{20, 1 + 2*delta}}, []Direction{Improvement}, 0, 0},
		{"drop 2δ early, noise δ/2", 40, gaussian(delta / 2), []step{{6, 1 - 2*delta}}, []Direction{Regression}, 0, 0},
		{"drop 2δ in the last 5, noise δ/3", 40, gaussian(delta / 3), []step{{35, 1 - 2*delta}}, []Direction{Regression}, 0, 0},
		{"drop 2δ, noise δ, 60 commits", 60, gaussian(delta), []step{{30, 1 - 2*delta}}, []Direction{Regression}, 4, 0.9},
		{"two shifts: drop 2δ, then recover 3δ", 60, gaussian(delta / 2), []step{{20, 1 - 2*delta}, {40, 1 + 3*delta}}, []Direction{Regression, Improvement}, 0, 0},
		{"two drops of 2δ", 60, gaussian(delta / 2), []step{{20, 1 - 2*delta}, {40, 1 - 2*delta}}, []Direction{Regression, Regression}, 0, 0},
		{"heavy tails: drop 2δ, t3 noise δ/2", 40, studentT3(delta / 2), []step{{20, 1 - 2*delta}}, []Direction{Regression}, 0, 0},
	}
	const seeds = 20
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tol, within2 := stdcmp.Or(tt.tol, 2), stdcmp.Or(tt.within2, 1)
			maxErr, near := 0, 0
			for seed := range uint64(seeds) {
				xs := series(seed, tt.n, tt.noise, tt.steps...)
				cps := detect(t, xs, throughput(), seed)
				if len(cps) != len(tt.steps) {
					t.Fatalf("seed %d: found %d change points %+v; want %d at %v", seed, len(cps), cps, len(tt.steps), tt.steps)
				}
				worst := 0
				for i, cp := range cps {
					e := cp.Index - tt.steps[i].At
					worst = max(worst, e, -e)
					if e > tol || e < -tol {
						t.Errorf("seed %d: change point %d at %d; want %d ± %d", seed, i, cp.Index, tt.steps[i].At, tol)
					}
					if cp.Direction != tt.want[i] {
						t.Errorf("seed %d: change point %d is a %s; want a %s", seed, i, cp.Direction, tt.want[i])
					}
					if math.Abs(cp.Change-(tt.steps[i].Factor-1)) > delta {
						t.Errorf("seed %d: change point %d changes by %.3f; want %.3f ± δ", seed, i, cp.Change, tt.steps[i].Factor-1)
					}
					if cp.P > 0.01 {
						t.Errorf("seed %d: change point %d has p = %v > 0.01", seed, i, cp.P)
					}
				}
				maxErr = max(maxErr, worst)
				if worst <= 2 {
					near++
				}
			}
			t.Logf("%s: largest location error %d, %d of %d series within 2", tt.name, maxErr, near, seeds)
			if float64(near) < within2*seeds {
				t.Errorf("%d of %d series within 2 commits; want at least %.0f %%", near, seeds, 100*within2)
			}
		})
	}
}

// TestNoShift checks series without a shift: constant, and a 1 % step that is significant but
// smaller than δ.
func TestNoShift(t *testing.T) {
	constant := make([]float64, 30)
	for i := range constant {
		constant[i] = 1234
	}
	if cps := detect(t, constant, throughput(), 1); len(cps) != 0 {
		t.Errorf("constant series: %+v; want no change point", cps)
	}
	small := series(3, 40, gaussian(0.002), step{20, 0.99})
	raw := throughput()
	raw.MinChange = 0
	if cps := detect(t, small, raw, 3); len(cps) != 1 || cps[0].Index != 20 {
		t.Fatalf("a 1 %% step in 0.2 %% noise without δ: %+v; want one change point at 20 (the test needs a significant step)", cps)
	}
	if cps := detect(t, small, throughput(), 3); len(cps) != 0 {
		t.Errorf("a 1 %% step with δ = 3 %%: %+v; want none (below the minimum change)", cps)
	}
	short := []float64{1, 2, 3, 4, 5}
	if cps := detect(t, short, throughput(), 1); len(cps) != 0 {
		t.Errorf("5 values with MinSize 3: %+v; want none", cps)
	}
}

// TestFalseChangePoints measures how many series of pure noise get a change point, over 200
// seeded series of 50 commits each, and holds the rate at or under 2 % (the permutation test's
// level is 1 %; the δ filter only removes more).
func TestFalseChangePoints(t *testing.T) {
	const nSeries, n, bound = 200, 50, 0.02
	tests := []struct {
		name      string
		noise     noiseKind
		minChange float64
	}{
		{"gaussian CV 2δ, δ filter", gaussian(2 * delta), delta},
		{"gaussian CV 2δ, no δ filter", gaussian(2 * delta), 0},
		{"t3 CV 2δ, no δ filter", studentT3(2 * delta), 0},
		{"gaussian CV δ/3, δ filter", gaussian(delta / 3), delta},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := throughput()
			s.MinChange = tt.minChange
			withCP := 0
			for seed := range uint64(nSeries) {
				if cps := detect(t, series(1000+seed, n, tt.noise), s, seed); len(cps) > 0 {
					withCP++
				}
			}
			rate := float64(withCP) / nSeries
			t.Logf("pure noise (%s): %d of %d series (%.1f %%) have a change point", tt.name, withCP, nSeries, 100*rate)
			if rate > bound {
				t.Errorf("false change-point rate %.1f %% > %.0f %%", 100*rate, 100*bound)
			}
		})
	}
}

// TestDetectReproducible checks that one seed gives one answer.
func TestDetectReproducible(t *testing.T) {
	xs := series(7, 50, gaussian(delta), step{25, 0.93})
	a, b := detect(t, xs, throughput(), 42), detect(t, xs, throughput(), 42)
	if diff := cmp.Diff(a, b); diff != "" {
		t.Errorf("same seed, different answers (-first +second):\n%s", diff)
	}
}

// TestLatencyDirection checks that a rise of a lower-is-better metric is a regression.
func TestLatencyDirection(t *testing.T) {
	s := DefaultSettings()
	s.MinChange = 0.05
	xs := series(2, 30, gaussian(0.01), step{15, 1.10})
	cps := detect(t, xs, s, 2)
	if len(cps) != 1 || cps[0].Direction != Regression || cps[0].Index != 15 {
		t.Errorf("latency up 10 %%: %+v; want one regression at 15", cps)
	}
}

// TestDetectErrors checks bad settings and values.
func TestDetectErrors(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	bad := []Settings{
		{Permutations: 0, Alpha: 0.01, MinSize: 3, Exponent: 1},
		{Permutations: 50, Alpha: 0.01, MinSize: 3, Exponent: 1},
		{Permutations: 199, Alpha: 0, MinSize: 3, Exponent: 1},
		{Permutations: 199, Alpha: 0.01, MinSize: 1, Exponent: 1},
		{Permutations: 199, Alpha: 0.01, MinSize: 3, Exponent: 2},
		{Permutations: 199, Alpha: 0.01, MinSize: 3, Exponent: 1, MinChange: 1},
	}
	for _, s := range bad {
		if _, err := Detect([]float64{1, 2, 3}, s, rng); err == nil {
			t.Errorf("settings %+v: no error", s)
		}
	}
	for _, xs := range [][]float64{{1, math.NaN(), 3}, {1, math.Inf(1)}, {1, 0, 2}} {
		if _, err := Detect(xs, throughput(), rng); !errors.Is(err, ErrInput) {
			t.Errorf("values %v: error %v; want ErrInput", xs, err)
		}
	}
	if _, err := Detect([]float64{1, 2}, throughput(), nil); !errors.Is(err, ErrInput) {
		t.Errorf("nil generator: error %v; want ErrInput", err)
	}
}

// BenchmarkDetect200 times one series of 200 commits with two shifts.
func BenchmarkDetect200(b *testing.B) {
	xs := series(5, 200, gaussian(delta/2), step{80, 0.94}, step{150, 1.06})
	s := throughput()
	for i := 0; b.Loop(); i++ {
		if _, err := Detect(xs, s, rand.New(rand.NewPCG(uint64(i), 1))); err != nil {
			b.Fatal(err)
		}
	}
}
