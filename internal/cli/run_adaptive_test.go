package cli

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/speedmatrix/speedmatrix/results"
)

// adaptiveSimRun returns the flags of a small noisy run of the built-in simulator: decode at 8K
// and 32K × 1 and 8 (prefill at both), 1 s windows at 20× speed, the same seed on both sides,
// in matrix order (so that one seed gives each cell the same draws of the simulator on both).
func adaptiveSimRun(out string, extra ...string) []string {
	return append([]string{"run", "--contexts", "8K,32K", "--concurrency", "1,8", "--duration", "1s",
		"--warmup", "0", "--sim-speedup", "20", "--sim-seed", "1", "--sim-noise", "0.01", "--quiet", "-o", out, "--order", "matrix"}, extra...)
}

// TestRunAdaptiveFlagsSlowRowWithinBudget is issue 13's acceptance test: on the simulator with
// noise and a slowdown of about 3.5δ in the 32K row only (decode steps 12 % longer: total tok/s
// −11 % against δ = 3 %; issue 21 made the test's noise the history's, measured on ten runs, in
// place of a prior that alone no longer blocks, and 2δ on two cells of 1–2 % noise is not
// reliably decided at the matrix's level), `run --baseline --budget`
// flags that row and nothing else, spends no more than its budget (first pass and reruns), and
// records the GPU time in the results and the comparison; a budget that the first pass uses up
// measures nothing more and leaves the inconclusive cells undecided with their price. The runs
// are in the simulator's time (runSimTime): the budgets are model seconds, and a loaded machine
// neither stretches the first pass past the tight budget nor blurs the slowdown.
func TestRunAdaptiveFlagsSlowRowWithinBudget(t *testing.T) {
	if testing.Short() {
		t.Skip("measures the simulator three times (about 1 s of CPU)")
	}
	dir := t.TempDir()
	base := filepath.Join(dir, "base.json")
	if _, stderr, err := runSimTime(t, nil, adaptiveSimRun(base)...); err != nil {
		t.Fatalf("base run: %v\n%s", err, stderr)
	}
	// Nine earlier runs of the base (other seeds: runs of their own) are its history, ten runs
	// with the base, store.min_history's default: one base run alone measures no run-to-run
	// noise, and a prior alone never blocks.
	histDir := filepath.Join(dir, "history")
	for i := range 9 {
		p := filepath.Join(histDir, fmt.Sprintf("h%d.json", i))
		if _, stderr, err := runSimTime(t, nil, adaptiveSimRun(p, "--sim-seed", fmt.Sprint(i+2))...); err != nil {
			t.Fatalf("history run: %v\n%s", err, stderr)
		}
	}
	slow := []string{"--sim-slowdown", "decode=1.12@ctx>=24K", "--baseline", base, "--history", histDir}

	head, cmpPath := filepath.Join(dir, "head.json"), filepath.Join(dir, "cmp.json")
	_, stderr, err := runSimTime(t, nil, adaptiveSimRun(head, append(slow, "--budget", "60s", "--compare-out", cmpPath)...)...)
	if !errors.Is(err, ErrRegression) {
		t.Fatalf("run --baseline --budget 60s: err %v, want ErrRegression\n%s", err, stderr)
	}
	c, err := results.ReadComparisonFile(cmpPath)
	if err != nil {
		t.Fatal(err)
	}
	if got := flagged(c); len(got) == 0 || strings.Join(got, " ") != strings.Join(inRow(got, "32K"), " ") {
		t.Errorf("flagged %q, want cells or the row of 32K and nothing else", got)
	}
	g := c.GPUTime
	if g == nil {
		t.Fatal("the comparison records no GPU time")
	}
	// Only the head is rerun: against one base run, cells whose noise the base sets (a prefill
	// cell's single request; decode at C = 1 under the simulator's unpinned speculative decoding)
	// are base-limited, and no head trial decides them. What a rerun can decide (here mostly
	// decode/8K/8's rates, when the first look leaves them open) depends on the draw: with
	// nothing to buy, the job must buy nothing and say why of every undecided cell.
	if g.Reruns == 0 {
		for _, u := range g.Undecided {
			if u.Reason != results.UndecidedNeedsBase && u.Reason != results.UndecidedNoTrials {
				t.Errorf("no rerun measured, yet %s was undecided for %s: a 60 s budget buys it", u.Cell, u.Reason)
			}
		}
		t.Logf("the first look left nothing a head rerun could decide (%d undecided)", len(g.Undecided))
	} else {
		if g.RerunSeconds <= 0 || c.Settings.Look != 2 {
			t.Errorf("%d reruns in %.1f s, look %d: want the second look after the reruns", g.Reruns, g.RerunSeconds, c.Settings.Look)
		}
		readResults(t, filepath.Join(dir, "head.rerun1.json"))
	}
	if g.TotalSeconds > g.BudgetSeconds || g.BudgetSeconds != 60 {
		t.Errorf("spent %.1f s of a %.0f s budget", g.TotalSeconds, g.BudgetSeconds)
	}
	h := readResults(t, head)
	if h.Run.GPUTime == nil || h.Run.GPUTime.TotalSeconds != g.TotalSeconds || h.Run.GPUTime.MeasureSeconds != h.Run.Budget.WallSeconds {
		t.Errorf("results GPU time %+v, comparison's %+v", h.Run.GPUTime, *g)
	}

	// A budget about the first pass's own time buys no rerun: the cells stay undecided, each
	// with its price.
	tight := fmt.Sprintf("%.0fms", 1100*g.MeasureSeconds)
	head2, cmp2 := filepath.Join(dir, "head2.json"), filepath.Join(dir, "cmp2.json")
	_, stderr, err = runSimTime(t, nil, adaptiveSimRun(head2, append(slow, "--budget", tight, "--compare-out", cmp2)...)...)
	if !errors.Is(err, ErrRegression) {
		t.Fatalf("run --budget %s: err %v, want ErrRegression\n%s", tight, err, stderr)
	}
	c2, err := results.ReadComparisonFile(cmp2)
	if err != nil {
		t.Fatal(err)
	}
	g2 := c2.GPUTime
	if g2 == nil || g2.Reruns != 0 || g2.RerunSeconds != 0 {
		t.Fatalf("GPU time %+v: want no rerun within a budget of %s", g2, tight)
	}
	// Every undecided cell says why: over the budget with its price, or base-limited, or no
	// number of trials decides it.
	for _, u := range g2.Undecided {
		switch u.Reason {
		case results.UndecidedOverBudget:
			if u.CostSeconds <= 0 || u.FurtherTrials <= 0 {
				t.Errorf("%s over the budget without its price: %+v", u.Cell, u)
			}
		case results.UndecidedNeedsBase, results.UndecidedNoTrials:
		default:
			t.Errorf("%s undecided for %q", u.Cell, u.Reason)
		}
	}
	if len(g2.Undecided) == 0 {
		t.Errorf("nothing undecided within a budget of %s", tight)
	}
}

// flagged returns the cells and rows a comparison calls a regression or an improvement.
func flagged(c *results.Comparison) []string {
	var out []string
	for _, cell := range c.Cells {
		if cell.Verdict == results.VerdictRegression || cell.Verdict == results.VerdictImprovement {
			out = append(out, cell.Cell)
		}
	}
	for _, r := range c.Rows {
		if r.Verdict == results.VerdictRegression || r.Verdict == results.VerdictImprovement {
			out = append(out, "row/"+r.ContextLabel)
		}
	}
	return out
}

// inRow returns the items of list that are the decode row label or one of its cells.
func inRow(list []string, label string) []string {
	var out []string
	for _, s := range list {
		if s == "row/"+label || strings.HasPrefix(s, "decode/"+label+"/") {
			out = append(out, s)
		}
	}
	return out
}
