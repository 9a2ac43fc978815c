package compare

import (
	"slices"

	"github.com/speedmatrix/speedmatrix/results"
)

// MergeLooks returns the matrix after a second look that measured some cells again: second is
// the comparison at look 2 of those cells alone (Input.Cells), first the first look of every
// cell. A cell measured again takes its second-look comparison; every other cell keeps its
// first-look verdict, since a cell tested again without new data would spend the false-alarm
// rate twice (a heavy-tailed first run's cell, inconclusive at the first look, then passed the
// second look's level on the same number: 1.7 % of A/A matrices blocked under t₃ noise in the
// budgeted job). Rows and groups of the second look replace the first's of the same name; the
// matrix verdict is recounted, and a head the first look found incomplete stays so unless a
// regression was shown. Settings and rerun advice are the second look's.
func MergeLooks(first, second *results.Comparison) *results.Comparison {
	out := *second
	out.Cells = replaceByKey(first.Cells, second.Cells, func(c results.CellComparison) string { return c.Cell })
	out.Rows = replaceByKey(first.Rows, second.Rows, func(r results.RowComparison) string { return r.ContextLabel })
	out.Groups = replaceByKey(first.Groups, second.Groups, results.GroupComparison.Name)
	out.Summary = first.Summary
	out.Summary.Counts, out.Summary.CellCounts = results.VerdictCounts{}, results.VerdictCounts{}
	for _, c := range out.Cells {
		out.Summary.CellCounts.Add(c.Verdict)
		for _, m := range c.Metrics {
			out.Summary.Counts.Add(m.Verdict)
		}
	}
	out.Verdict = overall(out.Summary.CellCounts, out.Rows, out.Groups)
	out.VerdictReason = second.VerdictReason
	if out.VerdictReason == "" {
		out.VerdictReason = first.VerdictReason
	}
	if out.Verdict != results.VerdictRegression && (first.Verdict == results.VerdictIncomplete || second.Verdict == results.VerdictIncomplete) {
		out.Verdict = results.VerdictIncomplete
	}
	out.Warnings = slices.Clone(first.Warnings)
	for _, w := range second.Warnings {
		if !slices.Contains(out.Warnings, w) {
			out.Warnings = append(out.Warnings, w)
		}
	}
	return &out
}

// replaceByKey returns first with each element that second holds under the same key replaced
// by second's, in first's order, then second's elements that first lacks.
func replaceByKey[T any](first, second []T, key func(T) string) []T {
	again := map[string]T{}
	for _, x := range second {
		again[key(x)] = x
	}
	var out []T
	for _, x := range first {
		if y, ok := again[key(x)]; ok {
			x = y
			delete(again, key(x))
		}
		out = append(out, x)
	}
	for _, x := range second {
		if _, ok := again[key(x)]; ok {
			out = append(out, x)
		}
	}
	return out
}
