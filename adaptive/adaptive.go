package adaptive

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/speedmatrix/speedmatrix/compare"
	"github.com/speedmatrix/speedmatrix/internal/textout"
	"github.com/speedmatrix/speedmatrix/results"
)

// Measure measures the cells (CellID strings), each trials times, and returns their results
// file. A measurement cut short returns what it measured together with its error.
type Measure func(ctx context.Context, cells []string, trials int) (*results.File, error)

// Job is one budgeted decision.
type Job struct {
	// Compare is the comparison's input: Base, Head (the first pass), History, MeasuredNoise,
	// Cells. Run adds the reruns to Head for the second look.
	Compare compare.Input
	// Thresholds are the comparison's; Run sets Look, and HeadOnlyReruns since it measures only
	// the head again.
	Thresholds compare.Thresholds
	// Budget is the GPU wall time of the whole job; 0 buys no rerun.
	Budget time.Duration
	// GPU is what the job spent before the reruns: build, load and the first pass.
	GPU results.GPUTime
	// Overhead is what each rerun measurement costs besides the run itself (e.g. restarting the
	// server); 0 when the reruns measure the server of the first pass.
	Overhead time.Duration
	// Cost prices a rerun; nil is CostModel of the first pass with Overhead.
	Cost compare.CellCost
	// Measure measures a rerun.
	Measure Measure
	// Confirm measures the cells the first look finds regressed once more, before any other
	// rerun, when the budget pays for it: the block is then posted only if the second look,
	// on the first pass's trials pooled with the confirmation's, still finds it. A disturbance
	// of the first pass (a stall, a throttle) that made a cell look slower is not measured
	// twice in the same place. No caller sets it yet: at the second look a real slowdown of a
	// row with history noise can read unproven (docs/method.md).
	Confirm bool
	// Now is the clock (nil: time.Now); Log receives progress (nil: discarded).
	Now func() time.Time
	Log *slog.Logger
}

// Outcome is what a budgeted decision gave.
type Outcome struct {
	// First is the first look; Final the comparison to report: the second look on the pooled
	// trials when a rerun was measured, else First. Final.GPUTime is GPU.
	First, Final *results.Comparison
	// Plan is what the budget bought before measuring.
	Plan compare.RerunPlan
	// Reruns are the rerun measurements' results, in the order measured.
	Reruns []*results.File
	// GPU is the job's GPU time with the reruns, and the undecided cells with their cost.
	GPU results.GPUTime
}

// unit is one rerun measurement: a cell's advised trials, or a whole row's.
type unit struct {
	key    string // as in compare.RerunPlan.Order
	cells  []string
	trials int
	cost   time.Duration
	value  int
	entry  compare.UndecidedCost // what it is when it is not measured
}

// Run compares the first pass with the baseline and, when cells are inconclusive, measures
// the reruns the budget pays for (best decided cell-metrics per minute first; each started
// only when its predicted cost fits in what is left, and stopped at the end of the budget),
// then compares the pooled trials at the second look. It returns an error when a comparison
// fails or ctx ends; a rerun that fails is logged, its cells stay undecided, and the job goes
// on to the second look with what was measured.
func Run(ctx context.Context, j Job) (Outcome, error) {
	now := j.Now
	if now == nil {
		now = time.Now
	}
	log := j.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	out := Outcome{GPU: j.GPU}
	out.GPU.BudgetSeconds = j.Budget.Seconds()
	out.GPU.Sum()
	th := j.Thresholds
	th.Look = 1
	th.HeadOnlyReruns = true // the reruns measure the head alone; the base's runs stay as they are
	first, err := compare.Compare(j.Compare, th)
	if err != nil {
		return out, err
	}
	out.First, out.Final = first, first
	var blocked []string
	if j.Confirm {
		blocked = regressed(first)
	}
	if (first.Rerun == nil && len(blocked) == 0) || len(j.Compare.Head) == 0 {
		first.GPUTime = &out.GPU
		return out, nil
	}
	cost := j.Cost
	if cost == nil {
		cost = CostModel(j.Compare.Head[0], j.Overhead)
	}
	spent := func() time.Duration { return time.Duration(out.GPU.Sum() * float64(time.Second)) }
	var units []unit
	if first.Rerun != nil {
		out.Plan = compare.PlanRerunsFor(first, cost, j.Budget-spent())
		units = planUnits(out.Plan, cost)
	}
	if len(blocked) > 0 {
		u := confirmUnit(blocked, firstTrials(j.Compare.Head[0]), cost)
		// The confirmation comes first; the reruns bought above keep their order after it
		// and stop where the budget ends, as always.
		units = append([]unit{u}, units...)
		log.Info("adaptive: confirming the block before posting it", "cells", strings.Join(blocked, ","), "predicted", round(u.cost))
	}
	log.Info(fmt.Sprintf("adaptive: %s inconclusive at the first look; the budget left (%s) buys %s (%s predicted), %d not",
		textout.Plural(first.Summary.CellCounts.Inconclusive, "cell", "cells"), round(j.Budget-spent()), textout.Plural(len(units), "rerun", "reruns"), round(out.Plan.Cost), len(out.Plan.Undecided)))

	undecided := slices.Clone(out.Plan.Undecided)
	measured := map[string]bool{}
	var warnings []string
	stopped := false
	for _, u := range units {
		left := j.Budget - spent()
		if stopped || u.cost > left {
			if !stopped {
				log.Info("adaptive: the next rerun would cross the budget; stopping", "cells", strings.Join(u.cells, ","), "predicted", round(u.cost), "left", round(left))
			}
			stopped = true
			if u.key == "confirm" {
				warnings = append(warnings, fmt.Sprintf("the block on %s was not confirmed: measuring %s again would cost %s of GPU time, more than the budget left (%s)",
					strings.Join(u.cells, ", "), textout.Plural(len(u.cells), "cell", "cells"), round(u.cost), round(left)))
				continue
			}
			undecided = append(undecided, u.entry)
			continue
		}
		log.Info("adaptive: measuring again", "cells", strings.Join(u.cells, ","), "trials", u.trials, "predicted", round(u.cost), "left", round(left))
		mctx, cancel := context.WithTimeout(ctx, left-stopMargin(left))
		began := now()
		f, err := j.Measure(mctx, u.cells, u.trials)
		took := now().Sub(began)
		cancel()
		out.GPU.RerunSeconds += took.Seconds()
		out.GPU.Reruns++
		if u.key == "confirm" && err == nil {
			warnings = append(warnings, fmt.Sprintf("before posting the block, %s measured again in this job (%s of GPU time): the verdict is the second look's, on the first pass's trials pooled with the confirmation's",
				strings.Join(u.cells, ", "), round(took)))
		}
		if f != nil {
			out.Reruns = append(out.Reruns, f)
			// What the rerun holds: one cut at the end of the budget holds some of its cells.
			for _, c := range f.Decode {
				measured[c.ID().String()] = true
			}
			for _, c := range f.Prefill {
				measured[c.ID().String()] = true
			}
		}
		switch {
		case err == nil:
		case ctx.Err() != nil:
			return out, ctx.Err()
		case errors.Is(mctx.Err(), context.DeadlineExceeded) || errors.Is(err, context.DeadlineExceeded):
			warnings = append(warnings, fmt.Sprintf("the rerun of %s reached the end of the GPU budget and was stopped; the reruns stopped there", strings.Join(u.cells, ",")))
			log.Warn("adaptive: the budget ran out during a rerun; stopping", "cells", strings.Join(u.cells, ","))
			stopped = true
		default:
			warnings = append(warnings, fmt.Sprintf("the rerun of %s failed (%v); the reruns stopped there", strings.Join(u.cells, ","), err))
			log.Warn("adaptive: a rerun failed; stopping the reruns", "cells", strings.Join(u.cells, ","), "err", err)
			stopped = true
		}
	}
	if len(out.Reruns) > 0 {
		in := j.Compare
		in.Head = append(slices.Clone(in.Head), out.Reruns...)
		in.HeadPath += fmt.Sprintf(" + %d reruns", len(out.Reruns))
		// The second look tests the cells measured again, as the rerun advice plans it (compare
		// --look 2 --cells); every other cell keeps its first-look verdict (compare.MergeLooks).
		var again []results.CellID
		for cell := range measured {
			id, err := results.ParseCellID(cell)
			if err != nil {
				return out, fmt.Errorf("the second look: %w", err)
			}
			if len(in.Cells) == 0 || slices.Contains(in.Cells, id) {
				again = append(again, id)
			}
		}
		slices.SortFunc(again, func(a, b results.CellID) int { return cmp.Compare(a.String(), b.String()) })
		in.Cells = again
		th.Look = 2
		second, err := compare.Compare(in, th)
		if err != nil {
			return out, fmt.Errorf("the second look: %w", err)
		}
		final := compare.MergeLooks(first, second)
		final.Warnings = append(final.Warnings, warnings...)
		out.Final = final
	} else {
		out.Final.Warnings = append(out.Final.Warnings, warnings...)
	}
	out.GPU.Undecided = stillUndecided(out.Final, undecided, measured)
	out.GPU.Sum()
	out.Final.GPUTime = &out.GPU
	if out.Final != first {
		first.GPUTime = &out.GPU
	}
	return out, nil
}

// planUnits returns the plan's measurements in the order they were bought (p.Order: the most
// value per minute first); without an order, most cell-metrics per minute first, the cheaper
// first on ties.
func planUnits(p compare.RerunPlan, cost compare.CellCost) []unit {
	var us []unit
	for _, it := range p.Items {
		c := cost(it.Cell, it.FurtherTrials)
		us = append(us, unit{key: it.Cell, cells: []string{it.Cell}, trials: it.FurtherTrials, cost: c, value: max(1, len(it.Metrics)),
			entry: compare.UndecidedCost{Cell: it.Cell, Metrics: it.Metrics, FurtherTrials: it.FurtherTrials, Cost: c, Reason: compare.UndecidedOverBudget}})
	}
	for _, r := range p.Rows {
		cells := strings.Split(r.Cells, ",")
		var c time.Duration
		for _, cell := range cells {
			c += cost(cell, r.FurtherTrials)
		}
		us = append(us, unit{key: "row " + r.ContextLabel, cells: cells, trials: r.FurtherTrials, cost: c, value: len(cells) * len(results.Metrics(results.PhaseDecode)),
			entry: compare.UndecidedCost{Cell: r.Cells, Row: r.ContextLabel, Metrics: results.Metrics(results.PhaseDecode), FurtherTrials: r.FurtherTrials, Cost: c, Reason: compare.UndecidedOverBudget}})
	}
	if len(p.Order) > 0 {
		slices.SortStableFunc(us, func(a, b unit) int {
			return cmp.Compare(slices.Index(p.Order, a.key), slices.Index(p.Order, b.key))
		})
		return us
	}
	slices.SortStableFunc(us, func(a, b unit) int {
		l, r := float64(a.value)*float64(max(b.cost, 1)), float64(b.value)*float64(max(a.cost, 1))
		switch {
		case l > r:
			return -1
		case l < r:
			return 1
		}
		return cmp.Compare(a.cost, b.cost)
	})
	return us
}

// stillUndecided lists the cell-metrics c leaves inconclusive, grouped by cell and reason:
// those the budget did not buy with their price (notBought, by cell and metric, or by row),
// those measured again and still inconclusive at the second look, and those no number of
// trials decides.
func stillUndecided(c *results.Comparison, notBought []compare.UndecidedCost, measured map[string]bool) []results.UndecidedCost {
	byCell := map[string][]compare.UndecidedCost{}
	for _, u := range notBought {
		for cell := range strings.SplitSeq(u.Cell, ",") {
			byCell[cell] = append(byCell[cell], u)
		}
	}
	var out []results.UndecidedCost
	rows := map[string]bool{}
	for _, cell := range c.Cells {
		if cell.Verdict != results.VerdictInconclusive {
			continue
		}
		var own []results.UndecidedCost // this cell's entries, by reason
		add := func(u results.UndecidedCost, m results.Metric) {
			for i := range own {
				if own[i].Reason == u.Reason && own[i].FurtherTrials == u.FurtherTrials {
					own[i].Metrics = append(own[i].Metrics, m)
					return
				}
			}
			u.Metrics = []results.Metric{m}
			own = append(own, u)
		}
		for _, m := range cell.Metrics {
			if m.Verdict != results.VerdictInconclusive {
				continue
			}
			var entry *compare.UndecidedCost
			for i, u := range byCell[cell.Cell] {
				if u.Row != "" || slices.Contains(u.Metrics, m.Metric) {
					entry = &byCell[cell.Cell][i]
					break
				}
			}
			switch {
			case entry != nil && (entry.Reason == compare.UndecidedNoTrials || entry.Reason == compare.UndecidedNeedsBase):
				add(entry.Result(), m.Metric)
			case measured[cell.Cell]:
				add(results.UndecidedCost{Cell: cell.Cell, Reason: results.UndecidedSecondLook}, m.Metric)
			case entry != nil && entry.Row != "":
				if !rows[entry.Row] {
					rows[entry.Row] = true
					out = append(out, entry.Result())
				}
			case entry != nil:
				add(entry.Result(), m.Metric)
			default:
				add(results.UndecidedCost{Cell: cell.Cell, Reason: results.UndecidedNoTrials}, m.Metric)
			}
		}
		out = append(out, own...)
	}
	return out
}

// stopMargin is how long before the end of the budget a rerun's deadline falls, so that a
// run cut there can stop its streams and write its results within the budget: 5 % of what is
// left, at most 30 s (the runner's bound on stopping a window's streams).
func stopMargin(left time.Duration) time.Duration {
	return min(left/20, 30*time.Second)
}

// round rounds d to the second for the log.
func round(d time.Duration) time.Duration { return d.Round(time.Second) }

// regressed returns the cells a comparison finds regressed, in its order.
func regressed(c *results.Comparison) []string {
	var out []string
	for _, cell := range c.Cells {
		if cell.Verdict == results.VerdictRegression {
			out = append(out, cell.Cell)
		}
	}
	return out
}

// firstTrials returns the trials per cell of the first pass f (at least 1).
func firstTrials(f *results.File) int {
	if f != nil && f.Run.Settings != nil && f.Run.Settings.Trials > 0 {
		return f.Run.Settings.Trials
	}
	return 1
}

// confirmUnit is the measurement that confirms a block: the regressed cells once more, each
// with the first pass's trials. Not measured (over the budget), it leaves the block as the
// first look found it, and says its price.
func confirmUnit(cells []string, trials int, cost compare.CellCost) unit {
	var c time.Duration
	for _, cell := range cells {
		c += cost(cell, trials)
	}
	return unit{key: "confirm", cells: cells, trials: trials, cost: c, value: len(cells),
		entry: compare.UndecidedCost{Cell: strings.Join(cells, ","), FurtherTrials: trials, Cost: c, Reason: compare.UndecidedOverBudget}}
}
