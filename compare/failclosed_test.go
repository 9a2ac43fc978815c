package compare_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/speedmatrix/speedmatrix/calibrate"
	"github.com/speedmatrix/speedmatrix/compare"
	"github.com/speedmatrix/speedmatrix/results"
)

// TestFailClosed: a partial head, or a head lacking a cell the base has, makes the matrix
// incomplete with the reason, whatever the measured cells say; a regression stays a regression.
// A cell only the head has stays not comparable and alone changes nothing (one summary-only run a side is inconclusive).
func TestFailClosed(t *testing.T) {
	same := map[int]float64{1: 150, 2: 250, 8: 600}
	for _, tc := range []struct {
		name        string
		base, head  map[int]float64
		partial     string // the head's PartialReason; "-" partial without a reason; "" not partial
		want        results.Verdict
		wantReason  []string
		wantNoCells string // a cell whose verdict must be not comparable
		// history gives the base four earlier runs: measured noise, without which a prior alone
		// would leave the slowdown unproven, not a regression.
		history bool
		// plan is the head's own plan (Settings.Cells), when it records one.
		plan []string
	}{
		{name: "complete and unchanged", base: same, head: same, want: results.VerdictInconclusive},
		{name: "partial head", base: same, head: same, partial: "ctrl-c", want: results.VerdictIncomplete, wantReason: []string{"partial", "ctrl-c", "rerun"}},
		{name: "partial head without a reason", base: same, head: same, partial: "-", want: results.VerdictIncomplete, wantReason: []string{"partial"}},
		{name: "one cell missing in head", base: same, head: map[int]float64{1: 150, 8: 600}, want: results.VerdictIncomplete, wantReason: []string{"1 cell the base measured is missing in the head", "decode/8K/2"}},
		{name: "a cell its own plan named missing, the base lacking it too", base: map[int]float64{1: 150, 8: 600}, head: map[int]float64{1: 150, 8: 600},
			plan: []string{"decode/8K/1", "decode/8K/2", "decode/8K/8"}, want: results.VerdictIncomplete, wantReason: []string{"its own plan", "decode/8K/2"}},
		{name: "its plan measured in full", base: same, head: same, plan: []string{"decode/8K/1", "decode/8K/2", "decode/8K/8"}, want: results.VerdictInconclusive},
		{name: "cell only in head", base: map[int]float64{1: 150, 8: 600}, head: same, want: results.VerdictInconclusive, wantNoCells: "decode/8K/2"},
		{name: "regression wins over partial", base: same, head: map[int]float64{1: 150, 2: 250, 8: 300}, partial: "ctrl-c", want: results.VerdictRegression, wantReason: []string{"partial"}, history: true},
		{name: "regression wins over missing", base: same, head: map[int]float64{1: 150, 8: 300}, want: results.VerdictRegression, wantReason: []string{"decode/8K/2"}, history: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base, head := summaryFile("m", tc.base, nil), summaryFile("m", tc.head, nil)
			if tc.plan != nil {
				head.Run.Settings = &results.Settings{Cells: tc.plan}
			}
			if tc.partial != "" {
				head.Run.Partial = true
				if tc.partial != "-" {
					head.Run.PartialReason = tc.partial
				}
			}
			in := compare.Input{Base: []*results.File{base}, Head: []*results.File{head}}
			if tc.history {
				for _, k := range []float64{0.99, 1.01, 1.005, 0.995} {
					h := map[int]float64{}
					for c, v := range tc.base {
						h[c] = v * k
					}
					in.History = append(in.History, summaryFile("m", h, nil))
				}
			}
			c, err := compare.Compare(in, compare.DefaultThresholds())
			if err != nil {
				t.Fatal(err)
			}
			if c.Verdict != tc.want {
				t.Errorf("verdict %s, want %s (reason %q)", c.Verdict, tc.want, c.VerdictReason)
			}
			for _, w := range tc.wantReason {
				if !strings.Contains(c.VerdictReason, w) {
					t.Errorf("reason %q lacks %q", c.VerdictReason, w)
				}
			}
			if len(tc.wantReason) == 0 && c.VerdictReason != "" {
				t.Errorf("reason %q, want none", c.VerdictReason)
			}
			if tc.wantNoCells != "" {
				if cc := cellOf(t, c, tc.wantNoCells); cc.Verdict != results.VerdictNotComparable {
					t.Errorf("%s: %s, want not comparable", tc.wantNoCells, cc.Verdict)
				}
			}
			for _, cc := range c.Cells {
				if cc.Reason == "missing in head" && cc.Verdict != results.VerdictIncomplete {
					t.Errorf("%s missing in head: %s, want incomplete", cc.Cell, cc.Verdict)
				}
			}
			// A cell only the head's plan named has no cell in the comparison to mark: the matrix
			// verdict and its reason carry it.
			if n := c.Summary.CellCounts.Incomplete; tc.plan == nil && n != strings.Count(strings.Join(tc.wantReason, " "), "decode/") {
				t.Errorf("%d cells incomplete", n)
			}
		})
	}
}

// TestStalledWindow: a head window whose last quarter or half of its bins are empty (the server
// stopped producing tokens) is no measurement: the cell is incomplete with the reason and the
// matrix cannot pass; the same stall in the base makes the cell not comparable; short gaps and
// full windows change nothing.
func TestStalledWindow(t *testing.T) {
	m := calibrate.NewMatrix(5, 0.2)
	r := rand.New(rand.NewPCG(5, 6))
	var hist []*results.File
	for i := range 10 {
		hist = append(hist, m.Run(r, fmt.Sprint("hist-", i), nil))
	}
	const cell = "decode/8K/8"
	stall := func(f *results.File, from, to int) {
		for i := range f.Decode {
			if f.Decode[i].ID().String() != cell {
				continue
			}
			tr := &f.Decode[i].Trials[0]
			for b := from; b < to && b < len(tr.BinOutputTokens); b++ {
				tr.BinOutputTokens[b] = 0
			}
		}
	}
	for _, tc := range []struct {
		name           string
		headFrom, to   int
		baseFrom, bto  int
		want, wantCell results.Verdict
	}{
		{name: "last quarter empty", headFrom: 22, to: 30, want: results.VerdictIncomplete, wantCell: results.VerdictIncomplete},
		{name: "last half empty", headFrom: 15, to: 30, want: results.VerdictIncomplete, wantCell: results.VerdictIncomplete},
		{name: "a 3 s gap in the middle", headFrom: 10, to: 13, want: results.VerdictIncomplete, wantCell: results.VerdictIncomplete},
		{name: "a 2 s gap is no stall", headFrom: 10, to: 12},
		{name: "stalled base", baseFrom: 20, bto: 30, wantCell: results.VerdictNotComparable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(7, 8))
			base, head := m.Run(r, "base", nil), m.Run(r, "head", nil)
			stall(head, tc.headFrom, tc.to)
			stall(base, tc.baseFrom, tc.bto)
			c, err := compare.Compare(compare.Input{Base: []*results.File{base}, Head: []*results.File{head}, History: hist}, compare.DefaultThresholds())
			if err != nil {
				t.Fatal(err)
			}
			cc := cellOf(t, c, cell)
			if tc.wantCell != "" && (cc.Verdict != tc.wantCell || !strings.Contains(cc.Reason, "the window stalled")) {
				t.Errorf("%s: %s (%s), want %s saying the window stalled", cell, cc.Verdict, cc.Reason, tc.wantCell)
			}
			if tc.wantCell == "" && strings.Contains(cc.Reason, "stalled") {
				t.Errorf("%s: %s", cell, cc.Reason)
			}
			if tc.want != "" && (c.Verdict != tc.want || !strings.Contains(c.VerdictReason, cell)) {
				t.Errorf("matrix %s (%q), want %s naming %s", c.Verdict, c.VerdictReason, tc.want, cell)
			}
			if tc.want == "" && c.Verdict == results.VerdictIncomplete {
				t.Errorf("matrix incomplete (%q)", c.VerdictReason)
			}
		})
	}
}

// TestDegenerateHistory: history that is one run copied, or that does not vary at all, is refused
// with the reason, never taken as noise (ten identical files made zero-width intervals and
// "unchanged" at p ≈ 1e-117).
func TestDegenerateHistory(t *testing.T) {
	m := calibrate.NewMatrix(9, 0.2)
	r := rand.New(rand.NewPCG(9, 10))
	base, head := m.Run(r, "base", nil), m.Run(r, "head", nil)
	one := m.Run(r, "hist", nil)
	copies := func(rename bool) []*results.File {
		var out []*results.File
		for i := range 10 {
			c := *one
			if rename {
				c.Run.ID = fmt.Sprint("hist-", i)
			}
			out = append(out, &c)
		}
		return out
	}
	summaries := func() []*results.File {
		var out []*results.File
		for range 5 {
			out = append(out, summaryFile("m", map[int]float64{1: 150, 8: 600}, nil))
		}
		return out
	}
	for _, tc := range []struct {
		name    string
		base    *results.File
		history []*results.File
		want    string
	}{
		{"one run id ten times", base, copies(false), "one run (run id hist)"},
		{"one run copied under new ids", base, copies(true), "identical cells and numbers"},
		{"identical summaries, no spread", summaryFile("m", map[int]float64{1: 150, 8: 600}, nil), summaries(), "no spread at all"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := head
			if tc.base.Run.Source == results.SourceImported {
				h = summaryFile("m", map[int]float64{1: 150, 8: 590}, nil)
			}
			_, err := compare.Compare(compare.Input{Base: []*results.File{tc.base}, Head: []*results.File{h}, History: tc.history}, compare.DefaultThresholds())
			var de *compare.DegenerateHistoryError
			if !errors.As(err, &de) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "separate runs") {
				t.Errorf("err %v, want a degenerate history error saying %q and what to do", err, tc.want)
			}
		})
	}
}

// TestOneBaseRunPoolsWithHistory: one stored base run whose draw sits 9 % above its history's
// level, against a head measured again in many trials at that level. The head's trials say
// nothing of the base run's own draw: the base pools the history (the pooled baseline), so the
// head is not 9 % slower. (The spread of the head's trials once stood for both sides' noise
// there, and the base's one outlier blocked the head: t₃ noise, the budgeted job.)
func TestOneBaseRunPoolsWithHistory(t *testing.T) {
	base := summaryFile("m", map[int]float64{8: 654}, nil)
	base.Run.ID = "base"
	head := summaryFile("m", map[int]float64{8: 600}, nil)
	head.Run.ID = "head"
	c := &head.Decode[0]
	c.SummaryOnly = false
	for k := range 13 {
		v := 600 * (1 + 0.01*math.Sin(float64(3*k+1)))
		var tr results.DecodeTrial
		tr.TotalTokPerS, tr.PerRequestTokPerS, tr.TTFTMs, tr.TBTMs = f64(v), f64(v/8), f64(500), f64(8000/v)
		c.Trials = append(c.Trials, tr)
	}
	in := compare.Input{Base: []*results.File{base}, Head: []*results.File{head}}
	for k := range 10 {
		h := summaryFile("m", map[int]float64{8: 600 * (1 + 0.01*math.Cos(float64(2*k+1)))}, nil)
		h.Run.ID = fmt.Sprintf("hist-%d", k)
		in.History = append(in.History, h)
	}
	cmp, err := compare.Compare(in, compare.DefaultThresholds())
	if err != nil {
		t.Fatal(err)
	}
	m := find(t, cmp, "decode/8K/8", results.MetricTotalTokPerS)
	if m.Verdict == results.VerdictRegression || m.Noise == nil || m.Noise.PooledRuns < 10 {
		t.Errorf("verdict %s (%s), noise %+v: want the base pooled with its history, no regression", m.Verdict, m.Reason, m.Noise)
	}
}

// TestPartialCountsMeasuredCells: a partial head whose last cell was recorded with an error (the
// server died during it) got 2 of 3 cells, as run's own error counts "the 2 cells measured so
// far"; before, the comparison said "stopped after 3 of 3 cells".
func TestPartialCountsMeasuredCells(t *testing.T) {
	same := map[int]float64{1: 150, 2: 250, 8: 600}
	base := summaryFile("m", same, nil)
	head := summaryFile("m", same, map[int]results.Status{8: results.StatusError})
	head.Decode[2].Error = "server exited"
	head.Run.Partial, head.Run.PartialReason = true, "the server exited during decode/8K/8"
	c, err := compare.Compare(compare.Input{Base: []*results.File{base}, Head: []*results.File{head}}, compare.DefaultThresholds())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(c.VerdictReason, "stopped after 2 of 3 cells") {
		t.Errorf("reason %q: want \"stopped after 2 of 3 cells\"", c.VerdictReason)
	}
}
