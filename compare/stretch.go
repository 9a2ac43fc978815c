package compare

import (
	"fmt"
	"slices"
	"strings"

	"github.com/speedmatrix/speedmatrix/internal/textout"
	"github.com/speedmatrix/speedmatrix/results"
)

// maxStretchCells is the most regressed cells checkStretch reads as one disturbed stretch of a
// run: a throttle or a co-tenant that began a few cells before the run's end (too few for the
// step test along the order, which needs orderMinSide cells on each side), or the cells either
// side of a step whose place the test missed by one or two.
const maxStretchCells = 5

// checkStretch reads a regression that rests on a few cells measured one after another in the
// head's one run, and on nothing else, as what it may be: a disturbance of that stretch of the
// run, not a change of the code. The runner measures its cells in a shuffled order, so the
// cells a change of the code slows are scattered over the run (k given cells of a 52-cell run
// fall next to each other by chance in 2/51 of runs for two, 0.1 % for three); the cells a
// throttle that began near the run's end slows, or that a step found one place off leaves
// uncorrected, are not. When the head side is one unpaired run measured in an order that does
// not line up with the matrix (alignedOrder), at most maxStretchCells cells regressed, each in
// one window, no row, column or phase regressed, and the regressed cells hold consecutive
// places in the measuring order (with at most one other cell among them), those cells are
// unproven (exit 4, never a pass): measuring them again decides it.
func checkStretch(c *results.Comparison, in Input) {
	if c.Verdict != results.VerdictRegression || len(in.Head) != 1 || in.Head[0].Run.Pairing != nil {
		return
	}
	for _, g := range c.Groups {
		if g.Verdict == results.VerdictRegression {
			return
		}
	}
	var reg []int
	for i := range c.Cells {
		if c.Cells[i].Verdict == results.VerdictRegression {
			reg = append(reg, i)
		}
	}
	if len(reg) < 2 || len(reg) > maxStretchCells {
		return // one cell alone is loneCells' to read
	}
	f := in.Head[0]
	byOrder := !fileTimed(f)
	var pts []orderPoint
	for _, p := range []results.Phase{results.PhasePrefill, results.PhaseDecode} {
		for id := range runValues(f, p) {
			if t, ok := startOf(f, id, byOrder); ok {
				pts = append(pts, orderPoint{id: id, t: t, phase: p})
			}
		}
	}
	if len(pts) < minLoneMatrix {
		return
	}
	sortOrder(pts) // disturbed.go
	if alignedOrder(pts) {
		return
	}
	place := map[string]int{}
	for i, p := range pts {
		place[p.id.String()] = i + 1
	}
	lo, hi := len(pts)+1, 0
	var names []string
	for _, i := range reg {
		cell := &c.Cells[i]
		k, ok := place[cell.Cell]
		if !ok || headWindows(f, cell.Cell) != 1 {
			return
		}
		lo, hi = min(lo, k), max(hi, k)
		names = append(names, cell.Cell)
	}
	if hi-lo+1 > len(reg)+1 {
		return // scattered over the run, as a change of the code is
	}
	for _, i := range reg {
		cell := &c.Cells[i]
		for j := range cell.Metrics {
			m := &cell.Metrics[j]
			if m.Verdict == results.VerdictRegression {
				m.Verdict = results.VerdictUnproven
				m.Reason = fmt.Sprintf("%s; but the cells slower are those measured one after another at places %d–%d of the head run's %d, and no others: a throttle or a co-tenant in that stretch of the run looks the same, so measuring them again decides it", m.Reason, lo, hi, len(pts))
			}
		}
	}
	tally(c, in)
	slices.Sort(names)
	if c.Verdict == results.VerdictUnproven && c.VerdictReason == "" {
		c.VerdictReason = fmt.Sprintf("%s slower, all measured one after another in one stretch of the head's run", textout.Plural(len(names), "cell is", "cells are"))
	}
	c.Warnings = append(c.Warnings, fmt.Sprintf("%s slower, measured one after another at places %d–%d of the head run's %d cells, and no other cell: a disturbance of that stretch of the run (a throttle that began near its end, a co-tenant) looks the same as a change of these cells, so they are unproven rather than a regression; measure them again to decide",
		strings.Join(names, ", "), lo, hi, len(pts)))
}
