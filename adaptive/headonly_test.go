package adaptive_test

import (
	"context"
	"testing"
	"time"

	"github.com/speedmatrix/speedmatrix/adaptive"
	"github.com/speedmatrix/speedmatrix/calibrate"
	"github.com/speedmatrix/speedmatrix/results"
)

// TestRunAdvisesHeadTrials checks that the job, which measures only the head again, takes
// rerun advice computed for head trials against the stored base (not N trials a side), and
// that cells the base's one run keeps undecided are reported as needing base reruns, with no
// price, instead of being bought.
func TestRunAdvisesHeadTrials(t *testing.T) {
	j, _ := jobOn(t, calibrate.NewMatrix(21, 2), 5, 10*time.Hour, 600, func(d time.Duration) time.Duration { return d })
	out, err := adaptive.Run(context.Background(), j)
	if err != nil {
		t.Fatal(err)
	}
	if out.First.Rerun == nil || !out.First.Rerun.HeadOnly {
		t.Fatalf("first look's advice %+v, want head-only advice", out.First.Rerun)
	}
	needsBase := 0
	for _, u := range out.GPU.Undecided {
		if u.Reason == results.UndecidedNeedsBase {
			needsBase++
			if u.CostSeconds != 0 {
				t.Errorf("%s needs base reruns but is priced %v s", u.Cell, u.CostSeconds)
			}
		}
	}
	if needsBase == 0 {
		t.Errorf("no cell reported as needing base reruns: %+v", out.GPU.Undecided)
	}
	for _, it := range out.Plan.Items {
		for _, u := range out.First.Rerun.Undecidable {
			if u.Cell == it.Cell && u.Reason == results.UndecidableNeedsBase && len(it.Metrics) == 0 {
				t.Errorf("bought %s, which head trials cannot decide", it.Cell)
			}
		}
	}
}
