package report

import (
	"bytes"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/speedmatrix/speedmatrix/calibrate"
	"github.com/speedmatrix/speedmatrix/compare"
	"github.com/speedmatrix/speedmatrix/results"
)

// keep returns f limited to the prefill cells of contexts and the decode cells of contexts at
// concurrency up to maxC, so that golden files stay readable.
func keep(f *results.File, contexts []string, maxC int) *results.File {
	in := func(l string) bool {
		for _, c := range contexts {
			if c == l {
				return true
			}
		}
		return false
	}
	out := *f
	out.Prefill, out.Decode = nil, nil
	for _, c := range f.Prefill {
		if in(c.ContextLabel) {
			out.Prefill = append(out.Prefill, c)
		}
	}
	for _, c := range f.Decode {
		if in(c.ContextLabel) && c.Concurrency <= maxC {
			out.Decode = append(out.Decode, c)
		}
	}
	return &out
}

// runs draws n runs of m limited to contexts and maxC.
func runs(m *calibrate.Matrix, r *rand.Rand, tag string, n int, slow *calibrate.Slowdown, contexts []string, maxC int) []*results.File {
	var fs []*results.File
	for i := range n {
		fs = append(fs, keep(m.Run(r, tag+strings.Repeat("+", i), slow), contexts, maxC))
	}
	return fs
}

// scenarios are the comparisons whose renderings are pinned by golden files.
func scenarios(t *testing.T) map[string]*results.Comparison {
	t.Helper()
	th := compare.DefaultThresholds()
	out := map[string]*results.Comparison{}
	do := func(name string, in compare.Input) {
		in.BasePath, in.HeadPath = "base.json", "head.json"
		c, err := compare.Compare(in, th)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out[name] = c
	}
	ctx := []string{"8K", "32K", "128K"}
	{
		// A 12 % decode slowdown of the 32K row, one run a side, with ten earlier base runs as
		// history: their spread is the measured noise that lets the slowdown block.
		m := calibrate.NewMatrix(11, 1)
		r := rand.New(rand.NewPCG(11, 1))
		slow := &calibrate.Slowdown{ContextLabel: "32K", RateFactor: 0.88, TTFTFactor: 1.3}
		base, head := runs(m, r, "base", 1, nil, ctx, 32), runs(m, r, "head", 1, slow, ctx, 32)
		do("regression", compare.Input{Base: base, Head: head, History: runs(m, r, "hist", 10, nil, ctx, 32)})
	}
	{
		// The same slowdown, one run a side and no history: only the prior bounds the noise, so
		// the slowed cells are unproven, never a regression.
		m := calibrate.NewMatrix(11, 1)
		r := rand.New(rand.NewPCG(11, 1))
		slow := &calibrate.Slowdown{ContextLabel: "32K", RateFactor: 0.88, TTFTFactor: 1.3}
		do("unproven", compare.Input{Base: runs(m, r, "base", 1, nil, ctx, 32), Head: runs(m, r, "head", 1, slow, ctx, 32)})
	}
	{
		// The 8K decode row 10 % faster (TTFT 20 % lower), three runs a side.
		m := calibrate.NewMatrix(12, 1)
		r := rand.New(rand.NewPCG(12, 1))
		fast := &calibrate.Slowdown{ContextLabel: "8K", RateFactor: 1.10, TTFTFactor: 0.8}
		heads := runs(m, r, "head", 3, fast, ctx, 32)
		do("improvement", compare.Input{Base: runs(m, r, "base", 3, nil, ctx, 32), Head: heads})
	}
	{
		// Quiet server (a twentieth of the realistic noise), six runs a side: all unchanged.
		m := calibrate.NewMatrix(13, 0.05)
		r := rand.New(rand.NewPCG(13, 1))
		do("unchanged", compare.Input{Base: runs(m, r, "base", 6, nil, ctx, 32), Head: runs(m, r, "head", 6, nil, ctx, 32)})
	}
	{
		// Only the noisy cells (concurrency 1 and 2) and one run a side: nothing decidable.
		m := calibrate.NewMatrix(14, 1)
		r := rand.New(rand.NewPCG(14, 1))
		do("underpowered", compare.Input{Base: runs(m, r, "base", 1, nil, ctx, 2), Head: runs(m, r, "head", 1, nil, ctx, 2)})
	}
	{
		// Different shapes: the head lacks the 128K row and has a 64K row the base lacks; the
		// 8K/32 cell went from valid to queued.
		m := calibrate.NewMatrix(15, 1)
		r := rand.New(rand.NewPCG(15, 1))
		base := runs(m, r, "base", 1, nil, []string{"8K", "32K", "128K"}, 32)
		head := runs(m, r, "head", 1, nil, []string{"8K", "32K", "64K"}, 32)
		for i := range base[0].Decode {
			if c := &base[0].Decode[i]; c.ContextLabel == "8K" && c.Concurrency == 32 {
				c.Status = results.StatusValid
			}
		}
		for i := range head[0].Decode {
			if c := &head[0].Decode[i]; c.ContextLabel == "8K" && c.Concurrency == 32 {
				c.Status = results.StatusQueued
			}
		}
		do("shape", compare.Input{Base: base, Head: head})
	}
	return out
}

func TestComparisonTextGolden(t *testing.T) {
	for name, c := range scenarios(t) {
		t.Run(name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := ComparisonText(&buf, c); err != nil {
				t.Fatal(err)
			}
			golden(t, filepath.Join("testdata", "comparison-"+name+".golden"), buf.Bytes())
		})
	}
}

func TestComparisonMarkdownGolden(t *testing.T) {
	sc := scenarios(t)
	for _, name := range []string{"regression", "underpowered", "unproven"} {
		var buf bytes.Buffer
		if err := ComparisonMarkdown(&buf, sc[name]); err != nil {
			t.Fatal(err)
		}
		golden(t, filepath.Join("testdata", "comparison-"+name+".md.golden"), buf.Bytes())
	}
}

// The scenarios say what they claim; the golden files pin how.
func TestComparisonScenarios(t *testing.T) {
	sc := scenarios(t)
	want := map[string]results.Verdict{
		"regression": results.VerdictRegression, "improvement": results.VerdictImprovement,
		"unchanged": results.VerdictUnchanged, "underpowered": results.VerdictInconclusive,
		"shape": results.VerdictRegression, "unproven": results.VerdictUnproven,
	}
	for name, v := range want {
		if got := sc[name].Verdict; got != v {
			t.Errorf("%s: verdict %s, want %s", name, got, v)
		}
	}
	if c := sc["unchanged"].Summary.Counts; c.Unchanged != sc["unchanged"].Summary.Tests || c.Inconclusive != 0 {
		t.Errorf("unchanged: counts %+v of %d tests", c, sc["unchanged"].Summary.Tests)
	}
	u := sc["underpowered"]
	if c := u.Summary.Counts; c.Inconclusive != u.Summary.Tests || u.Summary.Tests == 0 {
		t.Errorf("underpowered: counts %+v of %d tests", c, u.Summary.Tests)
	}
	var buf bytes.Buffer
	if err := ComparisonText(&buf, u); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "Underpowered: none of the") {
		t.Errorf("underpowered text does not say so plainly:\n%s", buf.String())
	}
	buf.Reset()
	if err := ComparisonText(&buf, sc["regression"]); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"Verdict: REGRESSION", MarkRegression, "Regressions (", "± half the 95 % confidence interval", "Per cell (", "32K     HHHH"} {
		if !strings.Contains(buf.String(), s) {
			t.Errorf("regression text lacks %q", s)
		}
	}
	buf.Reset()
	if err := ComparisonText(&buf, sc["shape"]); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"missing in head", "new in head", "valid→queued", "differ in shape"} {
		if !strings.Contains(buf.String(), s) {
			t.Errorf("shape text lacks %q", s)
		}
	}
}
