package compare_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/speedmatrix/speedmatrix/calibrate"
	"github.com/speedmatrix/speedmatrix/compare"
	"github.com/speedmatrix/speedmatrix/results"
)

// exitOf returns compare's exit status for c.
func exitOf(c *results.Comparison) int { return int(results.OutcomeOf(c.Verdict).Exit) }

// TestLoneWindowsTheHistoryShows: under stalls that hold a whole window (a stalled request,
// a GC pause: 1–3 decode windows a run 15–30 % slower, half of them throughout the window), a
// head run whose stalled windows are no slower than those the ten history runs show is not
// blocked nor left unproven: the history shows this machine does it, and a cell's interval
// holds it (excursion.go). Before, 22 of 40 such A/A comparisons were unproven and 1 blocked.
// Rows slowed by 10 % are still found (at least 90 %).
func TestLoneWindowsTheHistoryShows(t *testing.T) {
	const n = 40
	aa, found := 0, 0
	for seed := range uint64(n) {
		if c := worldCase(t, calibrate.WorldStall, seed, "", 1); exitOf(c) != 0 {
			aa++
			t.Logf("A/A seed %d: %s %s", seed, c.Verdict, c.VerdictReason)
		}
		if c := worldCase(t, calibrate.WorldStall, seed, calibrate.ShapeRowsFrom32K, 1); exitOf(c) == 3 {
			found++
		}
	}
	if aa > 2 {
		t.Errorf("stalled windows: %d of %d A/A comparisons blocked or unproven, want at most 2", aa, n)
	}
	if found < n-2 {
		t.Errorf("stalled windows: rows ≥ 32K 10 %% slower found in %d of %d, want at least %d (90 %%)", found, n, n-2)
	}
}

// TestStretchOfTheRun: a throttle that begins a few cells before the head run's end slows
// only the cells measured last, too few for the step test along the order, and a step found a
// place or two off leaves the cells beside it uncorrected; those cells, consecutive in a
// shuffled measuring order and nothing else slower, are unproven (measure them again), never a
// regression (stretch.go). The seeds are throttled A/A comparisons that blocked before (3 of
// the 6 of 800 that blocked; the other 3 are scattered over the run); rows slowed by 10 % are
// still found.
func TestStretchOfTheRun(t *testing.T) {
	for _, seed := range []uint64{357, 400, 498} {
		c := worldCase(t, calibrate.WorldThrottle, seed, "", 1)
		if c.Verdict != results.VerdictUnproven || !strings.Contains(c.VerdictReason, "one after another in one stretch of the head's run") {
			t.Errorf("throttled A/A seed %d: %s (%q), want unproven for a stretch of the run", seed, c.Verdict, c.VerdictReason)
		}
	}
	found := 0
	for seed := range uint64(20) {
		if c := worldCase(t, calibrate.WorldThrottle, seed, calibrate.ShapeRowsFrom32K, 1); exitOf(c) == 3 {
			found++
		}
	}
	if found != 20 {
		t.Errorf("throttled runs: rows ≥ 32K 10 %% slower found in %d of 20, want all", found)
	}
}

// TestHeadRunsShareOneShift: three head runs of a server whose every decode cell is 5 %
// slower (δ itself), under speculative-decoding noise (10–20 % at one or two requests, no run
// factor), against three base runs: the one shift between the sides is chosen once, on the
// head side's consensus, so the three head runs are not read some as a slower run and some as
// changed cells (which spread their factors and passed 10 % of such heads). None passes.
func TestHeadRunsShareOneShift(t *testing.T) {
	passed := 0
	const n = 40
	for seed := range uint64(n) {
		m := calibrate.NewMatrix(700+seed, 1)
		r := rand.New(rand.NewPCG(seed, 13))
		var in compare.Input
		for k := range 3 {
			in.Base = append(in.Base, m.WorldRun(r, calibrate.WorldSpec, fmt.Sprintf("base-%d", k+1), 1, ""))
			in.Head = append(in.Head, m.WorldRun(r, calibrate.WorldSpec, fmt.Sprintf("head-%d", k+1), 1, calibrate.ShapeDecode5))
		}
		c, err := compare.Compare(in, compare.DefaultThresholds())
		if err != nil {
			t.Fatal(err)
		}
		if exitOf(c) == 0 {
			passed++
			t.Logf("seed %d passed: %s", seed, c.Verdict)
		}
	}
	if passed > 0 {
		t.Errorf("every decode cell 5 %% slower, three runs a side: %d of %d passed, want none", passed, n)
	}
}

// TestPairedUniformSlowdown: one paired run (four ABBA pairs, each block its own server run)
// of a server whose every decode cell is 5 % slower: under speculative-decoding noise the
// pairs' common log-ratio is chosen once on their consensus (a pair no longer reads the
// slowdown as its runs' while another reads it as changed cells), and under run drift the
// decode shift is also tested net of the prefill's over the pairs (pairedCovariate: each
// pair's runs differ by a factor of the machine that moves both phases). None passes; before,
// 10 % (speculative decoding) and 12 % (drift) of 300 passed.
func TestPairedUniformSlowdown(t *testing.T) {
	const n = 30
	for _, w := range []calibrate.WorldModel{calibrate.WorldSpec, calibrate.WorldDrift} {
		passed := 0
		for seed := range uint64(n) {
			m := calibrate.NewMatrix(900+seed, 1)
			r := rand.New(rand.NewPCG(seed, 17))
			base, head := m.WorldPaired(r, w, "paired", calibrate.ShapeDecode5)
			c, err := compare.Compare(compare.Input{Base: []*results.File{base}, Head: []*results.File{head}}, compare.DefaultThresholds())
			if err != nil {
				t.Fatal(err)
			}
			if exitOf(c) == 0 {
				passed++
				t.Logf("%s seed %d passed: %s", w, seed, c.Verdict)
			}
		}
		if passed > 0 {
			t.Errorf("%s: every decode cell 5 %% slower, one paired run: %d of %d passed, want none", w, passed, n)
		}
	}
}

// TestASpeedTheHistoryShows: a machine with two speeds (a kernel pick one run in five gets,
// every cell 6 % slower). A lone head run at the slower speed, against ten history runs of
// which one met it, is the machine's, not the change's: the shift test refers it to those runs
// as well (runsSeen), so the A/A comparison passes and says why. Against a history that never
// met that speed it stays unproven (nothing shows the machine does it), and a decode-only 5 %
// slowdown is never passed, whatever speed the head's run got (the decode shift net of the
// prefill's). Before, none of 20 of the first passed (the shift test referred a 6 % shift to a
// normal spread of the runs' factors, about 2 %, which a machine with two speeds does not follow).
func TestASpeedTheHistoryShows(t *testing.T) {
	const n = 20
	run := func(seed uint64, slowHist int, headFactor float64, shape calibrate.Shape) *results.Comparison {
		t.Helper()
		m := calibrate.NewMatrix(1100+seed, 1)
		r := rand.New(rand.NewPCG(seed, 19))
		var hist []*results.File
		for i := range 10 {
			f := 1.0
			if i < slowHist {
				f = 0.94
			}
			hist = append(hist, m.WorldRunAt(r, calibrate.WorldBimodal, fmt.Sprintf("hist-%d", i+1), 1, "", f))
		}
		base := m.WorldRunAt(r, calibrate.WorldBimodal, "base", 1, "", 1)
		head := m.WorldRunAt(r, calibrate.WorldBimodal, "head", 1, shape, headFactor)
		c, err := compare.Compare(compare.Input{Base: []*results.File{base}, Head: []*results.File{head}, History: hist}, compare.DefaultThresholds())
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	var seenPass, unseenPass, decode5Pass int
	for seed := range uint64(n) {
		c := run(seed, 1, 0.94, "")
		if exitOf(c) == 0 {
			seenPass++
			said := false
			for _, g := range c.Groups {
				said = said || (g.Kind == results.GroupShift && strings.Contains(g.Reason, "of the base side's 11 runs was as slow"))
			}
			if !said {
				t.Errorf("seed %d: passed without saying that the history's runs were as slow", seed)
			}
		} else {
			t.Logf("seed %d, slow head, one slow history run: %s %s", seed, c.Verdict, c.VerdictReason)
		}
		if exitOf(run(seed, 0, 0.94, "")) == 0 {
			unseenPass++
		}
		for _, f := range []float64{1, 0.94} {
			if c := run(seed, 1, f, calibrate.ShapeDecode5); exitOf(c) == 0 {
				decode5Pass++
				t.Logf("seed %d, head factor %.2f: decode 5 %% slower passed: %s", seed, f, c.Verdict)
			}
		}
	}
	if seenPass < n-2 {
		t.Errorf("a slow head run the history met once: %d of %d passed, want at least %d", seenPass, n, n-2)
	}
	if unseenPass > 2 {
		t.Errorf("a slow head run the history never met: %d of %d passed, want at most 2 (unproven: nothing shows the machine does it)", unseenPass, n)
	}
	if decode5Pass > 0 {
		t.Errorf("every decode cell 5 %% slower: %d of %d passed, want none", decode5Pass, 2*n)
	}
}

// TestPrefillFasterIsNotASlowerDecode: a change that makes prefill 5 % faster and leaves
// decode alone, under run drift (each run's factor moves both phases), with ten history runs,
// three runs a side and one paired run. The decode shift net of the prefill's run factor
// (covariate.go) took the code's prefill for the run's and read it as a decode 5 % slower:
// 21 of 30 such comparisons with history were blocked as decode regressions. One run cannot
// tell a prefill the code sped up from a run that was faster at both phases and a decode the
// code slowed, so the net test now suspects and never blocks: none is blocked, and an
// unproven one says that the prefill may have moved with the code and what decides it.
func TestPrefillFasterIsNotASlowerDecode(t *testing.T) {
	const n = 30
	for _, proc := range []string{"history", "runs3", "paired"} {
		blocked, undecided := 0, 0
		for seed := range uint64(n) {
			m := calibrate.NewMatrix(3000+seed, 1)
			r := rand.New(rand.NewPCG(seed, 23))
			var in compare.Input
			switch proc {
			case "history":
				in.Base = []*results.File{m.WorldRun(r, calibrate.WorldDrift, "base", 1, "")}
				in.Head = []*results.File{m.WorldRun(r, calibrate.WorldDrift, "head", 1, "")}
				for j := range 10 {
					in.History = append(in.History, m.WorldRun(r, calibrate.WorldDrift, fmt.Sprintf("hist-%d", j+1), 1, ""))
				}
			case "runs3":
				for j := range 3 {
					in.Base = append(in.Base, m.WorldRun(r, calibrate.WorldDrift, fmt.Sprintf("base-%d", j+1), 1, ""))
					in.Head = append(in.Head, m.WorldRun(r, calibrate.WorldDrift, fmt.Sprintf("head-%d", j+1), 1, ""))
				}
			case "paired":
				base, head := m.WorldPaired(r, calibrate.WorldDrift, "paired", "")
				in.Base, in.Head = []*results.File{base}, []*results.File{head}
			}
			for _, h := range in.Head {
				calibrate.ScalePrefill(h, func(results.CellID) float64 { return 1.05 })
			}
			c, err := compare.Compare(in, compare.DefaultThresholds())
			if err != nil {
				t.Fatal(err)
			}
			switch exitOf(c) {
			case 3:
				blocked++
				t.Logf("%s seed %d blocked: %s", proc, seed, c.VerdictReason)
			case 4:
				undecided++
				said := false
				for _, g := range c.Groups {
					said = said || (g.Verdict == results.VerdictUnproven && strings.Contains(g.Reason, "the prefill may have moved with the code") && strings.Contains(g.Reason, "paired run"))
				}
				if !said && proc != "paired" {
					t.Errorf("%s seed %d: unproven without saying that the prefill may have moved with the code: %s", proc, seed, c.VerdictReason)
				}
			}
		}
		t.Logf("%s: %d of %d unproven", proc, undecided, n)
		if blocked > 0 {
			t.Errorf("%s: prefill 5 %% faster, decode unchanged: %d of %d blocked, want none", proc, blocked, n)
		}
	}
}
