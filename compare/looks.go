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
	again := map[string]results.CellComparison{}
	for _, c := range second.Cells {
		again[c.Cell] = c
	}
	out.Cells = nil
	for _, c := range first.Cells {
		if s, ok := again[c.Cell]; ok {
			out.Cells = append(out.Cells, s)
			delete(again, c.Cell)
			continue
		}
		out.Cells = append(out.Cells, c)
	}
	for _, c := range second.Cells {
		if _, ok := again[c.Cell]; ok {
			out.Cells = append(out.Cells, c)
		}
	}
	rows := map[string]results.RowComparison{}
	for _, r := range second.Rows {
		rows[r.ContextLabel] = r
	}
	out.Rows = nil
	for _, r := range first.Rows {
		if s, ok := rows[r.ContextLabel]; ok {
			r = s
			delete(rows, r.ContextLabel)
		}
		out.Rows = append(out.Rows, r)
	}
	for _, r := range second.Rows {
		if _, ok := rows[r.ContextLabel]; ok {
			out.Rows = append(out.Rows, r)
		}
	}
	groups := map[string]results.GroupComparison{}
	for _, g := range second.Groups {
		groups[g.Name()] = g
	}
	out.Groups = nil
	for _, g := range first.Groups {
		if s, ok := groups[g.Name()]; ok {
			g = s
			delete(groups, g.Name())
		}
		out.Groups = append(out.Groups, g)
	}
	for _, g := range second.Groups {
		if _, ok := groups[g.Name()]; ok {
			out.Groups = append(out.Groups, g)
		}
	}
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
