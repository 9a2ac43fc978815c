package report

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/speedmatrix/speedmatrix/internal/numfmt"
	"github.com/speedmatrix/speedmatrix/internal/textout"
	"github.com/speedmatrix/speedmatrix/results"
)

// comparisonLegend explains the marks (marks.go) and the cell text.
var comparisonLegend = []string{
	"Each cell: change of head against base (± half the 95 % confidence interval) and its verdict:",
	MarkRegression + " regression: worse beyond δ, significant after false-discovery-rate control",
	MarkImprovement + " improvement: better beyond δ, significant after false-discovery-rate control",
	MarkUnchanged + " unchanged: shown to be within ±δ (two one-sided tests)",
	MarkNotJudged + " inconclusive: neither; too noisy to tell at this δ (see the rerun advice)",
	MarkNotCompared + " not comparable: missing, not measured, or a status change (named)",
}

// markLegend is comparisonLegend with the marks of unproven and incomplete cell-metrics, and of
// cells over capacity on both sides, added when c has any.
func markLegend(c *results.Comparison) []string {
	used := map[results.Verdict]bool{}
	overCap := false
	for i := range c.Cells {
		cell := &c.Cells[i]
		used[cell.Verdict] = true
		for j := range cell.Metrics {
			used[cell.Metrics[j].Verdict] = true
			overCap = overCap || metricMark(cell, &cell.Metrics[j]) == MarkOverCapacity
		}
	}
	out := slices.Clone(comparisonLegend)
	if hasNote(c) {
		out = append(out, MarkNoteWorse+" "+MarkNoteBetter+" a note worse or better beyond δ, significant: a metric that does not decide its cell ("+decidedOnWords("")+"), never a verdict of its own")
	}
	if used[results.VerdictUnproven] {
		out = append(out, MarkNotJudged+" unproven: possibly worse beyond δ, neither shown nor ruled out (a prior alone bounds its noise, or its group is not yet significant); store history, a rerun or a paired run decides it")
	}
	if used[results.VerdictIncomplete] {
		out = append(out, MarkNotJudged+" incomplete: the head lacks data it should hold (missing, partial or stalled)")
	}
	if overCap {
		out = append(out, MarkOverCapacity+" over capacity on both sides: not run, as expected")
	}
	return out
}

// verdictWord returns a verdict as a heading word.
func verdictWord(v results.Verdict) string {
	return strings.ToUpper(strings.ReplaceAll(string(v), "_", " "))
}

// changeText formats a change as "+4.1% (±1.2%)".
func changeText(ch *results.Change) string {
	half := (ch.High - ch.Low) / 2 * 100
	return fmt.Sprintf("%s (±%s%%)", FormatPercent(ch.Change), numfmt.Fixed(half, 1))
}

// intervalText formats "-6.1% (95% CI -7.2% … -5.0%)".
func intervalText(ch *results.Change, level float64) string {
	if ch.Level > 0 {
		level = ch.Level // held at its table's level (results.Change.Level)
	}
	return fmt.Sprintf("%s (%s%% CI %s … %s)", FormatPercent(ch.Change), levelText(level), FormatPercent(ch.Low), FormatPercent(ch.High))
}

// shortReason names why a cell-metric has no change.
func shortReason(cell *results.CellComparison, m *results.MetricComparison) string {
	switch {
	case cell.BaseStatus == "":
		return "new in head"
	case cell.HeadStatus == "":
		return "missing in head"
	case cell.BaseStatus != cell.HeadStatus:
		return statusShort(cell.BaseStatus) + "→" + statusShort(cell.HeadStatus)
	case !cell.BaseStatus.Measured():
		return statusShort(cell.BaseStatus)
	case m.Base == nil && m.Head == nil:
		return "no value"
	}
	return "—"
}

func statusShort(s results.Status) string {
	return strings.ReplaceAll(string(s), "_", " ")
}

// formatValue formats a metric's value measured at time scale s in the profile's time, with at
// least three significant digits so that a change of a few percent shows in the numbers.
func formatValue(m results.Metric, v *float64, s float64) string {
	v = m.InProfileTime(v, s)
	if v == nil {
		return Dash
	}
	return m.FormatValue(*v)
}

// contextTokens returns a cell's context length for ordering rows.
func contextTokens(cell *results.CellComparison) int {
	if cell.Context > 0 {
		return cell.Context
	}
	n, _ := results.ParseContext(cell.ContextLabel)
	return n
}

// prefillRows returns the prefill cells in context order.
func prefillRows(c *results.Comparison) []*results.CellComparison {
	var out []*results.CellComparison
	for i := range c.Cells {
		if c.Cells[i].Phase == results.PhasePrefill {
			out = append(out, &c.Cells[i])
		}
	}
	slices.SortStableFunc(out, func(a, b *results.CellComparison) int { return contextTokens(a) - contextTokens(b) })
	return out
}

// deltaOf returns the δ the comparison used for m.
func deltaOf(c *results.Comparison, m results.Metric) float64 {
	for _, s := range c.Settings.Metrics {
		if s.Metric == m {
			return s.Delta
		}
	}
	return 0
}

// metricHeading is "Decode total tok/s (higher is better; δ = 3%)".
func metricHeading(c *results.Comparison, phase results.Phase, m results.Metric) string {
	dir := "lower is better"
	if m.HigherIsBetter() {
		dir = "higher is better"
	}
	name := "Decode"
	if phase == results.PhasePrefill {
		name = "Prefill"
	}
	title := m.Title()
	if len(title) > 1 && title[1] >= 'a' && title[1] <= 'z' {
		title = strings.ToLower(title[:1]) + title[1:]
	}
	return fmt.Sprintf("%s %s (%s; δ = %s)", name, title, dir, pctPlain(deltaOf(c, m)))
}

// pctPlain formats a fraction as "3%" or "2.5%".
func pctPlain(f float64) string {
	return numfmt.Plain(f*100) + "%"
}

// runLine describes one side.
func runLine(r results.ComparedRun) string {
	var parts []string
	if r.Path != "" {
		parts = append(parts, r.Path)
	}
	if r.ServedModel != "" {
		parts = append(parts, r.ServedModel)
	}
	eng := strings.TrimSpace(r.Engine + " " + r.EngineVersion)
	if r.Commit != "" {
		eng += " @ " + r.Commit
	}
	if eng != "" {
		parts = append(parts, eng)
	}
	if r.GPU != "" {
		hw := r.GPU
		if r.GPUCount > 1 {
			hw = fmt.Sprintf("%s ×%d", r.GPU, r.GPUCount)
		}
		parts = append(parts, hw)
	}
	if r.RunID != "" {
		parts = append(parts, "run "+r.RunID)
	}
	return strings.Join(parts, " · ")
}

// headline is the one-sentence outcome.
func headline(c *results.Comparison) string {
	cc, mc := c.Summary.CellCounts, c.Summary.Counts
	switch c.Verdict {
	case results.VerdictRegression:
		return fmt.Sprintf("%d of %d cells regressed (%d cell-metrics)%s.", cc.Regression, cc.Total(), mc.Regression, rowsWith(c, results.VerdictRegression, "regressed"))
	case results.VerdictImprovement:
		return fmt.Sprintf("No regression; %d of %d cells improved (%d cell-metrics)%s.", cc.Improvement, cc.Total(), mc.Improvement, rowsWith(c, results.VerdictImprovement, "improved"))
	case results.VerdictUnchanged:
		return fmt.Sprintf("No regression: every compared cell-metric is shown unchanged within ±δ (%d cell-metrics).", mc.Unchanged)
	case results.VerdictInconclusive:
		if mc.Unchanged == 0 {
			return fmt.Sprintf("Underpowered: none of the %d compared cell-metrics could be decided. The noise is too large for these thresholds, so this comparison can neither find nor rule out a regression; measure again (rerun advice below) or raise δ.", c.Summary.Tests)
		}
		return fmt.Sprintf("No regression found, but %d of %d compared cell-metrics are inconclusive: they can neither find nor rule out a change beyond δ.", mc.Inconclusive, c.Summary.Tests)
	case results.VerdictUnproven:
		why := "only a prior bounds its noise, a cell, row, column or phase is slower beyond δ by itself (its whole interval) but not significant among every test of the matrix, or the head's one run reads two ways"
		if r := c.VerdictReason; r != "" {
			why = r
		}
		return "Unproven: a change worse than δ, neither shown nor ruled out (" + why + "); it does not block, and it does not pass either: store history, a rerun or a paired run (speedmatrix run --paired, /bench paired) decides it."
	case results.VerdictIncomplete:
		if r := c.VerdictReason; r != "" {
			return "Incomplete: " + r + ". Missing data never passes."
		}
		return "Incomplete: the head lacks data it should hold (a cell the plan or the base has, a partial run, a window that stalled; see the warnings). Missing data never passes."
	}
	return "Nothing could be compared: no cell was measured in both files."
}

// rowsInFamily says how many row tests joined the family ("" when none).
func rowsInFamily(c *results.Comparison) string {
	if len(c.Rows) == 0 {
		return ""
	}
	return fmt.Sprintf(" and %d row tests", len(c.Rows))
}

// falseAlarmText names the whole-matrix false-alarm cap when it binds ("" otherwise).
func falseAlarmText(c *results.Comparison) string {
	if fa := c.Settings.FalseAlarm; fa > 0 && fa < c.Settings.FDR {
		return fmt.Sprintf(", capped at the whole-matrix false-alarm rate %g", fa)
	}
	return ""
}

// rowsWith names the decode rows whose row test has verdict v, as a clause ("" when none).
func rowsWith(c *results.Comparison, v results.Verdict, verb string) string {
	var rows []string
	for _, r := range c.Rows {
		if r.Verdict == v {
			rows = append(rows, r.ContextLabel)
		}
	}
	if len(rows) == 0 {
		return ""
	}
	return fmt.Sprintf("; the row test found decode row %s %s as a whole", strings.Join(rows, ", "), verb)
}

// rowLines describes the row tests, one line each.
func rowLines(c *results.Comparison) []string {
	var out []string
	for _, r := range c.Rows {
		out = append(out, fmt.Sprintf("decode row %s: %s — %s (cells %s)", r.ContextLabel, verdictWord(r.Verdict), r.Reason, strings.Join(r.Cells, ", ")))
	}
	return out
}

// countsLine lists verdict counts; unproven and incomplete only when there are some.
func countsLine(v results.VerdictCounts) string {
	s := fmt.Sprintf("%d regression · %d improvement · %d unchanged · %d inconclusive · %d not comparable",
		v.Regression, v.Improvement, v.Unchanged, v.Inconclusive, v.NotComparable)
	if v.Unproven > 0 {
		s += fmt.Sprintf(" · %d unproven", v.Unproven)
	}
	if v.Incomplete > 0 {
		s += fmt.Sprintf(" · %d incomplete", v.Incomplete)
	}
	return s
}

// regressedGroups returns the group tests (rows, concurrency columns, a phase's shift between
// runs) whose verdict is regression, in the comparison's order.
func regressedGroups(c *results.Comparison) []results.GroupComparison {
	var out []results.GroupComparison
	for _, g := range c.Groups {
		if g.Verdict == results.VerdictRegression {
			out = append(out, g)
		}
	}
	return out
}

// groupLines describes the group tests that regressed, one line each: the group's name and
// the test's reason.
func groupLines(c *results.Comparison) []string {
	var out []string
	for _, g := range regressedGroups(c) {
		l := g.Name()
		switch {
		case strings.HasPrefix(g.Reason, l):
			l = g.Reason // the reason names the group already
		case g.Reason != "":
			l += ": " + g.Reason
		}
		out = append(out, l)
	}
	return out
}

// noiseCounts counts the noise sources of the tested cell-metrics, in a fixed order.
func noiseCounts(c *results.Comparison) []string {
	counts := map[string]int{}
	var why priorGroups
	levels := 0 // history noise measured within the levels of a history that shifted
	for _, cell := range c.Cells {
		for _, m := range cell.Metrics {
			if m.Noise != nil {
				counts[m.Noise.Source]++
				if m.Noise.Levels > 1 {
					levels++
				}
				if m.Noise.Source == results.NoisePrior {
					why.add(m.Metric, m.Noise)
				}
			}
		}
	}
	desc := map[string]string{
		results.NoiseTrials:  "spread of repeated trials in both files",
		results.NoiseHistory: "spread of the cell across the base's history",
		results.NoiseWithin:  "within-run batch means, at least the prior",
		results.NoisePrior:   why.text(),
		// The prior was too small on this machine: A/A reruns in the store measured more.
		results.NoiseMeasured: "measured noise above the prior, from A/A reruns of one commit in the store",
		results.NoisePaired:   "spread of the head/base ratios of the pairs of one paired A/B run, a drift between blocks removed where both orders occurred",
	}
	if levels > 0 {
		desc[results.NoiseHistory] += fmt.Sprintf("; in %d, within the levels of a history that shifted", levels)
	}
	var out []string
	for _, s := range []string{results.NoisePaired, results.NoiseTrials, results.NoiseHistory, results.NoiseWithin, results.NoisePrior, results.NoiseMeasured} {
		if counts[s] > 0 {
			out = append(out, fmt.Sprintf("%s: %d (%s)", s, counts[s], desc[s]))
		}
	}
	return out
}

// priorGroup is the cell-metrics whose noise is the prior alone for one reason (and, for too few
// raw samples, one kind of sample).
type priorGroup struct {
	reason string
	unit   string // "requests" or "1 s bins", for PriorFewSamples
	needed int
	n      int
	lo, hi int // the range of samples, for PriorFewSamples
}

// label says the reason, with the range of samples lo–hi for too few raw samples.
func (g *priorGroup) label(lo, hi int) string {
	switch g.reason {
	case results.PriorSummaryOnly:
		return "no raw samples (summary only)"
	case results.PriorFewSamples:
		r := strconv.Itoa(lo)
		if hi != lo {
			r += "–" + strconv.Itoa(hi)
		}
		return fmt.Sprintf("raw samples too few: %s %s (%d needed)", r, g.unit, g.needed)
	case results.PriorNoWithin:
		return "raw samples gave no within-run estimate"
	case results.PriorPrefill:
		return "one request per prefill run"
	case results.PriorNoSpread:
		return "repeated trials identical"
	case results.PriorCounters:
		return "one counter ratio per run (speculative acceptance)"
	}
	return "no better source"
}

// priorGroupOf returns the group of one cell-metric whose noise is the prior; ok is false when
// the comparison does not say why (a file written before the reason was recorded).
func priorGroupOf(m results.Metric, n *results.Noise) (priorGroup, bool) {
	if n.PriorReason == "" {
		return priorGroup{}, false
	}
	g := priorGroup{reason: n.PriorReason, needed: n.SamplesNeeded}
	if n.PriorReason == results.PriorFewSamples {
		g.unit = "requests"
		if m == results.MetricTotalTokPerS {
			g.unit = "1 s bins"
		}
		if n.Samples != nil {
			g.lo, g.hi = *n.Samples, *n.Samples
		}
	}
	return g, true
}

// priorGroups collects the reasons of the cell-metrics whose noise is the prior, in the order
// first seen.
type priorGroups struct {
	groups []*priorGroup
}

func (gs *priorGroups) add(m results.Metric, n *results.Noise) {
	g, ok := priorGroupOf(m, n)
	if !ok {
		g = priorGroup{}
	}
	for _, have := range gs.groups {
		if have.reason == g.reason && have.unit == g.unit && have.needed == g.needed {
			have.n++
			have.lo, have.hi = min(have.lo, g.lo), max(have.hi, g.hi)
			return
		}
	}
	g.n = 1
	gs.groups = append(gs.groups, &g)
}

// text describes the prior's cell-metrics: "configured prior only: REASON", or with several
// reasons "configured prior only — N with REASON; …".
func (gs *priorGroups) text() string {
	const head = "configured prior only"
	switch len(gs.groups) {
	case 0:
		return head
	case 1:
		return head + ": " + gs.groups[0].label(gs.groups[0].lo, gs.groups[0].hi)
	}
	parts := make([]string, len(gs.groups))
	for i, g := range gs.groups {
		parts[i] = fmt.Sprintf("%d with %s", g.n, g.label(g.lo, g.hi))
	}
	return head + " — " + strings.Join(parts, "; ")
}

// detail is one line about a decided or failed cell-metric.
func detail(c *results.Comparison, cell *results.CellComparison, m *results.MetricComparison) string {
	s := fmt.Sprintf("%s %s: %s → %s", cell.Cell, m.Metric.Title(), formatValue(m.Metric, m.Base, c.Base.Scale())+BaseWord(m), formatValue(m.Metric, m.Head, c.Head.Scale()))
	if m.Change == nil {
		return s + ", " + m.Reason
	}
	s += ", " + intervalText(m.Change, c.Settings.ConfidenceLevel)
	if m.Q != nil {
		s += ", " + qText(*m.Q)
	}
	if m.Noise != nil {
		why := ""
		if m.Noise.Source == results.NoisePrior {
			if g, ok := priorGroupOf(m.Metric, m.Noise); ok {
				why = "; " + g.label(g.lo, g.hi)
			}
		}
		s += fmt.Sprintf(", noise: %s (CV %.1f%%%s)", m.Noise.Source, m.Noise.CV*100, why)
	}
	return s
}

// notesBeyond returns the detail lines of every note whose change is significant and beyond δ
// (noteOf): excluded from byVerdict's inconclusive lines, which are too noisy to tell.
func notesBeyond(c *results.Comparison) []string {
	var out []string
	for i := range c.Cells {
		cell := &c.Cells[i]
		for j := range cell.Metrics {
			if noteOf(&cell.Metrics[j]) != "" {
				out = append(out, detail(c, cell, &cell.Metrics[j]))
			}
		}
	}
	return out
}

// byVerdict lists the cell-metrics with verdict v (a note beyond δ is not inconclusive's).
func byVerdict(c *results.Comparison, v results.Verdict) []string {
	var out []string
	for i := range c.Cells {
		cell := &c.Cells[i]
		for j := range cell.Metrics {
			if cell.Metrics[j].Verdict == v && noteOf(&cell.Metrics[j]) == "" {
				out = append(out, detail(c, cell, &cell.Metrics[j]))
			}
		}
	}
	return out
}

// table writes rows as left-aligned columns separated by two spaces, measured in a terminal's
// columns (textWidth).
func table(w io.Writer, indent string, rows [][]string) {
	var widths []int
	for _, r := range rows {
		for i, s := range r {
			if i >= len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], textWidth(s))
		}
	}
	for _, r := range rows {
		var b strings.Builder
		b.WriteString(indent)
		for i, s := range r {
			b.WriteString(s)
			if i < len(r)-1 {
				b.WriteString(strings.Repeat(" ", widths[i]-textWidth(s)+2))
			}
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
}

// wideMarks are the marks a terminal draws two columns wide (emoji, East Asian width W).
const wideMarks = MarkRegression + MarkImprovement + MarkNotJudged + MarkQueued

// textWidth is how many columns a terminal gives s: one per rune, two for a wide mark. The text
// tables hold numbers, context labels, words and marks, no other wide character.
func textWidth(s string) int {
	n := utf8.RuneCountInString(s)
	for _, r := range s {
		if strings.ContainsRune(wideMarks, r) {
			n++
		}
	}
	return n
}

// ComparisonText writes the comparison as benchstat-like plain text: the verdict and summary,
// the matrix of every metric with "+4.1% (±1.2%)" cells and verdict marks, a legend, the
// regressions and improvements with their evidence, the noise sources, the rerun advice and the
// warnings.
func ComparisonText(w io.Writer, c *results.Comparison) error {
	ew := &textout.ErrWriter{W: w}
	fmt.Fprintf(ew, "speedmatrix compare\nbase: %s\nhead: %s\n", runLine(c.Base), runLine(c.Head))
	if l := comparisonTimeScaleLine(c); l != "" {
		fmt.Fprintln(ew, l)
	}
	if l := pairingLine(c); l != "" { // paired.go
		fmt.Fprintln(ew, l)
	}
	fmt.Fprintln(ew)
	fmt.Fprintf(ew, "Verdict: %s. %s\n", verdictWord(c.Verdict), headline(c))
	fmt.Fprintf(ew, "Cells:        %s\n", countsLine(c.Summary.CellCounts))
	fmt.Fprintf(ew, "Cell-metrics: %s\n", countsLine(c.Summary.Counts))
	if g := c.Summary.DecodeTotalGeomean; g != nil {
		fmt.Fprintf(ew, "Decode total tok/s, geometric mean over %s: %s\n", textout.Plural(g.Cells, "cell", "cells"), intervalText(g, c.Settings.ConfidenceLevel))
	}
	fmt.Fprintf(ew, "Family: %d cell-metrics%s under Benjamini–Hochberg at %.3g (look %d of 2; FDR q = %g%s over both looks)\n",
		c.Summary.Tests, rowsInFamily(c), c.Settings.Level, c.Settings.Look, c.Settings.FDR, falseAlarmText(c))

	if t := changePrefillTable(c); t != nil {
		fmt.Fprintf(ew, "\nPrefill (prompt tok/s: higher is better, δ = %s; TTFT: lower is better, δ = %s)\n",
			pctPlain(deltaOf(c, results.MetricPromptTokPerS)), pctPlain(deltaOf(c, results.MetricTTFT)))
		t.text(ew, "")
	}
	for _, m := range decodeMetricsOf(c) {
		if t := changeDecodeTable(c, m); t != nil {
			fmt.Fprintf(ew, "\n%s\n", metricHeading(c, results.PhaseDecode, m))
			t.text(ew, "")
		}
	}
	fmt.Fprintln(ew)
	for _, l := range markLegend(c) {
		fmt.Fprintln(ew, l)
	}
	for _, sec := range []struct {
		title string
		v     results.Verdict
	}{{"Regressions", results.VerdictRegression}, {"Improvements", results.VerdictImprovement}} {
		if lines := byVerdict(c, sec.v); len(lines) > 0 {
			fmt.Fprintf(ew, "\n%s (%d):\n", sec.title, len(lines))
			for _, l := range lines {
				fmt.Fprintln(ew, "  "+l)
			}
		}
	}
	if lines := notesBeyond(c); len(lines) > 0 {
		fmt.Fprintf(ew, "\nNotes beyond δ (%d; significant, never a verdict of their own: each cell is %s):\n", len(lines), decidedOnWords("its "))
		for _, l := range lines {
			fmt.Fprintln(ew, "  "+l)
		}
	}
	if lines := rowLines(c); len(lines) > 0 {
		fmt.Fprintf(ew, "\nRow tests (%d; every tested cell-metric of a decode row pooled per run, score in units of δ, positive = worse):\n", len(lines))
		for _, l := range lines {
			fmt.Fprintln(ew, "  "+l)
		}
	}
	if lines := groupLines(c); len(lines) > 0 {
		fmt.Fprintf(ew, "\nGroup tests that regressed (%d):\n", len(lines))
		for _, l := range lines {
			fmt.Fprintln(ew, "  "+l)
		}
	}
	if nc := noiseCounts(c); len(nc) > 0 {
		fmt.Fprintln(ew, "\nNoise sources of the compared cell-metrics:")
		for _, l := range nc {
			fmt.Fprintln(ew, "  "+l)
		}
		fmt.Fprintln(ew, "  Per cell ("+legendFor(c)+"):")
		prefill, decode := noiseGrid(c)
		if prefill != "" {
			fmt.Fprintln(ew, "    prefill: "+prefill)
		}
		table(ew, "    ", decode)
	}
	if c.Rerun != nil {
		writeRerunText(ew, c)
	}
	if len(c.Warnings) > 0 {
		fmt.Fprintln(ew, "\nWarnings:")
		for _, w := range c.Warnings {
			fmt.Fprintln(ew, "  - "+w)
		}
	}
	return ew.Err
}

// writeRerunText writes the rerun advice: the cells, and the complete commands that measure them
// again and compare the pooled trials at the second look (rerunCommands).
func writeRerunText(w io.Writer, c *results.Comparison) {
	r := c.Rerun
	fmt.Fprintln(w, "\nRerun advice:")
	if len(r.Items) > 0 {
		fmt.Fprintf(w, "  %d inconclusive cells can be decided with at most %d more trials each:\n", len(r.Items), r.Trials)
		tab := [][]string{}
		for _, it := range r.Items {
			var ms []string
			for _, m := range it.Metrics {
				ms = append(ms, string(m))
			}
			tab = append(tab, []string{it.Cell, strings.Join(ms, ", "), fmt.Sprintf("%d more", it.FurtherTrials)})
		}
		table(w, "    ", tab)
	}
	for _, row := range r.Rows {
		fmt.Fprintf(w, "  Decode row %s: no cell of the row decides it alone; measure the whole row %d more times for the row test.\n", row.ContextLabel, row.FurtherTrials)
	}
	if cmds := rerunCommands(c); len(cmds) > 0 {
		fmt.Fprintln(w, "  Measure them again (replace the <…> with your server and configuration), then compare at the second look:")
		for _, l := range cmds {
			fmt.Fprintln(w, "    "+l)
		}
	}
	if len(r.Undecidable) > 0 {
		fmt.Fprintf(w, "  Not decidable within the trial limit (noise too large for δ; raise δ or lower the noise): %s\n", undecidableText(r.Undecidable))
	}
	fmt.Fprintln(w, "  Rule: "+r.Rule.Text)
}

// rerunCommands are the complete commands that follow c's rerun advice: for each rerun, a
// `speedmatrix run` of its cells with its trials against the server and configuration (angle-
// bracket placeholders, which a shell refuses rather than measuring the built-in simulator),
// written to a new file (never results.json), on the head alone or on base and head; then the
// `compare --look 2` that pools each side's files and tests the cells measured again. None when
// the advice measures nothing.
func rerunCommands(c *results.Comparison) []string {
	r := c.Rerun
	if r == nil {
		return nil
	}
	type rerun struct {
		cells  string
		trials int
		name   string
	}
	var runs []rerun
	if r.Cells != "" && r.Trials > 0 {
		runs = append(runs, rerun{r.Cells, r.Trials, "rerun"})
	}
	for _, row := range r.Rows {
		if row.Cells != "" && row.FurtherTrials > 0 {
			runs = append(runs, rerun{row.Cells, row.FurtherTrials, "rerun-row-" + row.ContextLabel})
		}
	}
	if len(runs) == 0 {
		return nil
	}
	sides := []string{"head", "base"}
	if r.HeadOnly {
		sides = sides[:1]
	}
	var out, all []string
	files := map[string][]string{"base": {shellArg(orPlaceholder(c.Base.Path, "<base results>.json"))}, "head": {shellArg(orPlaceholder(c.Head.Path, "<head results>.json"))}}
	for _, run := range runs {
		all = append(all, run.cells)
		for _, side := range sides {
			file := side + "-" + run.name + ".json"
			out = append(out, fmt.Sprintf("speedmatrix run --url <%s server URL> --config <speedmatrix.yaml> --cells %s --trials %d -o %s", side, run.cells, run.trials, file))
			files[side] = append(files[side], file)
		}
	}
	out = append(out, fmt.Sprintf("speedmatrix compare %s %s --look 2 --cells %s", strings.Join(files["base"], ","), strings.Join(files["head"], ","), strings.Join(all, ",")))
	return out
}

// orPlaceholder is p, or the placeholder where the comparison names no file.
func orPlaceholder(p, placeholder string) string {
	if strings.TrimSpace(p) == "" {
		return placeholder
	}
	return p
}

// shellArg quotes s for a POSIX shell where it holds more than letters, digits and ._-/,+<>=:
// (a placeholder's angle brackets stay bare, so that a shell refuses the line unedited).
func shellArg(s string) string {
	safe := s != ""
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._-/,+<>=:", r)) {
			safe = false
		}
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// qText formats an adjusted p-value, "q < 1e-10" below what doubles resolve reliably.
func qText(q float64) string {
	if q < 1e-10 {
		return "q < 1e-10"
	}
	return fmt.Sprintf("q = %.2g", q)
}

// undecidableText lists undecidable cell-metrics as "decode/8K/1 (total_tok_per_s, ttft_ms)".
func undecidableText(items []results.UndecidableItem) string {
	var parts []string
	for _, it := range items {
		var ms []string
		for _, m := range it.Metrics {
			ms = append(ms, string(m))
		}
		parts = append(parts, fmt.Sprintf("%s (%s)", it.Cell, strings.Join(ms, ", ")))
	}
	return strings.Join(parts, "; ")
}

// legendFor returns the legend of c's noise grid: noiseLegend, and M where some cell-metric took
// the noise measured in A/A reruns.
func legendFor(c *results.Comparison) string {
	for _, cl := range c.Cells {
		for _, m := range cl.Metrics {
			if m.Noise != nil && m.Noise.Source == results.NoiseMeasured {
				return strings.Replace(noiseLegend, ", P prior,", ", P prior, M measured on this machine (A/A reruns; above the prior),", 1)
			}
			if m.Noise != nil && m.Noise.Source == results.NoisePaired {
				return strings.Replace(noiseLegend, "T trials,", "A paired A/B (per-pair ratios), T trials,", 1)
			}
		}
	}
	return noiseLegend
}

// noiseLegend explains the letters of noiseGrid.
const noiseLegend = "one letter per metric in the order of the tables above: T trials, H history, W within-run batch means floored by the prior, P prior, · not compared"

// noiseLetter abbreviates a cell-metric's noise source.
func noiseLetter(m *results.MetricComparison) string {
	if m.Noise == nil {
		return "·"
	}
	switch m.Noise.Source {
	case results.NoiseTrials:
		return "T"
	case results.NoiseHistory:
		return "H"
	case results.NoiseWithin:
		return "W"
	case results.NoiseMeasured:
		return "M"
	case results.NoisePaired:
		return "A"
	}
	return "P"
}

// noiseGrid returns the noise sources of every cell-metric: a line for the prefill cells and
// the rows of a table for the decode matrix.
func noiseGrid(c *results.Comparison) (string, [][]string) {
	letters := func(cell *results.CellComparison) string {
		var b strings.Builder
		for _, m := range results.Metrics(cell.Phase) {
			if mc := cell.Metric(m); mc != nil {
				b.WriteString(noiseLetter(mc))
			} else {
				b.WriteString("·")
			}
		}
		return b.String()
	}
	var rows [][]string
	var pre []string
	for _, cell := range prefillRows(c) {
		pre = append(pre, cell.ContextLabel+" "+letters(cell))
	}
	t := decodeTable(c, "decode", func(cell *results.CellComparison) (matrixCell, bool) {
		return matrixCell{text: letters(cell)}, cell.Metric(results.MetricTotalTokPerS) != nil
	})
	if t != nil {
		rows = t.grid()
	}
	return strings.Join(pre, ", "), rows
}

// levelText formats a confidence level as a percentage to at most two decimals: "95",
// "99.88".
func levelText(level float64) string { return numfmt.Plain(math.Round(level*1e4) / 100) }
