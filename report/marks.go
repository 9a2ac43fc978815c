package report

import (
	"fmt"
	"strings"

	"github.com/speedmatrix/speedmatrix/results"
)

// The marks of a comparison, one set for every rendering of it: the pull-request comment's
// matrix and folds, the check run's full matrices, and `speedmatrix compare` in text and
// markdown. A cell, or one metric of a cell, takes its mark from its verdict and its statuses
// alone (markOf); what the cell says beside the mark is the rendering's (matrix.go).

// Verdict marks.
const (
	// MarkRegression marks a regression: worse beyond δ, significant.
	MarkRegression = "❌"
	// MarkImprovement marks an improvement: better beyond δ, significant.
	MarkImprovement = "⚡"
	// MarkUnchanged marks a change shown to lie within ±δ.
	MarkUnchanged = "="
	// MarkNotJudged marks what is neither shown nor ruled out: inconclusive (too noisy to tell),
	// unproven (possibly worse beyond δ) and incomplete (the head lacks data it should hold).
	// Their words (a legend, a headline) say which.
	MarkNotJudged = "❔"
	// MarkOverCapacity marks a cell over capacity on both sides: not run, as expected.
	MarkOverCapacity = "—"
	// MarkNotCompared marks anything else not comparable: missing on a side, not measured, no
	// number.
	MarkNotCompared = "∅"
	// MarkQueued follows the mark of a cell whose head queued requests: the server ran fewer
	// at once than asked.
	MarkQueued = "⏳"
	// MarkNoteWorse and MarkNoteBetter mark a note (a metric that does not decide its cell)
	// whose change is significant and beyond δ: shown, never a verdict of its own.
	MarkNoteWorse  = "▼"
	MarkNoteBetter = "▲"
)

// Marks after a base value in the comment's tables: the history's estimate, the base side's
// runs pooled (baseFrom).
const (
	baseMarkHistory = "ʰ"
	baseMarkRuns    = "ᵖ"
)

// markOf is the mark of verdict v of a cell whose statuses are base and head.
func markOf(v results.Verdict, base, head results.Status) string {
	switch v {
	case results.VerdictRegression:
		return MarkRegression
	case results.VerdictImprovement:
		return MarkImprovement
	case results.VerdictUnchanged:
		return MarkUnchanged
	case results.VerdictInconclusive, results.VerdictUnproven, results.VerdictIncomplete:
		return MarkNotJudged
	}
	if base == results.StatusOverCapacity && head == results.StatusOverCapacity {
		return MarkOverCapacity
	}
	return MarkNotCompared
}

// VerdictMark returns the mark of verdict v (MarkNotCompared for not comparable).
func VerdictMark(v results.Verdict) string { return markOf(v, "", "") }

// cellMark is the mark of a cell's own verdict.
func cellMark(cell *results.CellComparison) string {
	return markOf(cell.Verdict, cell.BaseStatus, cell.HeadStatus)
}

// metricMark is the mark of one metric of a cell: a note's own where it is one (noteOf).
func metricMark(cell *results.CellComparison, mc *results.MetricComparison) string {
	switch noteOf(mc) {
	case results.NoteWorse:
		return MarkNoteWorse
	case results.NoteBetter:
		return MarkNoteBetter
	}
	return markOf(mc.Verdict, cell.BaseStatus, cell.HeadStatus)
}

// decidedOnWords names the metrics a cell is decided on, for the words beside the notes' marks:
// "decided on " + its + "Total tok/s or Prompt tok/s".
func decidedOnWords(its string) string {
	return "decided on " + its + results.DecidingMetric(results.PhaseDecode).Title() + " or " + results.DecidingMetric(results.PhasePrefill).Title()
}

// hasNote reports whether a metric of c is a note beyond δ (noteOf).
func hasNote(c *results.Comparison) bool {
	for i := range c.Cells {
		for j := range c.Cells[i].Metrics {
			if noteOf(&c.Cells[i].Metrics[j]) != "" {
				return true
			}
		}
	}
	return false
}

// noteOf is mc's note (results.MetricComparison.Note) while its verdict is the inconclusive a
// note keeps; "" otherwise.
func noteOf(mc *results.MetricComparison) string {
	if mc.Verdict != results.VerdictInconclusive {
		return ""
	}
	return mc.Note
}

// baseFrom says where a base value came from when it is not the base run's own
// (results.MetricComparison.BaseFrom): the words after it in running text and its mark in a
// table; both empty for the base run's own value.
func baseFrom(mc *results.MetricComparison) (words, mark string) {
	switch mc.BaseFrom {
	case results.BaseFromHistory:
		return " (history)", baseMarkHistory
	case results.BaseFromRuns:
		return " (runs pooled)", baseMarkRuns
	}
	return "", ""
}

// BaseWord is what a report writes after a base value that is not the base run's own, so
// that a reader knows which reference the change is taken against: " (history)" for the
// history's estimate, " (runs pooled)" for the base side's runs pooled; "" for the base run's
// own value (results.MetricComparison.BaseFrom).
func BaseWord(mc *results.MetricComparison) string {
	w, _ := baseFrom(mc)
	return w
}

// baseMark is the mark after a base value in the comment's tables (BaseWord's short form).
func baseMark(mc *results.MetricComparison) string {
	_, m := baseFrom(mc)
	return m
}

// markRow is one mark of the set: what it stands for and the verdicts it marks.
type markRow struct {
	mark, means string
	verdicts    []results.Verdict
}

// markRows is the set of marks in the order a legend lists them.
func markRows() []markRow {
	return []markRow{
		{MarkRegression, "slower: worse beyond δ, significant with the false-discovery rate held over the matrix", []results.Verdict{results.VerdictRegression}},
		{MarkImprovement, "faster: better beyond δ, significant as a slowdown would be", []results.Verdict{results.VerdictImprovement}},
		{MarkUnchanged, "unchanged: shown within ±δ (two one-sided tests)", []results.Verdict{results.VerdictUnchanged}},
		{MarkNotJudged, "not judged: too noisy to tell, possibly worse beyond δ but neither shown nor ruled out, or the head lacks data it should hold (the page's words say which)", []results.Verdict{results.VerdictInconclusive, results.VerdictUnproven, results.VerdictIncomplete}},
		{MarkOverCapacity, "over capacity on both sides: not run, as expected", []results.Verdict{results.VerdictNotComparable}},
		{MarkNotCompared, "not compared: missing on a side, not measured, or no number", []results.Verdict{results.VerdictNotComparable}},
		{MarkNoteWorse, "a note worse beyond δ, significant: a metric that does not decide its cell (the cell is decided on decode total tok/s or prefill prompt tok/s), shown and never a verdict of its own", []results.Verdict{results.VerdictInconclusive}},
		{MarkNoteBetter, "a note better beyond δ, significant: as " + MarkNoteWorse + ", the other way", []results.Verdict{results.VerdictInconclusive}},
		{MarkQueued, "after another mark: the head queued requests (the server ran fewer at once than asked)", nil},
	}
}

// MarkTable returns the markdown table of the marks that docs/verdicts.md holds: each mark,
// what it stands for, and the verdicts it marks.
func MarkTable() string {
	var b strings.Builder
	b.WriteString("| mark | stands for | verdicts |\n|---|---|---|\n")
	for _, r := range markRows() {
		var vs []string
		for _, v := range r.verdicts {
			vs = append(vs, "`"+string(v)+"`")
		}
		if len(vs) == 0 {
			vs = []string{"—"}
		}
		fmt.Fprintf(&b, "| %s | %s | %s |\n", r.mark, r.means, strings.Join(vs, ", "))
	}
	return b.String()
}
