package report

import (
	"strings"
	"testing"

	"github.com/speedmatrix/speedmatrix/results"
)

// TestNoiseCountsSayWhyThePrior checks that the noise summary says what is true of cells whose
// noise is the prior alone: raw samples too few (how many) is not "no raw samples".
func TestNoiseCountsSayWhyThePrior(t *testing.T) {
	n := func(v int) *int { return &v }
	prior := func(reason string, samples *int) results.MetricComparison {
		return results.MetricComparison{Metric: results.MetricPerRequestTokPerS, Verdict: results.VerdictInconclusive,
			Noise: &results.Noise{Source: results.NoisePrior, CV: 0.1, PriorReason: reason, Samples: samples, SamplesNeeded: 25}}
	}
	few := func(m results.Metric, k int) results.MetricComparison {
		mc := prior(results.PriorFewSamples, n(k))
		mc.Metric = m
		return mc
	}
	c := &results.Comparison{Cells: []results.CellComparison{
		{Cell: "decode/8K/1", Metrics: []results.MetricComparison{few(results.MetricPerRequestTokPerS, 2), few(results.MetricTBT, 3), few(results.MetricTotalTokPerS, 10)}},
		{Cell: "decode/8K/2", Metrics: []results.MetricComparison{few(results.MetricPerRequestTokPerS, 12), prior(results.PriorPrefill, nil)}},
	}}
	got := strings.Join(noiseCounts(c), "\n")
	for _, want := range []string{
		"prior: 5 (configured prior only — 3 with raw samples too few: 2–12 requests (25 needed); 1 with raw samples too few: 10 1 s bins (25 needed); 1 with one request per prefill run)",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("noise counts\n%s\nwant %q", got, want)
		}
	}
	if strings.Contains(got, "no raw samples") {
		t.Errorf("noise counts say no raw samples where they exist:\n%s", got)
	}
	if d := detail(c, &c.Cells[0], &c.Cells[0].Metrics[0]); strings.Contains(d, "no raw samples") {
		t.Errorf("detail %q", d)
	}
	sum := &results.Comparison{Cells: []results.CellComparison{{Cell: "decode/8K/1", Metrics: []results.MetricComparison{prior(results.PriorSummaryOnly, nil)}}}}
	if got := strings.Join(noiseCounts(sum), "\n"); !strings.Contains(got, "prior: 1 (configured prior only: no raw samples (summary only))") {
		t.Errorf("summary-only noise counts: %s", got)
	}
}
