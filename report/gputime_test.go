package report

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/speedmatrix/speedmatrix/results"
)

// testGPUTime is the GPU time of a budgeted job that ran out of budget.
func testGPUTime() *results.GPUTime {
	g := &results.GPUTime{BudgetSeconds: 2700, BuildSeconds: 182, LoadSeconds: 250, MeasureSeconds: 1500, RerunSeconds: 700, Reruns: 3,
		Undecided: []results.UndecidedCost{
			{Cell: "decode/8K/1", Metrics: []results.Metric{results.MetricTotalTokPerS, results.MetricTBT}, FurtherTrials: 4, CostSeconds: 250, Reason: results.UndecidedOverBudget},
			{Cell: "decode/128K/1,decode/128K/2", Row: "128K", Metrics: results.Metrics(results.PhaseDecode), FurtherTrials: 3, CostSeconds: 1210, Reason: results.UndecidedOverBudget},
			{Cell: "decode/32K/2", Metrics: []results.Metric{results.MetricTTFT}, Reason: results.UndecidedSecondLook},
			{Cell: "prefill/8K", Metrics: []results.Metric{results.MetricPromptTokPerS}, Reason: results.UndecidedNoTrials},
		}}
	g.Sum()
	return g
}

// TestCommentGPUTime checks that the comment, the check run's summary and the job summary state
// the GPU time by phase against the budget, and the undecided cells with the cost to decide
// them; the comment is pinned by comment-budget.golden.
func TestCommentGPUTime(t *testing.T) {
	s := commentScenarios(t)["noisy"]
	c := *s.c
	c.GPUTime = testGPUTime()
	got, err := NewComment(&c, s.x)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, filepath.Join("testdata", "comment-budget.golden"), []byte(got.Body))
	for name, text := range map[string]string{"body": got.Body, "check summary": got.Summary, "job summary": got.StepSummary} {
		for _, want := range []string{
			"43m52s of a 45m0s budget: build 3m2s, load 4m10s, measurement 25m0s, reruns 11m40s (3)",
			"| `decode/8K/1` | Total tok/s, Time between tokens | 4 | 4m10s |",
			"| row 128K (`decode/128K/1,decode/128K/2`) |",
			"about 24m20s more",
			"`decode/32K/2` (TTFT)",
			"`prefill/8K` (Prompt tok/s)",
		} {
			if !strings.Contains(text, want) {
				t.Errorf("%s lacks %q", name, want)
			}
		}
	}
}

// TestCommentGPUTimeNoBaseline checks that a comment without a comparison still states the GPU
// time the head's job spent, from its results file.
func TestCommentGPUTimeNoBaseline(t *testing.T) {
	s := commentScenarios(t)["nobaseline"]
	h := *s.head
	h.Run.GPUTime = &results.GPUTime{MeasureSeconds: 95}
	h.Run.GPUTime.Sum()
	s.x.Head = &h
	got, err := NewComment(nil, s.x)
	if err != nil {
		t.Fatal(err)
	}
	if want := "<details><summary>GPU time: 1m35s</summary>\n\n1m35s: measurement 1m35s."; !strings.Contains(got.Body, want) {
		t.Errorf("the comment lacks %q:\n%s", want, got.Body)
	}
}
