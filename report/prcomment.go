package report

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"

	"github.com/speedmatrix/speedmatrix/internal/numfmt"
	"github.com/speedmatrix/speedmatrix/internal/textout"
	"github.com/speedmatrix/speedmatrix/results"
)

// The pull-request comment is one page rendered from one model: its first line answers the
// merge question, a header says what was compared with what on which machine, a table lists the
// cells that changed (one verdict per cell, with the metric that decided it), the cells too
// noisy to tell get the /bench rerun command to post with its GPU-time cost, and everything else
// (the chart, the full matrices, the per-metric detail, the statistics, the head's page) is
// folded. The same blocks make the check run's title, summary and text and the job summary, each
// fitted to GitHub's limits by leaving out folded blocks first, never by cutting inside one.

// State is what a comment says about the merge.
type State string

// The states of a comment; the check run's conclusion follows from them.
const (
	StateBlocked    State = "blocked"     // a regression that nobody accepted: the check fails
	StatePassed     State = "passed"      // no regression found
	StateAccepted   State = "accepted"    // a regression a maintainer accepted at this head
	StateNoBaseline State = "no_baseline" // nothing to compare the head with: neutral
	StateMeasuring  State = "measuring"   // the run is under way: in progress
	// StateUnproven is a slowdown beyond δ that only the prior bounds: neither shown nor ruled
	// out (results.VerdictUnproven; the check follows github.undecided, failure by default).
	StateUnproven State = "unproven"
	// StateIncomplete is a head that lacks data it should hold (results.VerdictIncomplete): the
	// check fails, missing data never passes.
	StateIncomplete State = "incomplete"
)

// DefaultCheckName is the check run's name when CommentContext.CheckName is empty.
const DefaultCheckName = "speedmatrix"

// ReadmeURL is the README section that explains the comment's words.
const ReadmeURL = "https://github.com/speedmatrix/speedmatrix#how-to-read-the-comment"

// SoftCommentBytes is the length a comment keeps to, its markers aside: the folds that do not
// fit are left out (they are in the check run's output and the full page).
const SoftCommentBytes = 9800

// keptBytes is the length of the blocks that are never left out, with the note that would
// name the others.
func keptBytes(bs []block) int {
	n := 400 // the cut note
	for _, b := range bs {
		if b.drop == 0 {
			n += len(b.text) + 1
		}
	}
	return n
}

// GitHub's limits, and the room the comment leaves for a marker line its poster may prepend.
const (
	// MaxCommentUnits is GitHub's limit on a comment body, counted as UTF-16 code units (an
	// emoji counts two), which is never fewer than characters.
	MaxCommentUnits = 65536
	// MaxCheckOutputBytes is GitHub's limit on a check run's output summary and text, each.
	MaxCheckOutputBytes = 65535
	// commentReserve is left free in the body for a marker line prepended by the poster.
	commentReserve = 512
	// maxTitleRunes bounds a PR title (GitHub allows 256) and other user text shown.
	maxTitleRunes = 256
)

// Acceptance is a maintainer's /bench accept of a regression.
type Acceptance struct {
	By     string    // the GitHub login that accepted
	At     time.Time // when
	SHA    string    // the head commit accepted; a later head is not accepted
	Reason string    // the reason given, as typed
}

// CommentContext is what the bot knows besides the comparison: where the PR and the run are,
// and what state it is in. Every field may be empty; the comment leaves out what it lacks.
type CommentContext struct {
	// ServerURL is GitHub's web address (https://github.com when empty; an Enterprise server's
	// otherwise); Repository is "owner/name".
	ServerURL  string
	Repository string
	// BaseSHA and HeadSHA are the commits compared; BaseBranch and HeadBranch their branches.
	BaseSHA, HeadSHA       string
	BaseBranch, HeadBranch string
	// PRNumber and PRTitle name the pull request (0: none).
	PRNumber int
	PRTitle  string
	// CheckName is the check run's name (DefaultCheckName when empty): one comment per name.
	CheckName string
	// RunURL is the workflow run's page; ArtifactURL where its artifacts (the results, the
	// comparison and the full comment) can be downloaded.
	RunURL, ArtifactURL string
	// Base and Head are the results files compared (optional): the head's page is folded into
	// the comment, and the window length prices a rerun. Without a comparison, Head alone.
	Base, Head *results.File
	// Accepted is the /bench accept in force, if any; it counts only for HeadSHA.
	Accepted *Acceptance
	// Measuring renders the "measuring…" comment of a run under way.
	Measuring bool
	// NoBaseline says why there is no comparison (no stored baseline for the base commit, …).
	NoBaseline string
	// Blocked, when set without a comparison, is the first line's words of a check that fails
	// although nothing was compared (the config changed, the baseline could not be resolved,
	// github.no_baseline: failure); NoBaseline says why.
	Blocked string
	// NoCommands leaves out the /bench commands (when nobody can post them, e.g. on a push).
	NoCommands bool
	// ReadmeURL overrides the link that explains the comment's words.
	ReadmeURL string
}

// Comment is everything speedmatrix shows on GitHub about one run, from one model.
type Comment struct {
	State State
	// Title is the check run's title: the first line's words, plain text.
	Title string
	// Body is the PR comment, within MaxCommentUnits less room for a prepended marker, with
	// CommentMarker and CheckMarker(check name) as its last lines.
	Body string
	// Summary and Text are the check run's output: the page's top (verdict, header, changes,
	// rerun, commands) and its folded details, each within MaxCheckOutputBytes.
	Summary, Text string
	// StepSummary is the page for $GITHUB_STEP_SUMMARY; Full is the page with nothing left out,
	// for the run's artifacts (StepSummary is Full: a job summary may hold 1 MiB).
	StepSummary, Full string
	// Cut is set when the body had to leave folded sections out to fit.
	Cut bool
	// Undecided are the cells too noisy to tell (the check names them).
	Undecided []string
	// Slower is how many cells (and decode rows) were found slower.
	Slower int
}

// ErrNoComparison is returned by NewComment when there is neither a comparison nor a reason.
var ErrNoComparison = errors.New("no comparison to render: pass one, or set CommentContext.Measuring or NoBaseline")

// NewComment renders the PR comment, the check run's output and the job summary for c (nil
// while measuring or without a baseline) in context x.
func NewComment(c *results.Comparison, x CommentContext) (*Comment, error) {
	if c == nil && !x.Measuring && x.NoBaseline == "" && x.Blocked == "" {
		return nil, ErrNoComparison
	}
	if x.CheckName == "" {
		x.CheckName = DefaultCheckName
	}
	if x.ServerURL == "" {
		x.ServerURL = "https://github.com"
	}
	if x.ReadmeURL == "" {
		x.ReadmeURL = ReadmeURL
	}
	m := newModel(c, x)
	blocks := m.blocks()
	out := &Comment{State: m.state, Title: m.title, Undecided: m.undecided(), Slower: len(m.slower) + len(m.slowerRows) + len(m.slowerGroups)}
	out.Full = join(blocks)
	out.StepSummary = out.Full
	var top, detail []block
	for _, b := range blocks {
		if b.detail {
			detail = append(detail, b)
		} else {
			top = append(top, b)
		}
	}
	note := m.cutNote
	var inBody []block
	for _, b := range blocks {
		if !b.checkOnly {
			inBody = append(inBody, b)
		}
	}
	// The comment keeps to a reader's length (SoftCommentBytes) by leaving folds out, first the
	// longest-lived detail; what never leaves (the headline, the matrix) is never cut for it:
	// only GitHub's limit can cut, and then only folds.
	limit, measure := SoftCommentBytes, byteLen
	if kept := keptBytes(inBody); kept > SoftCommentBytes {
		limit, measure = MaxCommentUnits-commentReserve, utf16Len
	}
	body, cut := fit(inBody, limit, measure, note)
	out.Body = body + "\n" + CommentMarker + "\n" + CheckMarker(x.CheckName) + "\n"
	out.Cut = cut
	out.Summary, _ = fit(top, MaxCheckOutputBytes, byteLen, m.checkCutNote)
	out.Text, _ = fit(detail, MaxCheckOutputBytes, byteLen, m.checkCutNote)
	return out, nil
}

// block is a complete piece of the page: nothing opened in it is closed outside it, so the page
// can leave it out whole.
type block struct {
	name string // what the cut note calls it
	text string
	// detail blocks are folded: the check run's text, not its summary.
	detail bool
	// checkOnly blocks (the per-metric detail, the statistics) are in the check run's output
	// and the full page, never in the PR comment.
	checkOnly bool
	// drop orders what is left out first when the page is too long: highest first; 0 never.
	drop int
}

func join(bs []block) string {
	var parts []string
	for _, b := range bs {
		parts = append(parts, strings.TrimRight(b.text, "\n")+"\n")
	}
	return strings.Join(parts, "\n")
}

func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

func byteLen(s string) int { return len(s) }

// fit joins bs, leaving out the blocks with the highest drop (the later first among equals)
// until the page measures at most limit with the note that names what was left out.
func fit(bs []block, limit int, measure func(string) int, note func([]string) string) (string, bool) {
	kept := slices.Clone(bs)
	var dropped []string
	for {
		s := join(kept)
		if len(dropped) > 0 {
			s += "\n" + note(dropped) + "\n"
		}
		if measure(s) <= limit {
			return s, len(dropped) > 0
		}
		worst := -1
		for i, b := range kept {
			if b.drop > 0 && (worst < 0 || b.drop >= kept[worst].drop) {
				worst = i
			}
		}
		if worst < 0 {
			// Only blocks that are never left out remain (a page of a size that cannot happen):
			// cut at a line, which can break no element since these blocks open none.
			for measure(s) > limit {
				i := strings.LastIndexByte(strings.TrimRight(s, "\n"), '\n')
				if i <= 0 {
					return "", true
				}
				s = s[:i+1]
			}
			return s, true
		}
		dropped = append(dropped, kept[worst].name)
		kept = slices.Delete(kept, worst, worst+1)
	}
}

// cellView is one cell's single verdict and the metric that decided it.
type cellView struct {
	cell    *results.CellComparison
	verdict results.Verdict
	// by is the deciding metric: of the metrics whose verdict is the cell's, the first in
	// decidingOrder. nil when a status change decided the cell.
	by *results.MetricComparison
	// also are the cell's other metrics with the same verdict.
	also []*results.MetricComparison
}

// decidingOrder is the order in which a cell's metrics decide its single verdict. A decode
// cell's total tok/s, per-request tok/s and time between tokens are nearly one measurement (the
// same tokens over the same window), so the first of them that carries the verdict speaks for
// all three, total tok/s (what the server delivers, and the least noisy at concurrency above 1)
// first; TTFT, a separate measurement, decides only when none of them does. A prefill cell's
// prompt tok/s and TTFT are reciprocals: prompt tok/s speaks for both.
func decidingOrder(p results.Phase) []results.Metric {
	if p == results.PhasePrefill {
		return []results.Metric{results.MetricPromptTokPerS, results.MetricTTFT}
	}
	return []results.Metric{results.MetricTotalTokPerS, results.MetricPerRequestTokPerS, results.MetricTBT, results.MetricTTFT, results.MetricSpecAcceptance}
}

// statusChanged reports whether the cell's status differs between two runs that both hold it.
func statusChanged(cell *results.CellComparison) bool {
	return cell.BaseStatus != "" && cell.HeadStatus != "" && cell.BaseStatus != cell.HeadStatus
}

func viewOf(cell *results.CellComparison) cellView {
	v := cellView{cell: cell, verdict: cell.Verdict}
	if statusChanged(cell) {
		return v
	}
	for _, m := range decidingOrder(cell.Phase) {
		mc := cell.Metric(m)
		if mc == nil || mc.Verdict != cell.Verdict {
			continue
		}
		if v.by == nil {
			v.by = mc
		} else {
			v.also = append(v.also, mc)
		}
	}
	if v.by == nil || (cell.Verdict != results.VerdictRegression && cell.Verdict != results.VerdictImprovement) {
		return v
	}
	// The other metrics are notes that never get a verdict of their own: name those that moved
	// beyond their δ (where one is set) the same way as the deciding metric.
	for _, m := range decidingOrder(cell.Phase) {
		mc := cell.Metric(m)
		if mc == nil || mc == v.by || mc.Verdict == cell.Verdict || mc.Change == nil || mc.Delta <= 0 || math.Abs(mc.Change.Change) <= mc.Delta {
			continue
		}
		worse := (mc.Change.Change < 0) == m.HigherIsBetter()
		if worse == (cell.Verdict == results.VerdictRegression) {
			v.also = append(v.also, mc)
		}
	}
	return v
}

// size is how far the deciding metric moved, as a fraction; +Inf when a status change or a lost
// number decided the cell (those sort first: the cell no longer works as it did).
func (v cellView) size() float64 {
	if v.by == nil || v.by.Change == nil {
		return math.Inf(1)
	}
	return math.Abs(v.by.Change.Change)
}

// metricName is a metric's name in running text.
func metricName(m results.Metric) string {
	switch m {
	case results.MetricPromptTokPerS:
		return "prompt tok/s"
	case results.MetricTotalTokPerS:
		return "total tok/s"
	case results.MetricPerRequestTokPerS:
		return "per-request tok/s"
	case results.MetricTTFT:
		return "TTFT"
	case results.MetricTBT:
		return "time between tokens"
	case results.MetricSpecAcceptance:
		return "acceptance length"
	}
	return string(m)
}

// pctAbs formats a fraction's size as "8.8%".
func pctAbs(f float64) string { return numfmt.Fixed(math.Abs(f)*100, 1) + "%" }

// model is the comment's content, decided once for every rendering.
type model struct {
	c     *results.Comparison
	x     CommentContext
	state State
	// headline is the first line's words; title the check run's (within MaxTitleRunes).
	headline, title string

	slower, faster, unchanged, noisy []cellView
	notCompared                      map[string][]string // reason → cells
	notComparedOrder                 []string
	slowerRows, fasterRows           []results.RowComparison
	// slowerGroups are the group tests (rows, concurrency columns, a phase's shift between
	// runs) that regressed.
	slowerGroups []results.GroupComparison
	checked      int
	acceptVoid   bool // an acceptance exists for another head
	// unproven are the cells possibly slower beyond δ that only the prior bounds.
	unproven []cellView
	// unprovenGroups are the groups (rows, columns, a phase) not proven slower that keep the
	// matrix from passing.
	unprovenGroups []results.GroupComparison
}

func newModel(c *results.Comparison, x CommentContext) *model {
	m := &model{c: c, x: x, notCompared: map[string][]string{}}
	if c != nil {
		for i := range c.Cells {
			v := viewOf(&c.Cells[i])
			switch v.verdict {
			case results.VerdictRegression:
				m.slower = append(m.slower, v)
			case results.VerdictImprovement:
				m.faster = append(m.faster, v)
			case results.VerdictUnchanged:
				m.unchanged = append(m.unchanged, v)
			case results.VerdictInconclusive:
				m.noisy = append(m.noisy, v)
			case results.VerdictUnproven:
				m.unproven = append(m.unproven, v)
			default:
				r := notComparedReason(v.cell)
				if _, ok := m.notCompared[r]; !ok {
					m.notComparedOrder = append(m.notComparedOrder, r)
				}
				m.notCompared[r] = append(m.notCompared[r], v.cell.Cell)
				continue
			}
			m.checked++
		}
		bySize := func(a, b cellView) int { return -cmp.Compare(a.size(), b.size()) }
		slices.SortStableFunc(m.slower, bySize)
		slices.SortStableFunc(m.faster, bySize)
		for _, r := range c.Rows {
			switch r.Verdict {
			case results.VerdictRegression:
				m.slowerRows = append(m.slowerRows, r)
			case results.VerdictImprovement:
				m.fasterRows = append(m.fasterRows, r)
			}
		}
		m.slowerGroups = regressedGroups(c)
		for _, g := range c.Groups {
			if g.Verdict == results.VerdictUnproven {
				m.unprovenGroups = append(m.unprovenGroups, g)
			}
		}
	}
	m.state, m.headline, m.title = m.decide()
	return m
}

// notComparedReason says why a cell was not compared, in words that keep over capacity (the
// cell does not fit the KV cache and is not run: expected) apart from breakage.
func notComparedReason(cell *results.CellComparison) string {
	switch {
	case cell.BaseStatus == "":
		return "new in head"
	case cell.HeadStatus == "":
		return "missing in head"
	case cell.BaseStatus == results.StatusOverCapacity && cell.HeadStatus == results.StatusOverCapacity:
		return "over capacity on both sides (beyond the KV cache, so not run: expected)"
	case cell.BaseStatus == cell.HeadStatus:
		return statusShort(cell.BaseStatus) + " on both sides"
	case statusChanged(cell):
		return statusShort(cell.BaseStatus) + " → " + statusShort(cell.HeadStatus)
	}
	return "no number on one side"
}

// accepted reports whether the acceptance in force is for the head compared.
func (m *model) accepted() bool {
	a := m.x.Accepted
	if a == nil {
		return false
	}
	if m.x.HeadSHA == "" || a.SHA == "" {
		return a.SHA == m.x.HeadSHA
	}
	short := min(len(a.SHA), len(m.x.HeadSHA))
	return short >= 7 && strings.EqualFold(a.SHA[:short], m.x.HeadSHA[:short])
}

// missingWords says which data the head lacks: the cells marked incomplete, else the cells not
// compared, else the comparison's first warning.
func (m *model) missingWords() string {
	var cells []string
	for _, c := range m.c.Cells {
		if c.Verdict == results.VerdictIncomplete {
			cells = append(cells, cellWords(&c))
		}
	}
	if len(cells) == 0 {
		for _, r := range m.notComparedOrder {
			for _, id := range m.notCompared[r] {
				cells = append(cells, cellIDWords(id))
			}
		}
	}
	switch {
	case len(cells) > 0:
		s := "the head lacks data for " + textout.Plural(len(cells), "cell", "cells") + " (" + strings.Join(cells[:min(len(cells), 3)], ", ")
		if len(cells) > 3 {
			s += fmt.Sprintf(" and %d more", len(cells)-3)
		}
		return s + ")"
	case len(m.c.Warnings) > 0:
		return "the head lacks data it should hold (" + firstSentence(m.c.Warnings[0]) + ")"
	}
	return "the head lacks data it should hold"
}

// firstSentence is s up to its first ". ", at most 200 characters, plain text.
func firstSentence(s string) string {
	if i := strings.Index(s, ". "); i >= 0 {
		s = s[:i]
	}
	return EscapeText(strings.TrimSuffix(strings.TrimSpace(s), "."), 200)
}

// statusWords says what happened to a cell decided without a change: "went from valid to queued".
func statusWords(v cellView) string {
	if statusChanged(v.cell) {
		return "went from " + statusShort(v.cell.BaseStatus) + " to " + statusShort(v.cell.HeadStatus)
	}
	if v.by != nil && v.by.Reason != "" {
		return "lost its " + metricName(v.by.Metric) + " (" + v.by.Reason + ")"
	}
	return "changed"
}

// acceptedBy is "alice for abc1234" (plain text: the login is checked).
func (m *model) acceptedBy() string {
	a := m.x.Accepted
	who := "a maintainer"
	if loginRE.MatchString(a.By) {
		who = a.By
	}
	if s := shortSHA(a.SHA); s != "" {
		who += " for " + s
	}
	return who
}

// shortSHA is the first 7 hex digits of a commit id, "" when it is not one.
func shortSHA(s string) string {
	s = strings.ToLower(s)
	if !shaRE.MatchString(s) {
		return ""
	}
	return s[:7]
}

// undecided lists the cells too noisy to tell.
func (m *model) undecided() []string {
	var out []string
	for _, v := range m.noisy {
		out = append(out, v.cell.Cell)
	}
	return out
}

// cutNote names the blocks left out and where the full comment is.
func (m *model) cutNote(dropped []string) string {
	where := "in the run's artifacts"
	if u, ok := safeURL(m.x.ArtifactURL); ok {
		where = "[in the run's artifacts](" + u + ")"
	} else if u, ok := safeURL(m.x.RunURL); ok {
		where = "in [the run](" + u + ")'s artifacts"
	}
	return fmt.Sprintf("✂️ Left out to keep this comment short: %s; the check run's output holds them, and the full comment is %s.", strings.Join(dropped, ", "), where)
}

// checkCutNote names the blocks the check run's output left out at GitHub's limit.
func (m *model) checkCutNote(dropped []string) string {
	return strings.Replace(m.cutNote(dropped), "to keep this comment short: ", "to stay within GitHub's size limit: ", 1)
}

// side names one side: a linked short SHA and its branch, else its run id.
func (m *model) side(label, sha, branch string, r *results.ComparedRun) string {
	var s string
	if short := shortSHA(sha); short != "" {
		s = "`" + short + "`"
		if repoRE.MatchString(m.x.Repository) {
			s = link(s, m.x.ServerURL+"/"+m.x.Repository+"/commit/"+strings.ToLower(sha))
		}
	}
	if b := strings.TrimSpace(branch); b != "" {
		if s == "" {
			s = inlineText(b, maxTitleRunes)
		} else {
			s += " (" + inlineText(b, maxTitleRunes) + ")"
		}
	}
	if s == "" && r != nil && r.RunID != "" {
		s = label + " run " + inlineText(r.RunID, 100)
	}
	return s
}

// machine is "GPU: H200 NVL ×2 · engine: vllm 0.11.0 · model: …", each side's when they differ.
func (m *model) machine() string {
	var b, h results.ComparedRun
	switch {
	case m.c != nil:
		b, h = m.c.Base, m.c.Head
	case m.x.Head != nil:
		f := m.x.Head
		h = results.ComparedRun{GPU: f.Hardware.GPU, GPUCount: f.Hardware.GPUCount, Engine: f.Engine.Name, EngineVersion: f.Engine.Version, ServedModel: f.Run.ServedModel}
		b = h
	default:
		return ""
	}
	gpu := func(r results.ComparedRun) string {
		if r.GPU == "" {
			return ""
		}
		s := r.GPU
		if r.GPUCount > 1 {
			s += fmt.Sprintf(" ×%d", r.GPUCount)
		}
		return s
	}
	eng := func(r results.ComparedRun) string { return strings.TrimSpace(r.Engine + " " + r.EngineVersion) }
	model := func(r results.ComparedRun) string { return r.ServedModel }
	var parts []string
	for _, f := range []struct {
		name string
		of   func(results.ComparedRun) string
	}{{"GPU", gpu}, {"engine", eng}, {"model", model}} {
		bv, hv := f.of(b), f.of(h)
		switch {
		case bv == hv && hv != "":
			parts = append(parts, inlineText(hv, 120))
		case bv != hv:
			parts = append(parts, fmt.Sprintf("%s: %s → %s", f.name, orDash(inlineText(bv, 120)), orDash(inlineText(hv, 120))))
		}
	}
	return strings.Join(parts, " · ")
}

func orDash(s string) string {
	if s == "" {
		return Dash
	}
	return s
}

// acceptance records who accepted the regression, when, for which head and why; or says that an
// acceptance of an earlier head does not carry over.
func (m *model) acceptance() string {
	a := m.x.Accepted
	if a == nil {
		return ""
	}
	who := "a maintainer"
	if loginRE.MatchString(a.By) {
		who = link(strings.ReplaceAll(a.By, "[bot]", `\[bot\]`), m.x.ServerURL+"/"+strings.TrimSuffix(a.By, "[bot]"))
	}
	sha := shortSHA(a.SHA)
	if sha == "" {
		sha = "an unknown commit"
	} else {
		sha = "`" + sha + "`"
	}
	if m.state != StateAccepted {
		return fmt.Sprintf("> [!NOTE]\n> %s accepted a slowdown at %s; a new commit voids it, so this head needs its own `/bench accept <reason>`.\n", who, sha)
	}
	when := ""
	if !a.At.IsZero() {
		when = " on " + a.At.UTC().Format("2006-01-02 15:04 UTC")
	}
	reason := EscapeText(a.Reason, 500)
	if reason == "" {
		reason = "no reason given"
	}
	return fmt.Sprintf("> [!NOTE]\n> Accepted by %s%s at %s: %s  \n> The check passes for this commit only; a new push measures again.\n", who, when, sha, reason)
}

// groupList folds the group tests that regressed, one line each in words: the group and its
// mean change (the test itself is in the statistics).
func (m *model) groupList() string {
	var b strings.Builder
	fmt.Fprintf(&b, "<details><summary>%s %s slower as a whole</summary>\n\n", MarkRegression, textout.Plural(len(m.slowerGroups), "group of cells", "groups of cells"))
	for _, g := range m.slowerGroups {
		fmt.Fprintf(&b, "- %s: %s on average over %s\n", groupWords(g), pctWords(g.Change), textout.Plural(len(g.Cells), "cell", "cells"))
	}
	b.WriteString("\n</details>\n")
	return b.String()
}

// gpuTime formats a duration of GPU time: "40 min", "2.5 h", "45 s".
func gpuTime(sec float64) string {
	switch {
	case sec < 90:
		return numfmt.Plain(math.Round(sec)) + " s"
	case sec < 90*60:
		return numfmt.Plain(math.Round(sec/60)) + " min"
	}
	return numfmt.Fixed(sec/3600, 1) + " h"
}

// validCells keeps the cell ids of a comma-separated list that parse.
func validCells(list string) []string {
	var out []string
	for _, s := range strings.Split(list, ",") {
		if id, err := results.ParseCellID(strings.TrimSpace(s)); err == nil {
			out = append(out, id.String())
		}
	}
	return out
}

// rerunCommand renders one /bench rerun with its price (commentprice.go) and the further trials
// a side the statistics ask for to decide its cells, pooled with this run's.
func (m *model) rerunCommand(cells []string, further int) string {
	side := "a side"
	if m.c != nil && m.c.Rerun != nil && m.c.Rerun.HeadOnly {
		side = "on the head"
	}
	return fmt.Sprintf("```\n/bench rerun %s\n```\n%s The statistics ask for %d more %s %s.\n",
		strings.Join(cells, ","), m.priceRerun(cells).words(), further, textout.Pick(further, "trial", "trials"), side)
}

// warnings folds the comparison's warnings, with the results files' paths replaced by their side.
func (m *model) warnings() string {
	var b strings.Builder
	fmt.Fprintf(&b, "<details><summary>⚠️ %s</summary>\n\n", textout.Plural(len(m.c.Warnings), "warning", "warnings"))
	for _, w := range m.c.Warnings {
		w = m.noPaths(w)
		fmt.Fprintf(&b, "- %s\n", m.warningWords(w, 2000))
	}
	b.WriteString("\n</details>\n")
	return b.String()
}

// noPaths replaces the compared files' paths, which mean nothing on GitHub, by their side. A
// side named by a bare word (the action names them "base" and "head") is no path: replacing it
// made "the head's run" read "the the head file's run".
func (m *model) noPaths(s string) string {
	for _, p := range []struct{ path, side string }{{m.c.Base.Path, "the base file"}, {m.c.Head.Path, "the head file"}} {
		if strings.ContainsAny(p.path, "./\\") {
			s = strings.ReplaceAll(s, p.path, p.side)
		}
	}
	return s
}

// commands lists the /bench commands this state offers, in one short line.
func (m *model) commands() string {
	if m.x.NoCommands || m.state == StateMeasuring {
		return ""
	}
	cmds := []string{"`/bench` (measure the head again)"}
	if m.c != nil {
		cmds = append(cmds, "`/bench rerun [cells]`", "`/bench paired [cells]`")
	}
	if (m.state == StateBlocked || m.state == StateUnproven) && m.c != nil {
		cmds = append(cmds, "`/bench accept <reason>`")
	}
	cmds = append(cmds, "`/bench help`")
	return "**Commands** (post as a comment; write access needed): " + strings.Join(cmds, " · ") + "\n\n"
}

// links are the run, its artifacts and the explanation of the words.
func (m *model) links() string {
	var ls []string
	if m.state == StateMeasuring {
		if _, ok := safeURL(m.x.RunURL); ok {
			ls = append(ls, link("Follow the run", m.x.RunURL))
		}
	} else {
		if _, ok := safeURL(m.x.RunURL); ok {
			ls = append(ls, link("The run", m.x.RunURL))
		}
		if _, ok := safeURL(m.x.ArtifactURL); ok {
			ls = append(ls, link("its artifacts (results, comparison, full comment)", m.x.ArtifactURL))
		}
	}
	if m.c != nil && m.state != StateMeasuring {
		ls = append(ls, "per-metric detail and statistics: the check run's output")
	}
	ls = append(ls, link("how to read this comment", m.x.ReadmeURL))
	return strings.Join(ls, " · ") + "\n"
}

// chart draws decode total tok/s against concurrency for each context (base bars, head line)
// in Mermaid, with the numbers as a table for renderers without Mermaid.
func (m *model) chart() string {
	type point struct{ base, head *float64 }
	pts := map[string]map[int]point{}
	var ctxs []string
	var conc []int
	ctxLen := map[string]int{}
	for i := range m.c.Cells {
		cell := &m.c.Cells[i]
		if cell.Phase != results.PhaseDecode {
			continue
		}
		mc := cell.Metric(results.MetricTotalTokPerS)
		if mc == nil || (mc.Base == nil && mc.Head == nil) {
			continue
		}
		if pts[cell.ContextLabel] == nil {
			pts[cell.ContextLabel] = map[int]point{}
			ctxs = append(ctxs, cell.ContextLabel)
			ctxLen[cell.ContextLabel] = contextTokens(cell)
		}
		pts[cell.ContextLabel][cell.Concurrency] = point{mc.Metric.InProfileTime(mc.Base, m.c.Base.Scale()), mc.Metric.InProfileTime(mc.Head, m.c.Head.Scale())}
		if !slices.Contains(conc, cell.Concurrency) {
			conc = append(conc, cell.Concurrency)
		}
	}
	if len(ctxs) == 0 {
		return ""
	}
	slices.Sort(conc)
	slices.SortStableFunc(ctxs, func(a, b string) int { return ctxLen[a] - ctxLen[b] })
	num := func(p *float64) string {
		if p == nil {
			return "0"
		}
		return strconv.FormatFloat(*p, 'f', 1, 64)
	}
	var b strings.Builder
	b.WriteString("<details><summary>Decode throughput against concurrency</summary>\n\n")
	b.WriteString("Decode total tok/s by simultaneous requests, one chart per context: bars are the base, the line is the head.\n")
	for _, ctx := range ctxs {
		var xs, bv, hv []string
		for _, c := range conc {
			p, ok := pts[ctx][c]
			if !ok || p.base == nil || p.head == nil {
				continue
			}
			xs = append(xs, strconv.Quote(strconv.Itoa(c)))
			bv, hv = append(bv, num(p.base)), append(hv, num(p.head))
		}
		if len(xs) == 0 {
			continue
		}
		fmt.Fprintf(&b, "\n```mermaid\nxychart-beta\n    title \"decode %s: total tok/s, base bars, head line\"\n    x-axis \"simultaneous requests\" [%s]\n    y-axis \"total tok/s\"\n    bar [%s]\n    line [%s]\n```\n",
			ctx, strings.Join(xs, ", "), strings.Join(bv, ", "), strings.Join(hv, ", "))
	}
	b.WriteString("\nThe same numbers, base → head (— where a side has none: over capacity, or not measured):\n\n| Context |")
	for _, c := range conc {
		fmt.Fprintf(&b, " %d |", c)
	}
	fmt.Fprintf(&b, "\n|---|%s\n", strings.Repeat("---|", len(conc)))
	for _, ctx := range ctxs {
		fmt.Fprintf(&b, "| %s |", ctx)
		for _, c := range conc {
			p, ok := pts[ctx][c]
			if !ok {
				b.WriteString(" |")
				continue
			}
			f := func(v *float64) string {
				if v == nil {
					return Dash
				}
				return FormatTokPerS(*v)
			}
			fmt.Fprintf(&b, " %s → %s |", f(p.base), f(p.head))
		}
		b.WriteString("\n")
	}
	b.WriteString("\n</details>\n")
	return b.String()
}

// matrices folds every metric of every cell.
func (m *model) matrices() string {
	var buf bytes.Buffer
	buf.WriteString("<details><summary>Full matrices: every cell and metric</summary>\n\n")
	buf.WriteString("Each cell: change of head against base, ± half its 95% interval, and a mark: " +
		MarkRegression + " slower, " + MarkImprovement + " faster, " + MarkUnchanged + " unchanged, " + MarkNotJudged + " too noisy to tell, " + MarkNotCompared + " not compared (named)" + noteLegend(m.c) + ". Slower cells in bold.\n")
	writeMatrixTables(&buf, m.c, "####")
	buf.WriteString("\n</details>\n")
	return buf.String()
}

// perMetric folds the evidence of every decided or undecided cell-metric.
func (m *model) perMetric() string {
	var b strings.Builder
	b.WriteString("<details><summary>Per-metric detail</summary>\n\n")
	b.WriteString("Every cell-metric that was not shown unchanged: base → head in the profile's time, the change with its 95% interval, its q-value and where its noise estimate came from.\n")
	for _, sec := range []struct {
		title string
		lines []string
	}{{"Slower", byVerdict(m.c, results.VerdictRegression)}, {"Faster", byVerdict(m.c, results.VerdictImprovement)},
		{"Notes beyond δ (never a verdict of their own: the cell is " + decidedOnWords("its ") + ")", notesBeyond(m.c)},
		{"Too noisy to tell", byVerdict(m.c, results.VerdictInconclusive)}, {"Not compared", byVerdict(m.c, results.VerdictNotComparable)}} {
		lines := sec.lines
		if len(lines) == 0 {
			continue
		}
		fmt.Fprintf(&b, "\n%s (%d):\n\n", sec.title, len(lines))
		for _, l := range lines {
			fmt.Fprintf(&b, "- %s\n", mdEscape(m.noPaths(l)))
		}
	}
	b.WriteString("\n</details>\n")
	return b.String()
}

// statistics folds the method's settings: δ, the false-discovery rate and the look's level, the
// noise source of every cell, the row tests and the cells no rerun can decide.
func (m *model) statistics() string {
	c := m.c
	var lines []string
	lines = append(lines,
		fmt.Sprintf("**q-value**: a cell-metric's p-value adjusted for the %d tested together (Benjamini–Hochberg); it counts as slower or faster only at q ≤ %s, the level of this look.", c.Summary.Tests+len(c.Rows), strconv.FormatFloat(c.Settings.Level, 'g', 3, 64)),
		fmt.Sprintf("**Look %d of 2**: a first comparison and at most one rerun share the error budget (FDR q = %s%s, %s spending); there is no third look.", c.Settings.Look, strconv.FormatFloat(c.Settings.FDR, 'g', -1, 64), falseAlarmText(c), c.Settings.Spending),
		fmt.Sprintf("**Unchanged** is shown by two one-sided tests at %s; intervals are %s%%; reruns are sized for %s%% power.", strconv.FormatFloat(c.Settings.EquivalenceAlpha, 'g', -1, 64), strconv.FormatFloat(c.Settings.ConfidenceLevel*100, 'g', -1, 64), strconv.FormatFloat(c.Settings.Power*100, 'g', -1, 64)),
	)
	if g := c.Summary.DecodeTotalGeomean; g != nil {
		lines = append(lines, fmt.Sprintf("**Decode total tok/s**, geometric mean over %s: %s.", textout.Plural(g.Cells, "cell", "cells"), intervalText(g, c.Settings.ConfidenceLevel)))
	}
	var ds []string
	for _, s := range c.Settings.Metrics {
		ds = append(ds, metricName(s.Metric)+" "+pctPlain(s.Delta))
	}
	if len(ds) > 0 {
		lines = append(lines, "**δ**, the smallest change that matters: "+strings.Join(ds, ", ")+".")
	}
	if nc := noiseCounts(c); len(nc) > 0 {
		lines = append(lines, "**Noise sources** (where each cell-metric's run-to-run noise came from): "+strings.Join(nc, "; ")+".")
	}
	for _, r := range rowLines(c) {
		lines = append(lines, "**Row test**: "+r)
	}
	if p := m.plan(); len(p.stuck) > 0 {
		lines = append(lines, "**Not decidable by rerunning** (noise too large for δ even with the most trials the advice allows): "+strings.Join(p.stuck, ", ")+".")
	}
	var b strings.Builder
	b.WriteString("<details><summary>Statistics: q-values, noise sources, look levels</summary>\n\n")
	for _, l := range lines {
		fmt.Fprintf(&b, "- %s\n", mdEscape(l))
	}
	prefill, grid := noiseGrid(c)
	if prefill != "" || len(grid) > 0 {
		fmt.Fprintf(&b, "\nNoise source per cell (%s).\n", legendFor(c))
		if prefill != "" {
			fmt.Fprintf(&b, "\nPrefill: %s\n", prefill)
		}
		if len(grid) > 0 {
			b.WriteString("\n| Decode |")
			for _, h := range grid[0][1:] {
				fmt.Fprintf(&b, " %s |", h)
			}
			fmt.Fprintf(&b, "\n|---|%s\n", strings.Repeat("---|", len(grid[0])-1))
			for _, row := range grid[1:] {
				fmt.Fprintf(&b, "| %s |\n", strings.Join(row, " | "))
			}
		}
	}
	b.WriteString("\n</details>\n")
	return b.String()
}

// headPage folds the head's speed test matrix.
func (m *model) headPage() block {
	var buf bytes.Buffer
	buf.WriteString("<details><summary>The head's speed test matrix</summary>\n\n")
	var page bytes.Buffer
	if err := NewPage(m.x.Head).Markdown(&page); err != nil {
		buf.WriteString("The page could not be rendered: " + EscapeText(err.Error(), 200) + "\n")
	}
	// The page's headings sit under the comment's level-3 headline.
	for _, line := range strings.SplitAfter(page.String(), "\n") {
		if strings.HasPrefix(line, "#") {
			line = "###" + line
		}
		buf.WriteString(line)
	}
	buf.WriteString("\n</details>\n")
	return block{name: "the head's speed test matrix", text: buf.String(), detail: true, drop: 8}
}

// noteLegend is the matrices legend's words for the notes' marks, where c has a note beyond δ.
func noteLegend(c *results.Comparison) string {
	if !hasNote(c) {
		return ""
	}
	return ", " + MarkNoteWorse + " " + MarkNoteBetter + " a note (not the cell's deciding metric) worse or better beyond δ, never a verdict of its own"
}
