package compare

import (
	"fmt"
	"strings"

	"github.com/speedmatrix/speedmatrix/internal/textout"
	"github.com/speedmatrix/speedmatrix/results"
)

// maxLoneCells is the most regressed cells checkLoneCells reads as disturbed windows: a stalled
// request or a GC pause slows one to three windows of a run (issue 33).
const maxLoneCells = 3

// checkLoneCells reads a regression that rests on a few lone cells of one head window as what
// it may be, a disturbed measurement, not a change of the code. A stalled request or a GC pause
// makes one window 15–30 % slower throughout, which one head run cannot tell from a change of
// that one cell: when the head side is one run, every regressed cell was measured in one window
// of it, there are at most maxLoneCells of them and none belongs to a row, column, phase or
// shift that regressed or is suspected, those cells are unproven instead (exit 4, never a
// pass): measuring them again decides it. A slowdown the bot's shapes make (rows, columns, a
// phase) regresses a group and is left alone.
func checkLoneCells(c *results.Comparison, in Input) {
	if c.Verdict != results.VerdictRegression || len(in.Head) != 1 || in.Head[0].Run.Pairing != nil {
		return
	}
	grouped := map[string]bool{}
	for _, g := range c.Groups {
		if g.Verdict == results.VerdictRegression || g.Verdict == results.VerdictUnproven {
			for _, id := range g.Cells {
				grouped[id] = true
			}
		}
	}
	var lone []int
	for i := range c.Cells {
		if c.Cells[i].Verdict != results.VerdictRegression {
			continue
		}
		if grouped[c.Cells[i].Cell] || headWindows(in.Head[0], c.Cells[i].Cell) != 1 {
			return
		}
		lone = append(lone, i)
	}
	if len(lone) == 0 || len(lone) > maxLoneCells {
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

// headWindows returns how many windows (trials) cell id has in f.
func headWindows(f *results.File, id string) int {
	for i := range f.Decode {
		if f.Decode[i].ID().String() == id {
			return max(1, len(f.Decode[i].Trials))
		}
	}
	for i := range f.Prefill {
		if f.Prefill[i].ID().String() == id {
			return max(1, len(f.Prefill[i].Trials))
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
