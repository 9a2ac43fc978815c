package compare_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/speedmatrix/speedmatrix/calibrate"
	"github.com/speedmatrix/speedmatrix/compare"
	"github.com/speedmatrix/speedmatrix/results"
)

// landedHistory returns 12 history runs of one commit each, oldest first, an hour apart, with
// row 8K 10 % slower from the 7th on (a regression that landed), the matrix and generator that
// drew them (seeded by seed1, seed2), and the slowdown.
func landedHistory(seed1, seed2 uint64) (*calibrate.Matrix, *rand.Rand, *calibrate.Slowdown, []*results.File) {
	m := calibrate.NewMatrix(31, 1)
	r := rand.New(rand.NewPCG(seed1, seed2))
	landed := &calibrate.Slowdown{ContextLabel: "8K", RateFactor: 0.90, TTFTFactor: 1.10}
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var hist []*results.File
	for i := range 12 {
		var s *calibrate.Slowdown
		if i >= 6 {
			s = landed
		}
		f := m.Run(r, fmt.Sprint("hist", i), s)
		f.Engine.Commit = fmt.Sprintf("%040x", i+1)
		f.Run.Start = start.Add(time.Duration(i) * time.Hour)
		hist = append(hist, f)
	}
	return m, r, landed, hist
}

// TestHistoryShiftIsNotNoise: a regression of 10 % on row 8K landed on the default branch in
// the middle of the base's history (6 runs before, 6 after). Counted as noise, that step would
// make the 8K cells' run-to-run CV ≈ 5 % instead of ≤ 1 % and leave every later comparison
// blind to a further 6 % slowdown there; split into its two levels, the history measures the
// noise within them, the comparison says so, and the slowdown is seen. An A/A head at the new
// level is not a regression.
func TestHistoryShiftIsNotNoise(t *testing.T) {
	m, r, landed, hist := landedHistory(31, 32)
	// The store hands history newest first: compare orders it by run start.
	slices.Reverse(hist)
	base := m.Run(r, "base", landed)
	slower := m.Run(r, "head", &calibrate.Slowdown{ContextLabel: "8K", RateFactor: 0.90 * 0.94, TTFTFactor: 1.10 * 1.06})
	same := m.Run(r, "aa", landed)
	th := compare.DefaultThresholds()

	c, err := compare.Compare(compare.Input{Base: []*results.File{base}, Head: []*results.File{slower}, History: hist}, th)
	if err != nil {
		t.Fatal(err)
	}
	mc := find(t, c, "decode/8K/32", results.MetricTotalTokPerS)
	if mc.Noise.Source != results.NoiseHistory || mc.Noise.Levels != 2 || mc.Noise.LevelFrom != hist[5].Engine.Commit {
		t.Fatalf("decode/8K/32 noise %+v: want history in 2 levels, the newest from %s", mc.Noise, hist[5].Engine.Commit[:12])
	}
	if mc.Noise.CV > 0.02 || mc.Noise.DF == nil || *mc.Noise.DF < 10 { // 12 − 2, plus what the noise class lends (moderate.go)
		t.Errorf("decode/8K/32 noise CV %.4f on %v df; want the within-level noise (≤ 2 %%) on 12 − 2 df", mc.Noise.CV, mc.Noise.DF)
	}
	// One run a side cannot call 6 % at the matrix's level on 10 degrees of freedom, but the
	// slowdown is seen: the interval lies below zero, and the cell can detect changes of a size
	// the within-level noise allows (with the step counted as noise: ≈ 5 % CV, ±15 %, MDC ≈ 50 %).
	if mc.Change == nil || mc.Change.High >= 0 || mc.MDC == nil || *mc.MDC > 0.12 {
		t.Errorf("decode/8K/32 6 %% slower: change %+v, MDC %v; want an interval below zero and an MDC ≤ 12 %%", mc.Change, mc.MDC)
	}
	if other := find(t, c, "decode/16K/32", results.MetricTotalTokPerS); other.Noise.Levels != 0 {
		t.Errorf("decode/16K/32, whose history did not shift: %d levels", other.Noise.Levels)
	}
	warned := false
	for _, w := range c.Warnings {
		warned = warned || strings.Contains(w, "history shifted") && strings.Contains(w, hist[5].Engine.Commit[:12])
	}
	if !warned {
		t.Errorf("no warning names the shift: %q", c.Warnings)
	}

	aa, err := compare.Compare(compare.Input{Base: []*results.File{base}, Head: []*results.File{same}, History: hist}, th)
	if err != nil {
		t.Fatal(err)
	}
	if aa.Verdict == results.VerdictRegression {
		for _, cell := range aa.Cells {
			if cell.Verdict == results.VerdictRegression {
				t.Errorf("A/A at the new level: %s regressed", cell.Cell)
			}
		}
	}
}

// TestHistoryByCommitKeepsOrder: a history given in commit order (Input.HistoryByCommit, newest
// first as store.History reads it along the baseline's first parents) is split where its commits
// shifted even when the oldest runs were measured last (backfilled baselines); by run start the
// same runs would put the old level after the new one.
func TestHistoryByCommitKeepsOrder(t *testing.T) {
	m, r, landed, newestFirst := landedHistory(41, 42)
	for _, f := range newestFirst[:4] {
		f.Run.Start = f.Run.Start.Add(100 * time.Hour) // backfilled after the rest
	}
	slices.Reverse(newestFirst)
	base := m.Run(r, "base", landed)
	head := m.Run(r, "head", landed)
	c, err := compare.Compare(compare.Input{Base: []*results.File{base}, Head: []*results.File{head}, History: newestFirst, HistoryByCommit: true}, compare.DefaultThresholds())
	if err != nil {
		t.Fatal(err)
	}
	mc := find(t, c, "decode/8K/32", results.MetricTotalTokPerS)
	if mc.Noise.Levels != 2 || mc.Noise.LevelFrom != fmt.Sprintf("%040x", 7) || mc.Noise.CV > 0.02 {
		t.Errorf("decode/8K/32 noise %+v: want 2 levels, the newest from the 7th commit, CV ≤ 2 %%", mc.Noise)
	}
}
