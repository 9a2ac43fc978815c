package report

import (
	"strings"
	"testing"

	"github.com/speedmatrix/speedmatrix/results"
)

// TestCommentGPUTimeNeedsBase checks that a cell the stored baseline's runs keep undecided is
// said to need base reruns or paired mode, not that no number of trials decides it.
func TestCommentGPUTimeNeedsBase(t *testing.T) {
	s := commentScenarios(t)["noisy"]
	c := *s.c
	g := &results.GPUTime{MeasureSeconds: 1500, Undecided: []results.UndecidedCost{
		{Cell: "decode/8K/2", Metrics: []results.Metric{results.MetricTotalTokPerS}, Reason: results.UndecidedNeedsBase},
	}}
	g.Sum()
	c.GPUTime = g
	got, err := NewComment(&c, s.x)
	if err != nil {
		t.Fatal(err)
	}
	want := "Head trials alone cannot decide (the baseline's runs are too noisy); they need base reruns or paired mode (`run --paired`): `decode/8K/2` (Total tok/s)."
	if !strings.Contains(got.Body, want) {
		t.Errorf("the comment lacks %q:\n%s", want, got.Body)
	}
	if strings.Contains(got.Body, "No number of further trials") {
		t.Errorf("the comment calls a base-limited cell undecidable by any trials:\n%s", got.Body)
	}
}
