package compare

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/speedmatrix/speedmatrix/internal/textout"
	"github.com/speedmatrix/speedmatrix/results"
)

// reasonMissingInHead is the reason of a cell the base measured and the head lacks.
const reasonMissingInHead = "missing in head"

// closedCell returns a cell's verdict once missing data is counted: a cell the base has and
// the head lacks is incomplete, not merely not comparable, unless a partial head was accepted
// (Input.AcceptPartial); any other cell keeps v.
func closedCell(cell *results.CellComparison, v results.Verdict, acceptMissing bool) results.Verdict {
	if cell.Reason == reasonMissingInHead && acceptMissing {
		return v
	}
	if cell.Reason == reasonMissingInHead || (strings.HasPrefix(cell.Reason, reasonStalled) && cell.HeadStatus.Measured() && strings.Contains(cell.Reason, "in head")) {
		return results.VerdictIncomplete
	}
	return v
}

// acceptedPartial reports whether in accepts a partial head and one of its head files is
// partial: then the cells the head lacks are not compared rather than incomplete.
func acceptedPartial(in Input) bool {
	if !in.AcceptPartial {
		return false
	}
	for _, f := range in.Head {
		if f != nil && f.Run.Partial {
			return true
		}
	}
	return false
}

// closeVerdict sets the matrix's verdict and VerdictReason by closedVerdict and, when the head
// is incomplete, warns with the reason so that every report names it; a partial head accepted
// (accept) is a warning alone.
func closeVerdict(c *results.Comparison, head []*results.File, accept bool) {
	if accept {
		var kept []*results.File
		for i, f := range head {
			if f == nil || !f.Run.Partial {
				kept = append(kept, f)
				continue
			}
			c.Warnings = append(c.Warnings, partialWords(f, i, len(head), len(c.Cells))+"; accepted as partial: the cells it did not reach are not compared")
		}
		head = kept
	}
	c.Verdict, c.VerdictReason = closedVerdict(c.Verdict, c.Cells, head)
	if c.VerdictReason != "" {
		c.Warnings = append(c.Warnings, "the head is incomplete: "+c.VerdictReason)
	}
}

// partialWords says how far the partial head file i of n got: "the head was interrupted after 3
// of 8 cells (its run is partial)", or with the reason it stopped. The cells it got are those
// it records an outcome for (results.File.Done), as run's own error counts them: a cell
// recorded with an error when the server died is not one. Of how many is the cells its plan
// named (results.File.PlannedCells), else the cells compared.
func partialWords(f *results.File, i, n, compared int) string {
	pre, dec := f.Done()
	got := pre + dec
	of := max(len(f.Prefill)+len(f.Decode)+len(f.NotMeasured()), compared)
	who := "the head"
	if n > 1 {
		who = fmt.Sprintf("head file %d", i+1)
	}
	if r := f.Run.PartialReason; r != "" && r != interruptedReason {
		return fmt.Sprintf("%s run is partial: it stopped after %d of %d cells: %s", who, got, of, r)
	}
	return fmt.Sprintf("%s was interrupted after %d of %d cells (its run is partial)", who, got, of)
}

// interruptedReason is the runner's reason for a run stopped by a signal (bench.ErrInterrupted).
const interruptedReason = "interrupted before every cell was measured"

// closedVerdict returns the matrix's verdict and its reason once missing data is counted: a
// regression stays a regression; otherwise a head whose run ended early (Run.Partial), that
// lacks cells its own plan named (results.File.NotMeasured) or that lacks cells the base has
// makes the matrix incomplete, whatever the other cells say.
func closedVerdict(v results.Verdict, cells []results.CellComparison, head []*results.File) (results.Verdict, string) {
	var why []string
	for i, f := range head {
		if f == nil || !f.Run.Partial {
			continue
		}
		why = append(why, partialWords(f, i, len(head), len(cells)))
	}
	for i, f := range head {
		if f == nil || f.Run.Partial {
			continue
		}
		var lost []string
		for _, id := range f.NotMeasured() {
			lost = append(lost, id.String())
		}
		if len(lost) == 0 {
			continue
		}
		r := "the head run"
		if len(head) > 1 {
			r = fmt.Sprintf("head file %d", i+1)
		}
		why = append(why, fmt.Sprintf("%s lacks %s its own plan named (its settings list them; it holds no cell for them, not even a status): %s", r, textout.Plural(len(lost), "cell", "cells"), strings.Join(lost, ", ")))
	}
	var missing, stalled []string
	for _, c := range cells {
		switch {
		case c.Verdict != results.VerdictIncomplete:
		case c.Reason == reasonMissingInHead:
			missing = append(missing, c.Cell)
		case strings.HasPrefix(c.Reason, reasonStalled):
			stalled = append(stalled, c.Cell)
		}
	}
	if len(missing) > 0 {
		why = append(why, fmt.Sprintf("%s the base measured %s missing in the head: %s", textout.Plural(len(missing), "cell", "cells"), isAre(len(missing)), strings.Join(missing, ", ")))
	}
	if len(stalled) > 0 {
		why = append(why, fmt.Sprintf("%s stalled in the head (the server produced no token for part of the window, so it measured no speed): %s", textout.Plural(len(stalled), "cell", "cells"), strings.Join(stalled, ", ")))
	}
	if len(why) == 0 {
		return v, ""
	}
	reason := strings.Join(why, "; ") + "; rerun the head so that it measures every cell"
	if v == results.VerdictRegression {
		return v, reason
	}
	return results.VerdictIncomplete, reason
}

// reasonStalled starts the reason of a cell whose window stalled.
const reasonStalled = "the window stalled"

// stalledWindow says how a decode cell's window stalled, or "" when none did: a trial whose
// full 1 s output-token bins hold a run of empty bins of at least 3 bins and a tenth of the
// window (the server produced no token for that long while the window was open, as a hung or
// preempted engine does; a healthy cell, even one request at a time, produces tokens every
// second). Such a window is not a measurement of the cell's speed: its total tok/s is low by
// the stall and its spread of bins inflates the cell's own noise.
func stalledWindow(d *results.DecodeCell) string {
	if d == nil || !d.Status.Measured() {
		return ""
	}
	for k := range d.Trials {
		t := &d.Trials[k]
		n := withinSamples(t, results.MetricTotalTokPerS)
		if n < 10 {
			continue
		}
		run, longest, at := 0, 0, 0
		for i := range n {
			if t.BinOutputTokens[i] == 0 {
				run++
				if run > longest {
					longest, at = run, i-run+1
				}
				continue
			}
			run = 0
		}
		if longest >= 3 && 10*longest >= n {
			trial := ""
			if len(d.Trials) > 1 {
				trial = fmt.Sprintf(" (trial %d)", k+1)
			}
			return fmt.Sprintf("%s%s: no tokens for %g s of the %g s window (bins %d–%d); measure the cell again", reasonStalled, trial,
				float64(longest)*t.BinSeconds, float64(n)*t.BinSeconds, at+1, at+longest)
		}
	}
	return ""
}

// DegenerateHistoryError says that the history cannot measure run-to-run noise: runs copied,
// or no spread at all.
type DegenerateHistoryError struct {
	Reason string
}

func (e *DegenerateHistoryError) Error() string {
	return "the history cannot measure run-to-run noise: " + e.Reason + "; give history of separate runs of the default branch (each its own server run), or none"
}

// hasRaw reports whether f holds raw samples (a decode trial's output-token bins): two runs
// that agree in every bin are one run copied, where two imported summaries may agree by rounding.
func hasRaw(f *results.File) bool {
	for i := range f.Decode {
		for k := range f.Decode[i].Trials {
			if len(f.Decode[i].Trials[k].BinOutputTokens) > 0 {
				return true
			}
		}
	}
	return false
}

// degenerateHistory refuses a history whose files are one run copied (the same run id, or the
// same raw samples) or whose deciding metrics do not vary at all across it (a CV below
// 1e-9 in every cell): either would make intervals of zero width and "unchanged" at any p.
func degenerateHistory(history []*results.File) error {
	for i := range history {
		for j := i + 1; j < len(history); j++ {
			a, b := history[i], history[j]
			switch {
			case a.Run.ID != "" && a.Run.ID == b.Run.ID:
				return &DegenerateHistoryError{fmt.Sprintf("history files %d and %d are one run (run id %s)", i+1, j+1, a.Run.ID)}
			case hasRaw(a) && reflect.DeepEqual(a.Decode, b.Decode) && reflect.DeepEqual(a.Prefill, b.Prefill):
				return &DegenerateHistoryError{fmt.Sprintf("history files %d and %d hold identical cells and numbers (one run copied)", i+1, j+1)}
			}
		}
	}
	if len(history) < 2 {
		return nil
	}
	values := map[results.CellID][]float64{}
	for _, f := range history {
		for _, p := range []results.Phase{results.PhasePrefill, results.PhaseDecode} {
			for id, v := range runValues(f, p) {
				values[id] = append(values[id], v)
			}
		}
	}
	cells := 0
	for _, vs := range values {
		if len(vs) < 2 {
			continue
		}
		cells++
		if varianceOf(vs) > 1e-18 {
			return nil
		}
	}
	if cells == 0 {
		return nil
	}
	return &DegenerateHistoryError{fmt.Sprintf("its %d files agree exactly in every one of the %d cells they share (no spread at all)", len(history), cells)}
}

// isAre returns the verb that agrees with n things: "is" for one, "are" for more.
func isAre(n int) string {
	if n == 1 {
		return "is"
	}
	return "are"
}
