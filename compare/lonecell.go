package compare

import (
	"fmt"
	"strings"

	"github.com/speedmatrix/speedmatrix/internal/quantile"
	"github.com/speedmatrix/speedmatrix/internal/textout"
	"github.com/speedmatrix/speedmatrix/results"
)

// maxLoneCells is the most regressed cells checkLoneCells reads as disturbed windows: a stalled
// request or a GC pause slows one to three windows of a run (issue 33).
const maxLoneCells = 3

// minLoneMatrix is the fewest compared cells among which a cell can be lone.
const minLoneMatrix = 12

// checkLoneCells reads a regression that rests on a few lone cells of one head window as what
// it may be, a disturbed measurement, not a change of the code. A stalled request or a GC pause
// makes one window 15–30 % slower throughout, which one head run cannot tell from a change of
// that one cell: when the head side is one run, every regressed cell was measured in one window
// of it, there are at most maxLoneCells of them and none belongs to a row, column, phase or
// shift that regressed or is suspected while its row or column was tested, and each holds a
// usable number (a lost number is no stall), those cells are unproven instead (exit 4, never a
// pass): measuring them again decides it. A slowdown the bot's shapes make (rows, columns, a
// phase) regresses a group and is left alone.
func checkLoneCells(c *results.Comparison, in Input) {
	if c.Verdict != results.VerdictRegression {
		return
	}
	var lone []int
	for i := range c.Cells {
		if c.Cells[i].Verdict == results.VerdictRegression {
			lone = append(lone, i)
		}
	}
	if !loneCells(c, in, lone, false) {
		return
	}
	var names []string
	for _, i := range lone {
		cell := &c.Cells[i]
		names = append(names, cell.Cell)
		for j := range cell.Metrics {
			m := &cell.Metrics[j]
			if m.Verdict == results.VerdictRegression {
				m.Verdict = results.VerdictUnproven
				m.Reason = fmt.Sprintf("%s; but the cell is slower alone, in one window of one head run, while its row and column are not: a stalled request or a GC pause looks the same, so measuring the cell again decides it", m.Reason)
			}
		}
	}
	tally(c, in)
	if c.Verdict == results.VerdictUnproven && c.VerdictReason == "" {
		c.VerdictReason = fmt.Sprintf("%s slower alone in one window of the head's run", textout.Plural(len(names), "cell is", "cells are"))
	}
	c.Warnings = append(c.Warnings, fmt.Sprintf("%s slower alone, each in one window of the head's one run, with no row, column or phase slower: a stalled request or a GC pause looks the same, so %s unproven rather than a regression; measure %s again to decide",
		strings.Join(names, ", "), isAre2(len(names)), itThem(len(names))))
}

// loneCells reports whether the cells cand of c (their indexes), the cells of c found slower,
// are lone cells of one head window: the head side is one unpaired run, each was measured in
// one window of it that holds a usable number, there are at most maxLoneCells of them among at
// least minLoneMatrix compared cells, no two share a row or a column, none belongs to a row,
// column, phase or shift that regressed or is unproven by more than that one cell while its
// row or column was tested, and the rest of each one's row and column moved by less than a
// third of its change. With shareLines, two of them may share a row or a column, and an
// unproven group does not hold them (stalled windows fall where they fall, and pull their
// group's mean with them: excuseGroups reads it again; the rows and columns must still not
// have moved).
func loneCells(c *results.Comparison, in Input, cand []int, shareLines bool) bool {
	if len(cand) == 0 || len(cand) > maxLoneCells || len(in.Head) != 1 || in.Head[0].Run.Pairing != nil {
		return false
	}
	grouped := map[string]bool{}
	rows, cols := map[string]bool{}, map[string]bool{} // cells in a tested row, column
	regressed := map[string]bool{}
	for _, i := range cand {
		regressed[c.Cells[i].Cell] = true
	}
	for _, g := range c.Groups {
		// An unproven group whose slowness rests on one regressed cell (its interval pulled
		// wholly past δ by that cell alone, as one stalled window does to its column) does not
		// make that cell part of a shape: the cell is judged lone or not by the rules below.
		n := 0
		for _, id := range g.Cells {
			if regressed[id] {
				n++
			}
		}
		if g.Verdict == results.VerdictRegression || (g.Verdict == results.VerdictUnproven && n != 1 && !shareLines) {
			for _, id := range g.Cells {
				grouped[id] = true
			}
		}
		for _, id := range g.Cells {
			switch g.Kind {
			case results.GroupRow:
				rows[id] = true
			case results.GroupColumn:
				cols[id] = true
			}
		}
	}
	values := map[results.Phase]map[results.CellID]float64{}
	for _, p := range []results.Phase{results.PhasePrefill, results.PhaseDecode} {
		values[p] = runValues(in.Head[0], p)
	}
	for _, i := range cand {
		cell := &c.Cells[i]
		// A lone cell is one whose row or column was tested and did not move, measured in
		// one window that holds a usable number (a lost number is no stall).
		id, err := results.ParseCellID(cell.Cell)
		_, measured := values[cell.Phase][id]
		if err != nil || !measured || grouped[cell.Cell] || !(rows[cell.Cell] || cols[cell.Cell]) || headWindows(in.Head[0], cell.Cell) != 1 {
			return false
		}
	}
	lone := cand
	// Lone among many: the matrix must hold minLoneMatrix compared cells for one to stand out.
	compared := 0
	for i := range c.Cells {
		if changeOf(&c.Cells[i]) != nil {
			compared++
		}
	}
	if compared < minLoneMatrix {
		return false
	}
	// Lone: no two of them share a row or a column, and the rest of each one's row and column
	// moved by less than a third of its change (a slowdown of a row moves the whole row, if
	// not every cell of it significantly).
	for a, i := range lone {
		ci := &c.Cells[i]
		for _, j := range lone[a+1:] {
			cj := &c.Cells[j]
			if !shareLines && ci.Phase == cj.Phase && (ci.ContextLabel == cj.ContextLabel || ci.Phase == results.PhaseDecode && ci.Concurrency == cj.Concurrency) {
				return false
			}
		}
		own := changeOf(ci)
		if own == nil || *own >= 0 {
			return false
		}
		var row, col []float64
		for k := range c.Cells {
			ck := &c.Cells[k]
			x := changeOf(ck)
			if k == i || x == nil || ck.Phase != ci.Phase {
				continue
			}
			if ck.ContextLabel == ci.ContextLabel {
				row = append(row, *x)
			}
			if ci.Phase == results.PhaseDecode && ck.Concurrency == ci.Concurrency {
				col = append(col, *x)
			}
		}
		for _, xs := range [][]float64{row, col} {
			if len(xs) > 0 && quantile.Median(xs) < *own/3 {
				return false
			}
		}
	}
	return true
}

// changeOf returns cell's change (head/base − 1) on its deciding metric, nil when it has none.
func changeOf(cell *results.CellComparison) *float64 {
	m := cell.Metric(results.DecidingMetric(cell.Phase))
	if m == nil || m.Change == nil {
		return nil
	}
	return &m.Change.Change
}

// headWindows returns how many raw windows (trials) cell id has in f: a summary without its
// trials has none.
func headWindows(f *results.File, id string) int {
	for i := range f.Decode {
		if f.Decode[i].ID().String() == id {
			return len(f.Decode[i].Trials)
		}
	}
	for i := range f.Prefill {
		if f.Prefill[i].ID().String() == id {
			return len(f.Prefill[i].Trials)
		}
	}
	return 0
}

func isAre2(n int) string {
	if n == 1 {
		return "it is"
	}
	return "they are"
}

func itThem(n int) string {
	if n == 1 {
		return "it"
	}
	return "them"
}
