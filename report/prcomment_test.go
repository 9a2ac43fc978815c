package report

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/yuin/goldmark"
	gast "github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/text"

	"github.com/speedmatrix/speedmatrix/calibrate"
	"github.com/speedmatrix/speedmatrix/compare"
	"github.com/speedmatrix/speedmatrix/results"
)

const (
	testHeadSHA = "0123456789abcdef0123456789abcdef01234567"
	testBaseSHA = "fedcba9876543210fedcba9876543210fedcba98"
)

// testContext is the context the bot would fill for PR 1234 of octo/vllm.
func testContext() CommentContext {
	return CommentContext{
		Repository: "octo/vllm", BaseSHA: testBaseSHA, HeadSHA: testHeadSHA,
		BaseBranch: "main", HeadBranch: "faster-sampler", PRNumber: 1234, PRTitle: "Speed up the sampler",
		CheckName: "speedmatrix", RunURL: "https://github.com/octo/vllm/actions/runs/42",
		ArtifactURL: "https://github.com/octo/vllm/actions/runs/42/artifacts/7",
	}
}

// commentScenario is one comparison with its files and the context the comment gets.
type commentScenario struct {
	c          *results.Comparison
	base, head *results.File
	x          CommentContext
	// first is a phrase the first line must contain; prefix how it must start.
	prefix, first string
	state         State
}

// setStatus sets the status of one decode cell of f.
func setStatus(f *results.File, ctx string, conc int, s results.Status) {
	for i := range f.Decode {
		if c := &f.Decode[i]; c.ContextLabel == ctx && c.Concurrency == conc {
			c.Status = s
		}
	}
}

// commentScenarios are the comments pinned by golden files, one per thing a comment can say.
func commentScenarios(t *testing.T) map[string]commentScenario {
	t.Helper()
	th := compare.DefaultThresholds()
	ctx := []string{"8K", "32K", "128K"}
	cmpOf := func(base, head []*results.File, history ...*results.File) *results.Comparison {
		t.Helper()
		c, err := compare.Compare(compare.Input{Base: base, Head: head, History: history, BasePath: "/tmp/speedmatrix-demo-1/base.json", HeadPath: "/tmp/speedmatrix-demo-1/head.json"}, th)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	out := map[string]commentScenario{}
	{
		m := calibrate.NewMatrix(13, 0.05)
		r := rand.New(rand.NewPCG(13, 1))
		b, h := runs(m, r, "base", 6, nil, ctx, 32), runs(m, r, "head", 6, nil, ctx, 32)
		out["unchanged"] = commentScenario{c: cmpOf(b, h), base: b[0], head: h[0], state: StatePassed,
			prefix: "### ✅ Not blocked: ", first: "no slowdown beyond 3 % in 20 of 20 cells"}
	}
	{
		m := calibrate.NewMatrix(11, 1)
		r := rand.New(rand.NewPCG(11, 1))
		slow := &calibrate.Slowdown{ContextLabel: "32K", RateFactor: 0.88, TTFTFactor: 1.3}
		// Ten earlier base runs as history: measured noise, so that the slowdown blocks.
		b, h := runs(m, r, "base", 1, nil, ctx, 32), runs(m, r, "head", 1, slow, ctx, 32)
		c := cmpOf(b, h, runs(m, r, "hist", 10, nil, ctx, 32)...)
		out["regression"] = commentScenario{c: c, base: b[0], head: h[0], state: StateBlocked,
			prefix: "### ❌ Blocked: ", first: "decode −10.6 to −23.3 % at 32K context"}
		x := testContext()
		x.Accepted = &Acceptance{By: "maintainer-1", At: time.Date(2026, 12, 1, 9, 30, 0, 0, time.UTC), SHA: testHeadSHA, Reason: "The 32K slowdown is the price of the new sampler; tracked in #99"}
		out["accepted"] = commentScenario{c: c, base: b[0], head: h[0], x: x, state: StateAccepted,
			prefix: "### ☑️ Accepted: ", first: "— accepted by maintainer-1 for 0123456"}
	}
	{
		m := calibrate.NewMatrix(12, 1)
		r := rand.New(rand.NewPCG(12, 1))
		fast := &calibrate.Slowdown{ContextLabel: "8K", RateFactor: 1.10, TTFTFactor: 0.8}
		h := runs(m, r, "head", 3, fast, ctx, 32)
		b := runs(m, r, "base", 3, nil, ctx, 32)
		out["improvement"] = commentScenario{c: cmpOf(b, h), base: b[0], head: h[0], state: StatePassed,
			prefix: "### ⚠️ Not blocked: ", first: "; faster: decode +10.0 to +11.6 % at 8K context"}
	}
	{
		// Quiet server, six runs a side, all unchanged but decode/8K/16, whose requests queue in
		// the head.
		m := calibrate.NewMatrix(16, 0.05)
		r := rand.New(rand.NewPCG(16, 1))
		b, h := runs(m, r, "base", 6, nil, ctx, 16), runs(m, r, "head", 6, nil, ctx, 16)
		for _, f := range h {
			setStatus(f, "8K", 16, results.StatusQueued)
		}
		out["status"] = commentScenario{c: cmpOf(b, h), base: b[0], head: h[0], state: StateBlocked,
			prefix: "### ❌ Blocked: ", first: "decode 8K × 16 went from valid to queued"}
	}
	{
		m := calibrate.NewMatrix(14, 1)
		r := rand.New(rand.NewPCG(14, 1))
		b, h := runs(m, r, "base", 1, nil, ctx, 2), runs(m, r, "head", 1, nil, ctx, 2)
		out["noisy"] = commentScenario{c: cmpOf(b, h), base: b[0], head: h[0], state: StatePassed,
			prefix: "### ⚠️ Not blocked, but nothing shown: ", first: "moved: decode 128K × 1 +38.5 %"}
	}
	{
		m := calibrate.NewMatrix(17, 1)
		r := rand.New(rand.NewPCG(17, 1))
		h := runs(m, r, "head", 1, nil, []string{"8K"}, 8)
		x := testContext()
		x.NoBaseline = "no results are stored for main at fedcba9; the next push to main stores them"
		out["nobaseline"] = commentScenario{head: h[0], x: x, state: StateNoBaseline,
			prefix: "### ⚪ No baseline: ", first: "nothing to compare this head with"}
	}
	{
		// Speculative decoding: the head's matrix served with acceptance pinned at the base's
		// length, its acceptance pass 15 % shorter at concurrency 1 (three runs a side).
		m := calibrate.NewMatrix(18, 0.05)
		r := rand.New(rand.NewPCG(18, 1))
		b, h := runs(m, r, "base", 3, nil, ctx[:2], 8), runs(m, r, "head", 3, nil, ctx[:2], 8)
		for i := range b {
			withAcceptance(b[i], 3*(1+0.01*float64(i-1)), false, 0)
			withAcceptance(h[i], 3, true, 2.55*(1+0.01*float64(i-1)))
		}
		out["speculative"] = commentScenario{c: cmpOf(b, h), base: b[0], head: h[0], state: StateBlocked,
			prefix: "### ❌ Blocked: ", first: "decode acceptance length −15.0 % at 1 request"}
	}
	{
		x := testContext()
		x.Measuring = true
		out["measuring"] = commentScenario{x: x, state: StateMeasuring, prefix: "### ⏳ Measuring 0123456…", first: "when the run ends"}
	}
	for name, s := range out {
		if s.x.Repository == "" {
			s.x = testContext()
		}
		if s.x.Head == nil && s.c != nil {
			s.x.Base, s.x.Head = s.base, s.head
		}
		if s.x.Head == nil && s.head != nil {
			s.x.Head = s.head
		}
		out[name] = s
	}
	return out
}

func TestCommentGolden(t *testing.T) {
	for name, s := range commentScenarios(t) {
		t.Run(name, func(t *testing.T) {
			got, err := NewComment(s.c, s.x)
			if err != nil {
				t.Fatal(err)
			}
			golden(t, filepath.Join("testdata", "comment-"+name+".golden"), []byte(got.Body))
		})
	}
}

// The first line of every comment answers the merge question in words, and the check run's
// title says the same.
func TestCommentFirstLine(t *testing.T) {
	for name, s := range commentScenarios(t) {
		t.Run(name, func(t *testing.T) {
			got, err := NewComment(s.c, s.x)
			if err != nil {
				t.Fatal(err)
			}
			first, _, _ := strings.Cut(got.Body, "\n")
			if !strings.HasPrefix(first, s.prefix) || !strings.Contains(first, s.first) {
				t.Errorf("first line %q: want it to start with %q and contain %q", first, s.prefix, s.first)
			}
			if got.State != s.state {
				t.Errorf("state %s, want %s", got.State, s.state)
			}
			// The title answers as the headline does: it starts with the same word.
			word := strings.TrimRight(strings.Fields(first)[2], ":,")
			if n := utf8.RuneCountInString(got.Title); n > MaxTitleRunes || strings.ContainsAny(got.Title, "*`[<#\\") || !strings.HasPrefix(got.Title, word) {
				t.Errorf("title %q (%d characters): want at most %d in plain words, saying %q as the first line %q does", got.Title, n, MaxTitleRunes, word, first)
			}
			if !strings.HasPrefix(got.Summary, first+"\n") {
				t.Errorf("check summary does not open with the first line:\n%.300s", got.Summary)
			}
			if got.StepSummary != got.Full || !strings.HasPrefix(got.Full, first+"\n") {
				t.Error("the job summary is not the full page")
			}
			for _, marker := range []string{CommentMarker, CheckMarker("speedmatrix")} {
				if !strings.Contains(got.Body, "\n"+marker+"\n") {
					t.Errorf("body lacks the marker %q", marker)
				}
			}
			for _, bad := range []string{"/tmp/", "base.json", "head.json", "Lan–DeMets", "speedmatrix run --cells", "cell-metrics are inconclusive"} {
				if strings.Contains(got.Body, bad) {
					t.Errorf("body contains %q", bad)
				}
			}
			checkMarkdown(t, got.Body)
			checkMarkdown(t, got.Summary)
			checkMarkdown(t, got.Text)
		})
	}
}

// What the comment must say in each case besides its first line.
func TestCommentContent(t *testing.T) {
	sc := commentScenarios(t)
	render := func(name string) *Comment {
		t.Helper()
		got, err := NewComment(sc[name].c, sc[name].x)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	want := map[string][]string{
		"regression": {
			"[`0123456`](https://github.com/octo/vllm/commit/" + testHeadSHA + ") (faster-sampler) vs [`fedcba9`](https://github.com/octo/vllm/commit/" + testBaseSHA + ") (main)",
			"[PR \\#\u200b1234](https://github.com/octo/vllm/pull/1234)",
			"· H200 NVL ×2 · vllm synthetic · synthetic/model\n",
			"**Decode total tok/s**, base (history) → head (rows: context; columns: requests at once)\n\n| Context ╲ requests | 1 | 2 | 4 | 8 | 16 | 32 |",
			"| 32K | 142 → 109 ❌ |",
			"<details><summary>❌ 5 cells slower, by total tok/s: changes and 95 % ranges</summary>",
			"| Cell | Change | 95 % range | Base → head | Notes |",
			"| decode 32K × 1 | −23.3 % | −35.6 … −8.7 % | 142 tok/s (history) → 109 tok/s | also TTFT +29.0 % |",
			"⏳ queued on both sides",
			"`/bench accept <reason>`", "[The run](https://github.com/octo/vllm/actions/runs/42)",
			"[how to read this comment](https://github.com/speedmatrix/speedmatrix#how-to-read-the-comment)",
		},
		"noisy": {
			"**Not judged: 9 cells.**", "/bench rerun ", "of GPU time for the measurement (", "The statistics ask for ",
			"No single cell of the 8K and 128K decode rows decides them; measured whole, the rows may:\n```\n/bench rerun decode/8K/1,decode/8K/2,decode/128K/1,decode/128K/2\n```",
			"`/bench rerun` measures them on the head alone, 1 trial each as this run did, pooled with it for the last look", "so they are not priced.",
		},
		"accepted": {
			"> Accepted by [maintainer-1](https://github.com/maintainer-1) on 2026-12-01 09:30 UTC at `0123456`: The 32K slowdown is the price of the new sampler\\; tracked in \\#\u200b99",
		},
		"status":     {"| decode 8K × 16 | valid → queued | — | — | requests queued: the server no longer ran all 16 at once |", "| 8K | 154 → 154 = |", "valid → queued ❌ ⏳ |"},
		"nobaseline": {"Why: no results are stored for main", "<details><summary>The head's speed test matrix</summary>"},
		"measuring":  {"[Follow the run](https://github.com/octo/vllm/actions/runs/42)"},
	}
	for name, subs := range want {
		body := render(name).Body
		for _, s := range subs {
			if !strings.Contains(body, s) {
				t.Errorf("%s: body lacks %q", name, s)
			}
		}
	}
	if b := render("accepted").Body; strings.Contains(b, "`/bench accept") {
		t.Error("accepted: offers /bench accept again")
	}
	if got := render("noisy").Undecided; len(got) != 9 {
		t.Errorf("noisy: Undecided = %v, want the 9 cells", got)
	}
	// An acceptance of an earlier head does not carry over.
	s := sc["accepted"]
	s.x.Accepted.SHA = testBaseSHA
	got, err := NewComment(s.c, s.x)
	if err != nil {
		t.Fatal(err)
	}
	if got.State != StateBlocked || !strings.Contains(got.Body, "a new commit voids it") {
		t.Errorf("an acceptance of another commit: state %s\n%.600s", got.State, got.Body)
	}
}

// decidingMetric returns the metric NewComment names for a cell: the order is the documented
// rule.
func TestDecidingMetric(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	ch := func(x float64) *results.Change { return &results.Change{Change: x, Low: x - 0.01, High: x + 0.01} }
	cell := results.CellComparison{Cell: "decode/8K/8", Phase: results.PhaseDecode, ContextLabel: "8K", Concurrency: 8,
		BaseStatus: results.StatusValid, HeadStatus: results.StatusValid, Verdict: results.VerdictRegression,
		Metrics: []results.MetricComparison{
			{Metric: results.MetricTotalTokPerS, Verdict: results.VerdictInconclusive, Change: ch(-0.03), Base: f(1), Head: f(1)},
			{Metric: results.MetricPerRequestTokPerS, Verdict: results.VerdictRegression, Change: ch(-0.08), Base: f(1), Head: f(1)},
			{Metric: results.MetricTTFT, Verdict: results.VerdictRegression, Change: ch(0.30), Base: f(1), Head: f(1)},
			{Metric: results.MetricTBT, Verdict: results.VerdictRegression, Change: ch(0.09), Base: f(1), Head: f(1)},
		}}
	v := viewOf(&cell)
	var also []results.Metric
	for _, a := range v.also {
		also = append(also, a.Metric)
	}
	if v.by.Metric != results.MetricPerRequestTokPerS || !cmp.Equal(also, []results.Metric{results.MetricTBT, results.MetricTTFT}) {
		t.Errorf("decided by %s, also %v; want per-request tok/s, also tbt and ttft", v.by.Metric, also)
	}
	cell.Phase, cell.Cell, cell.Concurrency = results.PhasePrefill, "prefill/8K", 0
	cell.Metrics = []results.MetricComparison{
		{Metric: results.MetricPromptTokPerS, Verdict: results.VerdictImprovement, Change: ch(0.1)},
		{Metric: results.MetricTTFT, Verdict: results.VerdictImprovement, Change: ch(-0.09)},
	}
	cell.Verdict = results.VerdictImprovement
	if v := viewOf(&cell); v.by.Metric != results.MetricPromptTokPerS || len(v.also) != 1 {
		t.Errorf("prefill decided by %s", v.by.Metric)
	}
}

// fullMatrix is a comparison of the full 73-cell matrix with every verdict: the 32K row slower
// in the head, the 8K row slower in the base (so faster in the head), decode/16K/16 queued and
// decode/64K/8 failing in the head, decode/8K/1 missing from the head, the over-capacity cells
// on both sides, and the noisy and quiet cells of one run a side.
func fullMatrix(t *testing.T) (*results.Comparison, *results.File, *results.File) {
	t.Helper()
	m := calibrate.NewMatrix(21, 1)
	r := rand.New(rand.NewPCG(21, 1))
	var bases, heads []*results.File
	for i := range 3 {
		bases = append(bases, m.Run(r, fmt.Sprintf("base%d", i), &calibrate.Slowdown{ContextLabel: "8K", RateFactor: 0.88, TTFTFactor: 1.3}))
		head := m.Run(r, fmt.Sprintf("head%d", i), &calibrate.Slowdown{ContextLabel: "32K", RateFactor: 0.88, TTFTFactor: 1.3})
		setStatus(head, "16K", 16, results.StatusQueued)
		setStatus(head, "64K", 8, results.StatusError)
		var kept []results.DecodeCell
		for _, c := range head.Decode {
			if c.ContextLabel == "8K" && c.Concurrency == 1 {
				continue
			}
			kept = append(kept, c)
		}
		head.Decode = kept
		heads = append(heads, head)
	}
	base, head := bases[0], heads[0]
	c, err := compare.Compare(compare.Input{Base: bases, Head: heads}, compare.DefaultThresholds())
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Cells) != 73 {
		t.Fatalf("%d cells, want 73", len(c.Cells))
	}
	seen := map[results.Verdict]int{}
	for _, cell := range c.Cells {
		seen[cell.Verdict]++
	}
	for _, v := range []results.Verdict{results.VerdictRegression, results.VerdictImprovement, results.VerdictUnchanged, results.VerdictInconclusive, results.VerdictNotComparable} {
		if seen[v] == 0 {
			t.Fatalf("the full matrix has no %s cell: %v", v, seen)
		}
	}
	return c, base, head
}

// checkLimits fails when a comment exceeds GitHub's limits.
func checkLimits(t *testing.T, got *Comment) {
	t.Helper()
	units := len(utf16.Encode([]rune(got.Body)))
	// The poster may prepend its own marker line; the body leaves room for it.
	if units+len(CheckMarker("a-long-check-name-for-a-gpu-job"))+1 > MaxCommentUnits {
		t.Errorf("body is %d UTF-16 units; GitHub takes %d", units, MaxCommentUnits)
	}
	if len(got.Summary) > MaxCheckOutputBytes || len(got.Text) > MaxCheckOutputBytes {
		t.Errorf("check output summary %d bytes, text %d bytes; GitHub takes %d each", len(got.Summary), len(got.Text), MaxCheckOutputBytes)
	}
}

// fullMatrixComment renders the comment of fullMatrix's comparison in the test context, and
// returns the comparison and the context too.
func fullMatrixComment(t *testing.T) (*results.Comparison, CommentContext, *Comment) {
	t.Helper()
	c, base, head := fullMatrix(t)
	x := testContext()
	x.Base, x.Head = base, head
	got, err := NewComment(c, x)
	if err != nil {
		t.Fatal(err)
	}
	return c, x, got
}

func TestCommentFullMatrix(t *testing.T) {
	c, x, got := fullMatrixComment(t)
	checkLimits(t, got)
	checkMarkdown(t, got.Body)
	checkMarkdown(t, got.Summary)
	checkMarkdown(t, got.Text)
	for _, s := range []string{"valid → queued", "valid → error", "missing in head", "— over capacity on both sides (not run, expected)", "cells slower", "cells faster"} {
		if !strings.Contains(got.Body, s) {
			t.Errorf("full matrix comment lacks %q", s)
		}
	}
	// The cells not judged are a fold of their own, or, where the comment keeps to a reader's
	// length, named among what it left out.
	if !strings.Contains(got.Body, "cells not judged</summary>") && !(got.Cut && strings.Contains(got.Body, "the cells not judged; the check run's output holds them")) {
		t.Errorf("full matrix comment neither holds nor names the cells not judged")
	}
	t.Logf("full matrix: body %d bytes (cut: %v), summary %d, text %d, full page %d", len(got.Body), got.Cut, len(got.Summary), len(got.Text), len(got.Full))

	// A comparison far beyond the limits (thousands of warnings): folded blocks are left out,
	// with a note that links the full comment, and what remains is intact markdown.
	for i := range 3000 {
		c.Warnings = append(c.Warnings, fmt.Sprintf("warning %d: %s", i, strings.Repeat("a long warning | with <b>markup</b> ", 5)))
	}
	got, err := NewComment(c, x)
	if err != nil {
		t.Fatal(err)
	}
	checkLimits(t, got)
	checkMarkdown(t, got.Body)
	checkMarkdown(t, got.Summary)
	checkMarkdown(t, got.Text)
	if !got.Cut || !strings.Contains(got.Body, "✂️ Left out to keep this comment short: ") ||
		!strings.Contains(got.Body, "[in the run's artifacts](https://github.com/octo/vllm/actions/runs/42/artifacts/7)") {
		t.Errorf("an oversized comment does not say what it left out:\n%s", got.Body[max(0, len(got.Body)-600):])
	}
	if !strings.HasPrefix(got.Body, "### ❌ Blocked: ") || !strings.Contains(got.Body, "**Decode total tok/s**") {
		t.Errorf("cutting lost the verdict or the changes:\n%.500s", got.Body)
	}
	if len(got.Full) < 200_000 || !strings.Contains(got.Full, "warning 2999") {
		t.Error("the full page for the artifact lost something")
	}
}

// hostile are user texts that try to become markdown or HTML.
var hostile = []string{
	"fix | a | table",
	"<details><summary>x</summary>",
	"# x",
	"[x](https://evil.example)",
	"`code` ``` ~~~",
	"@user and @octo/team",
	"**bold** _em_ ~~strike~~",
	"<img src=x onerror=alert(1)> <script>alert(1)</script> <!-- c -->",
	"&amp; &#64;user &lt;b&gt;",
	"closes #123 and GH-1 and octo/vllm#2",
	"https://evil.example www.evil.example mail@evil.example",
	"line one\n\n# line two\r\n- item\n> quote\n| a | b |\n|---|---|\n| c | d |",
	"![img](https://evil.example/x.png)",
	"[ref]: https://evil.example",
	"\u202egnp.exe\u202c tricky",
	"1. numbered",
	"---",
	"trailing backslash \\",
	"\\| escaped pipe",
	"<https://evil.example>",
	"[x]",
	"=== \n===",
	"a\x00b\x1bc",
	strings.Repeat("long ", 200),
}

// Escaped user text opens no element: a comment whose PR title, branches, acceptance reason and
// no-baseline reason are hostile parses into the same elements as one with plain words, its
// tables keep their columns, and its text holds no mention or issue reference.
func TestCommentHostileText(t *testing.T) {
	sc := commentScenarios(t)
	for _, name := range []string{"accepted", "nobaseline", "regression"} {
		s := sc[name]
		plain := s.x
		plain.PRTitle, plain.HeadBranch, plain.BaseBranch = "plain words", "plain", "plain"
		if plain.Accepted != nil {
			a := *plain.Accepted
			a.Reason = "plain words"
			plain.Accepted = &a
		}
		if plain.NoBaseline != "" {
			plain.NoBaseline = "plain words"
		}
		ref, err := NewComment(s.c, plain)
		if err != nil {
			t.Fatal(err)
		}
		want := elements(t, ref.Body)
		for i, h := range hostile {
			x := s.x
			x.PRTitle, x.HeadBranch, x.BaseBranch = h, h, h
			if x.Accepted != nil {
				a := *x.Accepted
				a.Reason = h
				x.Accepted = &a
			}
			if x.NoBaseline != "" {
				x.NoBaseline = h
			}
			got, err := NewComment(s.c, x)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, elements(t, got.Body)); diff != "" {
				t.Errorf("%s, hostile text %d %q made elements (-plain +hostile):\n%s", name, i, h, diff)
			}
			checkMarkdown(t, got.Body)
			checkMarkdown(t, got.Summary)
		}
	}
}

// Escaped text renders as itself: what a reader sees is the text, once.
func TestEscapeTextRenders(t *testing.T) {
	for _, h := range hostile {
		md := "Title: " + EscapeText(h, 0) + "\n"
		var buf bytes.Buffer
		if err := newMarkdown().Convert([]byte(md), &buf); err != nil {
			t.Fatal(err)
		}
		html := buf.String()
		if strings.Count(html, "<p>") != 1 || regexp.MustCompile(`<(a|img|code|em|strong|del|h\d|li|table|script|details|blockquote)\b`).MatchString(html) {
			t.Errorf("%q renders as elements: %s", h, html)
		}
	}
	if got := EscapeText("a\nb  c", 0); got != "a b c" {
		t.Errorf("EscapeText folds whitespace: %q", got)
	}
	if got := EscapeText("abcdef", 4); got != "abc…" {
		t.Errorf("EscapeText cuts: %q", got)
	}
}

func newMarkdown() goldmark.Markdown {
	return goldmark.New(goldmark.WithExtensions(extension.GFM))
}

// elements lists the kinds of the elements md parses into (text runs excepted), in order.
func elements(t *testing.T, md string) []string {
	t.Helper()
	doc := newMarkdown().Parser().Parse(text.NewReader([]byte(md)))
	var out []string
	err := gast.Walk(doc, func(n gast.Node, entering bool) (gast.WalkStatus, error) {
		if !entering {
			return gast.WalkContinue, nil
		}
		switch n.Kind() {
		case gast.KindText, gast.KindString:
			return gast.WalkContinue, nil
		}
		out = append(out, n.Kind().String())
		return gast.WalkContinue, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

var (
	mentionRE = regexp.MustCompile(`(^|[^\w])@[A-Za-z0-9]`)
	issueRE   = regexp.MustCompile(`(^|[^\w&])#[0-9]`)
)

// checkMarkdown parses md as GitHub-flavoured markdown and fails when a table row has another
// number of cells than its header (GFM silently drops or pads them), when a <details> is left
// open, or when the text holds a mention or an issue reference.
func checkMarkdown(t *testing.T, md string) {
	t.Helper()
	src := []byte(md)
	doc := newMarkdown().Parser().Parse(text.NewReader(src))
	var texts strings.Builder
	err := gast.Walk(doc, func(n gast.Node, entering bool) (gast.WalkStatus, error) {
		if !entering {
			return gast.WalkContinue, nil
		}
		switch n := n.(type) {
		case *east.Table:
			cols := len(n.Alignments)
			for row := n.FirstChild(); row != nil; row = row.NextSibling() {
				if got := sourceCells(src, rowPos(row)); got != cols {
					line := lineAt(src, rowPos(row))
					t.Errorf("table row has %d cells, its header %d: %q", got, cols, line)
				}
			}
		case *gast.Text:
			texts.Write(n.Segment.Value(src))
			if n.SoftLineBreak() || n.HardLineBreak() {
				texts.WriteByte('\n')
			}
		case *gast.CodeSpan, *gast.FencedCodeBlock, *gast.CodeBlock, *gast.Link, *gast.AutoLink:
			// Mentions are not made in code or in links of ours.
			return gast.WalkSkipChildren, nil
		}
		return gast.WalkContinue, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	open := strings.Count(md, "<details>") - strings.Count(md, "</details>")
	if open != 0 {
		t.Errorf("%d <details> left open", open)
	}
	plain := texts.String()
	if loc := mentionRE.FindStringIndex(plain); loc != nil {
		t.Errorf("text holds a mention: %q", plain[max(0, loc[0]-20):min(len(plain), loc[1]+20)])
	}
	if loc := issueRE.FindStringIndex(plain); loc != nil {
		t.Errorf("text holds an issue reference: %q", plain[max(0, loc[0]-20):min(len(plain), loc[1]+20)])
	}
}

func rowPos(n gast.Node) int {
	switch r := n.(type) {
	case *east.TableRow:
		return r.Pos()
	case *east.TableHeader:
		return r.Pos()
	}
	return -1
}

// lineAt returns the source line that holds byte pos.
func lineAt(src []byte, pos int) string {
	if pos < 0 || pos > len(src) {
		return ""
	}
	start := bytes.LastIndexByte(src[:pos], '\n') + 1
	end := bytes.IndexByte(src[pos:], '\n')
	if end < 0 {
		return string(src[start:])
	}
	return string(src[start : pos+end])
}

// sourceCells counts the cells of a table row's source line as GFM splits it: at pipes not
// escaped by a backslash, outer pipes aside.
func sourceCells(src []byte, pos int) int {
	line := strings.TrimSpace(lineAt(src, pos))
	line = strings.TrimPrefix(line, "|")
	if strings.HasSuffix(line, "|") && !strings.HasSuffix(line, `\|`) {
		line = line[:len(line)-1]
	}
	n := 1
	for i := 0; i < len(line); i++ {
		switch line[i] {
		case '\\':
			i++
		case '|':
			n++
		}
	}
	return n
}

// A second look offers no third: no /bench rerun command, and says why.
func TestCommentSecondLook(t *testing.T) {
	s := commentScenarios(t)["noisy"]
	c := *s.c
	c.Settings.Look = 2
	got, err := NewComment(&c, s.x)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(got.Body, "/bench rerun decode") || !strings.Contains(got.Body, "allows no third") {
		t.Errorf("second look still advises a rerun:\n%s", got.Body)
	}
}

// NewComment needs a comparison, or a state without one.
func TestCommentNeedsComparison(t *testing.T) {
	if _, err := NewComment(nil, testContext()); err != ErrNoComparison {
		t.Errorf("NewComment(nil) = %v, want ErrNoComparison", err)
	}
}
