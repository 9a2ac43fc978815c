package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/speedmatrix/speedmatrix/internal/textout"
	"github.com/speedmatrix/speedmatrix/results"
)

// mdEscape keeps a table cell on one line and its pipes literal.
func mdEscape(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "|", `\|`), "\n", " ")
}

// ComparisonMarkdown writes the comparison as GitHub markdown for a pull-request comment: the
// verdict and summary first, then one matrix table per metric with verdict marks, and the
// evidence (regressions, improvements, rerun advice, noise sources, settings, warnings) in
// collapsible sections.
func ComparisonMarkdown(w io.Writer, c *results.Comparison) error {
	ew := &textout.ErrWriter{W: w}
	icon := map[results.Verdict]string{
		results.VerdictRegression: "❌", results.VerdictImprovement: "✅", results.VerdictUnchanged: "✅",
		results.VerdictInconclusive: "⚠️", results.VerdictNotComparable: "⚠️",
		results.VerdictUnproven: "❓", results.VerdictIncomplete: "🧩",
	}[c.Verdict]
	fmt.Fprintf(ew, "## %s speedmatrix: %s\n\n%s\n\n", icon, strings.ReplaceAll(string(c.Verdict), "_", " "), headline(c))
	fmt.Fprintln(ew, "| | regression | improvement | unchanged | inconclusive | not comparable | unproven | incomplete |")
	fmt.Fprintln(ew, "|---|---|---|---|---|---|---|---|")
	for _, r := range []struct {
		name string
		v    results.VerdictCounts
	}{{"cells", c.Summary.CellCounts}, {"cell-metrics", c.Summary.Counts}} {
		fmt.Fprintf(ew, "| %s | %d | %d | %d | %d | %d | %d | %d |\n", r.name, r.v.Regression, r.v.Improvement, r.v.Unchanged, r.v.Inconclusive, r.v.NotComparable, r.v.Unproven, r.v.Incomplete)
	}
	fmt.Fprintln(ew)
	if g := c.Summary.DecodeTotalGeomean; g != nil {
		fmt.Fprintf(ew, "Decode total tok/s, geometric mean over %s: **%s**\n\n", textout.Plural(g.Cells, "cell", "cells"), intervalText(g, c.Settings.ConfidenceLevel))
	}
	fmt.Fprintf(ew, "Base: %s  \nHead: %s\n", mdEscape(runLine(c.Base)), mdEscape(runLine(c.Head)))
	if l := comparisonTimeScaleLine(c); l != "" {
		fmt.Fprintf(ew, "\n%s\n", l)
	}
	if l := pairingLine(c); l != "" { // paired.go
		fmt.Fprintf(ew, "\n%s\n", l)
	}
	if len(c.Warnings) > 0 {
		fmt.Fprintln(ew)
		for _, w := range c.Warnings {
			fmt.Fprintf(ew, "> [!WARNING]\n> %s\n\n", mdEscape(w))
		}
	}

	writeMatrixTables(ew, c, "###")
	fmt.Fprintln(ew)
	fmt.Fprintln(ew, strings.Join(markLegend(c), "<br>"))

	details := func(summary string, lines []string) {
		if len(lines) == 0 {
			return
		}
		fmt.Fprintf(ew, "\n<details><summary>%s</summary>\n\n", summary)
		for _, l := range lines {
			fmt.Fprintf(ew, "- %s\n", mdEscape(l))
		}
		fmt.Fprintln(ew, "\n</details>")
	}
	reg := byVerdict(c, results.VerdictRegression)
	details(fmt.Sprintf("Regressions (%d)", len(reg)), reg)
	imp := byVerdict(c, results.VerdictImprovement)
	details(fmt.Sprintf("Improvements (%d)", len(imp)), imp)
	notes := notesBeyond(c)
	details(fmt.Sprintf("Notes beyond δ (%d; never a verdict of their own)", len(notes)), notes)
	rows := rowLines(c)
	details(fmt.Sprintf("Row tests (%d)", len(rows)), rows)
	groups := groupLines(c)
	details(fmt.Sprintf("Group tests that regressed (%d)", len(groups)), groups)
	if r := c.Rerun; r != nil {
		var lines []string
		for _, it := range r.Items {
			var ms []string
			for _, m := range it.Metrics {
				ms = append(ms, string(m))
			}
			lines = append(lines, fmt.Sprintf("`%s` (%s): %d more trials", it.Cell, strings.Join(ms, ", "), it.FurtherTrials))
		}
		for _, row := range r.Rows {
			lines = append(lines, fmt.Sprintf("decode row %s, no cell of which decides it alone: measure the whole row %d more times (row test)", row.ContextLabel, row.FurtherTrials))
		}
		if cmds := rerunCommands(c); len(cmds) > 0 {
			lines = append(lines, "measure them again (replace the <…> with your server and configuration), then compare at the second look:")
			for _, cmd := range cmds {
				lines = append(lines, "`"+cmd+"`")
			}
		}
		if len(r.Undecidable) > 0 {
			lines = append(lines, "not decidable within the trial limit (noise too large for δ): "+undecidableText(r.Undecidable))
		}
		lines = append(lines, "Rule: "+r.Rule.Text)
		details(fmt.Sprintf("Rerun advice (%s)", textout.Plural(len(r.Items), "cell", "cells")), lines)
	}
	inc := byVerdict(c, results.VerdictInconclusive)
	details(fmt.Sprintf("Inconclusive (%d)", len(inc)), inc)
	settings := noiseCounts(c)
	for _, s := range c.Settings.Metrics {
		dir := "lower is better"
		if s.HigherIsBetter {
			dir = "higher is better"
		}
		settings = append(settings, fmt.Sprintf("%s: δ = %s, %s", s.Metric, pctPlain(s.Delta), dir))
	}
	settings = append(settings,
		fmt.Sprintf("Benjamini–Hochberg over %d cell-metrics%s at %s (look %d of 2, FDR q = %s%s, %s spending)", c.Summary.Tests, rowsInFamily(c), strconv.FormatFloat(c.Settings.Level, 'g', 3, 64), c.Settings.Look, strconv.FormatFloat(c.Settings.FDR, 'g', -1, 64), falseAlarmText(c), c.Settings.Spending),
		fmt.Sprintf("unchanged: TOST at %s; intervals at %s%%; power %s%%", strconv.FormatFloat(c.Settings.EquivalenceAlpha, 'g', -1, 64), strconv.FormatFloat(c.Settings.ConfidenceLevel*100, 'g', -1, 64), strconv.FormatFloat(c.Settings.Power*100, 'g', -1, 64)))
	prefill, grid := noiseGrid(c)
	if prefill != "" {
		settings = append(settings, "noise source per prefill cell ("+legendFor(c)+"): "+prefill)
	}
	for i, row := range grid {
		if i == 0 {
			settings = append(settings, "noise source per decode cell, concurrency "+strings.Join(row[1:], " / ")+":")
			continue
		}
		settings = append(settings, row[0]+": "+strings.Join(row[1:], " / "))
	}
	details("Noise sources and settings", settings)
	return ew.Err
}

// writeMatrixTables writes compare's matrices in markdown, each under a heading of the given
// level ("###"): the prefill table and one decode matrix per metric.
func writeMatrixTables(w io.Writer, c *results.Comparison, heading string) {
	if t := changePrefillTable(c); t != nil {
		fmt.Fprintf(w, "\n%s Prefill\nprompt tok/s: higher is better, δ = %s · TTFT: lower is better, δ = %s\n\n",
			heading, pctPlain(deltaOf(c, results.MetricPromptTokPerS)), pctPlain(deltaOf(c, results.MetricTTFT)))
		t.markdown(w)
	}
	for _, m := range decodeMetricsOf(c) {
		if t := changeDecodeTable(c, m); t != nil {
			fmt.Fprintf(w, "\n%s %s\nrows are context length, columns are simultaneous requests\n\n", heading, metricHeading(c, results.PhaseDecode, m))
			t.markdown(w)
		}
	}
}
