package report

import (
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/speedmatrix/speedmatrix/calibrate"
	"github.com/speedmatrix/speedmatrix/compare"
	"github.com/speedmatrix/speedmatrix/merge"
	"github.com/speedmatrix/speedmatrix/results"
)

// readerScenario is one comment of the reading: a quick-sized or a full matrix.
type readerScenario struct {
	c          *results.Comparison
	base, head *results.File
	full       bool
}

// readerScenarios are the scenarios on the synthetic matrix: a decode slowdown, an A/A,
// a single-request slowdown (with history, and with one run a side, where only a prior bounds
// it), a prefill slowdown, on a quick-sized matrix (8K and 32K, up to 32 requests) and on the
// full one.
func readerScenarios(t *testing.T) map[string]readerScenario {
	t.Helper()
	th := compare.DefaultThresholds()
	quick := []string{"8K", "32K"}
	out := map[string]readerScenario{}
	add := func(name string, seed uint64, slow *calibrate.Slowdown, history int, full bool) {
		m := calibrate.NewMatrix(seed, 1)
		r := rand.New(rand.NewPCG(seed, 1))
		pick := func(f *results.File) *results.File {
			if full {
				return f
			}
			return keep(f, quick, 32)
		}
		var hist []*results.File
		for i := range history {
			hist = append(hist, pick(m.Run(r, "hist"+strings.Repeat("+", i), nil)))
		}
		b, h := pick(m.Run(r, "base", nil)), pick(m.Run(r, "head", slow))
		c, err := compare.Compare(compare.Input{Base: []*results.File{b}, Head: []*results.File{h}, History: hist}, th)
		if err != nil {
			t.Fatal(err)
		}
		out[name] = readerScenario{c: c, base: b, head: h, full: full}
	}
	for _, size := range []struct {
		prefix string
		full   bool
	}{{"quick", false}, {"full", true}} {
		add(size.prefix+"-regression", 41, &calibrate.Slowdown{ContextLabel: "32K", RateFactor: 0.77, TTFTFactor: 1}, 10, size.full)
		add(size.prefix+"-aa", 42, nil, 10, size.full)
		add(size.prefix+"-single", 43, &calibrate.Slowdown{Concurrency: 1, RateFactor: 0.79, TTFTFactor: 1}, 10, size.full)
		add(size.prefix+"-single-prior", 44, &calibrate.Slowdown{Concurrency: 1, RateFactor: 0.79, TTFTFactor: 1}, 0, size.full)
		add(size.prefix+"-prefill", 45, &calibrate.Slowdown{ContextLabel: "32K", Prefill: true, RateFactor: 0.89, TTFTFactor: 1}, 10, size.full)
		pick := func(f *results.File) *results.File {
			if size.full {
				return f
			}
			return keep(f, quick, 32)
		}
		compareOf := func(b, h *results.File, hist []*results.File) *results.Comparison {
			c, err := compare.Compare(compare.Input{Base: []*results.File{b}, Head: []*results.File{h}, History: hist}, th)
			if err != nil {
				t.Fatal(err)
			}
			return c
		}
		// A partial head: the run ended before the last context's cells from 8 requests on.
		{
			m := calibrate.NewMatrix(46, 1)
			r := rand.New(rand.NewPCG(46, 1))
			var hist []*results.File
			for i := range 10 {
				hist = append(hist, pick(m.Run(r, "hist"+strings.Repeat("+", i), nil)))
			}
			b, h := pick(m.Run(r, "base", nil)), pick(m.Run(r, "head", nil))
			last := h.Decode[len(h.Decode)-1].ContextLabel
			h.Decode = slices.DeleteFunc(h.Decode, func(c results.DecodeCell) bool { return c.ContextLabel == last && c.Concurrency >= 8 })
			h.Run.Partial, h.Run.PartialReason = true, "the job's time ran out"
			out[size.prefix+"-partial"] = readerScenario{c: compareOf(b, h, hist), base: b, head: h, full: size.full}
		}
		// A paired run (ABBA blocks on one machine), the 32K row slowed by 2δ.
		{
			m := calibrate.NewMatrix(47, 1)
			r := rand.New(rand.NewPCG(47, 1))
			b, h := m.WorldPaired(r, calibrate.WorldGaussian, "pair", calibrate.ShapeRow32K)
			b, h = pick(b), pick(h)
			out[size.prefix+"-paired"] = readerScenario{c: compareOf(b, h, nil), base: b, head: h, full: size.full}
		}
		// A sharded head (two runners, the contexts split between them, merged), 32K decode −23 %.
		{
			m := calibrate.NewMatrix(48, 1)
			r := rand.New(rand.NewPCG(48, 1))
			var hist []*results.File
			for i := range 10 {
				hist = append(hist, pick(m.Run(r, "hist"+strings.Repeat("+", i), nil)))
			}
			b, whole := pick(m.Run(r, "base", nil)), pick(m.Run(r, "head", &calibrate.Slowdown{ContextLabel: "32K", RateFactor: 0.77, TTFTFactor: 1}))
			h := mergedShards(t, whole)
			out[size.prefix+"-sharded"] = readerScenario{c: compareOf(b, h, hist), base: b, head: h, full: size.full}
		}
	}
	return out
}

// mergedShards splits f's contexts between two shards of one plan, every other context to the
// second, and merges them back as `speedmatrix merge` does.
func mergedShards(t *testing.T, f *results.File) *results.File {
	t.Helper()
	var labels, prefill []string
	var concs []int
	for _, c := range f.Decode {
		if !slices.Contains(labels, c.ContextLabel) {
			labels = append(labels, c.ContextLabel)
		}
		if !slices.Contains(concs, c.Concurrency) {
			concs = append(concs, c.Concurrency)
		}
	}
	for _, c := range f.Prefill {
		prefill = append(prefill, c.ContextLabel)
	}
	// Every shard holds the plan's settings, as the runner writes them.
	plan := &results.Settings{Contexts: labels, Concurrency: concs, PrefillContexts: prefill, Trials: 1}
	var in []merge.Input
	for i := range 2 {
		var mine []string
		for j, l := range labels {
			if j%2 == i {
				mine = append(mine, l)
			}
		}
		s := keep(f, mine, 1<<30)
		s.Run.Shard = &results.Shard{Index: i + 1, Count: 2, Plan: "plan-1"}
		s.Run.Settings = plan
		s.Run.ID = fmt.Sprintf("%s-shard%d", f.Run.ID, i+1)
		in = append(in, merge.Input{Name: s.Run.ID + ".json", File: s})
	}
	out, err := merge.Shards(in, merge.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// jargon are words that belong in the statistics fold (the check run's output), not the comment.
var jargon = regexp.MustCompile(`δ|q = |q ≤|q-value|Benjamini|pocock|Lan–DeMets|cell-metric|total_tok_per_s|Decided by|also per-request|also time between`)

// TestCommentReaderRules pins what a maintainer reads for each scenario: the headline says
// blocked or not and names every cell not judged that moved by more than 10 %; a ✅ never sits
// over a cell not judged that moved the worse way beyond its threshold; the first screen holds
// the decode matrix and keeps to 2.5 KB (quick) or 5 KB (full), the whole comment to 8 KB or
// 10 KB; the check title to 70 characters; no statistics words; the rerun advice names only
// cells not judged. Each comment is pinned by a golden file.
func TestCommentReaderRules(t *testing.T) {
	for name, s := range readerScenarios(t) {
		t.Run(name, func(t *testing.T) {
			x := testContext()
			x.Base, x.Head = s.base, s.head
			got, err := NewComment(s.c, x)
			if err != nil {
				t.Fatal(err)
			}
			golden(t, filepath.Join("testdata", "reader-"+name+".golden"), []byte(got.Body))
			checkReaderRules(t, s.c, got, s.full)
		})
	}
	// The older scenarios keep the same rules.
	for name, s := range commentScenarios(t) {
		if s.c == nil {
			continue
		}
		t.Run(name, func(t *testing.T) {
			got, err := NewComment(s.c, s.x)
			if err != nil {
				t.Fatal(err)
			}
			checkReaderRules(t, s.c, got, false)
		})
	}
	c, _, got := fullMatrixComment(t)
	checkReaderRules(t, c, got, true)
}

func checkReaderRules(t *testing.T, c *results.Comparison, got *Comment, full bool) {
	t.Helper()
	body := got.Body
	first, _, _ := strings.Cut(body, "\n")
	screen := body
	if i := strings.Index(body, "<details>"); i >= 0 {
		screen = body[:i]
	}
	// The tables' titles name the reference of the base ("base (history) → head"): 50 bytes.
	maxScreen, maxBody := 2550, 8000
	if full {
		maxScreen, maxBody = 5050, 10000
	}
	t.Logf("%s\nfirst screen %d B, comment %d B, title %d: %s", first, len(screen), len(body), utf8.RuneCountInString(got.Title), got.Title)
	if len(screen) > maxScreen || len(body) > maxBody {
		t.Errorf("first screen %d bytes (at most %d), comment %d bytes (at most %d)", len(screen), maxScreen, len(body), maxBody)
	}
	if n := utf8.RuneCountInString(got.Title); n > MaxTitleRunes {
		t.Errorf("check title %q is %d characters, more than %d", got.Title, n, MaxTitleRunes)
	}
	if !regexp.MustCompile(`\*\*Decode total tok/s\*\*, base( \(history\)| \(runs pooled\))? → head \(rows: context; columns: requests at once\)\n\n\| Context ╲ requests \|`).MatchString(screen) {
		t.Errorf("the first screen lacks the decode matrix:\n%s", screen)
	}
	if !regexp.MustCompile(`^### \S+ (Blocked|Not blocked|Not proven, so blocked|Incomplete, so blocked|Accepted)\b`).MatchString(first) {
		t.Errorf("the first line does not say blocked or not: %q", first)
	}
	// The warnings are the comparison's own sentences, quoted as they are.
	words := regexp.MustCompile(`(?s)<details><summary>⚠️.*?</details>`).ReplaceAllString(body, "")
	if loc := jargon.FindStringIndex(words); loc != nil {
		t.Errorf("the comment holds statistics words: %q", words[max(0, loc[0]-60):min(len(words), loc[1]+20)])
	}
	var moved, hidden []string
	judged := map[string]bool{}
	for i := range c.Cells {
		cell := &c.Cells[i]
		switch cell.Verdict {
		case results.VerdictRegression, results.VerdictImprovement, results.VerdictUnchanged:
			judged[cell.Cell] = true
			continue
		case results.VerdictInconclusive, results.VerdictUnproven:
		default:
			continue
		}
		v := viewOf(cell)
		ch, ok := v.changeOf()
		if !ok {
			continue
		}
		if math.Abs(ch) > 0.10 {
			moved = append(moved, cellWords(cell))
		}
		if v.worse() && math.Abs(ch) > v.by.Delta {
			hidden = append(hidden, cellWords(cell))
		}
	}
	if len(moved) <= maxNamed {
		for _, w := range moved {
			if !strings.Contains(first, w+" ") && !layoutNames(first, w) {
				t.Errorf("the first line does not name %s, not judged and moved by more than 10 %%: %q", w, first)
			}
		}
	}
	if strings.HasPrefix(first, "### ✅") && len(hidden) > 0 {
		t.Errorf("a ✅ over cells not judged that moved the worse way: %v: %q", hidden, first)
	}
	for _, cmd := range regexp.MustCompile("/bench rerun (\\S+)").FindAllStringSubmatch(body, -1) {
		for _, cell := range strings.Split(cmd[1], ",") {
			if judged[cell] {
				t.Errorf("the rerun advice reruns %s, already judged: %s", cell, cmd[0])
			}
		}
	}
}

// layoutNames reports whether a headline names cell w ("prefill 32K", "decode 8K × 1") in the
// layout's form, its phase then its context after its change ("prefill −15.4 % at 32K").
func layoutNames(first, w string) bool {
	phase, rest, ok := strings.Cut(w, " ")
	if !ok {
		return false
	}
	return regexp.MustCompile(regexp.QuoteMeta(phase) + ` [−+][0-9.]+ % at ` + regexp.QuoteMeta(rest) + `\b`).MatchString(first)
}
