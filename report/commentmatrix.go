package report

import (
	"fmt"
	"strings"

	"github.com/speedmatrix/speedmatrix/results"
)

// The comment's matrix is the seeds' report as a diff: decode total tok/s with rows for the
// context and columns for the requests at once, each cell base → head and one mark, then
// prefill prompt tok/s by context in one row. It is built as data (matrixTable) first and
// written by one small writer, so that a test can read the marks without parsing markdown.

// The comment's marks, one set for the matrix, the tables and the legend.
const (
	commentSlower      = "❌"
	commentFaster      = "⚡"
	commentUnchanged   = "="
	commentNotJudged   = "❔"
	commentOverCap     = "—"
	commentQueued      = "⏳"
	commentNotCompared = "∅"
)

// commentMark is the mark of a cell's verdict in the comment.
func commentMark(cell *results.CellComparison) string {
	switch cell.Verdict {
	case results.VerdictRegression:
		return commentSlower
	case results.VerdictImprovement:
		return commentFaster
	case results.VerdictUnchanged:
		return commentUnchanged
	case results.VerdictInconclusive, results.VerdictUnproven, results.VerdictIncomplete:
		return commentNotJudged
	}
	if cell.BaseStatus == results.StatusOverCapacity && cell.HeadStatus == results.StatusOverCapacity {
		return commentOverCap
	}
	return commentNotCompared
}

// matrixTable is one table of the comment's matrix: a corner, column heads and rows.
type matrixTable struct {
	corner string
	cols   []string
	rows   []matrixRow
}

type matrixRow struct {
	head  string
	cells []string
}

// matrixCellText is one cell: "612 → 486 ❌", "171 → 169 ❔ ⏳", "—" (over capacity on both
// sides), "valid → queued ❌", "missing in head ❔".
func (m *model) matrixCellText(cell *results.CellComparison, metric results.Metric, uniform bool) string {
	mark := commentMark(cell)
	if mark == commentOverCap {
		return commentOverCap
	}
	var s string
	mc := cell.Metric(metric)
	switch {
	case statusChanged(cell):
		s = statusShort(cell.BaseStatus) + " → " + statusShort(cell.HeadStatus)
	case cell.BaseStatus == "":
		s = "new in head"
	case cell.HeadStatus == "":
		s = "missing in head"
	case mc == nil || (mc.Base == nil && mc.Head == nil):
		s = "no number"
	default:
		num := func(v *float64, sc float64) string {
			v = ScaledMetric(metric, v, sc)
			if v == nil {
				return Dash
			}
			return sig3(*v)
		}
		mark := baseMark(mc)
		if uniform {
			mark = "" // the table's title says where every base came from
		}
		s = num(mc.Base, m.c.Base.Scale()) + mark + " → " + num(mc.Head, m.c.Head.Scale())
	}
	s += " " + mark
	if cell.HeadStatus == results.StatusQueued {
		s += " " + commentQueued
	}
	return s
}

// decodeMatrix is the decode table: total tok/s, rows context, columns requests at once.
func (m *model) decodeMatrix() *matrixTable {
	l := newLayout(m.c)
	if len(l.contexts) == 0 {
		return nil
	}
	at := map[string]map[int]*results.CellComparison{}
	for i := range m.c.Cells {
		cell := &m.c.Cells[i]
		if cell.Phase != results.PhaseDecode {
			continue
		}
		if at[cell.ContextLabel] == nil {
			at[cell.ContextLabel] = map[int]*results.CellComparison{}
		}
		at[cell.ContextLabel][cell.Concurrency] = cell
	}
	t := &matrixTable{corner: "Context ╲ requests"}
	for _, cc := range l.concurrency {
		t.cols = append(t.cols, fmt.Sprint(cc))
	}
	for _, ctx := range l.contexts {
		r := matrixRow{head: ctx}
		for _, cc := range l.concurrency {
			text := ""
			if cell := at[ctx][cc]; cell != nil {
				text = m.matrixCellText(cell, results.MetricTotalTokPerS, m.uniformBase(results.PhaseDecode) != "")
			}
			r.cells = append(r.cells, text)
		}
		t.rows = append(t.rows, r)
	}
	return t
}

// prefillMatrix is the prefill row: prompt tok/s by context.
func (m *model) prefillMatrix() *matrixTable {
	cells := prefillRows(m.c)
	if len(cells) == 0 {
		return nil
	}
	t := &matrixTable{corner: "Context"}
	r := matrixRow{head: "prefill"}
	for _, cell := range cells {
		t.cols = append(t.cols, cell.ContextLabel)
		r.cells = append(r.cells, m.matrixCellText(cell, results.MetricPromptTokPerS, m.uniformBase(results.PhasePrefill) != ""))
	}
	t.rows = append(t.rows, r)
	return t
}

// markdown writes the table.
func (t *matrixTable) markdown(b *strings.Builder) {
	fmt.Fprintf(b, "| %s |", t.corner)
	for _, c := range t.cols {
		fmt.Fprintf(b, " %s |", c)
	}
	b.WriteString("\n|---|" + strings.Repeat("---|", len(t.cols)) + "\n")
	for _, r := range t.rows {
		fmt.Fprintf(b, "| %s |", r.head)
		for _, c := range r.cells {
			fmt.Fprintf(b, " %s |", c)
		}
		b.WriteString("\n")
	}
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
		used[commentMark(&m.c.Cells[i])] = true
		queued = queued || m.c.Cells[i].HeadStatus == results.StatusQueued
	}
	th := pctPlainWords(deltaOf(m.c, results.MetricTotalTokPerS))
	var parts []string
	for _, k := range []struct{ mark, words string }{
		{commentSlower, "slower by more than " + th},
		{commentFaster, "faster by more than " + th},
		{commentUnchanged, "unchanged (within " + th + ")"},
		{commentNotJudged, "not judged"},
		{commentOverCap, "over capacity on both sides (not run, expected)"},
		{commentNotCompared, "not compared"},
	} {
		if used[k.mark] {
			parts = append(parts, k.mark+" "+k.words)
		}
	}
	if queued {
		parts = append(parts, commentQueued+" queued: the server ran fewer requests at once")
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
		if (p != "" && cell.Phase != p) || statusChanged(cell) || cell.BaseStatus == "" || cell.HeadStatus == "" || commentMark(cell) == commentOverCap {
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
