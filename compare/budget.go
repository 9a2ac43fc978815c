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
	// Order names what was funded in the order it was bought, the best buy first: an item's
	// cell, or "row LABEL". Measure in this order, so that a budget cut short loses the least.
	Order []string `json:"-"`
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

// PlanReruns chooses which of the advised reruns a GPU budget pays for, when only the advice is
// at hand. Every advised cell and row is a candidate worth the cell-metrics it decides (a row:
// every metric of its cells) at the cost of its advised trials (a row: every cell of the row,
// each run); candidates are funded in the order of cell-metrics decided per minute of GPU time,
// the cheaper first on ties, as long as the next still fits in what is left of the budget (a
// candidate that does not fit is skipped and a cheaper one may still be funded). Nothing is
// funded in part. Everything not funded, and the advice's undecidable cells, goes to Undecided
// with what deciding it would cost. PlanReruns is pure; a nil advice gives an empty plan.
// PlanRerunsFor, which sees the first look's estimates, buys more detection per minute.
func PlanReruns(adv *results.RerunAdvice, cost CellCost, budget time.Duration) RerunPlan {
	return planReruns(adv, cost, budget, nil)
}

// candidate is one advised rerun the budget may buy.
type candidate struct {
	order  int
	item   *results.RerunItem
	row    *results.RowRerun
	value  float64
	trials int
	cost   time.Duration
	// partial, for a row whose pooled test is worth something short of the advised runs,
	// returns its value at runs further runs (nil: funded whole or not at all).
	partial func(runs int) float64
}

// key names c in RerunPlan.Order.
func (c candidate) key() string {
	if c.item != nil {
		return c.item.Cell
	}
	return "row " + c.row.ContextLabel
}

// minPartialRuns is the fewest further runs of a row funded in part.
const minPartialRuns = 2

// planReruns is PlanReruns with the candidates' values from val (nil: the cell-metrics each
// decides).
func planReruns(adv *results.RerunAdvice, cost CellCost, budget time.Duration, val *rerunValue) RerunPlan {
	var plan RerunPlan
	if adv == nil {
		return plan
	}
	var cands []candidate
	for i := range adv.Items {
		it := &adv.Items[i]
		c := candidate{order: len(cands), item: it, value: float64(max(1, len(it.Metrics))),
			trials: it.FurtherTrials, cost: cost(it.Cell, it.FurtherTrials)}
		if val != nil {
			c.value = val.item(it)
		}
		cands = append(cands, c)
	}
	rowCost := func(r *results.RowRerun, runs int) time.Duration {
		var c time.Duration
		for cell := range strings.SplitSeq(r.Cells, ",") {
			if cell != "" {
				c += cost(cell, runs)
			}
		}
		return c
	}
	for i := range adv.Rows {
		r := &adv.Rows[i]
		n := 0
		for cell := range strings.SplitSeq(r.Cells, ",") {
			if cell != "" {
				n++
			}
		}
		c := candidate{order: len(cands), row: r, value: float64(max(1, n*len(results.Metrics(results.PhaseDecode)))),
			trials: r.FurtherTrials, cost: rowCost(r, r.FurtherTrials)}
		if val != nil {
			c.value = val.row(r, r.FurtherTrials)
			if r.FurtherTrials > minPartialRuns {
				c.partial = func(runs int) float64 { return val.row(r, runs) }
			}
		}
		cands = append(cands, c)
	}
	// fit returns the most runs of a row, up to its advice, that cost at most left (0: none).
	fit := func(c candidate, left time.Duration) int {
		for runs := c.trials; runs >= minPartialRuns; runs-- {
			if rowCost(c.row, runs) <= left {
				return runs
			}
		}
		return 0
	}
	// A row that the whole budget cannot pay is ranked by what the budget can buy of it.
	density := func(c candidate) (float64, time.Duration) {
		if c.partial != nil && c.cost > budget {
			if runs := fit(c, budget); runs > 0 {
				return c.partial(runs), rowCost(c.row, runs)
			}
		}
		return c.value, c.cost
	}
	// Order by value per cost (a/b > c/d as a·d > c·b), then cost.
	slices.SortStableFunc(cands, func(a, b candidate) int {
		va, ca := density(a)
		vb, cb := density(b)
		l := va * float64(max(cb, 1))
		r := vb * float64(max(ca, 1))
		switch {
		case l > r:
			return -1
		case l < r:
			return 1
		}
		return cmp.Or(cmp.Compare(ca, cb), cmp.Compare(a.order, b.order))
	})
	left := budget
	funded := map[int]int{} // order → runs funded
	for _, c := range cands {
		switch {
		case c.cost <= left:
			left -= c.cost
			plan.Cost += c.cost
			funded[c.order] = c.trials
		case c.partial != nil:
			if runs := fit(c, left); runs > 0 && c.partial(runs) > 0 {
				cc := rowCost(c.row, runs)
				left -= cc
				plan.Cost += cc
				funded[c.order] = runs
			} else {
				continue
			}
		default:
			continue
		}
		plan.Order = append(plan.Order, c.key())
	}
	// Report in the advice's order, which is the matrix's.
	slices.SortFunc(cands, func(a, b candidate) int { return cmp.Compare(a.order, b.order) })
	for _, c := range cands {
		runs, ok := funded[c.order]
		switch {
		case ok && c.item != nil:
			plan.Items = append(plan.Items, *c.item)
		case ok:
			r := *c.row
			r.FurtherTrials = runs
			plan.Rows = append(plan.Rows, r)
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
