package compare

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/speedmatrix/speedmatrix/compare/stats"
	"github.com/speedmatrix/speedmatrix/internal/quantile"
	"github.com/speedmatrix/speedmatrix/results"
)

// A lone excursion is one window of a run far slower than its cell's other runs while the rest
// of the run is not: a stalled request or a GC pause that held the whole window, which the
// window's bins cannot show (a dip inside a window is repaired first, disturbed.go). A machine
// that does this does it in its history too, and there it is plain to see: the history's runs
// of one commit, each cell against its other runs. Where the history shows such excursions
// often enough that one is likely somewhere in a matrix, the noise of a cell measured in one
// window of one head run holds them, and its interval is that wide: a lone head cell no slower
// than the history's own excursions is too noisy to tell from one, not a regression and not a
// slowdown shown (issue 33: "noise real GPUs have").
//
// The rule:
//   - in each history run, after its run factor, a cell is an excursion when it is slower than
//     the median of its other runs by more than excursionSDs of their robust spread (the
//     normalised MAD) and by more than twice δ; a run with more than maxLoneCells of them
//     moved as a whole and shows no lone window;
//   - the history shows excursions when two or more of its runs hold one and the rate over all
//     its cell-runs, at its one-sided 95 % lower bound (Wilson), exceeds the two-sided tail of
//     one cell of the table (α / 2n): a rate that high puts the excursions inside the interval
//     at which the table's cells are judged;
//   - a lone head cell (loneCells' rule: one window of the one head run, at most maxLoneCells
//     of them, their rows and columns moved less; here two may share a row or a column)
//     that regressed or is unproven then takes the deepest excursion into its interval: its
//     upper end becomes the change were its window that much slower than the cell, and where
//     that no longer lies wholly beyond δ the cell is inconclusive, with the reason and the
//     advice to measure it again.

// excursionSDs is how many robust SDs below its other runs a history cell must lie to count as
// an excursion: beyond anything Gaussian noise does in a history's few hundred cell-runs.
const excursionSDs = 5

// minExcursionRuns is the fewest history runs that must hold an excursion for the history to
// show them: one run's accident is no habit of the machine.
const minExcursionRuns = 2

// excursionHistory is what the history shows of lone excursions.
type excursionHistory struct {
	runs, cellRuns, count int     // history runs read, their cell-runs, excursions among them
	withOne               int     // runs holding an excursion
	deepest               float64 // the deepest excursion, as a fraction slower (0.25: 25 % slower)
	rateLow               float64 // the excursions' rate per cell-run, its one-sided 95 % lower bound
}

// findExcursions reads the lone excursions of the deciding metric of the decode and prefill
// cells ids in the history files (each taken after its run factor from re).
func findExcursions(history []*results.File, ids []results.CellID, re *runEffects, th Thresholds) excursionHistory {
	var ex excursionHistory
	if len(history) < 6 {
		return ex
	}
	ex.runs = len(history)
	type hit struct {
		id    results.CellID
		depth float64
	}
	hits := make([][]hit, len(history))
	for _, id := range ids {
		m := results.DecidingMetric(id.Phase)
		vals := make([]float64, len(history))
		var have []int
		for j, f := range history {
			xs := historyValues(f, id, m)
			if len(xs) == 0 {
				continue
			}
			a := 0.0
			if re != nil && j < len(re.hist) {
				a = adjustment(re.hist[j], id.Phase, m)
			}
			vals[j] = quantile.Median(xs) - a
			have = append(have, j)
		}
		if len(have) < 6 {
			continue
		}
		ex.cellRuns += len(have)
		minDepth := 2 * th.Delta[m]
		for _, j := range have {
			var others []float64
			for _, k := range have {
				if k != j {
					others = append(others, vals[k])
				}
			}
			med := quantile.Median(others)
			dev := make([]float64, len(others))
			for i, o := range others {
				dev[i] = math.Abs(o - med)
			}
			sd := 1.4826 * quantile.Median(dev)
			d := vals[j] - med // log; negative is slower for a rate
			if !m.HigherIsBetter() {
				d = -d
			}
			if d < -excursionSDs*sd && -math.Expm1(d) > minDepth {
				hits[j] = append(hits[j], hit{id, -math.Expm1(d)})
			}
		}
	}
	for _, hs := range hits {
		if len(hs) == 0 || len(hs) > maxLoneCells {
			continue
		}
		ex.withOne++
		for _, h := range hs {
			ex.count++
			ex.deepest = math.Max(ex.deepest, h.depth)
		}
	}
	if ex.cellRuns > 0 {
		ex.rateLow, _ = stats.Wilson(ex.count, ex.cellRuns, 1.6449) // one-sided 95 %
	}
	return ex
}

// shows reports whether the history shows lone excursions often enough to count among the
// noise of a table of n cells judged at confidence conf.
func (ex excursionHistory) shows(n int, conf float64) bool {
	return ex.withOne >= minExcursionRuns && n > 0 && ex.rateLow > (1-conf)/(2*float64(n))
}

// checkExcursions widens, where the history (in.History, each run after its factor in re)
// shows lone excursions, the interval of each lone head cell that regressed or is unproven by
// the deepest of them, and makes the cells whose interval then no longer lies wholly slower
// than δ inconclusive (see excursionHistory). The history is read only when there are such
// cells.
func checkExcursions(c *results.Comparison, in Input, re *runEffects, th Thresholds) {
	if len(in.Head) != 1 || in.Head[0].Run.Pairing != nil || len(in.History) == 0 {
		return
	}
	var cand []int
	n := map[results.Phase]int{}
	for i := range c.Cells {
		cell := &c.Cells[i]
		m := cell.Metric(results.DecidingMetric(cell.Phase))
		if m == nil || m.Change == nil {
			continue
		}
		n[cell.Phase]++
		fromHistory := m.Noise != nil && m.Noise.Source == results.NoiseHistory
		if fromHistory && (m.Verdict == results.VerdictRegression || m.Verdict == results.VerdictUnproven) && m.Change.High < -m.Delta {
			cand = append(cand, i)
		}
	}
	if len(cand) == 0 || !loneCells(c, in, cand, true) {
		return
	}
	ex := findExcursions(in.History, cellIDs(c), re, th)
	if !(ex.deepest > 0) {
		return
	}
	var names []string
	for _, i := range cand {
		cell := &c.Cells[i]
		if !ex.shows(n[cell.Phase], th.ConfidenceLevel) {
			continue
		}
		m := cell.Metric(results.DecidingMetric(cell.Phase))
		high := (1+m.Change.High)/(1-ex.deepest) - 1
		if high < -m.Delta {
			continue // slower than any excursion the history shows: left as it was
		}
		m.Reason = fmt.Sprintf("%s; but the cell is slower alone, in one window of the head's one run, and this machine's history shows lone windows as slow (%d in %d of its %d runs, the deepest %s slower, a stalled request or a GC pause that held the window): with those in its noise the interval reaches %s, so one run cannot tell it from a change; measuring the cell again decides it",
			m.Reason, ex.count, ex.withOne, ex.runs, pct0(ex.deepest), pct(high))
		m.Change.High = high
		m.Verdict = results.VerdictInconclusive
		names = append(names, cell.Cell)
	}
	if len(names) == 0 {
		return
	}
	slices.Sort(names)
	excuseGroups(c, names, th)
	tally(c, in)
	c.Warnings = append(c.Warnings, fmt.Sprintf("%s slower alone, each in one window of the head's one run, no slower than the lone windows this machine's history shows (%d in %d of %d runs, down to %s slower): too noisy to decide from one run; measure %s again to decide",
		strings.Join(names, ", "), ex.count, ex.withOne, ex.runs, pct0(ex.deepest), itThem(len(names))))
}

// cellIDs returns the ids of c's cells (those that parse).
func cellIDs(c *results.Comparison) []results.CellID {
	var ids []results.CellID
	for i := range c.Cells {
		if id, err := results.ParseCellID(c.Cells[i].Cell); err == nil {
			ids = append(ids, id)
		}
	}
	return ids
}

// excuseGroups re-reads each unproven group that holds an excused cell (names) without it: the
// group's slowness may rest on one window as slow as the history's excursions (a column of
// three cells, one of them 25 % slower, is 8 % slower on average). Its interval becomes the
// other cells' mean change with the group's own half-width, widened for the fewer cells; where
// that no longer lies wholly slower than δ, the group is inconclusive and says why.
func excuseGroups(c *results.Comparison, names []string, th Thresholds) {
	excused := map[string]bool{}
	for _, n := range names {
		excused[n] = true
	}
	change := map[string]float64{}
	for i := range c.Cells {
		if ch := changeOf(&c.Cells[i]); ch != nil {
			change[c.Cells[i].Cell] = *ch
		}
	}
	for i := range c.Groups {
		g := &c.Groups[i]
		if g.Verdict != results.VerdictUnproven {
			continue
		}
		var rest []float64
		var out []string
		for _, id := range g.Cells {
			if excused[id] {
				out = append(out, id)
			} else if ch, ok := change[id]; ok {
				rest = append(rest, math.Log1p(ch))
			}
		}
		if len(out) == 0 || len(rest) < 2 || !(g.High > g.Low) {
			continue
		}
		n := float64(len(rest) + len(out))
		half := (math.Log1p(g.High) - math.Log1p(g.Low)) / 2 * math.Sqrt(n/float64(len(rest)))
		mean := 0.0
		for _, x := range rest {
			mean += x / float64(len(rest))
		}
		high := math.Expm1(mean + half)
		d := th.Delta[results.DecidingMetric(g.Phase)]
		if high < -d {
			continue // slower without them too
		}
		g.Reason = fmt.Sprintf("%s; but without %s (alone in one window, no slower than this machine's lone windows) the other %d cells moved %s (up to %s): not wholly slower than −%s",
			g.Reason, strings.Join(out, ", "), len(rest), pct(math.Expm1(mean)), pct(high), pct0(d))
		g.High = math.Max(g.High, high)
		g.Verdict = results.VerdictInconclusive
	}
}
