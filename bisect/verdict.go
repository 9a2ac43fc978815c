package bisect

import (
	"fmt"
	"math"
	"slices"

	"github.com/speedmatrix/speedmatrix/results"
)

// StepVerdict reads a comparison of one commit (head) with the base as a step's verdict on
// the named cells (all of c's cells when cells is empty), by the comparison's own rules:
// regression (any cell, row, column or shift) is bad; a comparison that passes (exit status
// 0: unchanged, improvement, inconclusive) is good when the named cells' mean change of the
// deciding metric is shown better than −δ (its 95 % interval above it), so that a noisy cell
// the comparison leaves inconclusive cannot hide the range's slowdown; everything else
// (unproven, incomplete, not comparable, or a pass whose interval reaches below −δ) is
// undecided. It
// returns the measurement's verdict, reason, the deciding metric's geometric-mean change over
// the named cells and each cell's evidence; Commit, GPUTime and Attempt are the caller's.
func StepVerdict(c *results.Comparison, cells []string) Measurement {
	m := Measurement{Reason: string(c.Verdict)}
	if c.VerdictReason != "" {
		m.Reason += ": " + c.VerdictReason
	}
	exit := results.OutcomeOf(c.Verdict).Exit
	m.Passed = exit == results.ExitPass
	switch exit {
	case results.ExitRegression:
		m.Verdict = Bad
	case results.ExitPass:
		m.Verdict = Good
	default:
		m.Verdict = Undecided
	}
	var logs, ses []float64
	for _, cell := range c.Cells {
		if len(cells) > 0 && !slices.Contains(cells, cell.Cell) {
			continue
		}
		ev := CellChange{Cell: cell.Cell, Verdict: string(cell.Verdict)}
		want := results.DecidingMetric(cell.Phase)
		for _, mc := range cell.Metrics {
			if mc.Metric != want || mc.Change == nil || mc.Change.Low <= -1 {
				continue
			}
			ev.Change = &Change{Change: mc.Change.Change, Low: mc.Change.Low, High: mc.Change.High}
			logs = append(logs, math.Log1p(mc.Change.Change))
			ses = append(ses, logSE(ev.Change))
		}
		m.Cells = append(m.Cells, ev)
	}
	if len(logs) > 0 {
		// The mean log change; its error is the mean of the cells' errors, as if the cells of
		// one run were perfectly correlated (the most their shared run factor can make it).
		var l, se float64
		for i := range logs {
			l += logs[i] / float64(len(logs))
			se += ses[i] / float64(len(logs))
		}
		m.Change = &Change{Change: math.Expm1(l), Low: math.Expm1(l - 1.96*se), High: math.Expm1(l + 1.96*se)}
	}
	if m.Verdict == Good {
		delta := deltaOf(c)
		switch {
		case m.Change == nil:
			m.Verdict, m.Reason = Undecided, m.Reason+": no change of the named cells was measured"
		case m.Change.Low <= -delta:
			m.Verdict = Undecided
			m.Reason = fmt.Sprintf("%s: the named cells' change %s (95 %% interval %s to %s) is not shown better than -%.0f %%", m.Reason, pct(m.Change.Change), pct(m.Change.Low), pct(m.Change.High), 100*delta)
		}
	}
	if len(cells) > 0 && len(m.Cells) < len(cells) {
		m.Verdict = Undecided
		m.Reason = fmt.Sprintf("the comparison holds %d of the %d named cells", len(m.Cells), len(cells))
	}
	return m
}

// deltaOf returns the comparison's δ of decode total tok/s (3 % when it does not say).
func deltaOf(c *results.Comparison) float64 {
	for _, ms := range c.Settings.Metrics {
		if ms.Metric == results.MetricTotalTokPerS && ms.Delta > 0 {
			return ms.Delta
		}
	}
	return 0.03
}
