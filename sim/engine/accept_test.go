package engine

import (
	"math"
	"testing"
	"time"
)

// acceptanceOfRun runs one request of steps decode steps at concurrency 1 and returns the mean
// tokens per draft step the spec counters give (1 + accepted ÷ drafts) and the tokens per second
// of virtual time.
func acceptanceOfRun(t *testing.T, cfg Config, steps int) (length, rate float64) {
	t.Helper()
	e, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r := prompt(7, 16384, steps*(1+cfg.NumSpecTokens)) // one context bucket (16K … 32K) all along
	_, end := run(t, e, 0, map[time.Duration][]*Request{0: {r}})
	st := e.Stats()
	if st.SpecDrafts == 0 {
		t.Fatal("no draft steps")
	}
	return 1 + float64(st.SpecAccepted)/float64(st.SpecDrafts), float64(r.MaxTokens) / end.Seconds()
}

// TestAcceptanceRunToRun: with --noise, acceptance varies from seed to seed (a run) at
// concurrency 1 about as the noise model says (CV/2 on the mean accepted tokens); pinned with a
// synthetic acceptance length it does not vary at all and equals the pinned length; without
// noise only the draws' sampling spread remains.
func TestAcceptanceRunToRun(t *testing.T) {
	base := testConfig()
	base.NumSpecTokens = 3
	base.Acceptance = []float64{0.1, 0.2, 0.3, 0.4} // mean accepted 2.0, length 3.0
	base.NumBlocks = 4096
	base.MaxModelLen = 1 << 20
	const steps, seeds = 1500, 16
	cvOf := func(xs []float64) (mean, cv float64) {
		m := 0.0
		for _, x := range xs {
			m += x
		}
		m /= float64(len(xs))
		v := 0.0
		for _, x := range xs {
			v += (x - m) * (x - m)
		}
		return m, math.Sqrt(v/float64(len(xs)-1)) / m
	}
	rateCV := map[bool]float64{}
	spread := func(cfg Config) (mean, cv float64) {
		var ls, rs []float64
		for s := range seeds {
			c := cfg
			c.Seed = uint64(100 + s)
			l, r := acceptanceOfRun(t, c, steps)
			ls, rs = append(ls, l), append(rs, r)
		}
		if cfg.NoiseCV > 0 {
			_, rateCV[cfg.PinnedAcceptanceLength > 0] = cvOf(rs)
		}
		return cvOf(ls)
	}
	noisy := base
	noisy.NoiseCV = 0.15
	pinned := noisy
	pinned.PinnedAcceptanceLength = 2.6
	quiet := base

	mn, cvNoisy := spread(noisy)
	mp, cvPinned := spread(pinned)
	_, cvQuiet := spread(quiet)
	t.Logf("acceptance length across %d seeds: noisy mean %.3f CV %.4f; pinned mean %.3f CV %.5f; no noise CV %.4f", seeds, mn, cvNoisy, mp, cvPinned, cvQuiet)
	// The mean accepted tokens vary with CV 0.075, the length (1 + accepted, mean 3) with
	// 0.075 × 2/3 = 0.05.
	if cvNoisy < 0.025 || cvNoisy > 0.10 {
		t.Errorf("unpinned acceptance length CV across seeds %.4f, want about 0.05 (noise 0.15)", cvNoisy)
	}
	// Pinned, only the Bernoulli draw of the fractional token is left: 0.49/√1500/2.6 ≈ 0.005.
	if cvPinned > 0.01 || cvPinned > cvNoisy/4 {
		t.Errorf("pinned acceptance length CV across seeds %.4f, want ≈ 0 (unpinned: %.4f)", cvPinned, cvNoisy)
	}
	if math.Abs(mp-2.6) > 0.02 {
		t.Errorf("pinned acceptance length %.3f, want 2.6", mp)
	}
	// The speed follows: pinned, only the run-to-run noise a server has without speculative
	// decoding is left (a tenth of the CV at concurrency 1).
	t.Logf("tokens per second across seeds: CV %.4f unpinned, %.4f pinned", rateCV[false], rateCV[true])
	if rateCV[true] > rateCV[false]/3 {
		t.Errorf("pinned decode speed varies by %.4f across seeds, unpinned by %.4f: pinning should remove most of it", rateCV[true], rateCV[false])
	}
	if cvQuiet > 0.02 {
		t.Errorf("acceptance length CV without noise %.4f, want only the draws' spread (< 0.02)", cvQuiet)
	}
}

// TestPinnedAcceptanceValidate: a pinned length outside 1 … 1 + k, or without speculative
// decoding, is refused.
func TestPinnedAcceptanceValidate(t *testing.T) {
	for _, tc := range []struct {
		k    int
		l    float64
		fail bool
	}{{3, 2.5, false}, {3, 4, false}, {3, 1, false}, {3, 4.01, true}, {3, 0.5, true}, {0, 2, true}, {3, math.NaN(), true}} {
		cfg := testConfig()
		cfg.NumSpecTokens = tc.k
		if tc.k > 0 {
			cfg.Acceptance = []float64{0.25, 0.25, 0.25, 0.25}
		}
		cfg.PinnedAcceptanceLength = tc.l
		if err := cfg.Validate(); (err != nil) != tc.fail {
			t.Errorf("k %d, pinned %g: err %v, want failure %v", tc.k, tc.l, err, tc.fail)
		}
	}
}
