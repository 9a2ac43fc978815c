package compare_test

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/speedmatrix/speedmatrix/compare"
	"github.com/speedmatrix/speedmatrix/results"
)

// valueComparison is a first look with four inconclusive single-metric decode cells and one
// undecided row: decode/8K/1 reads −6 % (a 2δ slowdown), decode/16K/1 and decode/64K/1 read
// 0 %, decode/32K/1 reads −6 % in a row whose row test is already a regression, and row 512K
// (advised 20 runs) has a row score of +1.5δ (95 % CI +0.5 … +2.5), close to flagged.
func valueComparison() *results.Comparison {
	cell := func(row string, change float64, v results.Verdict) results.CellComparison {
		lo, hi := math.Expm1(math.Log1p(change)-0.08), math.Expm1(math.Log1p(change)+0.08) // SE ≈ 4 %
		return results.CellComparison{Cell: "decode/" + row + "/1", Phase: results.PhaseDecode, ContextLabel: row, Concurrency: 1,
			BaseStatus: results.StatusValid, HeadStatus: results.StatusValid, Verdict: v,
			Metrics: []results.MetricComparison{{Metric: results.MetricTotalTokPerS, Delta: 0.03, Verdict: v,
				Change: &results.Change{Change: change, Low: lo, High: hi}, Noise: &results.Noise{Source: results.NoisePrior, CV: 0.028, BaseTrials: 1, HeadTrials: 1}}}}
	}
	tot := []results.Metric{results.MetricTotalTokPerS}
	c := &results.Comparison{
		Settings: results.ComparisonSettings{ConfidenceLevel: 0.95, Look: 1},
		Cells: []results.CellComparison{
			cell("8K", -0.06, results.VerdictInconclusive), cell("16K", 0, results.VerdictInconclusive),
			cell("32K", -0.06, results.VerdictInconclusive), cell("64K", 0, results.VerdictInconclusive),
			cell("512K", -0.03, results.VerdictInconclusive),
		},
		Rows: []results.RowComparison{
			{ContextLabel: "32K", BaseRuns: 1, HeadRuns: 1, Effect: 2.5, Low: 2.1, High: 2.9, Verdict: results.VerdictRegression},
			{ContextLabel: "512K", BaseRuns: 2, HeadRuns: 2, Effect: 1.5, Low: 0.5, High: 2.5, Verdict: results.VerdictInconclusive},
		},
		Rerun: &results.RerunAdvice{
			Items: []results.RerunItem{
				{Cell: "decode/16K/1", Metrics: tot, FurtherTrials: 4},
				{Cell: "decode/32K/1", Metrics: tot, FurtherTrials: 4},
				{Cell: "decode/64K/1", Metrics: tot, FurtherTrials: 4},
				{Cell: "decode/8K/1", Metrics: tot, FurtherTrials: 4},
			},
			Rows: []results.RowRerun{{ContextLabel: "512K", Cells: "decode/512K/1", FurtherTrials: 20}},
			Rule: results.SequentialRule{Level1: 0.0062, Level2: 0.0038},
		},
	}
	return c
}

// TestPlanRerunsForDetection checks that the budget buys what can change a verdict to a
// regression first: a row whose pooled test is close (in part, as many runs as fit, when the
// whole advice does not), an inconclusive cell whose estimate points to a slowdown before one
// whose estimate sits at zero at the same price, and a cell whose row is already flagged only
// when the rest is bought. The budget is never crossed.
func TestPlanRerunsForDetection(t *testing.T) {
	// A trial costs a minute, at 512K three.
	minute := func(cell string, trials int) time.Duration {
		if strings.Contains(cell, "/512K/") {
			return time.Duration(3*trials) * time.Minute
		}
		return time.Duration(trials) * time.Minute
	}
	funded := func(p compare.RerunPlan) []string {
		var out []string
		for _, it := range p.Items {
			out = append(out, it.Cell)
		}
		for _, r := range p.Rows {
			out = append(out, "row "+r.ContextLabel)
		}
		slices.Sort(out)
		return out
	}
	for _, tc := range []struct {
		name   string
		budget time.Duration
		want   []string
		// rowRuns is the 512K row's funded runs (0: not funded).
		rowRuns int
	}{
		// Two runs of the row (6 min) do not fit: of the cells, the one reading a slowdown.
		{"one cell: the slowdown", 4 * time.Minute, []string{"decode/8K/1"}, 0},
		// The close row is the best buy: as many of its 20 advised runs as fit.
		{"the close row first, in part", 34 * time.Minute, []string{"row 512K"}, 11},
		{"then the slowdown", 64 * time.Minute, []string{"decode/8K/1", "row 512K"}, 20},
		{"a flagged row's cell last", 72 * time.Minute, []string{"decode/16K/1", "decode/64K/1", "decode/8K/1", "row 512K"}, 20},
		{"everything", 76 * time.Minute, []string{"decode/16K/1", "decode/32K/1", "decode/64K/1", "decode/8K/1", "row 512K"}, 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := compare.PlanRerunsFor(valueComparison(), minute, tc.budget)
			if got := funded(p); !slices.Equal(got, tc.want) {
				t.Errorf("funded %v, want %v", got, tc.want)
			}
			runs := 0
			for _, r := range p.Rows {
				runs = r.FurtherTrials
			}
			if runs != tc.rowRuns {
				t.Errorf("row 512K funded %d runs, want %d", runs, tc.rowRuns)
			}
			if p.Cost > tc.budget {
				t.Errorf("plan costs %v of a %v budget", p.Cost, tc.budget)
			}
		})
	}
}
