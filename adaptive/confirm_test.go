package adaptive_test

import (
	"context"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/speedmatrix/speedmatrix/adaptive"
	"github.com/speedmatrix/speedmatrix/calibrate"
	"github.com/speedmatrix/speedmatrix/compare"
	"github.com/speedmatrix/speedmatrix/results"
)

// TestConfirmBlock checks the confirmation of a block inside the measuring job: the cells the
// first look finds regressed are measured again first (before any other rerun), priced and
// counted in the GPU time, and the verdict is the second look's on the pooled trials; without
// Confirm, or without the budget for it, nothing is measured for the block and the comparison
// says why.
func TestConfirmBlock(t *testing.T) {
	slow := &calibrate.Slowdown{ContextLabel: "64K", RateFactor: 0.8, TTFTFactor: 1.25}
	for _, tc := range []struct {
		name        string
		confirm     bool
		budget      time.Duration
		wantMeasure bool
		wantWarning string
	}{
		{"confirmed within the budget", true, 10 * time.Hour, true, "measured again in this job"},
		{"over the budget", true, 11 * time.Minute, false, "was not confirmed"},
		{"off", false, 10 * time.Hour, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := calibrate.NewMatrix(5, 1)
			r := rand.New(rand.NewPCG(5, 5))
			base, head := m.Run(r, "base", nil), m.Run(r, "head", slow)
			var hist []*results.File
			for i := range 10 {
				hist = append(hist, m.Run(r, "history-"+string(rune('a'+i)), nil))
			}
			var measured [][]string
			j := adaptive.Job{
				Compare:    compare.Input{Base: []*results.File{base}, Head: []*results.File{head}, History: hist, BasePath: "base", HeadPath: "head"},
				Thresholds: compare.DefaultThresholds(),
				Budget:     tc.budget,
				GPU:        results.GPUTime{MeasureSeconds: 600},
				Cost:       func(cell string, trials int) time.Duration { return time.Duration(trials) * time.Minute },
				Confirm:    tc.confirm,
				Measure: func(ctx context.Context, cells []string, trials int) (*results.File, error) {
					measured = append(measured, slices.Clone(cells))
					var ids []results.CellID
					for _, c := range cells {
						id, err := results.ParseCellID(c)
						if err != nil {
							t.Fatal(err)
						}
						ids = append(ids, id)
					}
					return m.RunCells(r, "rerun", slow, ids), nil
				},
			}
			out, err := adaptive.Run(context.Background(), j)
			if err != nil {
				t.Fatal(err)
			}
			var blocked []string
			for _, c := range out.First.Cells {
				if c.Verdict == results.VerdictRegression {
					blocked = append(blocked, c.Cell)
				}
			}
			if len(blocked) == 0 {
				t.Fatal("the first look blocks nothing: the test's slowdown is too small")
			}
			confirmed := len(measured) > 0 && slices.Equal(measured[0], blocked)
			if confirmed != tc.wantMeasure {
				t.Fatalf("measured %v first, want the blocked cells %v: %v", measured, blocked, tc.wantMeasure)
			}
			if tc.wantMeasure {
				if out.GPU.Reruns < 1 || out.GPU.RerunSeconds < 0 || out.Final.Settings.Look != 2 {
					t.Errorf("GPU %+v, look %d: want the confirmation counted and the second look", out.GPU, out.Final.Settings.Look)
				}
				if out.Final.Verdict != results.VerdictRegression {
					t.Errorf("a real 20 %% slowdown confirmed is %s, want regression", out.Final.Verdict)
				}
			}
			var said bool
			for _, w := range out.Final.Warnings {
				said = said || (tc.wantWarning != "" && strings.Contains(w, tc.wantWarning))
			}
			if said != (tc.wantWarning != "") {
				t.Errorf("warnings %q, want one saying %q", out.Final.Warnings, tc.wantWarning)
			}
		})
	}
}
