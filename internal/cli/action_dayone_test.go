package cli

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/speedmatrix/speedmatrix/results"
)

// TestActionDayOnePaired is the first pull request of a repository after its first baseline,
// through the split workflow as example-gpu.yml runs it: with the defaults (paired.mode auto,
// store.min_history 10) and one stored default-branch result, the decide job says paired, the
// measure job (no token) measures base and head alternately, only the cells the budget
// affords (in PairedCellOrder's order, the anti-diagonal first), and the report job compares
// them. An
// unchanged engine (A/A) gets its cells decided unchanged and a passing check; a head 10 %
// slower in decode is blocked, or not proven with the command that decides it. The check says
// which cells were chosen, by what rule, and the GPU time against the budget.
func TestActionDayOnePaired(t *testing.T) {
	if testing.Short() {
		t.Skip("two paired runs of the simulator")
	}
	for _, tc := range []struct {
		name, head string // head: the head simulator's slowdown (sim.head_slowdown)
		wantFail   bool
	}{
		{name: "A/A", head: ""},
		{name: "decode 10 % slower", head: "decode=1.111", wantFail: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newStoreEnv(t, 0)
			e.simTime = true
			extra := ", noise: 0.002"
			if tc.head != "" {
				extra += ", head_slowdown: '" + tc.head + "'"
			}
			// Four decode cells in two context rows; the budget (in the profile's time, as the
			// plan prices the cells) affords two of them at 4 blocks a side.
			// One-second windows at 40× are 40 s of the profile's time, the budget's. Six blocks
			// a side: with four (paired.blocks' default) and two cells, each cell's paired test
			// has 2 degrees of freedom, and the 10 % slowdown, its 95 % interval wholly beyond
			// δ, reads inconclusive (not significant among the matrix's tests), which passes
			// until an interval beyond δ blocks or is not proven (issue 33, item 2).
			cfg := strings.Replace(simConfig(extra), "cells: [decode/8K/8]", "cells: [decode/8K/1, decode/8K/8, decode/16K/1, decode/16K/8]", 1) +
				"store: {dir: " + filepath.Join(e.dir, "store") + "}\nbudget: 18m\npaired: {blocks: 6}\n"
			e.writeConfig(cfg)
			e.put(prBase) // the first baseline
			e.event("pull_request", payload(t, "pull_request/opened.payload.json"))
			token := e.vars["INPUT_TOKEN"]
			e.vars["INPUT_MODE"] = "decide"
			decide := mustRun(t, e.actEnv)
			wantOutputs(t, decide, map[string]string{"run": "true", "paired": "true", "sha": prHead, "base-sha": prBase})
			delete(e.vars, "INPUT_TOKEN")
			e.vars["INPUT_MODE"], e.vars["INPUT_SHA"], e.vars["INPUT_BASE-SHA"], e.vars["INPUT_PR"], e.vars["INPUT_PAIRED"] = "measure", decide["sha"], decide["base-sha"], decide["pr"], decide["paired"]
			mustRun(t, e.actEnv)
			head, base := pairedArtifacts(t, e.actEnv)
			if head == nil || base.Engine.Commit != prBase {
				t.Fatalf("the measure job left no paired run of the base %s", prBase)
			}
			var got []string
			for i := range head.Decode {
				got = append(got, head.Decode[i].ID().String())
			}
			if got := strings.Join(got, ","); got != "decode/8K/8,decode/16K/1" {
				// Round 0, the anti-diagonal; round 1 does not fit.
				t.Errorf("the paired run measured %s, want the budget's choice: decode/8K/8,decode/16K/1", got)
			}
			e.vars["INPUT_TOKEN"], e.vars["INPUT_MODE"] = token, "report"
			delete(e.vars, "INPUT_PAIRED")
			report := mustRun(t, e.actEnv)
			cmp, err := results.ReadComparisonFile(report["comparison"])
			if err != nil {
				t.Fatal(err)
			}
			st := e.srv.State()
			cr := oneCheck(t, st, prHead)
			body := oneComment(t, st)
			if cmp.Settings.Pairing == nil || len(cmp.Cells) != 2 {
				t.Fatalf("comparison pairing %+v over %d cells: want the paired run's 2 cells", cmp.Settings.Pairing, len(cmp.Cells))
			}
			for _, want := range []string{
				"2 of the matrix's 4 cells fit the budget 18 min: ≈ 18 min (0 min of builds and model loads, 2 sides × 6 blocks × 1.5 min)",
				"chosen by rounds of a Latin square over contexts and concurrencies, the anti-diagonal first (docs/paired.md)",
				"every context and every concurrency has a cell", "GPU time: head ", " budget.",
			} {
				if !strings.Contains(cr.Summary, want) || !strings.Contains(body, want) {
					t.Errorf("the check's summary or the comment does not say %q:\n%s", want, cr.Summary)
				}
			}
			if g := cmp.GPUTime; g == nil || g.BudgetSeconds <= 0 || g.TotalSeconds <= 0 || g.TotalSeconds > g.BudgetSeconds {
				t.Errorf("comparison GPU time %+v: want both sides' together, within the budget", cmp.GPUTime)
			}
			if !tc.wantFail {
				if cr.Conclusion != "success" {
					t.Errorf("A/A: check %s, want success:\n%s", cr.Conclusion, cr.Summary)
				}
				for _, c := range cmp.Cells {
					if c.Verdict != results.VerdictUnchanged {
						t.Errorf("A/A: %s %s, want unchanged", c.Cell, c.Verdict)
					}
				}
				return
			}
			if cr.Conclusion != "failure" {
				t.Errorf("a 10 %% slowdown: check %s, want failure:\n%s", cr.Conclusion, cr.Summary)
			}
			decided := false
			for _, c := range cmp.Cells {
				decided = decided || c.Verdict == results.VerdictRegression
			}
			if !decided && !strings.Contains(body, "/bench") {
				t.Errorf("a 10 %% slowdown not blocked (%s) and no deciding command in the comment:\n%s", cmp.Verdict, body)
			}
		})
	}
}
