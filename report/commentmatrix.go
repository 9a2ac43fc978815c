package report

import (
	"fmt"
	"strings"

	"github.com/speedmatrix/speedmatrix/results"
)

// The comment's matrix is the seeds' report as a diff: decode total tok/s with rows for the
// context and columns for the requests at once, each cell base → head and one mark, then
// prefill prompt tok/s by context in one row. Its tables are built as data (matrix.go) first and
// written by the one markdown writer, so that a test can read the marks without parsing markdown.

// decodeMatrix is the decode table: total tok/s, rows context, columns requests at once.
func (m *model) decodeMatrix() *matrixTable {
	uniform := m.uniformBase(results.PhaseDecode) != ""
	return decodeTable(m.c, "Context ╲ requests", func(cell *results.CellComparison) (matrixCell, bool) {
		return m.valueCell(cell, results.MetricTotalTokPerS, uniform), true
	})
}

// prefillMatrix is the prefill row: prompt tok/s by context.
func (m *model) prefillMatrix() *matrixTable {
	cells := prefillRows(m.c)
	if len(cells) == 0 {
		return nil
	}
	uniform := m.uniformBase(results.PhasePrefill) != ""
	t := &matrixTable{corner: "Context"}
	r := matrixRow{head: "prefill"}
	for _, cell := range cells {
		t.cols = append(t.cols, cell.ContextLabel)
		r.cells = append(r.cells, m.valueCell(cell, results.MetricPromptTokPerS, uniform))
	}
	t.rows = append(t.rows, r)
	return t
}

// matrix is the comment's first block after the header: the decode matrix, the prefill row
// and one line of marks.
func (m *model) matrix() string {
	var b strings.Builder
	if t := m.decodeMatrix(); t != nil {
		fmt.Fprintf(&b, "**Decode total tok/s**, base%s → head (rows: context; columns: requests at once)\n\n", m.uniformBase(results.PhaseDecode))
		t.markdown(&b)
	}
	if t := m.prefillMatrix(); t != nil {
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "**Prefill prompt tok/s**, base%s → head\n\n", m.uniformBase(results.PhasePrefill))
		t.markdown(&b)
	}
	if b.Len() == 0 {
		return ""
	}
	fmt.Fprintf(&b, "\n%s\n", m.marksLine())
	return b.String()
}

// marksLine explains the marks the matrix uses, and only those.
func (m *model) marksLine() string {
	used := map[string]bool{}
	queued := false
	for i := range m.c.Cells {
		used[cellMark(&m.c.Cells[i])] = true
		queued = queued || m.c.Cells[i].HeadStatus == results.StatusQueued
	}
	th := pctPlainWords(deltaOf(m.c, results.MetricTotalTokPerS))
	var parts []string
	for _, k := range []struct{ mark, words string }{
		{MarkRegression, "slower by more than " + th},
		{MarkImprovement, "faster by more than " + th},
		{MarkUnchanged, "unchanged (within " + th + ")"},
		{MarkNotJudged, "not judged"},
		{MarkOverCapacity, "over capacity on both sides (not run, expected)"},
		{MarkNotCompared, "not compared"},
	} {
		if used[k.mark] {
			parts = append(parts, k.mark+" "+k.words)
		}
	}
	if queued {
		parts = append(parts, MarkQueued+" queued: the server ran fewer requests at once")
	}
	for _, k := range []struct{ mark, words string }{
		{baseMarkHistory, "base from the history: the base run pooled with the default branch's earlier runs, the reference the change is taken against"},
		{baseMarkRuns, "base from the base's runs pooled, the reference the change is taken against"},
	} {
		if m.baseMarkUsed(k.mark) {
			parts = append(parts, k.mark+" "+k.words)
		}
	}
	return strings.Join(parts, " · ")
}

// shownBases returns the deciding metrics of the cells of phase p (every phase for "") whose
// base value the matrix shows.
func (m *model) shownBases(p results.Phase) []*results.MetricComparison {
	var out []*results.MetricComparison
	for i := range m.c.Cells {
		cell := &m.c.Cells[i]
		if (p != "" && cell.Phase != p) || statusChanged(cell) || cell.BaseStatus == "" || cell.HeadStatus == "" || cellMark(cell) == MarkOverCapacity {
			continue
		}
		if mc := cell.Metric(results.DecidingMetric(cell.Phase)); mc != nil && mc.Base != nil {
			out = append(out, mc)
		}
	}
	return out
}

// uniformBase is the word of a table's title when every base it shows came from one place
// other than the base run (" (history)"), so that its cells need no mark; "" otherwise.
func (m *model) uniformBase(p results.Phase) string {
	bs := m.shownBases(p)
	if len(bs) == 0 {
		return ""
	}
	w := BaseWord(bs[0])
	for _, mc := range bs[1:] {
		if BaseWord(mc) != w {
			return ""
		}
	}
	return w
}

// baseMarkUsed reports whether the matrix shows mark after a cell's base value.
func (m *model) baseMarkUsed(mark string) bool {
	for _, p := range []results.Phase{results.PhaseDecode, results.PhasePrefill} {
		if m.uniformBase(p) != "" {
			continue
		}
		for _, mc := range m.shownBases(p) {
			if baseMark(mc) == mark {
				return true
			}
		}
	}
	return false
}
