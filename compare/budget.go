package compare

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/speedmatrix/speedmatrix/results"
)

// CellCost returns the GPU wall time that measuring trials further trials of one cell costs:
// the head side only when the baseline is stored, both sides in paired mode. cell is a
// CellID string ("decode/8K/32").
type CellCost func(cell string, trials int) time.Duration

// RerunPlan is the part of a rerun advice that a GPU budget pays for.
type RerunPlan struct {
	// Items are the funded cells, each with its advised further trials.
	Items []results.RerunItem `json:"items,omitempty"`
	// Rows are the funded decode context rows, each measured whole.
	Rows []results.RowRerun `json:"rows,omitempty"`
	// Cost is the predicted GPU time of everything funded; never more than the budget.
	Cost time.Duration `json:"cost"`
	// Undecided lists what the budget did not pay for, and what deciding it would cost.
	Undecided []UndecidedCost `json:"undecided,omitempty"`
}

// Cells returns the --cells argument that measures every funded item and row cell, in plan
// order without repeats.
func (p RerunPlan) Cells() string {
	var cells []string
	add := func(c string) {
		if c != "" && !slices.Contains(cells, c) {
			cells = append(cells, c)
		}
	}
	for _, it := range p.Items {
		add(it.Cell)
	}
	for _, r := range p.Rows {
		for c := range strings.SplitSeq(r.Cells, ",") {
			add(c)
		}
	}
	return strings.Join(cells, ",")
}

// UndecidedCost is one cell (or decode context row) left undecided, with the price of deciding
// it.
type UndecidedCost struct {
	// Cell is the cell's CellID string; for a row, the --cells list of the row's cells.
	Cell string `json:"cell"`
	// Row is the decode context label when the entry is a whole row.
	Row     string           `json:"row,omitempty"`
	Metrics []results.Metric `json:"metrics"`
	// FurtherTrials is the advised number of further trials; 0 when no number within the
	// advice's limit decides it (then Cost is 0 and unknown).
	FurtherTrials int           `json:"further_trials,omitempty"`
	Cost          time.Duration `json:"cost,omitempty"`
	Reason        string        `json:"reason"`
}

// Reasons an entry of RerunPlan.Undecided was not funded.
const (
	// UndecidedOverBudget: its advised trials cost more than the budget had left.
	UndecidedOverBudget = results.UndecidedOverBudget
	// UndecidedNoTrials: no number of trials within the advice's limit decides it.
	UndecidedNoTrials = results.UndecidedNoTrials
	// UndecidedNeedsBase: head trials alone cannot decide it (Thresholds.HeadOnlyReruns); base
	// reruns or paired mode would.
	UndecidedNeedsBase = results.UndecidedNeedsBase
)

// Result returns u as the results file and the comparison record it (cost in seconds).
func (u UndecidedCost) Result() results.UndecidedCost {
	return results.UndecidedCost{Cell: u.Cell, Row: u.Row, Metrics: u.Metrics, FurtherTrials: u.FurtherTrials,
		CostSeconds: u.Cost.Seconds(), Reason: u.Reason}
}

// PlanReruns chooses which of the advised reruns a GPU budget pays for. Every advised cell and
// row is a candidate worth the cell-metrics it decides (a row: every metric of its cells) at the
// cost of its advised trials (a row: every cell of the row, each run); candidates are funded in
// the order of cell-metrics decided per minute of GPU time, the cheaper first on ties, as long as
// the next still fits in what is left of the budget (a candidate that does not fit is skipped
// and a cheaper one may still be funded). A close row, whose pooled test needs few runs, thus
// comes before a far one, and a cell that needs few trials before one that needs many. Nothing
// is funded in part: fewer trials than advised would not reach the planned power. Everything
// not funded, and the advice's undecidable cells, goes to Undecided with what deciding it would
// cost. PlanReruns is pure; a nil advice gives an empty plan.
func PlanReruns(adv *results.RerunAdvice, cost CellCost, budget time.Duration) RerunPlan {
	var plan RerunPlan
	if adv == nil {
		return plan
	}
	type cand struct {
		order  int
		item   *results.RerunItem
		row    *results.RowRerun
		value  int
		trials int
		cost   time.Duration
	}
	var cands []cand
	for i := range adv.Items {
		it := &adv.Items[i]
		cands = append(cands, cand{order: len(cands), item: it, value: max(1, len(it.Metrics)),
			trials: it.FurtherTrials, cost: cost(it.Cell, it.FurtherTrials)})
	}
	for i := range adv.Rows {
		r := &adv.Rows[i]
		var c time.Duration
		n := 0
		for cell := range strings.SplitSeq(r.Cells, ",") {
			if cell == "" {
				continue
			}
			c += cost(cell, r.FurtherTrials)
			n++
		}
		cands = append(cands, cand{order: len(cands), row: r, value: max(1, n*len(results.Metrics(results.PhaseDecode))),
			trials: r.FurtherTrials, cost: c})
	}
	// Order by value per cost (a/b > c/d as a·d > c·b, in float to avoid overflow), then cost.
	slices.SortStableFunc(cands, func(a, b cand) int {
		l := float64(a.value) * float64(max(b.cost, 1))
		r := float64(b.value) * float64(max(a.cost, 1))
		switch {
		case l > r:
			return -1
		case l < r:
			return 1
		}
		return cmp.Or(cmp.Compare(a.cost, b.cost), cmp.Compare(a.order, b.order))
	})
	left := budget
	funded := map[int]bool{}
	for _, c := range cands {
		if c.cost <= left {
			left -= c.cost
			plan.Cost += c.cost
			funded[c.order] = true
		}
	}
	// Report in the advice's order, which is the matrix's.
	slices.SortFunc(cands, func(a, b cand) int { return cmp.Compare(a.order, b.order) })
	for _, c := range cands {
		switch {
		case funded[c.order] && c.item != nil:
			plan.Items = append(plan.Items, *c.item)
		case funded[c.order]:
			plan.Rows = append(plan.Rows, *c.row)
		case c.item != nil:
			plan.Undecided = append(plan.Undecided, UndecidedCost{Cell: c.item.Cell, Metrics: c.item.Metrics,
				FurtherTrials: c.trials, Cost: c.cost, Reason: UndecidedOverBudget})
		default:
			plan.Undecided = append(plan.Undecided, UndecidedCost{Cell: c.row.Cells, Row: c.row.ContextLabel,
				Metrics: results.Metrics(results.PhaseDecode), FurtherTrials: c.trials, Cost: c.cost, Reason: UndecidedOverBudget})
		}
	}
	for _, u := range adv.Undecidable {
		reason := UndecidedNoTrials
		if u.Reason == results.UndecidableNeedsBase {
			reason = UndecidedNeedsBase
		}
		plan.Undecided = append(plan.Undecided, UndecidedCost{Cell: u.Cell, Metrics: u.Metrics, Reason: reason})
	}
	return plan
}

// String returns one line about u for a log or a comment.
func (u UndecidedCost) String() string {
	name := u.Cell
	if u.Row != "" {
		name = "row " + u.Row
	}
	switch u.Reason {
	case UndecidedNoTrials:
		return fmt.Sprintf("%s: no number of further trials within the limit decides it", name)
	case UndecidedNeedsBase:
		return fmt.Sprintf("%s: needs base reruns or paired mode (head trials alone cannot decide it)", name)
	}
	return fmt.Sprintf("%s: %d more trials, %s of GPU time", name, u.FurtherTrials, u.Cost.Round(time.Second))
}
