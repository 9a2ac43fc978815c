package errrate

import (
	"context"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/speedmatrix/speedmatrix/bisect"
	"github.com/speedmatrix/speedmatrix/calibrate"
	"github.com/speedmatrix/speedmatrix/compare"
)

// TestTable checks a small table: at 20 % and 16 commits, bisect names the culprit nearly
// always and plain bisection spends no more steps than ⌈log₂ 16⌉ + 1.
func TestTable(t *testing.T) {
	s := DefaultSettings()
	s.Bisections, s.Slowdowns, s.Ranges = 20, []float64{0.20}, []int{16}
	rep, err := Run(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Rows) != len(s.Procedures) {
		t.Fatalf("%d rows, want %d", len(rep.Rows), len(s.Procedures))
	}
	for _, r := range rep.Rows {
		if r.Right.N != 20 || r.Right.K+r.Wrong.K+r.Open.K != 20 {
			t.Errorf("%s: counts %+v %+v %+v", r.Procedure.Name, r.Right, r.Wrong, r.Open)
		}
		if r.Right.P < 0.9 {
			t.Errorf("%s: culprit right in %.0f %% at a 20 %% slowdown, want at least 90 %%", r.Procedure.Name, 100*r.Right.P)
		}
		if r.Procedure.Plain && r.MaxSteps > 5 {
			t.Errorf("plain: %d steps, want at most 5", r.MaxSteps)
		}
		if r.MeanGPU <= 0 {
			t.Errorf("%s: no GPU time", r.Procedure.Name)
		}
	}
	var b strings.Builder
	if err := rep.WriteMarkdown(&b); err != nil || !strings.Contains(b.String(), "| 20 % | 16 | plain |") {
		t.Errorf("table:\n%s (%v)", b.String(), err)
	}
}

// history returns a synthetic history of n commits with the given culprits.
func history(seed uint64, n int, culprits map[int]float64) *History {
	r := rand.New(rand.NewPCG(seed, 1))
	m := calibrate.NewMatrix(r.Uint64(), 1)
	h := &History{Matrix: m, Model: calibrate.WorldGaussian, Culprit: culprits, Thresholds: compare.DefaultThresholds(),
		Costs: calibrate.DefaultCosts(), Rand: r, Skip: map[int]bool{}}
	h.Cells = AffectedCells(m)
	h.Init(n, 10)
	return h
}

// TestStatements bisects synthetic histories through compare and checks that each ends with a
// true statement: an unbuildable culprit leaves a range holding it, and two regressions are
// both named, not blamed on one commit.
func TestStatements(t *testing.T) {
	for _, tt := range []struct {
		name     string
		culprits map[int]float64
		skip     []int
		want     []string // culprits named
		rng      []string // the range left
		says     string
	}{
		{name: "commit 11 of 16", culprits: map[int]float64{11: 0.9}, want: []string{"c000011"}, says: "culprit is c000011"},
		{name: "unbuildable culprit", culprits: map[int]float64{11: 0.9}, skip: []int{11}, rng: []string{"c000011", "c000012"}, says: "c000011 did not build or serve"},
		{name: "unbuildable neighbour", culprits: map[int]float64{11: 0.9}, skip: []int{10}, rng: []string{"c000010", "c000011"}, says: "c000010 did not build or serve"},
		{name: "two regressions", culprits: map[int]float64{5: 0.9, 11: 0.9}, want: []string{"c000005", "c000011"}, says: "A second regression's culprit is c000011"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := history(7, 16, tt.culprits)
			for _, i := range tt.skip {
				h.Skip[i] = true
			}
			res, err := bisect.Run(context.Background(), bisect.Config{Good: h.Name(0), Commits: h.Range(), Cells: CellNames(h.Cells), Runners: 2, Budget: bisect.Budget{Steps: 20}}, h.Step)
			if err != nil {
				t.Fatal(err)
			}
			var named []string
			var rng []string
			for _, g := range res.Regressions {
				if g.Culprit != "" {
					named = append(named, g.Culprit)
				}
				rng = append(rng, g.Range...)
			}
			if !slices.Equal(named, tt.want) || !slices.Equal(rng, tt.rng) || !strings.Contains(res.Statement, tt.says) {
				t.Errorf("named %v range %v, want %v %v; statement:\n%s", named, rng, tt.want, tt.rng, res.Statement)
			}
		})
	}
}
