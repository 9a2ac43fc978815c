package compare_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/speedmatrix/speedmatrix/compare"
	"github.com/speedmatrix/speedmatrix/results"
)

// TestPlanReruns checks the budgeted choice of reruns: most decided cell-metrics per minute
// first, never past the budget, everything else undecided with its cost.
func TestPlanReruns(t *testing.T) {
	tbt := []results.Metric{results.MetricTBT}
	ttft := []results.Metric{results.MetricTTFT}
	two := []results.Metric{results.MetricTotalTokPerS, results.MetricTBT}
	dec := results.Metrics(results.PhaseDecode)
	// Every trial of every cell costs a minute, except the 128K row's: four.
	perTrial := func(cell string, trials int) time.Duration {
		id, err := results.ParseCellID(cell)
		if err != nil {
			t.Fatalf("cost called with %q: %v", cell, err)
		}
		if id.ContextLabel == "128K" {
			return time.Duration(trials) * 4 * time.Minute
		}
		return time.Duration(trials) * time.Minute
	}
	adv := &results.RerunAdvice{
		Items: []results.RerunItem{
			{Cell: "decode/8K/1", Metrics: tbt, FurtherTrials: 6},        // 1 metric / 6 min
			{Cell: "decode/8K/32", Metrics: two, FurtherTrials: 2},       // 2 metrics / 2 min
			{Cell: "prefill/8K", Metrics: ttft, FurtherTrials: 3},        // 1 metric / 3 min
			{Cell: "decode/128K/4", Metrics: two, FurtherTrials: 1},      // 2 metrics / 4 min
			{Cell: "decode/32K/64", Metrics: tbt, FurtherTrials: 30},     // 1 metric / 30 min
			{Cell: "decode/32K/128", Metrics: dec[:3], FurtherTrials: 3}, // 3 metrics / 3 min
		},
		Rows: []results.RowRerun{
			// 2 cells × 4 metrics over 2 × 2 min: 2 metrics a minute, the best buy.
			{ContextLabel: "4K", Cells: "decode/4K/1,decode/4K/2", FurtherTrials: 2},
			// 2 cells × 4 metrics over 2 × 5 × 4 min: 0.2 a minute.
			{ContextLabel: "128K", Cells: "decode/128K/1,decode/128K/2", FurtherTrials: 5},
		},
		Undecidable: []results.UndecidableItem{{Cell: "decode/1K/1", Metrics: tbt}},
	}
	row4K, row128K := adv.Rows[0], adv.Rows[1]
	noTrials := compare.UndecidedCost{Cell: "decode/1K/1", Metrics: tbt, Reason: compare.UndecidedNoTrials}
	over := func(i int) compare.UndecidedCost {
		it := adv.Items[i]
		return compare.UndecidedCost{Cell: it.Cell, Metrics: it.Metrics, FurtherTrials: it.FurtherTrials,
			Cost: perTrial(it.Cell, it.FurtherTrials), Reason: compare.UndecidedOverBudget}
	}
	overRow128K := compare.UndecidedCost{Cell: row128K.Cells, Row: "128K", Metrics: dec, FurtherTrials: 5,
		Cost: 40 * time.Minute, Reason: compare.UndecidedOverBudget}
	tests := []struct {
		name   string
		adv    *results.RerunAdvice
		budget time.Duration
		want   compare.RerunPlan
	}{
		{name: "nil advice", adv: nil, budget: time.Hour, want: compare.RerunPlan{}},
		{
			name: "no budget funds nothing", adv: adv, budget: 0,
			want: compare.RerunPlan{Undecided: []compare.UndecidedCost{over(0), over(1), over(2), over(3), over(4), over(5),
				{Cell: row4K.Cells, Row: "4K", Metrics: dec, FurtherTrials: 2, Cost: 4 * time.Minute, Reason: compare.UndecidedOverBudget},
				overRow128K, noTrials}},
		},
		{
			// 4K row (4 min, 2/min), 8K/32 (2 min, 1/min), 32K/128 (3 min, 1/min): 9 minutes.
			name: "best per minute first", adv: adv, budget: 10 * time.Minute,
			want: compare.RerunPlan{
				Items: []results.RerunItem{adv.Items[1], adv.Items[5]},
				Rows:  []results.RowRerun{row4K}, Cost: 9 * time.Minute,
				Undecided: []compare.UndecidedCost{over(0), over(2), over(3), over(4), overRow128K, noTrials},
			},
		},
		{
			// After 9 min, 128K/4 (4 min, 0.5/min) does not fit in 3 min but prefill/8K (3 min,
			// 0.33/min) does: a skipped candidate does not stop a cheaper one.
			name: "a cheaper one fits after a skip", adv: adv, budget: 12 * time.Minute,
			want: compare.RerunPlan{
				Items: []results.RerunItem{adv.Items[1], adv.Items[2], adv.Items[5]},
				Rows:  []results.RowRerun{row4K}, Cost: 12 * time.Minute,
				Undecided: []compare.UndecidedCost{over(0), over(3), over(4), overRow128K, noTrials},
			},
		},
		{
			name: "a budget for everything", adv: adv, budget: 10 * time.Hour,
			want: compare.RerunPlan{
				Items: adv.Items, Rows: adv.Rows, Cost: (9 + 6 + 3 + 4 + 30 + 40) * time.Minute,
				Undecided: []compare.UndecidedCost{noTrials},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := compare.PlanReruns(tc.adv, perTrial, tc.budget)
			if diff := cmp.Diff(tc.want, got, cmpopts.IgnoreFields(compare.RerunPlan{}, "Order")); diff != "" {
				t.Errorf("PlanReruns (-want +got):\n%s", diff)
			}
			if got.Cost > tc.budget && tc.adv != nil {
				t.Errorf("cost %v is over the budget %v", got.Cost, tc.budget)
			}
		})
	}
}

// TestRerunPlanCells checks the --cells list of a plan: items, then row cells, without repeats.
func TestRerunPlanCells(t *testing.T) {
	p := compare.RerunPlan{
		Items: []results.RerunItem{{Cell: "decode/8K/1"}, {Cell: "decode/4K/2"}},
		Rows:  []results.RowRerun{{Cells: "decode/4K/1,decode/4K/2"}},
	}
	if got, want := p.Cells(), "decode/8K/1,decode/4K/2,decode/4K/1"; got != want {
		t.Errorf("Cells() = %q, want %q", got, want)
	}
}
