package compare

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/speedmatrix/speedmatrix/internal/textout"
	"github.com/speedmatrix/speedmatrix/results"
)

// One head run cannot always tell its own factor from a change of its cells. When the cells
// split into groups that moved apart (rows of long contexts 9 % slower than the short ones),
// the matrix reads as "the head's run was 5 % slower and the short rows 4 % faster" about as
// well as "the run was 4.5 % faster and the long rows 5 % slower": runEffects keeps the
// largest head factor that explains the run about as well as the one chosen (runEffects.alt).
// checkAmbiguity compares again under that reading; what it finds slower there is not shown
// faster or passed here: those cells and groups are unproven (a paired run or a rerun decides
// which reading is true), and the cells only the chosen reading calls faster are inconclusive.
// Before, 2–4 % of comparisons whose long rows were 9 % slower under run drift or bimodal runs
// passed as an improvement of the short rows (an independent generator's check of issue 21).

// checkAmbiguity reads c's matrix under the head's other factor where re found one, and marks
// in c what that reading finds slower (see above). Regressions and incomplete heads are left
// as they are: they block or fail already.
func checkAmbiguity(c *results.Comparison, in Input, th Thresholds, re *runEffects) error {
	if re == nil || len(re.alt) == 0 || len(re.head) == 0 {
		return nil
	}
	switch c.Verdict {
	case results.VerdictRegression, results.VerdictIncomplete, results.VerdictNotComparable:
		return nil
	}
	override := map[results.Phase]float64{}
	var moved []string
	for _, p := range []results.Phase{results.PhasePrefill, results.PhaseDecode} {
		a, ok := re.alt[p]
		if !ok {
			continue
		}
		chosen := re.head[0][p]
		// A reading within half of δ of the chosen one decides nothing new.
		if a-chosen < math.Log1p(th.Delta[results.DecidingMetric(p)])/2 {
			continue
		}
		override[p] = a
		moved = append(moved, fmt.Sprintf("%s %s against the base's runs rather than %s", p, pct(math.Expm1(a-re.base[0][p])), pct(math.Expm1(chosen-re.base[0][p]))))
	}
	if len(override) == 0 {
		return nil
	}
	other, _, err := compareWith(in, th, override)
	if err != nil {
		return err
	}
	reading := "if the head's run was " + strings.Join(moved, ", and ") + " (its one run explains the matrix about as well either way)"
	var slower []string
	for i := range c.Cells {
		cell, alt := &c.Cells[i], other.Cell(c.Cells[i].Cell)
		if alt == nil {
			continue
		}
		for j := range cell.Metrics {
			m := &cell.Metrics[j]
			if !decides(m.Metric, cell.Phase) {
				continue
			}
			am := alt.Metric(m.Metric)
			if am == nil {
				continue
			}
			switch {
			case am.Verdict == results.VerdictRegression && m.Verdict != results.VerdictRegression:
				m.Verdict = results.VerdictUnproven
				m.Reason = fmt.Sprintf("%s; but slower within its run %s: %s. A paired run or a rerun decides which is true", m.Reason, reading, am.Reason)
				slower = append(slower, cell.Cell)
			case m.Verdict == results.VerdictImprovement && am.Verdict != results.VerdictImprovement:
				m.Verdict = results.VerdictInconclusive
				m.Reason = fmt.Sprintf("%s; but not faster %s", m.Reason, reading)
			}
		}
	}
	for i := range c.Groups {
		g := &c.Groups[i]
		for _, ag := range other.Groups {
			if ag.Kind != g.Kind || ag.Phase != g.Phase || ag.ContextLabel != g.ContextLabel || ag.Concurrency != g.Concurrency {
				continue
			}
			switch {
			case ag.Verdict == results.VerdictRegression && g.Verdict != results.VerdictRegression:
				g.Verdict = results.VerdictUnproven
				g.Reason = fmt.Sprintf("%s; but slower %s: %s", g.Reason, reading, ag.Reason)
			case g.Verdict == results.VerdictImprovement && ag.Verdict != results.VerdictImprovement:
				g.Verdict = results.VerdictInconclusive
				g.Reason = fmt.Sprintf("%s; but not faster %s", g.Reason, reading)
			}
		}
	}
	if len(slower) == 0 && !slices.ContainsFunc(c.Groups, func(g results.GroupComparison) bool { return g.Verdict == results.VerdictUnproven }) {
		return nil
	}
	tally(c, in)
	if c.Verdict == results.VerdictUnproven && c.VerdictReason == "" {
		c.VerdictReason = fmt.Sprintf("%s %s slower %s", textout.Plural(len(slower), "cell", "cells"), isAre(len(slower)), reading)
	}
	c.Warnings = append(c.Warnings, fmt.Sprintf("the matrix can be read two ways: %s, %s %s slower; one head run cannot tell its own speed from a change of %s, so %s unproven: a paired run (/bench paired) or a rerun decides it",
		reading, textout.Plural(len(slower), "cell", "cells"), isAre(len(slower)), textout.Pick(len(slower), "that cell", "those cells"), isAre2(len(slower))))
	return nil
}
