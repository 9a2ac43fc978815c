package calibrate

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// The world table is built as data first (a header and rows of strings), then written by one
// small writer per format.

// short formats a rate for a table: "0.4 % [0.1–1.2] n=1000".
func (r Rate) short() string {
	if r.N == 0 {
		return "–"
	}
	return fmt.Sprintf("%.1f %% [%.1f–%.1f] n=%d", r.P*100, r.Low*100, r.High*100, r.N)
}

// pct1 formats a rate's point estimate alone: "4.2 %".
func pct1(r Rate) string {
	if r.N == 0 {
		return "–"
	}
	return fmt.Sprintf("%.1f %%", r.P*100)
}

// table returns the report's header and rows.
func (rep *WorldReport) table() (header []string, rows [][]string) {
	header = []string{"model", "procedure", "A/A false blocks", "A/A undecided"}
	if len(rep.Rows) > 0 {
		for _, d := range rep.Rows[0].Detection {
			header = append(header, "detect "+string(d.Shape))
		}
	}
	header = append(header, "A/A cells unchanged", "prefill, 8+ unchanged", "unproven", "inconclusive", "targets")
	for _, r := range rep.Rows {
		row := []string{string(r.Model), string(r.Procedure), r.FalseBlocks.short(), pct1(r.AAUndecided)}
		for _, d := range r.Detection {
			cell := d.Rate.short() + " · undecided " + pct1(d.Undecided)
			if d.Shape == ShapeDecode5 {
				cell += " · passed " + d.Passed.short()
			}
			row = append(row, cell)
		}
		var marks []string
		for _, m := range r.Marks {
			verdict := "pass"
			if !m.Pass {
				verdict = "FAIL"
			}
			marks = append(marks, verdict+": "+m.Target)
		}
		row = append(row, r.Unchanged.short(), pct1(r.CoreUnchanged), r.Unproven.short(), r.Inconclusive.short(), strings.Join(marks, "; "))
		rows = append(rows, row)
	}
	return header, rows
}

// legend explains the table in a few lines.
func (rep *WorldReport) legend() string {
	return fmt.Sprintf("A/A false blocks: A/A comparisons whose matrix verdict is regression (speedmatrix compare exits 3); A/A undecided: A/A comparisons left undecided (exit 4: a cell unproven or incomplete; the bot's check fails on it under github.undecided: failure, the default); detect SHAPE: A/B comparisons with that slowdown whose matrix verdict is regression (exit 3), and the share left undecided (exit 4) instead; cells: shares of the A/A comparisons' tested cells by cell verdict (prefill, 8+: of the prefill cells and the decode cells at 8 requests or more) (cells taken as independent). Rates with [95 %% Wilson interval] and n; seed %d, %d pairs a cell.", rep.Seed, rep.Pairs)
}

// WriteText writes the table as aligned text.
func (rep *WorldReport) WriteText(w io.Writer) error {
	header, rows := rep.table()
	return writeTextTable(w, "World calibration of speedmatrix compare (synthetic full matrices)", header, rows, rep.legend())
}

// WriteMarkdown writes the table as a Markdown table.
func (rep *WorldReport) WriteMarkdown(w io.Writer) error {
	header, rows := rep.table()
	return writeMarkdownTable(w, header, rows, rep.legend())
}

// writeTextTable writes a title, the header and rows as aligned text, and the legend.
func writeTextTable(w io.Writer, title string, header []string, rows [][]string, legend string) error {
	width := make([]int, len(header))
	for _, r := range append([][]string{header}, rows...) {
		for i, c := range r {
			width[i] = max(width[i], len([]rune(c)))
		}
	}
	var b strings.Builder
	b.WriteString(title + "\n\n")
	line := func(r []string) {
		for i, c := range r {
			if i == len(r)-1 {
				b.WriteString(c)
				break
			}
			b.WriteString(c + strings.Repeat(" ", width[i]-len([]rune(c))+2))
		}
		b.WriteString("\n")
	}
	line(header)
	for _, r := range rows {
		line(r)
	}
	b.WriteString("\n" + legend + "\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// writeMarkdownTable writes the header and rows as a Markdown table, and the legend.
func writeMarkdownTable(w io.Writer, header []string, rows [][]string, legend string) error {
	var b strings.Builder
	b.WriteString("| " + strings.Join(header, " | ") + " |\n|")
	for range header {
		b.WriteString("---|")
	}
	b.WriteString("\n")
	for _, r := range rows {
		b.WriteString("| " + strings.Join(r, " | ") + " |\n")
	}
	b.WriteString("\n" + legend + "\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteJSON writes the report as indented JSON.
func (rep *WorldReport) WriteJSON(w io.Writer) error { return writeJSON(w, rep) }

// writeJSON writes v as indented JSON.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
