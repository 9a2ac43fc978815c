package report

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/speedmatrix/speedmatrix/internal/textout"
	"github.com/speedmatrix/speedmatrix/results"
)

// The comment's page, top to bottom: the headline (blocked, not blocked, or not proven, and
// every cell not judged that moved by more than 10 %), one header line (commits, engine, GPU,
// model), the matrix, the cells not judged with the advice that decides them, the commands; then
// folds (the slower and faster cells with their ranges, the cells not judged, warnings, GPU
// time). The per-metric detail, the statistics, the chart and the head's page go to the check
// run's output and the full page only.

// decide returns the state, the headline (the first line's words) and the check run's title
// (the same answer within MaxTitleRunes).
func (m *model) decide() (State, string, string) {
	switch {
	case m.x.Measuring:
		what := "the head"
		if s := shortSHA(m.x.HeadSHA); s != "" {
			what = s
		}
		t := fmt.Sprintf("Measuring %s… this comment shows the results when the run ends", what)
		return StateMeasuring, t, firstFitting(t, "Measuring "+what+"…")
	case m.c == nil && m.x.Blocked != "":
		return StateBlocked, m.x.Blocked, firstFitting(m.x.Blocked)
	case m.c == nil:
		t := "No baseline: nothing to compare this head with, so nothing is blocked"
		return StateNoBaseline, t, firstFitting(t, "No baseline: nothing compared, nothing blocked")
	case m.c.Verdict == results.VerdictIncomplete:
		t := "Incomplete, so blocked: " + m.missingWords() + "; missing data never passes"
		if others := m.otherMovesWords(); others != "" {
			t += "; not judged: " + others
		}
		return StateIncomplete, t, firstFitting(t, "Incomplete, so blocked: the head lacks data it should hold")
	}
	l := newLayout(m.c)
	nj := m.notJudgedWords()
	with := func(s string) string {
		if nj != "" {
			return s + "; " + nj
		}
		return s
	}
	switch {
	case m.c.Verdict == results.VerdictUnproven:
		n := len(m.unproven)
		moves := l.movesWords(m.unproven)
		if moves == "" && len(m.unprovenGroups) > 0 {
			// Only a group (a row, a column, a whole phase) is slower: name it with its change.
			var gs []string
			for _, g := range m.unprovenGroups {
				gs = append(gs, groupWords(g)+" "+pctWords(g.Change))
			}
			moves, n = strings.Join(gs, ", "), len(gs)
		}
		if moves == "" {
			moves = textout.Plural(n, "cell", "cells")
		}
		why, short := ", but only an assumed noise bounds "+textout.Pick(n, "it", "them")+
			"; history or a paired run (`/bench paired`, paired.mode: auto) decides", ", only a prior bounds it"
		if m.suspected() {
			why, short = ", but not proven among every test of the matrix"+
				"; a paired run (`/bench paired`) or a rerun decides", ", not yet proven"
		}
		if m.accepted() {
			by := " — accepted by " + m.acceptedBy()
			return StateAccepted, "Accepted: " + moves + " likely slower" + by, firstFitting("Accepted: "+moves+" likely slower"+by, "Accepted"+by+": "+moves, "Accepted"+by)
		}
		m.acceptVoid = m.x.Accepted != nil
		h := "Not proven, so blocked: " + moves + " likely slower" + why
		if others := m.otherMovesWords(); others != "" {
			h += "; not judged: " + others
		}
		return StateUnproven, h, firstFitting("Not proven, so blocked: "+moves+short,
			"Not proven, so blocked: "+textout.Plural(n, "cell", "cells")+" likely slower")
	case m.c.Verdict == results.VerdictRegression:
		moves := m.slowerMoves(l)
		n := len(m.slower) + len(m.slowerRows) + len(m.slowerGroups)
		short := "Blocked: " + textout.Plural(len(m.slower), "cell", "cells") + " slower"
		if len(m.slower) > 0 && !math.IsInf(m.slower[0].size(), 1) {
			short += ", worst " + moveWords(m.slower[0])
		}
		if len(m.slower) == 0 {
			short = "Blocked: " + textout.Plural(n, "group", "groups") + " of cells slower"
		}
		if m.accepted() {
			by := " — accepted by " + m.acceptedBy()
			return StateAccepted, with("Accepted: " + moves + by), firstFitting("Accepted: "+moves+by, "Accepted"+by+": "+moves, "Accepted"+by)
		}
		m.acceptVoid = m.x.Accepted != nil
		return StateBlocked, with("Blocked: " + moves), firstFitting("Blocked: "+moves, short, "Blocked: "+textout.Plural(n, "slowdown", "slowdowns"))
	case m.checked == 0:
		t := "Nothing compared: no cell was measured by both base and head, so nothing is blocked"
		return StateNoBaseline, t, firstFitting(t, "Nothing compared, nothing blocked")
	}
	shown := len(m.unchanged) + len(m.faster)
	th := pctPlainWords(deltaOf(m.c, results.MetricTotalTokPerS))
	var h string
	if shown == 0 {
		h = fmt.Sprintf("Not blocked, but nothing shown: all %d cells too noisy in this run to tell a %s change", m.checked, th)
	} else {
		h = fmt.Sprintf("Not blocked: no slowdown beyond %s in %d of %d cells", th, shown, m.checked)
		if w, ok := m.worstBound(); ok {
			h += fmt.Sprintf(" (at most %s slower, 95 %%)", strings.TrimPrefix(pctWords(w), "+"))
		}
	}
	if len(m.faster) > 0 {
		h += "; faster: " + l.movesWords(m.faster)
	}
	if nj != "" && shown > 0 {
		h += "; " + nj
	} else if nj != "" {
		if big := m.unjudgedMoves(0.10); len(big) > 0 {
			h += "; moved: " + namesWords(big)
		}
	}
	if nc := m.notComparedWords(); nc != "" {
		h += "; " + nc
	}
	njn := len(m.notJudged())
	title := firstFitting(
		fmt.Sprintf("Not blocked: %d of %d cells within %s, %d not judged", shown, m.checked, th, njn),
		fmt.Sprintf("Not blocked: %d of %d cells not judged", njn, m.checked))
	if njn == 0 {
		title = firstFitting(fmt.Sprintf("Not blocked: no slowdown beyond %s in %d cells", th, m.checked))
	}
	if big := m.unjudgedMoves(0.10); m.hidesSlowdown() && len(big) > 0 {
		title = firstFitting("Not blocked; not judged: "+namesWords(big), fmt.Sprintf("Not blocked; %d cells not judged, %s", njn, moveWords(big[0])), title)
	}
	return StatePassed, h, title
}

// slowerMoves is what the slower cells, rows and groups did, in words.
func (m *model) slowerMoves(l layout) string {
	var parts []string
	if s := l.movesWords(m.slower); s != "" {
		parts = append(parts, s)
	}
	for _, r := range m.slowerRows {
		parts = append(parts, "decode "+r.ContextLabel+" context slower as a whole")
	}
	if len(m.slower)+len(m.slowerRows) == 0 {
		for _, g := range m.slowerGroups {
			parts = append(parts, groupWords(g)+" slower as a whole")
		}
	}
	return strings.Join(parts, "; ")
}

// groupWords names a group test for a reader: "decode at 8 requests", "decode 32K context",
// "all decode cells".
func groupWords(g results.GroupComparison) string {
	switch g.Kind {
	case results.GroupRow:
		return string(g.Phase) + " " + g.ContextLabel + " context"
	case results.GroupColumn:
		return string(g.Phase) + " at " + requestsWords([]int{g.Concurrency})
	case results.GroupShift:
		return "every " + string(g.Phase) + " cell, shifted between runs"
	}
	return "all " + string(g.Phase) + " cells"
}

// otherMovesWords names the cells too noisy to judge that the headline names (moved by more
// than 10 %, or slower beyond δ), for a headline that names the unproven or incomplete ones.
func (m *model) otherMovesWords() string {
	var vs []cellView
	for _, v := range m.unjudgedMoves(0.10) {
		if v.cell.Verdict == results.VerdictInconclusive {
			vs = append(vs, v)
		}
	}
	return namesWords(vs)
}

// worstBound is the most the shown cells (unchanged and faster) can be slower by, at the
// interval's worse end: ok is false when none can be slower at all.
func (m *model) worstBound() (float64, bool) {
	worst, ok := 0.0, false
	for _, vs := range [][]cellView{m.unchanged, m.faster} {
		for _, v := range vs {
			if v.by == nil || v.by.Change == nil {
				continue
			}
			w := -v.by.Change.Low
			if !v.by.Metric.HigherIsBetter() {
				w = v.by.Change.High
			}
			if w > worst {
				worst, ok = w, true
			}
		}
	}
	return worst, ok
}

// icon is the headline's: ✅ only when nothing not judged moved the worse way beyond δ.
func (m *model) icon() string {
	if m.state == StatePassed && m.c != nil && m.hidesSlowdown() {
		return "⚠️"
	}
	return map[State]string{StateBlocked: "❌", StatePassed: "✅", StateAccepted: "☑️", StateNoBaseline: "⚪", StateMeasuring: "⏳", StateUnproven: "❓", StateIncomplete: "🧩"}[m.state]
}

// blocks renders the page.
func (m *model) blocks() []block {
	bs := []block{{name: "verdict", text: "### " + m.icon() + " " + m.headline + "\n"}}
	bs = append(bs, block{name: "header", text: m.header()})
	if m.state == StateMeasuring {
		return append(bs, block{name: "links", text: m.links()})
	}
	if m.c == nil {
		if r := strings.TrimSpace(m.x.NoBaseline); r != "" {
			bs[1].text = "Why: " + EscapeText(r, 500) + "\n\n" + bs[1].text
		}
		bs = append(bs, block{name: "commands and links", text: m.commands() + m.links()})
		if t := m.gpuTime(); t != "" { // gputime.go
			bs = append(bs, block{name: "the GPU time", text: t, drop: 2})
		}
		if m.x.Head != nil {
			bs = append(bs, m.headPage())
		}
		return bs
	}
	if t := m.acceptance(); t != "" {
		bs = append(bs, block{name: "acceptance", text: t})
	}
	if t := m.matrix(); t != "" {
		bs = append(bs, block{name: "the matrix", text: t})
	}
	if t := m.notJudgedBlock(); t != "" {
		bs = append(bs, block{name: "the cells not judged", text: t})
	} else if a := m.advice(); a != "" {
		bs = append(bs, block{name: "the rerun advice", text: a})
	}
	if t := m.specAcceptance(); t != "" {
		bs = append(bs, block{name: "speculative acceptance", text: t, drop: 3})
	}
	if len(m.slower)+len(m.slowerRows) > 0 {
		bs = append(bs, block{name: "the slower cells", text: m.changeTable("slower", m.slower, m.slowerRows), drop: 1})
	}
	if len(m.slowerGroups) > 0 {
		bs = append(bs, block{name: "the slower groups", text: m.groupList(), drop: 1})
	}
	if len(m.faster)+len(m.fasterRows) > 0 {
		bs = append(bs, block{name: "the faster cells", text: m.changeTable("faster", m.faster, m.fasterRows), drop: 1})
	}
	if len(m.notJudged()) > 0 {
		bs = append(bs, block{name: "the cells not judged", text: m.notJudgedTable(), drop: 3})
	}
	if t := m.reproduce(); t != "" { // commentprice.go
		bs = append(bs, block{name: "the reproduction", text: t, drop: 4})
	}
	if len(m.c.Warnings) > 0 {
		bs = append(bs, block{name: "the warnings", text: m.warnings(), drop: 3})
	}
	if t := m.gpuTime(); t != "" { // gputime.go
		bs = append(bs, block{name: "the GPU time", text: t, drop: 2})
	}
	bs = append(bs, block{name: "commands and links", text: m.commands() + m.links()})
	if t := m.chart(); t != "" {
		bs = append(bs, block{name: "the chart", text: t, detail: true, checkOnly: true, drop: 5})
	}
	bs = append(bs,
		block{name: "the full matrices", text: m.matrices(), detail: true, checkOnly: true, drop: 6},
		block{name: "the per-metric detail", text: m.perMetric(), detail: true, checkOnly: true, drop: 7},
		block{name: "the statistics", text: m.statistics(), detail: true, checkOnly: true, drop: 4},
	)
	if m.x.Head != nil {
		p := m.headPage()
		p.checkOnly = true
		bs = append(bs, p)
	}
	return bs
}

// header is one line: what was compared with what, on which GPU, engine and model, and the time
// base; a paired comparison adds a line on its pairing.
func (m *model) header() string {
	var parts []string
	var base, head *results.ComparedRun
	if m.c != nil {
		base, head = &m.c.Base, &m.c.Head
	}
	h := m.side("head", m.x.HeadSHA, m.x.HeadBranch, head)
	b := m.side("base", m.x.BaseSHA, m.x.BaseBranch, base)
	switch {
	case h != "" && b != "" && m.c != nil:
		parts = append(parts, h+" vs "+b)
	case h != "" && m.state == StateMeasuring && b != "":
		parts = append(parts, "Measuring "+h+" against "+b)
	case h != "":
		parts = append(parts, "head "+h)
	}
	if n := m.x.PRNumber; n > 0 && repoRE.MatchString(m.x.Repository) {
		parts = append(parts, link(fmt.Sprintf("PR \\#\u200b%d", n), fmt.Sprintf("%s/%s/pull/%d", m.x.ServerURL, m.x.Repository, n)))
	}
	if l := m.machine(); l != "" {
		parts = append(parts, l)
	}
	var scale float64 = 1
	switch {
	case m.c != nil:
		if m.c.Base.Scale() != m.c.Head.Scale() {
			parts = append(parts, comparisonTimeScaleLine(m.c))
		} else {
			scale = m.c.Head.Scale()
		}
	case m.x.Head != nil:
		scale = m.x.Head.TimeScale()
	}
	if scale != 1 {
		parts = append(parts, fmt.Sprintf("simulated %s× faster; figures in the profile's time", factor(scale)))
	}
	var lines []string
	if len(parts) > 0 {
		lines = append(lines, strings.Join(parts, " · "))
	}
	if m.c != nil {
		if l := pairingLine(m.c); l != "" { // paired.go
			lines = append(lines, l)
		}
	}
	if len(lines) == 0 {
		return ""
	}
	return strings.Join(lines, "\n\n") + "\n"
}

// sameFamily reports whether two metrics of a cell are one measurement: a decode cell's total
// tok/s, per-request tok/s and time between tokens (the same tokens over the same window), a
// prefill cell's prompt tok/s and TTFT (reciprocals).
func sameFamily(p results.Phase, a, b results.Metric) bool {
	if p == results.PhasePrefill {
		return true
	}
	one := func(m results.Metric) bool {
		return m == results.MetricTotalTokPerS || m == results.MetricPerRequestTokPerS || m == results.MetricTBT
	}
	return one(a) && one(b)
}

// changeNote is the notes column: queued and over-capacity statuses, what a status change
// means, and the cell's separate measurements that agree (TTFT beside a decode rate; never the
// same measurement again).
func changeNote(v cellView) string {
	var notes []string
	cell := v.cell
	if statusChanged(cell) {
		switch cell.HeadStatus {
		case results.StatusQueued:
			notes = append(notes, fmt.Sprintf("requests queued: the server no longer ran all %d at once", cell.Concurrency))
		case results.StatusOverCapacity:
			notes = append(notes, "over capacity: no longer fits the KV cache, so not run")
		case results.StatusError:
			notes = append(notes, "requests failed in head")
		case results.StatusValid:
			if cell.BaseStatus == results.StatusQueued {
				notes = append(notes, "requests no longer queued")
			} else {
				notes = append(notes, "runs again")
			}
		}
	} else if cell.HeadStatus == results.StatusQueued {
		notes = append(notes, MarkQueued+" queued on both sides")
	}
	if v.by != nil && v.by.Change == nil && v.by.Reason != "" {
		notes = append(notes, v.by.Reason)
	}
	var as []string
	for _, a := range v.also {
		if v.by != nil && sameFamily(cell.Phase, v.by.Metric, a.Metric) {
			continue
		}
		if a.Change != nil {
			as = append(as, metricName(a.Metric)+" "+pctWords(a.Change.Change))
		} else {
			as = append(as, metricName(a.Metric))
		}
	}
	if len(as) > 0 {
		notes = append(notes, "also "+strings.Join(as, ", "))
	}
	return mdEscape(strings.Join(notes, "; "))
}

// changeTable folds the cells of one direction, largest change first, with their ranges, and
// the row tests. The deciding metric is named once: in the summary when every cell shares it,
// else in a column.
func (m *model) changeTable(dir string, cells []cellView, rows []results.RowComparison) string {
	mark := MarkRegression
	if dir == "faster" {
		mark = MarkImprovement
	}
	var metrics []string
	for _, v := range cells {
		if v.by != nil && !strings.Contains(strings.Join(metrics, "|"), metricName(v.by.Metric)) {
			metrics = append(metrics, metricName(v.by.Metric))
		}
	}
	by := ""
	if len(metrics) == 1 {
		by = ", by " + metrics[0]
	}
	var b strings.Builder
	fmt.Fprintf(&b, "<details><summary>%s %s %s%s: changes and 95 %% ranges</summary>\n\n", mark, textout.Plural(len(cells)+len(rows), "cell", "cells"), dir, by)
	if len(cells) > 0 {
		col := len(metrics) > 1
		b.WriteString("| Cell | Change | 95 % range | Base → head |")
		if col {
			b.WriteString(" Metric |")
		}
		b.WriteString(" Notes |\n|---|---|---|---|")
		if col {
			b.WriteString("---|")
		}
		b.WriteString("---|\n")
		for _, v := range cells {
			cell := v.cell
			change, rng, values, metric := "", Dash, Dash, "status"
			switch {
			case statusChanged(cell):
				change = statusShort(cell.BaseStatus) + " → " + statusShort(cell.HeadStatus)
			case v.by != nil:
				metric = metricName(v.by.Metric)
				values = valueWords(v.by.Metric, v.by.Base, m.c.Base.Scale()) + BaseWord(v.by) + " → " + valueWords(v.by.Metric, v.by.Head, m.c.Head.Scale())
				if ch := v.by.Change; ch != nil {
					change, rng = pctWords(ch.Change), rangeWords(ch)
				} else {
					change = "no value"
				}
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s |", cellWords(cell), change, rng, mdEscape(values))
			if col {
				fmt.Fprintf(&b, " %s |", metric)
			}
			fmt.Fprintf(&b, " %s |\n", changeNote(v))
		}
	}
	th := pctPlainWords(deltaOf(m.c, results.MetricTotalTokPerS))
	for i, r := range rows {
		if i == 0 && len(cells) > 0 {
			b.WriteString("\n")
		}
		how := "worse"
		if dir == "faster" {
			how = "better"
		}
		fmt.Fprintf(&b, "- decode %s context, all request counts together: %s by %s the %s threshold (range %s … %s)\n",
			r.ContextLabel, how, timesWords(math.Abs(r.Effect)), th, timesWords(r.Low), timesWords(r.High))
	}
	b.WriteString("\n</details>\n")
	return b.String()
}

// timesWords is a row score in units of the threshold: "1.2×".
func timesWords(x float64) string {
	s := fmt.Sprintf("%.1f×", math.Abs(x))
	if x < 0 {
		return minus + s
	}
	return s
}

// suspected reports whether the unproven cells' noise was measured (history, separate runs,
// pairs): then a group of them is slower beyond δ by itself but not significant among every
// test of the matrix, and no prior is what left them unproven.
func (m *model) suspected() bool {
	return slices.ContainsFunc(m.unproven, measuredCell) || (len(m.unproven) == 0 && len(m.unprovenGroups) > 0)
}

// measuredCell reports whether v's deciding metric's noise was measured run to run (history,
// separate runs' pairs, this machine's A/A runs), not assumed.
func measuredCell(v cellView) bool {
	return v.by != nil && v.by.Noise != nil && results.MeasuredRunToRun(v.by.Noise.Source)
}

// notComparedWords counts the cells not compared for a reason other than being over capacity
// on both sides (expected), so that a headline counts every cell of the matrix once: "1 cell
// not compared (decode 32K × 1: no number on one side)"; "" when there are none.
func (m *model) notComparedWords() string {
	var ws []string
	n := 0
	for _, r := range m.notComparedOrder {
		if strings.HasPrefix(r, "over capacity on both sides") {
			continue
		}
		for _, id := range m.notCompared[r] {
			n++
			if len(ws) < 3 {
				ws = append(ws, cellIDWords(id)+": "+r)
			}
		}
	}
	if n == 0 {
		return ""
	}
	if n > len(ws) {
		ws = append(ws, fmt.Sprintf("%d more", n-len(ws)))
	}
	return textout.Plural(n, "cell", "cells") + " not compared (" + strings.Join(ws, "; ") + ")"
}
