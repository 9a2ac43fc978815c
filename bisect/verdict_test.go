package bisect

import (
	"strings"
	"testing"

	"github.com/speedmatrix/speedmatrix/results"
)

// comparison returns a comparison of the given verdict whose cells decode/8K/8 and decode/8K/16
// changed total tok/s by change with a ±half interval.
func comparison(v results.Verdict, change, half float64) *results.Comparison {
	c := &results.Comparison{Verdict: v, Settings: results.ComparisonSettings{Metrics: []results.MetricSettings{{Metric: results.MetricTotalTokPerS, Delta: 0.03}}}}
	for _, id := range []string{"decode/8K/8", "decode/8K/16"} {
		c.Cells = append(c.Cells, results.CellComparison{Cell: id, Phase: results.PhaseDecode, Verdict: v, Metrics: []results.MetricComparison{
			{Metric: results.MetricTotalTokPerS, Change: &results.Change{Change: change, Low: change - half, High: change + half}},
			{Metric: results.MetricTTFT, Change: &results.Change{Change: 0.5, Low: 0.4, High: 0.6}}, // a note, never the verdict
		}})
	}
	return c
}

func TestStepVerdict(t *testing.T) {
	cells := []string{"decode/8K/8", "decode/8K/16"}
	for _, tt := range []struct {
		name   string
		c      *results.Comparison
		cells  []string
		want   Verdict
		reason string
	}{
		{"regression", comparison(results.VerdictRegression, -0.10, 0.01), cells, Bad, ""},
		{"unchanged", comparison(results.VerdictUnchanged, 0.00, 0.01), cells, Good, ""},
		{"improvement", comparison(results.VerdictImprovement, 0.08, 0.01), cells, Good, ""},
		{"inconclusive, shown above -δ", comparison(results.VerdictInconclusive, 0.00, 0.02), cells, Good, ""},
		{"inconclusive, reaching below -δ", comparison(results.VerdictInconclusive, -0.05, 0.04), cells, Undecided, "not shown better than -3 %"},
		{"unproven", comparison(results.VerdictUnproven, -0.10, 0.01), cells, Undecided, "unproven"},
		{"incomplete", comparison(results.VerdictIncomplete, 0, 0.01), cells, Undecided, "incomplete"},
		{"a named cell missing", comparison(results.VerdictRegression, -0.10, 0.01), append(cells, "decode/8K/32"), Undecided, "holds 2 of the 3 named cells"},
		{"every cell when none named", comparison(results.VerdictUnchanged, 0, 0.01), nil, Good, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m := StepVerdict(tt.c, tt.cells)
			if m.Verdict != tt.want || !strings.Contains(m.Reason, tt.reason) {
				t.Errorf("verdict %s (%s), want %s (%q)", m.Verdict, m.Reason, tt.want, tt.reason)
			}
			if len(m.Cells) != 2 || m.Change == nil {
				t.Fatalf("evidence %+v", m)
			}
			want := tt.c.Cells[0].Metrics[0].Change.Change
			if d := m.Change.Change - want; d > 1e-9 || d < -1e-9 || m.Change.Low >= m.Change.Change || m.Change.High <= m.Change.Change {
				t.Errorf("mean change %+v, want %v inside its interval", m.Change, want)
			}
		})
	}
}
