package report

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/speedmatrix/speedmatrix/internal/textout"
	"github.com/speedmatrix/speedmatrix/results"
)

// The cells the comparison could not judge (too noisy, unproven, incomplete) are named under
// the matrix with what they did, and the rerun advice is made here alone: rerunPlan decides
// once which of them a rerun decides and which it cannot, and the advice, the statistics fold
// and the check all read that plan, so that none of them contradicts another and none reruns a
// cell already judged.

// rerunPlan is the advice for the undecided cells.
type rerunPlan struct {
	// cells are the undecided cells a rerun of trials more trials a side decides (never a
	// cell already judged slower, faster or unchanged).
	cells  []string
	trials int
	// rows are decode rows to measure whole for the row test, each of undecided cells only.
	rows []results.RowRerun
	// stuck are the undecided cells no rerun within the advice's limit decides.
	stuck []string
	// secondLook is set when this comparison was already the second look: no third.
	secondLook bool
}

// plan computes the rerun plan from the comparison's advice, kept to the undecided cells.
func (m *model) plan() rerunPlan {
	var p rerunPlan
	undecided := map[string]bool{}
	for _, v := range m.notJudged() {
		undecided[v.cell.Cell] = true
	}
	if m.c == nil || len(undecided) == 0 {
		return p
	}
	if m.c.Settings.Look >= 2 {
		p.secondLook = true
		return p
	}
	r := m.c.Rerun
	if r == nil {
		return p
	}
	for _, c := range validCells(r.Cells) {
		if undecided[c] && !slices.Contains(p.cells, c) {
			p.cells = append(p.cells, c)
		}
	}
	if len(p.cells) > 0 {
		p.trials = r.Trials
	}
	covered := map[string]bool{}
	for _, c := range p.cells {
		covered[c] = true
	}
	for _, row := range r.Rows {
		cells := validCells(row.Cells)
		all := len(cells) > 0 && row.FurtherTrials > 0
		for _, c := range cells {
			all = all && undecided[c]
		}
		if !all {
			continue // a row test needs the whole row: one with a judged cell is not advised
		}
		p.rows = append(p.rows, row)
		for _, c := range cells {
			covered[c] = true
		}
	}
	for _, u := range r.Undecidable {
		if undecided[u.Cell] && !covered[u.Cell] && !slices.Contains(p.stuck, u.Cell) {
			p.stuck = append(p.stuck, u.Cell)
		}
	}
	return p
}

// notJudged are the cells the comparison could not judge: unproven first, then incomplete,
// then too noisy, each largest move first.
func (m *model) notJudged() []cellView {
	var out []cellView
	out = append(out, m.unproven...)
	if m.c != nil {
		for i := range m.c.Cells {
			if m.c.Cells[i].Verdict == results.VerdictIncomplete {
				out = append(out, viewOf(&m.c.Cells[i]))
			}
		}
	}
	noisy := slices.Clone(m.noisy)
	slices.SortStableFunc(noisy, func(a, b cellView) int {
		x, _ := a.changeOf()
		y, _ := b.changeOf()
		return -cmpFloat(math.Abs(x), math.Abs(y))
	})
	return append(out, noisy...)
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// reading says what a not-judged cell's interval allows: "probably slower" when all of it
// lies on the worse side of zero, "probably faster" on the better side, else "either way".
func reading(v cellView) string {
	if v.by == nil || v.by.Change == nil {
		return "no number"
	}
	ch := v.by.Change
	hib := v.by.Metric.HigherIsBetter()
	switch {
	case (ch.High < 0 && hib) || (ch.Low > 0 && !hib):
		return "probably slower"
	case (ch.Low > 0 && hib) || (ch.High < 0 && !hib):
		return "probably faster"
	}
	return "either way"
}

// moveWords is "decode 8K × 1 −20.5 %", or the cell's name alone without a number.
func moveWords(v cellView) string {
	if ch, ok := v.changeOf(); ok {
		return cellWords(v.cell) + " " + pctWords(ch)
	}
	return cellWords(v.cell)
}

// unjudgedMoves are the not-judged cells the headline names: those that moved by more than f
// either way, those that moved the worse way by more than their δ, and those incomplete.
func (m *model) unjudgedMoves(f float64) []cellView {
	var out []cellView
	for _, v := range m.notJudged() {
		if v.movedBeyond(f) || v.cell.Verdict == results.VerdictIncomplete || (v.worse() && v.movedBeyond(v.by.Delta)) {
			out = append(out, v)
		}
	}
	return out
}

// maxNamed is how many cells not judged the headline names before it counts the rest.
const maxNamed = 8

// hidesSlowdown reports whether a not-judged cell moved the worse way by more than its δ:
// then the comment never shows ✅.
func (m *model) hidesSlowdown() bool {
	for _, v := range m.notJudged() {
		if v.cell.Verdict != results.VerdictInconclusive || (v.worse() && v.movedBeyond(v.by.Delta)) {
			return true
		}
	}
	return false
}

// notJudgedWords is the headline's part on the cells not judged: those that moved by more than
// 10 % by name, the others counted.
func (m *model) notJudgedWords() string {
	nj := m.notJudged()
	if len(nj) == 0 {
		return ""
	}
	big := m.unjudgedMoves(0.10)
	s := "not judged: "
	switch {
	case len(big) == 0:
		s += textout.Plural(len(nj), "cell", "cells") + ", none moved by 10 % or slower by " + pctPlainWords(deltaOf(m.c, results.MetricTotalTokPerS))
	case len(big) == len(nj):
		s += namesWords(big)
	default:
		s += namesWords(big) + fmt.Sprintf(" (and %d more that moved less)", len(nj)-len(big))
	}
	return s
}

// namesWords names cells with their moves, at most maxNamed, the rest counted.
func namesWords(vs []cellView) string {
	var names []string
	for i, v := range vs {
		if i == maxNamed {
			names = append(names, fmt.Sprintf("%d more", len(vs)-maxNamed))
			break
		}
		names = append(names, moveWords(v))
	}
	return strings.Join(names, ", ")
}

// noiseWords says, for an unproven cell, which noise bounds it: "noise assumed 20 % (the prior
// at 1 request), measured in this run 2.1 %"; where a run-to-run noise was measured (the cell
// is unproven for another reason: its group, or the other reading of the head's run), "noise
// measured 0.4 % (the base's history)".
func noiseWords(v cellView) string {
	if v.by == nil || v.by.Noise == nil {
		return ""
	}
	n := v.by.Noise
	if measuredCell(v) {
		from := map[string]string{
			results.NoiseHistory: "the base's history", results.NoiseTrials: "repeated trials",
			results.NoisePaired: "the pairs of a paired run", results.NoiseMeasured: "A/A reruns in the store",
		}[n.Source]
		if from == "" {
			from = n.Source
		}
		return "noise measured " + strings.TrimPrefix(pctWords(n.CV), "+") + " (" + from + ")"
	}
	at := ""
	if v.cell.Phase == results.PhaseDecode {
		at = " at " + requestsWords([]int{v.cell.Concurrency})
	} else {
		at = " for prefill"
	}
	s := "noise assumed " + strings.TrimPrefix(pctWords(n.CV), "+") + " (the prior" + at + ")"
	if n.WithinCV != nil {
		s += ", measured in this run " + strings.TrimPrefix(pctWords(*n.WithinCV), "+")
	}
	return s
}

// notJudgedBlock is the visible part on the cells not judged: what moved, what each reading
// allows, and the advice that decides them.
func (m *model) notJudgedBlock() string {
	nj := m.notJudged()
	if len(nj) == 0 {
		return ""
	}
	var b strings.Builder
	th := pctPlainWords(deltaOf(m.c, results.MetricTotalTokPerS))
	fmt.Fprintf(&b, "**Not judged: %s.**", textout.Plural(len(nj), "cell", "cells"))
	var assumed, suspect []cellView
	for _, v := range m.unproven {
		if measuredCell(v) {
			suspect = append(suspect, v)
		} else {
			assumed = append(assumed, v)
		}
	}
	if len(assumed) > 0 {
		var ws []string
		for _, v := range assumed {
			w := moveWords(v)
			if n := noiseWords(v); n != "" {
				w += " (" + n + ")"
			}
			ws = append(ws, w)
		}
		fmt.Fprintf(&b, " Likely slower, but only an assumed noise bounds %s: %s. History (earlier runs of the base in the store) or a paired run (`/bench paired`) decides it; until then the check fails.",
			textout.Pick(len(assumed), "it", "them"), strings.Join(ws, "; "))
	}
	if len(suspect) > 0 {
		fmt.Fprintf(&b, " Likely slower, but not proven among every test of the matrix: %s (slower beyond %s as a row, a column or a whole phase by itself, or slower if the head's one run was faster than assumed: the statistics say which). A paired run (`/bench paired`) or a rerun decides it; until then the check fails.",
			newLayout(m.c).movesWords(suspect), th)
	}
	var slow, fast, either []string
	named := 0
	for _, v := range m.unjudgedMoves(0.10) {
		if v.cell.Verdict != results.VerdictInconclusive {
			continue
		}
		if named++; named > maxNamed {
			break
		}
		w := moveWords(v) + " (" + rangeWords(v.by.Change) + ")"
		switch reading(v) {
		case "probably slower":
			slow = append(slow, w)
		case "probably faster":
			fast = append(fast, w)
		default:
			either = append(either, w)
		}
	}
	noisy := len(m.noisy)
	if noisy > 0 {
		fmt.Fprintf(&b, " %s too noisy in this run to tell a %s change", textout.Plural(noisy, "cell is", "cells are"), th)
		if len(slow)+len(fast)+len(either) == 0 {
			b.WriteString("; none moved by 10 % or slower by " + th)
		}
		b.WriteString(".")
	}
	if inc := len(nj) - noisy - len(m.unproven); inc > 0 {
		fmt.Fprintf(&b, " The head lacks data for %s: missing data never passes.", textout.Plural(inc, "cell", "cells"))
	}
	for _, g := range []struct {
		what  string
		cells []string
	}{{"Probably slower (the whole range is slower)", slow}, {"Probably faster", fast}, {"Moved, but could go either way", either}} {
		if len(g.cells) > 0 {
			fmt.Fprintf(&b, " %s: %s.", g.what, strings.Join(g.cells, ", "))
		}
	}
	b.WriteString("\n")
	if a := m.advice(); a != "" {
		b.WriteString("\n" + a)
	}
	return b.String()
}

// metric is the cell's deciding metric, total tok/s when none decided.
func (v cellView) metric() results.Metric {
	if v.by != nil {
		return v.by.Metric
	}
	return results.MetricTotalTokPerS
}

// AdvisedRerun is one `/bench rerun` the PR comment advises: the cells it names, the further
// trials a side the statistics ask for to decide them, and, for a goal of decode rows measured
// whole for the row test, the rows' contexts.
type AdvisedRerun struct {
	Cells         []string
	FurtherTrials int
	Rows          []string
}

// AdvisedReruns returns the `/bench rerun` commands the PR comment advises for c, in its order:
// the undecided cells a rerun may decide, then the decode rows to measure whole, rows that need
// as many trials in one command. None after a second look, which allows no third. calibrate
// follows them to check what they promise.
func AdvisedReruns(c *results.Comparison) []AdvisedRerun {
	return newModel(c, CommentContext{}).plan().goals()
}

// goals groups the plan into its commands.
func (p rerunPlan) goals() []AdvisedRerun {
	if p.secondLook {
		return nil
	}
	var out []AdvisedRerun
	if len(p.cells) > 0 && p.trials > 0 {
		out = append(out, AdvisedRerun{Cells: p.cells, FurtherTrials: p.trials})
	}
	for i := 0; i < len(p.rows); {
		j := i + 1
		for j < len(p.rows) && p.rows[j].FurtherTrials == p.rows[i].FurtherTrials {
			j++
		}
		g := AdvisedRerun{FurtherTrials: p.rows[i].FurtherTrials}
		for _, row := range p.rows[i:j] {
			g.Rows = append(g.Rows, row.ContextLabel)
			g.Cells = append(g.Cells, validCells(row.Cells)...)
		}
		out = append(out, g)
		i = j
	}
	return out
}

// advice renders the rerun plan: one command per goal with its price, and the cells no rerun
// decides. It is the only place the advice is worded.
func (m *model) advice() string {
	p := m.plan()
	var b strings.Builder
	if p.secondLook {
		b.WriteString("This was already the second look after a rerun, and the method allows no third: raise the threshold for these cells, or accept what is measured.\n")
		return b.String()
	}
	var goals []string
	for _, g := range p.goals() {
		switch {
		case len(g.Rows) == 0:
			goals = append(goals, fmt.Sprintf("A rerun may decide %s:\n", textout.Pick(len(g.Cells), "it", "some of these "+textout.Plural(len(g.Cells), "cell", "cells")))+
				m.rerunCommand(g.Cells, g.FurtherTrials))
		case len(g.Rows) == 1:
			goals = append(goals, fmt.Sprintf("No single cell of the %s decode row decides it; measured whole, the row may:\n", g.Rows[0])+
				m.rerunCommand(g.Cells, g.FurtherTrials))
		default:
			goals = append(goals, fmt.Sprintf("No single cell of the %s decode rows decides them; measured whole, the rows may:\n", andList(g.Rows))+
				m.rerunCommand(g.Cells, g.FurtherTrials))
		}
	}
	if len(goals) > 0 {
		goals = append(goals, m.priceRerun(nil).note())
	}
	if len(p.stuck) > 0 {
		var names []string
		for _, c := range p.stuck {
			names = append(names, cellIDWords(c))
		}
		goals = append(goals, fmt.Sprintf("No rerun within the advice's limit decides %s: %s.\n", textout.Pick(len(p.stuck), "this cell", "these cells"), strings.Join(names, ", ")))
	}
	return strings.Join(goals, "\n")
}

// cellIDWords names a cell given by its id: "decode 8K × 8".
func cellIDWords(id string) string {
	c, err := results.ParseCellID(id)
	if err != nil {
		return EscapeText(id, 60)
	}
	if c.Phase == results.PhasePrefill {
		return "prefill " + c.ContextLabel
	}
	return fmt.Sprintf("decode %s × %d", c.ContextLabel, c.Concurrency)
}

// notJudgedTable folds every cell not judged: its move, the range the true change lies in,
// what that range allows and the smallest change it could have seen.
func (m *model) notJudgedTable() string {
	nj := m.notJudged()
	var b strings.Builder
	fmt.Fprintf(&b, "<details><summary>%s %s not judged</summary>\n\n", MarkNotJudged, textout.Plural(len(nj), "cell", "cells"))
	b.WriteString("| Cell | Change | 95 % range | Reading | Smallest change it could see |\n|---|---|---|---|---|\n")
	for _, v := range nj {
		change, rng, see := Dash, Dash, Dash
		if ch, ok := v.changeOf(); ok {
			change, rng = pctWords(ch), rangeWords(v.by.Change)
		}
		if v.by != nil && v.by.MDC != nil {
			see = strings.TrimPrefix(mdcWords(*v.by.MDC), "cannot see changes under ")
		}
		read := reading(v)
		switch v.cell.Verdict {
		case results.VerdictUnproven:
			read = "likely slower; " + noiseWords(v)
		case results.VerdictIncomplete:
			read = "the head lacks its data"
		}
		name := cellWords(v.cell)
		if v.cell.HeadStatus == results.StatusQueued {
			name += " " + MarkQueued
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", name, change, rng, read, see)
	}
	b.WriteString("\n</details>\n")
	return b.String()
}
