package adaptive_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/speedmatrix/speedmatrix/adaptive"
	"github.com/speedmatrix/speedmatrix/calibrate"
	"github.com/speedmatrix/speedmatrix/compare"
	"github.com/speedmatrix/speedmatrix/results"
)

// fakeClock is a clock that Measure moves.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

// job returns a budgeted job over a noisy synthetic matrix (one run a side, so that the first
// look leaves cells inconclusive) whose every rerun trial is priced at a minute, and whose
// Measure draws the cells again and moves the clock by took(predicted).
func job(t *testing.T, budget time.Duration, spent float64, took func(time.Duration) time.Duration) (adaptive.Job, *[]time.Duration) {
	t.Helper()
	return jobOn(t, calibrate.NewMatrix(21, 1), 0, budget, spent, took)
}

// jobOn is job over matrix m, with history earlier runs of the base (each its own run).
func jobOn(t *testing.T, m *calibrate.Matrix, history int, budget time.Duration, spent float64, took func(time.Duration) time.Duration) (adaptive.Job, *[]time.Duration) {
	t.Helper()
	r := rand.New(rand.NewPCG(21, 1))
	base, head := m.Run(r, "base", nil), m.Run(r, "head", nil)
	var hist []*results.File
	for i := range history {
		hist = append(hist, m.Run(r, fmt.Sprintf("history-%d", i), nil))
	}
	start := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	clock := &fakeClock{t: start}
	price := func(cell string, trials int) time.Duration { return time.Duration(trials) * time.Minute }
	var lefts []time.Duration
	j := adaptive.Job{
		Compare:    compare.Input{Base: []*results.File{base}, Head: []*results.File{head}, History: hist, BasePath: "base", HeadPath: "head"},
		Thresholds: compare.DefaultThresholds(),
		Budget:     budget,
		GPU:        results.GPUTime{MeasureSeconds: spent},
		Cost:       price,
		Now:        clock.now,
		Measure: func(ctx context.Context, cells []string, trials int) (*results.File, error) {
			dl, ok := ctx.Deadline()
			if !ok {
				t.Error("a rerun runs without a deadline at the end of the budget")
			}
			// How far the deadline lies past the end of the budget (≤ 0 when it does not).
			left := budget - time.Duration(spent*float64(time.Second)) - clock.t.Sub(start)
			lefts = append(lefts, time.Until(dl)-left)
			var ids []results.CellID
			for _, c := range cells {
				id, err := results.ParseCellID(c)
				if err != nil {
					t.Fatal(err)
				}
				ids = append(ids, id)
			}
			var predicted time.Duration
			for _, c := range cells {
				predicted += price(c, trials)
			}
			if d := took(predicted); d > time.Until(dl) {
				// Cut at the deadline, as a run is: what it measured and the context's error.
				clock.t = clock.t.Add(time.Until(dl))
				return m.RunCells(r, "rerun", nil, ids[:len(ids)/2]), context.DeadlineExceeded
			} else {
				clock.t = clock.t.Add(d)
			}
			return m.RunCells(r, "rerun", nil, ids), nil
		},
	}
	return j, &lefts
}

// TestRunStaysWithinBudget checks the budget: reruns are bought and measured while their price
// fits, none starts once the next would cross the budget (even when the measurements took
// longer than predicted), each runs under a deadline no later than the end of the budget, the
// GPU time adds up, and what was not measured is undecided with its price.
func TestRunStaysWithinBudget(t *testing.T) {
	for _, tc := range []struct {
		name   string
		budget time.Duration
		took   func(time.Duration) time.Duration
		// wantReruns: whether some rerun is measured; wantPriced: whether some cell is left
		// undecided for the budget, with its price.
		wantReruns, wantPriced bool
		// wantCut: a rerun is cut at the end of the budget, and the comparison says so.
		wantCut bool
	}{
		{name: "no budget left", budget: 10 * time.Minute, took: func(d time.Duration) time.Duration { return d }, wantPriced: true},
		{name: "as predicted", budget: 10 * time.Hour, took: func(d time.Duration) time.Duration { return d }, wantReruns: true},
		{name: "slower than predicted", budget: 10*time.Minute + 30*time.Minute, took: func(d time.Duration) time.Duration { return 3 * d }, wantReruns: true, wantPriced: true, wantCut: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j, lefts := job(t, tc.budget, 600, tc.took)
			out, err := adaptive.Run(context.Background(), j)
			if err != nil {
				t.Fatal(err)
			}
			if out.First.Rerun == nil || len(out.First.Rerun.Items)+len(out.First.Rerun.Rows) == 0 {
				t.Fatal("the first look advises no rerun: the test's matrix is not noisy enough")
			}
			g := out.GPU
			if total := time.Duration(g.TotalSeconds * float64(time.Second)); total > tc.budget {
				t.Errorf("spent %v of a %v budget", total, tc.budget)
			}
			if g.TotalSeconds != g.MeasureSeconds+g.RerunSeconds || g.BudgetSeconds != tc.budget.Seconds() || g.Reruns != len(out.Reruns) {
				t.Errorf("GPU time %+v does not add up (reruns %d)", g, len(out.Reruns))
			}
			if (g.Reruns > 0) != tc.wantReruns {
				t.Errorf("%d reruns measured, want some: %v", g.Reruns, tc.wantReruns)
			}
			for i, past := range *lefts {
				if past > 0 {
					t.Errorf("rerun %d ran with its deadline %v past the end of the budget", i+1, past)
				}
			}
			var priced int
			for _, u := range g.Undecided {
				if u.Reason == results.UndecidedOverBudget {
					if u.CostSeconds <= 0 || u.FurtherTrials <= 0 {
						t.Errorf("undecided for the budget without its price: %+v", u)
					}
					priced++
				}
			}
			if (priced > 0) != tc.wantPriced {
				t.Errorf("%d cells left undecided for the budget, want some: %v (%+v)", priced, tc.wantPriced, g.Undecided)
			}
			cut := false
			for _, w := range out.Final.Warnings {
				cut = cut || strings.Contains(w, "reached the end of the GPU budget")
			}
			if cut != tc.wantCut {
				t.Errorf("warnings %q: want a rerun cut at the end of the budget: %v", out.Final.Warnings, tc.wantCut)
			}
			// The second look tests the cells measured again; every other cell keeps its first
			// look's verdict (a cell tested twice on the same data would spend the false-alarm
			// rate twice).
			again := map[string]bool{}
			for _, f := range out.Reruns {
				for _, c := range f.Decode {
					again[c.ID().String()] = true
				}
				for _, c := range f.Prefill {
					again[c.ID().String()] = true
				}
			}
			firstOf := map[string]results.CellComparison{}
			for _, c := range out.First.Cells {
				firstOf[c.Cell] = c
			}
			for _, c := range out.Final.Cells {
				if f, ok := firstOf[c.Cell]; ok && !again[c.Cell] && (c.Verdict != f.Verdict || !reflect.DeepEqual(c.Metrics, f.Metrics)) {
					t.Errorf("%s was not measured again but its verdict moved from %s to %s", c.Cell, f.Verdict, c.Verdict)
				}
			}
			if len(out.Final.Cells) != len(out.First.Cells) {
				t.Errorf("the final comparison holds %d cells, the first %d", len(out.Final.Cells), len(out.First.Cells))
			}
			if out.Final.GPUTime == nil || out.Final.GPUTime.TotalSeconds != g.TotalSeconds {
				t.Errorf("the final comparison's GPU time is %+v", out.Final.GPUTime)
			}
			if wantLook := map[bool]int{true: 2, false: 1}[tc.wantReruns]; out.Final.Settings.Look != wantLook {
				t.Errorf("final comparison at look %d, want %d", out.Final.Settings.Look, wantLook)
			}
		})
	}
}

// TestRunStopsAtFailedRerun checks that a rerun that fails stops the reruns without failing the
// job: the second look uses what was measured and says what happened.
func TestRunStopsAtFailedRerun(t *testing.T) {
	j, _ := job(t, 10*time.Hour, 600, func(d time.Duration) time.Duration { return d })
	measure := j.Measure
	calls := 0
	j.Measure = func(ctx context.Context, cells []string, trials int) (*results.File, error) {
		calls++
		if calls == 2 {
			return nil, errors.New("the server stopped answering")
		}
		return measure(ctx, cells, trials)
	}
	out, err := adaptive.Run(context.Background(), j)
	if err != nil {
		t.Fatal(err)
	}
	if calls != 2 || len(out.Reruns) != 1 {
		t.Fatalf("%d calls, %d reruns kept; want the reruns to stop at the failed second", calls, len(out.Reruns))
	}
	found := false
	for _, w := range out.Final.Warnings {
		found = found || strings.Contains(w, "failed")
	}
	if !found {
		t.Errorf("warnings %q do not say the rerun failed", out.Final.Warnings)
	}
}
