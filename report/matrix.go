package report

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/speedmatrix/speedmatrix/results"
)

// Every matrix of a comparison is built as data first — a table whose cells each hold what they
// say and one mark (marks.go) — and then written by one small writer per format, as benchstat's
// benchtab builds a table that texttab writes. The comment's matrix (valueCell: base → head), the
// check run's full matrices and `speedmatrix compare` in text and markdown (changeCell: the
// change ± half its interval) are such tables: they differ only in what a cell says, never in
// how it is marked, laid out or written.

// matrixCell is one cell of a matrix.
type matrixCell struct {
	// text is what the cell says: "612 → 486", "+4.1% (±1.2%)", "missing in head"; "" with
	// a mark alone (over capacity on both sides), or for a cell the matrix lacks.
	text string
	// mark is its verdict's (markOf); "" for a cell the matrix lacks.
	mark string
	// queued adds MarkQueued after the mark: the head queued requests.
	queued bool
	// strong sets the cell in bold in markdown (a regression).
	strong bool
}

// plain is the cell as text: its words, its mark and MarkQueued, one space apart.
func (c matrixCell) plain() string {
	var parts []string
	for _, s := range []string{c.text, c.mark} {
		if s != "" {
			parts = append(parts, s)
		}
	}
	if c.queued {
		parts = append(parts, MarkQueued)
	}
	return strings.Join(parts, " ")
}

// markdown is the cell in a markdown table: on one line, pipes literal, a regression in bold.
func (c matrixCell) markdown() string {
	s := mdEscape(c.plain())
	if c.strong && s != "" {
		return "**" + s + "**"
	}
	return s
}

// matrixTable is one table of a matrix: the corner, the column heads and the rows.
type matrixTable struct {
	corner string
	cols   []string
	rows   []matrixRow
}

// matrixRow is one row: its head and its cells, one per column.
type matrixRow struct {
	head  string
	cells []matrixCell
}

// markdown writes the table as a GitHub markdown table.
func (t *matrixTable) markdown(w io.Writer) {
	fmt.Fprintf(w, "| %s |", t.corner)
	for _, c := range t.cols {
		fmt.Fprintf(w, " %s |", c)
	}
	fmt.Fprintf(w, "\n|---|%s\n", strings.Repeat("---|", len(t.cols)))
	for _, r := range t.rows {
		fmt.Fprintf(w, "| %s |", r.head)
		for _, c := range r.cells {
			fmt.Fprintf(w, " %s |", c.markdown())
		}
		fmt.Fprintln(w)
	}
}

// text writes the table as left-aligned columns (table), each line after indent.
func (t *matrixTable) text(w io.Writer, indent string) {
	table(w, indent, t.grid())
}

// grid is the table as rows of plain text, the heads first.
func (t *matrixTable) grid() [][]string {
	out := [][]string{append([]string{t.corner}, t.cols...)}
	for _, r := range t.rows {
		row := []string{r.head}
		for _, c := range r.cells {
			row = append(row, c.plain())
		}
		out = append(out, row)
	}
	return out
}

// decodeTable lays out the decode cells of c that cellOf renders (ok false leaves a cell out):
// rows are contexts, shortest first, columns the requests at once, ascending; a context and a
// count that hold no rendered cell meet in an empty cell. nil when no cell is rendered.
func decodeTable(c *results.Comparison, corner string, cellOf func(*results.CellComparison) (matrixCell, bool)) *matrixTable {
	at := map[string]map[int]matrixCell{}
	var contexts []string
	var concurrency []int
	ctxLen := map[string]int{}
	for i := range c.Cells {
		cell := &c.Cells[i]
		if cell.Phase != results.PhaseDecode {
			continue
		}
		mc, ok := cellOf(cell)
		if !ok {
			continue
		}
		if at[cell.ContextLabel] == nil {
			at[cell.ContextLabel] = map[int]matrixCell{}
			contexts = append(contexts, cell.ContextLabel)
			ctxLen[cell.ContextLabel] = contextTokens(cell)
		}
		at[cell.ContextLabel][cell.Concurrency] = mc
		if !slices.Contains(concurrency, cell.Concurrency) {
			concurrency = append(concurrency, cell.Concurrency)
		}
	}
	if len(contexts) == 0 {
		return nil
	}
	slices.Sort(concurrency)
	slices.SortStableFunc(contexts, func(a, b string) int { return ctxLen[a] - ctxLen[b] })
	t := &matrixTable{corner: corner}
	for _, cc := range concurrency {
		t.cols = append(t.cols, fmt.Sprint(cc))
	}
	for _, ctx := range contexts {
		r := matrixRow{head: ctx}
		for _, cc := range concurrency {
			r.cells = append(r.cells, at[ctx][cc])
		}
		t.rows = append(t.rows, r)
	}
	return t
}

// changeCell is one metric of a cell as compare and the check run's full matrices show it: the
// change ± half its interval, or why there is none, and the metric's mark; a regression strong.
func changeCell(cell *results.CellComparison, mc *results.MetricComparison) matrixCell {
	text := shortReason(cell, mc)
	if mc.Change != nil {
		text = changeText(mc.Change)
	}
	return matrixCell{text: text, mark: metricMark(cell, mc), strong: mc.Verdict == results.VerdictRegression}
}

// changeDecodeTable is compare's decode matrix of metric m: one changeCell per cell that has it.
func changeDecodeTable(c *results.Comparison, m results.Metric) *matrixTable {
	return decodeTable(c, "Context", func(cell *results.CellComparison) (matrixCell, bool) {
		mc := cell.Metric(m)
		if mc == nil {
			return matrixCell{}, false
		}
		return changeCell(cell, mc), true
	})
}

// changePrefillTable is compare's prefill table: a row per context, a column per prefill metric;
// nil without prefill cells.
func changePrefillTable(c *results.Comparison) *matrixTable {
	cells := prefillRows(c)
	if len(cells) == 0 {
		return nil
	}
	t := &matrixTable{corner: "Context", cols: []string{"Prompt tok/s", "TTFT"}}
	for _, cell := range cells {
		r := matrixRow{head: cell.ContextLabel}
		for _, m := range results.Metrics(results.PhasePrefill) {
			var mcell matrixCell
			if mc := cell.Metric(m); mc != nil {
				mcell = changeCell(cell, mc)
			}
			r.cells = append(r.cells, mcell)
		}
		t.rows = append(t.rows, r)
	}
	return t
}

// valueCell is a cell as the comment's matrix shows it: the metric's base → head values with
// three significant digits ("612 → 486"), a status change ("valid → queued"), or why there is
// no number; then the cell's mark, and MarkQueued where the head queued requests. Over capacity
// on both sides is the mark alone. uniform leaves out the mark after a base value that is not
// the base run's own (the table's title says where every base came from).
func (m *model) valueCell(cell *results.CellComparison, metric results.Metric, uniform bool) matrixCell {
	out := matrixCell{mark: cellMark(cell), queued: cell.HeadStatus == results.StatusQueued}
	if out.mark == MarkOverCapacity {
		return matrixCell{mark: out.mark}
	}
	mc := cell.Metric(metric)
	switch {
	case statusChanged(cell):
		out.text = statusShort(cell.BaseStatus) + " → " + statusShort(cell.HeadStatus)
	case cell.BaseStatus == "":
		out.text = "new in head"
	case cell.HeadStatus == "":
		out.text = "missing in head"
	case mc == nil || (mc.Base == nil && mc.Head == nil):
		out.text = "no number"
	default:
		num := func(v *float64, sc float64) string {
			v = metric.InProfileTime(v, sc)
			if v == nil {
				return Dash
			}
			return sig3(*v)
		}
		bm := baseMark(mc)
		if uniform {
			bm = ""
		}
		out.text = num(mc.Base, m.c.Base.Scale()) + bm + " → " + num(mc.Head, m.c.Head.Scale())
	}
	return out
}
