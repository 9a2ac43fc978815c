package compare_test

import (
	"math"
	"strings"
	"testing"

	"github.com/speedmatrix/speedmatrix/compare"
	"github.com/speedmatrix/speedmatrix/results"
)

// TestHeadLostItsValue checks that a measured head cell whose number is zero, missing or not
// finite where the base had one is a regression (a 100 % drop), never a pass: the cell, the
// metric and the matrix all say regression. A base without the number stays not comparable.
func TestHeadLostItsValue(t *testing.T) {
	tests := []struct {
		name   string
		metric results.Metric
		edit   func(base, head *results.DecodeCell)
		want   results.Verdict
		reason string
	}{
		{"head total 0 tok/s", results.MetricTotalTokPerS, func(_, h *results.DecodeCell) { h.TotalTokPerS = f64(0) },
			results.VerdictRegression, "head reads 0 tok/s where base had 600 tok/s: a 100 % drop"},
		{"head total missing", results.MetricTotalTokPerS, func(_, h *results.DecodeCell) { h.TotalTokPerS = nil },
			results.VerdictRegression, "head has no Total tok/s where base had 600 tok/s"},
		{"head total NaN", results.MetricTotalTokPerS, func(_, h *results.DecodeCell) { h.TotalTokPerS = f64(math.NaN()) },
			results.VerdictRegression, "head reads NaN tok/s where base had 600 tok/s"},
		{"head total +Inf", results.MetricTotalTokPerS, func(_, h *results.DecodeCell) { h.TotalTokPerS = f64(math.Inf(1)) },
			results.VerdictRegression, "head reads +Inf tok/s where base had 600 tok/s"},
		{"head per-request missing", results.MetricPerRequestTokPerS, func(_, h *results.DecodeCell) { h.PerRequestTokPerS = nil },
			results.VerdictRegression, "head has no Per request tok/s where base had 75 tok/s"},
		{"head TBT 0 ms", results.MetricTBT, func(_, h *results.DecodeCell) { h.TBTMs = f64(0) },
			results.VerdictRegression, "head reads 0 ms where base had 13.33 ms"},
		{"both 0 tok/s", results.MetricTotalTokPerS, func(b, h *results.DecodeCell) { b.TotalTokPerS, h.TotalTokPerS = f64(0), f64(0) },
			results.VerdictNotComparable, "no value in either run"},
		{"base 0 tok/s", results.MetricTotalTokPerS, func(b, _ *results.DecodeCell) { b.TotalTokPerS = f64(0) },
			results.VerdictNotComparable, "no value in base"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := summaryFile("m", map[int]float64{1: 150, 8: 600}, nil)
			head := summaryFile("m", map[int]float64{1: 150, 8: 600}, nil)
			tt.edit(&base.Decode[1], &head.Decode[1])
			c, err := compare.Compare(compare.Input{Base: []*results.File{base}, Head: []*results.File{head}}, compare.DefaultThresholds())
			if err != nil {
				t.Fatal(err)
			}
			m := find(t, c, "decode/8K/8", tt.metric)
			if m.Verdict != tt.want || !strings.Contains(m.Reason, tt.reason) {
				t.Errorf("%s: %s (%q), want %s saying %q", tt.metric, m.Verdict, m.Reason, tt.want, tt.reason)
			}
			if tt.want == results.VerdictRegression {
				if cv := cellOf(t, c, "decode/8K/8").Verdict; cv != results.VerdictRegression {
					t.Errorf("cell verdict %s, want regression", cv)
				}
				if c.Verdict != results.VerdictRegression {
					t.Errorf("matrix verdict %s, want regression", c.Verdict)
				}
			}
			if _, err := results.EncodeComparison(c); err != nil {
				t.Errorf("the comparison does not encode: %v", err)
			}
		})
	}
}
