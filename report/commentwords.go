package report

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/speedmatrix/speedmatrix/internal/numfmt"
	"github.com/speedmatrix/speedmatrix/internal/textout"
	"github.com/speedmatrix/speedmatrix/results"
)

// The comment's words are a maintainer's: "3 %" rather than δ, "8K × 8" (context × requests at
// once) rather than decode/8K/8, ranges rather than ± half-widths, and at most three
// significant digits. The helpers here make those words; they know nothing of the layout.

// MaxTitleRunes bounds the check run's title, which GitHub's merge box shows on one line.
const MaxTitleRunes = 70

// minus is the sign of a negative number in running text.
const minus = "−"

// pctWords formats a signed change given as a fraction with at most three significant digits
// and a real minus sign: "−23.3 %", "+4.1 %", "+266 %".
func pctWords(frac float64) string {
	v := frac * 100
	s := "+"
	if v < 0 {
		s = minus
	}
	return s + pctNumber(math.Abs(v)) + " %"
}

// pctNumber formats a non-negative percentage: one decimal below 100, none from 100 up.
func pctNumber(v float64) string {
	if v >= 99.95 {
		return numfmt.Group(strconv.FormatFloat(math.Round(v), 'f', 0, 64))
	}
	return strconv.FormatFloat(v, 'f', 1, 64)
}

// pctPlainWords formats an unsigned threshold: "3 %", "2.5 %".
func pctPlainWords(frac float64) string { return numfmt.Plain(frac*100) + " %" }

// rangeWords formats a change's confidence interval as a range: "−42.0 … +76.0 %".
// A range at another level than the comparison's (a cell held at its table's level) names it:
// "−36.8 … +1.2 % at 99.88 %".
func rangeWords(ch *results.Change) string {
	lo, hi := pctWords(ch.Low), pctWords(ch.High)
	r := strings.TrimSuffix(lo, " %") + " … " + hi
	if ch.Level > 0 {
		r += " at " + levelText(ch.Level) + " %"
	}
	return r
}

// sig3 formats a positive number with three significant digits: "171", "61.2", "6.12",
// "1.23K", "12.3K", "123K".
func sig3(v float64) string {
	switch a := math.Abs(v); {
	case a >= 999.5:
		return sig3(v/1000) + "K"
	case a >= 99.5:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case a >= 9.995:
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

// valueWords formats a metric's value measured at time scale s, in the profile's time, with
// three significant digits and its unit: "612 tok/s", "2.60 s", "45.4 ms".
func valueWords(m results.Metric, v *float64, s float64) string {
	v = m.InProfileTime(v, s)
	if v == nil {
		return Dash
	}
	switch {
	case m == results.MetricSpecAcceptance:
		return sig3(*v) + " tokens/step"
	case !m.HigherIsBetter() && *v >= 1000:
		return sig3(*v/1000) + " s"
	case !m.HigherIsBetter():
		return sig3(*v) + " ms"
	}
	return sig3(*v) + " tok/s"
}

// CellCountWords counts every cell of a comparison once, by its verdict, in a reader's words:
// "3 slower · 0 faster · 0 unchanged · 4 too noisy to tell · 1 not compared (8 cells)"; not
// proven, incomplete and not compared only when there are some.
func CellCountWords(cc results.VerdictCounts) string {
	s := fmt.Sprintf("%d slower · %d faster · %d unchanged · %d too noisy to tell", cc.Regression, cc.Improvement, cc.Unchanged, cc.Inconclusive)
	for _, x := range []struct {
		n     int
		words string
	}{{cc.Unproven, "not proven"}, {cc.Incomplete, "incomplete"}, {cc.NotComparable, "not compared"}} {
		if x.n > 0 {
			s += fmt.Sprintf(" · %d %s", x.n, x.words)
		}
	}
	return s + " (" + textout.Plural(cc.Total(), "cell", "cells") + ")"
}

// cellWords names a cell for a reader: "decode 8K × 8" (context × requests at once),
// "prefill 32K".
func cellWords(cell *results.CellComparison) string {
	if cell.ContextLabel == "" {
		return cellIDWords(cell.Cell)
	}
	if cell.Phase == results.PhasePrefill {
		return "prefill " + cell.ContextLabel
	}
	return fmt.Sprintf("decode %s × %d", cell.ContextLabel, cell.Concurrency)
}

// requestsWords is "1 request", "8 requests", "8 and 32 requests", "1, 2 and 4 requests".
func requestsWords(conc []int) string {
	var parts []string
	for _, c := range conc {
		parts = append(parts, strconv.Itoa(c))
	}
	return andList(parts) + " " + textout.Pick(conc[len(conc)-1], "request", "requests")
}

// andList joins "a", "a and b", "a, b and c".
func andList(parts []string) string {
	switch len(parts) {
	case 0:
		return ""
	case 1:
		return parts[0]
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}

// changeOf is the observed change of a cell's deciding metric; ok is false without one.
func (v cellView) changeOf() (float64, bool) {
	if v.by == nil || v.by.Change == nil {
		return 0, false
	}
	return v.by.Change.Change, true
}

// worse reports whether the deciding metric moved the worse way.
func (v cellView) worse() bool {
	ch, ok := v.changeOf()
	return ok && (ch < 0) == v.by.Metric.HigherIsBetter()
}

// movedBeyond reports whether the deciding metric moved by more than f either way.
func (v cellView) movedBeyond(f float64) bool {
	ch, ok := v.changeOf()
	return ok && math.Abs(ch) > f
}

// changesWords is one change "−23.3 %" or the range of several "−19.6 to −25.7 %" (one value
// where they round alike).
func changesWords(vs []cellView) string {
	var chs []float64
	for _, v := range vs {
		if ch, ok := v.changeOf(); ok {
			chs = append(chs, ch)
		}
	}
	if len(chs) == 0 {
		return ""
	}
	slices.SortFunc(chs, func(a, b float64) int { return int(math.Copysign(1, math.Abs(a)-math.Abs(b))) })
	lo, hi := pctWords(chs[0]), pctWords(chs[len(chs)-1])
	if lo == hi {
		return lo
	}
	return strings.TrimSuffix(lo, " %") + " to " + hi
}

// layout is which decode contexts and concurrencies a comparison compared, to say that a set
// of cells is a whole column ("at 8 requests, all contexts") or a whole row.
type layout struct {
	contexts    []string // in context order
	concurrency []int
	compared    map[string]map[int]bool // the decode cells measured on both sides
}

func newLayout(c *results.Comparison) layout {
	l := layout{compared: map[string]map[int]bool{}}
	ctxLen := map[string]int{}
	for i := range c.Cells {
		cell := &c.Cells[i]
		if cell.Phase != results.PhaseDecode {
			continue
		}
		if _, ok := ctxLen[cell.ContextLabel]; !ok {
			ctxLen[cell.ContextLabel] = contextTokens(cell)
			l.contexts = append(l.contexts, cell.ContextLabel)
			l.compared[cell.ContextLabel] = map[int]bool{}
		}
		if !slices.Contains(l.concurrency, cell.Concurrency) {
			l.concurrency = append(l.concurrency, cell.Concurrency)
		}
		if cell.BaseStatus.Measured() && cell.HeadStatus.Measured() {
			l.compared[cell.ContextLabel][cell.Concurrency] = true
		}
	}
	slices.Sort(l.concurrency)
	slices.SortStableFunc(l.contexts, func(a, b string) int { return ctxLen[a] - ctxLen[b] })
	return l
}

// whereWords says where a set of cells of one phase lies: "at 8 and 32 requests, all
// contexts", "at 32K context, all request counts", "at 1 request, 8K and 32K context",
// "at 8K × 8 and 32K × 32", "at 32K" (prefill).
func (l layout) whereWords(vs []cellView) string {
	if len(vs) == 0 {
		return ""
	}
	if vs[0].cell.Phase == results.PhasePrefill {
		var ctxs []string
		for _, v := range vs {
			ctxs = append(ctxs, v.cell.ContextLabel)
		}
		return "at " + andList(ctxs)
	}
	in := map[string]map[int]bool{}
	for _, v := range vs {
		c := v.cell
		if in[c.ContextLabel] == nil {
			in[c.ContextLabel] = map[int]bool{}
		}
		in[c.ContextLabel][c.Concurrency] = true
	}
	taken := map[string]map[int]bool{}
	take := func(ctx string, cc int) {
		if taken[ctx] == nil {
			taken[ctx] = map[int]bool{}
		}
		taken[ctx][cc] = true
	}
	var parts []string
	// Whole columns: every compared context at these concurrencies.
	var cols []int
	for _, cc := range l.concurrency {
		n, all := 0, true
		for _, ctx := range l.contexts {
			if l.compared[ctx][cc] {
				n++
				all = all && in[ctx][cc]
			}
		}
		if n > 1 && all {
			cols = append(cols, cc)
			for _, ctx := range l.contexts {
				if in[ctx][cc] {
					take(ctx, cc)
				}
			}
		}
	}
	if len(cols) > 0 {
		parts = append(parts, "at "+requestsWords(cols)+", all contexts")
	}
	// Whole rows among the rest: every compared concurrency of a context.
	var rows []string
	for _, ctx := range l.contexts {
		n, all, fresh := 0, true, false
		for _, cc := range l.concurrency {
			if l.compared[ctx][cc] {
				n++
				all = all && in[ctx][cc]
				fresh = fresh || !taken[ctx][cc]
			}
		}
		if n > 1 && all && fresh {
			rows = append(rows, ctx)
			for _, cc := range l.concurrency {
				if in[ctx][cc] {
					take(ctx, cc)
				}
			}
		}
	}
	if len(rows) > 0 {
		parts = append(parts, "at "+andList(rows)+" context, all request counts")
	}
	// The rest by context, in matrix order, the first few: "32K context at 1, 4 and 8
	// requests", "8K × 32".
	var rest []string
	for _, ctx := range l.contexts {
		var ccs []int
		for _, cc := range l.concurrency {
			if in[ctx][cc] && !taken[ctx][cc] {
				ccs = append(ccs, cc)
			}
		}
		switch {
		case len(ccs) == 1:
			rest = append(rest, fmt.Sprintf("%s × %d", ctx, ccs[0]))
		case len(ccs) > 1:
			rest = append(rest, ctx+" context ("+requestsWords(ccs)+")")
		}
	}
	const named = 4
	if len(rest) > named+1 {
		rest = append(rest[:named], fmt.Sprintf("%d more contexts", len(rest)-named))
	}
	if len(rest) > 0 {
		parts = append(parts, "at "+andList(rest))
	}
	return strings.Join(parts, ", and ")
}

// byPhase splits cells into prefill and decode, keeping their order.
func byPhase(vs []cellView) (prefill, decode []cellView) {
	for _, v := range vs {
		if v.cell.Phase == results.PhasePrefill {
			prefill = append(prefill, v)
		} else {
			decode = append(decode, v)
		}
	}
	return prefill, decode
}

// movesWords says what a set of cells did, phase by phase: "decode −19.6 to −25.7 % at 8 and
// 32 requests, all contexts; prefill −10.6 % at 32K". Cells decided by a change of status come
// last, by name.
func (l layout) movesWords(vs []cellView) string {
	var parts, status []string
	var numbered []cellView
	for _, v := range vs {
		if _, ok := v.changeOf(); ok {
			numbered = append(numbered, v)
		} else {
			if w := statusWords(v); w != "changed" {
				status = append(status, cellWords(v.cell)+" "+w)
			} else {
				status = append(status, cellWords(v.cell))
			}
		}
	}
	pre, dec := byPhase(numbered)
	for _, g := range []struct {
		name string
		vs   []cellView
	}{{"decode", dec}, {"prefill", pre}} {
		if len(g.vs) > 0 {
			name := g.name
			if mt := g.vs[0].by.Metric; mt != results.MetricTotalTokPerS && mt != results.MetricPromptTokPerS && sameMetric(g.vs) {
				name += " " + metricName(mt)
			}
			parts = append(parts, name+" "+changesWords(g.vs)+" "+l.whereWords(g.vs))
		}
	}
	return strings.Join(append(parts, status...), "; ")
}

// cutRunes cuts s to at most n runes at a word, with an ellipsis.
func cutRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)[:n-1]
	if i := strings.LastIndexByte(string(r), ' '); i > len(string(r))/2 {
		return strings.TrimRight(string(r)[:i], " ,;:") + "…"
	}
	return string(r) + "…"
}

// FitTitle cuts a check run's title to MaxTitleRunes at a word, with an ellipsis.
func FitTitle(s string) string { return cutRunes(s, MaxTitleRunes) }

// firstFitting returns the first of titles within MaxTitleRunes, else the last cut to fit.
func firstFitting(titles ...string) string {
	for _, t := range titles {
		if utf8.RuneCountInString(t) <= MaxTitleRunes {
			return t
		}
	}
	return cutRunes(titles[len(titles)-1], MaxTitleRunes)
}

// mdcWords says the smallest change a cell could have seen, in words: "cannot see changes under
// 16 %", "cannot see changes under ×3.7" (beyond doubling).
func mdcWords(mdc float64) string {
	if mdc >= 1 {
		return "cannot see changes under ×" + strconv.FormatFloat(1+mdc, 'f', 1, 64)
	}
	return "cannot see changes under " + strings.TrimPrefix(pctWords(mdc), "+")
}

// inlineText makes text a results file holds (an engine version, a model name, a GPU) safe to
// show inline in markdown with as few backslashes as it needs: the characters that can open an
// element escaped, "@" and "#" kept from linking; text that could become an autolink falls back
// to EscapeText.
func inlineText(s string, max int) string {
	if strings.Contains(s, "://") || strings.Contains(strings.ToLower(s), "www.") {
		return EscapeText(s, max)
	}
	plain := EscapeText(s, max)
	// Undo the escapes of punctuation that opens nothing inline.
	r := strings.NewReplacer(`\.`, ".", `\-`, "-", `\+`, "+", `\(`, "(", `\)`, ")", `\/`, "/", `\:`, ":", `\,`, ",", `\;`, ";", `\=`, "=", `\%`, "%", `\'`, "'", `\"`, `"`, `\?`, "?")
	return r.Replace(plain)
}

// sameMetric reports whether every cell of vs was decided by one metric.
func sameMetric(vs []cellView) bool {
	for _, v := range vs {
		if v.by == nil || v.by.Metric != vs[0].by.Metric {
			return false
		}
	}
	return true
}

// qValueRE matches a q-value or a test level given in passing ("q = 2.6e-06", "(q ≤ 0.0062)").
var qValueRE = regexp.MustCompile(`,? ?\(?\bq [=≤<] ?[0-9.]+(?:e-?[0-9]+)?\)?`)

// oneCellMetricRE matches "1 cell metrics", which compare's warnings write for any count.
var oneCellMetricRE = regexp.MustCompile(`(^|[^0-9.,])1 cell metrics`)

// warningWords says a comparison's warning in the comment's words: the threshold δ as its
// percentages ("3 %", or "3 % for throughput, 5 % for latency"), metric names by their titles,
// no q-value and no procedure name; text between backticks stays code, the rest is escaped as
// inline text.
func (m *model) warningWords(w string, max int) string {
	w = strings.ReplaceAll(w, "δ", m.thresholdWords())
	w = qValueRE.ReplaceAllString(w, "")
	w = strings.ReplaceAll(w, " (empirical null)", "")
	w = strings.ReplaceAll(w, "cell-metrics", "cell metrics")
	w = oneCellMetricRE.ReplaceAllString(w, "${1}1 cell metric")
	ms := append(results.Metrics(results.PhaseDecode), results.MetricPromptTokPerS, results.MetricSpecAcceptance)
	slices.SortFunc(ms, func(a, b results.Metric) int { return len(b) - len(a) })
	for _, mt := range ms {
		w = strings.ReplaceAll(w, string(mt), mt.Title())
	}
	parts := strings.Split(w, "`")
	var b strings.Builder
	// text escapes a fragment, keeping the spaces that join it to the code beside it.
	text := func(p string) {
		if strings.HasPrefix(p, " ") {
			b.WriteString(" ")
		}
		b.WriteString(inlineText(p, max))
		if strings.HasSuffix(p, " ") && strings.TrimSpace(p) != "" {
			b.WriteString(" ")
		}
	}
	for i, p := range parts {
		switch {
		case i%2 == 1 && i < len(parts)-1 && p != "" && !strings.ContainsAny(p, "\n\r"):
			b.WriteString("`" + p + "`")
		case i%2 == 1:
			text("`" + p)
		default:
			text(p)
		}
	}
	return b.String()
}

// thresholdWords is the comparison's threshold in words: "3 %" when every metric's is the same,
// else "3 % for throughput, 5 % for latency" (each group's largest).
func (m *model) thresholdWords() string {
	if m.c == nil || len(m.c.Settings.Metrics) == 0 {
		return "the threshold"
	}
	var thr, lat float64
	for _, s := range m.c.Settings.Metrics {
		if s.HigherIsBetter {
			thr = max(thr, s.Delta)
		} else {
			lat = max(lat, s.Delta)
		}
	}
	switch {
	case thr == lat || lat == 0:
		return pctPlainWords(thr)
	case thr == 0:
		return pctPlainWords(lat)
	}
	return pctPlainWords(thr) + " for throughput, " + pctPlainWords(lat) + " for latency"
}
