package compare_test

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/speedmatrix/speedmatrix/compare"
	"github.com/speedmatrix/speedmatrix/results"
)

// TestMeasuredNoiseReplacesPrior checks that a measured CV above the prior replaces it (source
// measured, the prior's CV recorded, the −10 % at concurrency 8 no longer a regression under 8 %
// noise), and that one below the prior changes nothing.
func TestMeasuredNoiseReplacesPrior(t *testing.T) {
	base := summaryFile("m", map[int]float64{1: 150, 8: 600}, nil)
	head := summaryFile("m", map[int]float64{1: 135, 8: 540}, nil)
	c8 := compare.NoiseKey{Cell: results.CellID{Phase: results.PhaseDecode, ContextLabel: "8K", Concurrency: 8}, Metric: results.MetricTotalTokPerS}
	c1 := compare.NoiseKey{Cell: results.CellID{Phase: results.PhaseDecode, ContextLabel: "8K", Concurrency: 1}, Metric: results.MetricTotalTokPerS}
	in := compare.Input{Base: []*results.File{base}, Head: []*results.File{head},
		MeasuredNoise: map[compare.NoiseKey]float64{c8: 0.08, c1: 0.05}}
	c, err := compare.Compare(in, compare.DefaultThresholds())
	if err != nil {
		t.Fatal(err)
	}
	m := find(t, c, "decode/8K/8", results.MetricTotalTokPerS)
	want := &results.Noise{Source: results.NoiseMeasured, CV: 0.08, BaseTrials: 1, HeadTrials: 1, PriorCV: f64(0.01), MeasuredCV: f64(0.08)}
	if diff := cmp.Diff(want, m.Noise); diff != "" {
		t.Errorf("decode/8K/8 noise with 8 %% measured (-want +got):\n%s", diff)
	}
	if m.Verdict == results.VerdictRegression {
		t.Errorf("decode/8K/8: −10 %% under 8 %% measured noise is %s, want not a regression", m.Verdict)
	}
	if n := find(t, c, "decode/8K/1", results.MetricTotalTokPerS).Noise; n.Source != results.NoisePrior || n.CV != 0.20 || n.MeasuredCV != nil {
		t.Errorf("decode/8K/1 with 5 %% measured under a 20 %% prior: noise %+v, want the prior unchanged", *n)
	}
	if err := results.ValidateComparison(c); err != nil {
		t.Error(err)
	}
}

// TestMeasuredNoisePooled checks MeasuredNoise's pooled within-commit spread: two commits at
// different levels, each with two runs, give the spread within them, not between.
func TestMeasuredNoisePooled(t *testing.T) {
	run := func(v float64) *results.File { return summaryFile("m", map[int]float64{8: v}, nil) }
	cv, df := compare.MeasuredNoise([][]*results.File{{run(100), run(110)}, {run(200), run(220)}, {run(300)}})
	k := compare.NoiseKey{Cell: results.CellID{Phase: results.PhaseDecode, ContextLabel: "8K", Concurrency: 8}, Metric: results.MetricTotalTokPerS}
	// Each pair: log ratio ln 1.1, sample variance (ln 1.1)²/2; pooled over 2 df the same.
	want := math.Log(1.1) / math.Sqrt2
	if got := cv[k]; got < want-1e-6 || got > want+1e-6 || df[k] != 2 {
		t.Errorf("measured CV %v (df %d), want %v (df 2)", got, df[k], want)
	}
}
