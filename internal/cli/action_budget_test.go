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
// state the GPU time against the budget.
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
	if g == nil || g.BudgetSeconds != 600 || g.MeasureSeconds <= 0 || g.TotalSeconds > 600 {
		t.Fatalf("comparison GPU time %+v, want the measurement within a 600 s budget", g)
	}
	h := readResults(t, filepath.Join(e.dir, "artifact", "results.json"))
	if h.Run.GPUTime == nil || h.Run.GPUTime.TotalSeconds != g.TotalSeconds {
		t.Errorf("results GPU time %+v, comparison's %+v", h.Run.GPUTime, *g)
	}
	comments := botComments(e.srv.State())
	if len(comments) != 1 || !strings.Contains(comments[0].Body, "<summary>GPU time: ") || !strings.Contains(comments[0].Body, " budget: measurement ") {
		t.Errorf("the comment does not state the GPU time against the budget:\n%v", comments)
	}
}
