package compare_test

import (
	"strings"
	"testing"

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
	}{
		{name: "complete and unchanged", base: same, head: same, want: results.VerdictInconclusive},
		{name: "partial head", base: same, head: same, partial: "ctrl-c", want: results.VerdictIncomplete, wantReason: []string{"partial", "ctrl-c", "rerun"}},
		{name: "partial head without a reason", base: same, head: same, partial: "-", want: results.VerdictIncomplete, wantReason: []string{"partial"}},
		{name: "one cell missing in head", base: same, head: map[int]float64{1: 150, 8: 600}, want: results.VerdictIncomplete, wantReason: []string{"1 cells", "decode/8K/2"}},
		{name: "cell only in head", base: map[int]float64{1: 150, 8: 600}, head: same, want: results.VerdictInconclusive, wantNoCells: "decode/8K/2"},
		{name: "regression wins over partial", base: same, head: map[int]float64{1: 150, 2: 250, 8: 300}, partial: "ctrl-c", want: results.VerdictRegression, wantReason: []string{"partial"}, history: true},
		{name: "regression wins over missing", base: same, head: map[int]float64{1: 150, 8: 300}, want: results.VerdictRegression, wantReason: []string{"decode/8K/2"}, history: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base, head := summaryFile("m", tc.base, nil), summaryFile("m", tc.head, nil)
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
			if n := c.Summary.CellCounts.Incomplete; n != strings.Count(strings.Join(tc.wantReason, " "), "decode/") {
				t.Errorf("%d cells incomplete", n)
			}
		})
	}
}
