package compare_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/speedmatrix/speedmatrix/calibrate"
	"github.com/speedmatrix/speedmatrix/compare"
	"github.com/speedmatrix/speedmatrix/results"
)

// TestSlowerRunOverQuietHistory checks that an unchanged head whose one run met the bimodal
// model's slower kernel pick (every cell 6 % slower) is not blocked when the history's runs
// happened all to be of the usual kind: the head's factor is chosen against at least the
// run-to-run spread GPUs show (2 %), not against the quiet history's, which made a shift of the
// whole run dearer than calling every cell changed, so that whole rows were flagged (16 of 1000
// budgeted A/A comparisons under bimodal noise, 1.6 %).
func TestSlowerRunOverQuietHistory(t *testing.T) {
	th := compare.DefaultThresholds()
	blocked := 0
	const n = 20
	for seed := range uint64(n) {
		m := calibrate.NewMatrix(100+seed, 1)
		r := rand.New(rand.NewPCG(seed, 7))
		var hist []*results.File
		for i := range 10 {
			hist = append(hist, m.WorldRunAt(r, calibrate.WorldBimodal, fmt.Sprintf("hist-%d", i+1), 1, "", 1))
		}
		base := m.WorldRunAt(r, calibrate.WorldBimodal, "base", 1, "", 1)
		head := m.WorldRunAt(r, calibrate.WorldBimodal, "head", 1, "", 0.94)
		c, err := compare.Compare(compare.Input{Base: []*results.File{base}, Head: []*results.File{head}, History: hist}, th)
		if err != nil {
			t.Fatal(err)
		}
		var shift *results.GroupComparison
		for i := range c.Groups {
			if g := &c.Groups[i]; g.Kind == results.GroupShift && g.Phase == results.PhaseDecode {
				shift = g
			}
		}
		if shift == nil || shift.Change > -0.04 || shift.Change < -0.08 {
			t.Errorf("seed %d: decode shift %+v, want the run's −6 %% read as its shift", seed, shift)
		}
		// A cell's own noise may still block now and then (the calibrated rate); whole rows,
		// columns or the shift must not.
		var groups []string
		for _, g := range c.Groups {
			if g.Verdict == results.VerdictRegression {
				groups = append(groups, fmt.Sprintf("%s %s %s %+.1f %% (z %.1f)", g.Kind, g.Phase, g.ContextLabel, 100*g.Change, g.Z))
			}
		}
		if len(groups) > 0 {
			blocked++
			t.Logf("seed %d: %q", seed, groups)
		}
	}
	if blocked > 0 {
		t.Errorf("%d of %d unchanged heads of a slower run had groups flagged over a quiet history, want none", blocked, n)
	}
}
