package compare_test

import (
	"math"
	"testing"

	"github.com/speedmatrix/speedmatrix/compare"
	"github.com/speedmatrix/speedmatrix/results"
)

// TestFewTrialsKeepTheirNoise checks the second look after a one-trial rerun (two runs a side):
// its noise is not the two runs' own variance alone, whose 2 degrees of freedom would make the
// rerun useless, but pooled with the history's runs (degrees of freedom added), or without
// history floored by the prior (as the advice assumed); with enough trials (3 a side) the
// trials stand alone.
func TestFewTrialsKeepTheirNoise(t *testing.T) {
	run := func(v float64) *results.File { return summaryFile("m", map[int]float64{8: v}, nil) }
	var hist []*results.File
	for _, v := range []float64{600, 606, 594, 603, 597, 600, 609, 591, 600, 600} {
		hist = append(hist, run(v))
	}
	tests := []struct {
		name       string
		base, head []*results.File
		history    []*results.File
		source     string
		df         float64 // 0: infinite (nil)
		cv         float64 // 0: not checked
	}{
		{"two runs a side with history", []*results.File{run(600), run(601)}, []*results.File{run(570), run(571)}, hist, results.NoiseHistory, 11, 0},
		{"two runs a side, prior", []*results.File{run(600), run(601)}, []*results.File{run(570), run(571)}, nil, results.NoiseTrials, 0, 0.01},
		{"three runs a side", []*results.File{run(600), run(601), run(599)}, []*results.File{run(570), run(571), run(569)}, nil, results.NoiseTrials, -1, 0},
		// A stored base run against three head trials (the naive procedure with a stored
		// baseline, or a head-only rerun): the head's spread has 2 degrees of freedom.
		{"three head runs against one base run, prior", []*results.File{run(600)}, []*results.File{run(570), run(571), run(569)}, nil, results.NoiseTrials, 0, 0.01},
		{"three head runs against one base run, history", []*results.File{run(600)}, []*results.File{run(570), run(571), run(569)}, hist[:3], results.NoiseHistory, 4, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := compare.Compare(compare.Input{Base: tt.base, Head: tt.head, History: tt.history}, compare.DefaultThresholds())
			if err != nil {
				t.Fatal(err)
			}
			m := find(t, c, "decode/8K/8", results.MetricTotalTokPerS)
			if m.Noise == nil || m.Noise.Source != tt.source {
				t.Fatalf("noise %+v, want source %s", m.Noise, tt.source)
			}
			switch {
			case tt.df == 0 && m.Noise.DF != nil:
				t.Errorf("df %v, want infinite (the prior)", *m.Noise.DF)
			case tt.df > 0 && (m.Noise.DF == nil || *m.Noise.DF != tt.df):
				t.Errorf("df %v, want %v", m.Noise.DF, tt.df)
			}
			if tt.cv > 0 && math.Abs(m.Noise.CV-tt.cv) > 1e-12 {
				t.Errorf("CV %v, want %v", m.Noise.CV, tt.cv)
			}
			// A 5 % drop at concurrency 8 with 1 % noise is a regression once the noise is
			// known well enough.
			if m.Verdict != results.VerdictRegression {
				t.Errorf("verdict %s (%s), want regression", m.Verdict, m.Reason)
			}
		})
	}
}

// TestFewQuietTrialsStandAlone checks that the prior floor never makes a comparison blinder:
// two runs a side of a very quiet cell (0.05 % apart, where the prior says 20 %) keep their own
// noise, and a 7 % drop is a regression.
func TestFewQuietTrialsStandAlone(t *testing.T) {
	run := func(v float64) *results.File { return summaryFile("m", map[int]float64{1: v}, nil) }
	c, err := compare.Compare(compare.Input{Base: []*results.File{run(150), run(150.07)}, Head: []*results.File{run(139.5), run(139.57)}}, compare.DefaultThresholds())
	if err != nil {
		t.Fatal(err)
	}
	m := find(t, c, "decode/8K/1", results.MetricTotalTokPerS)
	if m.Noise == nil || m.Noise.Source != results.NoiseTrials || m.Noise.DF == nil {
		t.Fatalf("noise %+v, want the trials' own, with finite degrees of freedom", m.Noise)
	}
	if m.Verdict != results.VerdictRegression {
		t.Errorf("verdict %s (%s), want regression", m.Verdict, m.Reason)
	}
}

// TestFewTrialsFloorKeepsWithinNoise checks a head-only rerun's second look (one base run
// against three head runs, no history): where the base's own run showed within-run noise above
// the prior (CV 3.2 % at concurrency 16, prior 1 %), the floor the few head trials take is that
// noise, as the first look's was, not the prior alone; a 5 % drop is then not a regression.
func TestFewTrialsFloorKeepsWithinNoise(t *testing.T) {
	var noisy []int
	for _, m := range []int{900, 1000, 1100, 1000, 1000} {
		for k := range 6 {
			noisy = append(noisy, m+100*(1-2*(k%2))) // bin-to-bin noise, not a stall (as TestWithinRunNoise)
		}
	}
	head := func(v float64) *results.File { return summaryFile("m", map[int]float64{16: v}, nil) }
	c, err := compare.Compare(compare.Input{
		Base: []*results.File{oneTrialFile(noisy)},
		Head: []*results.File{head(950), head(955), head(945)},
	}, compare.DefaultThresholds())
	if err != nil {
		t.Fatal(err)
	}
	m := find(t, c, "decode/8K/16", results.MetricTotalTokPerS)
	if m.Noise == nil || m.Noise.CV < math.Sqrt(0.001)-1e-9 {
		t.Errorf("noise %+v, want at least the base run's within CV %.4f", m.Noise, math.Sqrt(0.001))
	}
	if m.Verdict == results.VerdictRegression {
		t.Errorf("verdict %s (%s): the prior floor hid the base run's own noise", m.Verdict, m.Reason)
	}
}

// TestTwoNoisyHeadRunsNotIgnored checks a head-only rerun of one trial (one base run against two
// head runs, no history): where the head's two runs differ by far more than the prior (10 %
// apart at concurrency 8, prior 1 %), their spread is not ignored for the prior, and a 5 % drop
// is not a regression; two quiet head runs still take the prior floor and decide it.
func TestTwoNoisyHeadRunsNotIgnored(t *testing.T) {
	run := func(v float64) *results.File { return summaryFile("m", map[int]float64{8: v}, nil) }
	for _, tt := range []struct {
		name string
		head []float64
		want results.Verdict
	}{
		{"noisy", []float64{600, 540}, results.VerdictInconclusive},
		{"quiet", []float64{571, 569}, results.VerdictRegression},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, err := compare.Compare(compare.Input{Base: []*results.File{run(600)}, Head: []*results.File{run(tt.head[0]), run(tt.head[1])}}, compare.DefaultThresholds())
			if err != nil {
				t.Fatal(err)
			}
			m := find(t, c, "decode/8K/8", results.MetricTotalTokPerS)
			if m.Verdict != tt.want {
				t.Errorf("verdict %s (%s), noise %+v; want %s", m.Verdict, m.Reason, m.Noise, tt.want)
			}
		})
	}
}
