package cli

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/speedmatrix/speedmatrix/results"
)

// TestActionBudgetReportsGPUTime runs a trusted PR with a budget in speedmatrix.yaml: the bot
// compares through the budgeted path, and the comparison, the head's results and the comment
// state the GPU time against the budget. The simulator runs 40× faster than its profile, so the
// job spends the budget, given in the GPU's time, in the profile's time: a fortieth of it on the
// wall clock, and the comment, in the profile's time, shows the budget configured.
func TestActionBudgetReportsGPUTime(t *testing.T) {
	e := newActEnv(t)
	e.writeConfig(actionConfig("") + "budget: 10m\n")
	e.storeBaseline(prBase)
	e.event("pull_request", payload(t, "pull_request/opened.payload.json"))
	out, stderr, err := e.run(context.Background())
	if err != nil {
		t.Fatalf("run: %v\n%s", err, stderr)
	}
	c, err := results.ReadComparisonFile(out["comparison"])
	if err != nil {
		t.Fatal(err)
	}
	g := c.GPUTime
	if g == nil || g.BudgetSeconds != 600.0/40 || g.MeasureSeconds <= 0 {
		t.Fatalf("comparison GPU time %+v, want a 600 s budget recorded as 15 s of the wall clock at ×40, and the measurement", g)
	}
	h := readResults(t, filepath.Join(e.dir, "artifact", "results.json"))
	if h.Run.GPUTime == nil || h.Run.GPUTime.TotalSeconds != g.TotalSeconds {
		t.Errorf("results GPU time %+v, comparison's %+v", h.Run.GPUTime, *g)
	}
	comments := botComments(e.srv.State())
	if len(comments) != 1 || !strings.Contains(comments[0].Body, "<summary>GPU time: ") || !strings.Contains(comments[0].Body, " of a 10m0s budget: measurement ") {
		t.Errorf("the comment does not state the GPU time against the budget:\n%v", comments)
	}
}

// TestActionBudgetFirstPassOver: a budget the first pass alone spends (issue 35: the first pass
// ran however long it took, and only reruns were held to the budget) is said in the comparison,
// the comment and the check: the first pass's GPU time against the budget, the plan's estimate,
// and that nothing was left to confirm or rerun; a budget the first pass leaves some of says
// nothing of the kind.
func TestActionBudgetFirstPassOver(t *testing.T) {
	for _, tc := range []struct {
		budget string
		over   bool
	}{{"1s", true}, {"10m", false}} {
		t.Run(tc.budget, func(t *testing.T) {
			e := newActEnv(t)
			e.writeConfig(actionConfig("") + "budget: " + tc.budget + "\n")
			e.storeBaseline(prBase)
			e.event("pull_request", payload(t, "pull_request/opened.payload.json"))
			out, stderr, err := e.run(context.Background())
			if err != nil {
				t.Fatalf("run: %v\n%s", err, stderr)
			}
			c, err := results.ReadComparisonFile(out["comparison"])
			if err != nil {
				t.Fatal(err)
			}
			const want = "budget: nothing was left to confirm or rerun undecided cells. `speedmatrix validate` states the first pass against the budget"
			w := strings.Join(c.Warnings, "\n")
			if got := strings.Contains(w, want) && strings.Contains(w, "The first pass (build, model load and measurement) took ") && strings.Contains(w, "(the plan expected "); got != tc.over {
				t.Errorf("budget %s: warnings %q; want the first pass over the budget said: %v", tc.budget, c.Warnings, tc.over)
			}
			comments := botComments(e.srv.State())
			if tc.over && (len(comments) != 1 || !strings.Contains(comments[0].Body, "nothing was left to confirm or rerun")) {
				t.Errorf("the comment does not say the first pass spent the budget:\n%v", comments)
			}
		})
	}
}
