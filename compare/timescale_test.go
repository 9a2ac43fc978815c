package compare_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/speedmatrix/speedmatrix/compare"
	"github.com/speedmatrix/speedmatrix/results"
)

// simulated returns f as measured against the built-in simulator at speedup.
func simulated(f *results.File, speedup float64) *results.File {
	f.Run.Settings = &results.Settings{Simulator: &results.SimulatorSettings{Profile: "p", Speedup: speedup}}
	return f
}

// TestTimeScaleCarriedAndChecked: the comparison carries each side's time scale, and sides
// measured at different simulator speeds (or a simulator against a real server) are different
// setups: refused without --force, a warning with it.
func TestTimeScaleCarriedAndChecked(t *testing.T) {
	base := simulated(summaryFile("m", map[int]float64{1: 3000}, nil), 20)
	head := simulated(summaryFile("m", map[int]float64{1: 3000}, nil), 20)
	c, err := compare.Compare(compare.Input{Base: []*results.File{base}, Head: []*results.File{head}}, compare.DefaultThresholds())
	if err != nil {
		t.Fatal(err)
	}
	if c.Base.TimeScale != 20 || c.Head.TimeScale != 20 {
		t.Errorf("time scales base %v head %v, want 20 and 20", c.Base.TimeScale, c.Head.TimeScale)
	}
	real := summaryFile("m", map[int]float64{1: 150}, nil)
	if c, err := compare.Compare(compare.Input{Base: []*results.File{real}, Head: []*results.File{real}}, compare.DefaultThresholds()); err != nil || c.Base.TimeScale != 0 {
		t.Errorf("real server: time scale %v (err %v), want it absent", c.Base.TimeScale, err)
	}

	for _, other := range []*results.File{simulated(summaryFile("m", map[int]float64{1: 1500}, nil), 10), real} {
		_, err = compare.Compare(compare.Input{Base: []*results.File{base}, Head: []*results.File{other}}, compare.DefaultThresholds())
		var me *compare.MismatchError
		if !errors.As(err, &me) || !strings.Contains(err.Error(), "time scale") {
			t.Errorf("head at %g×: err = %v, want a MismatchError naming the time scale", other.TimeScale(), err)
		}
		c, err = compare.Compare(compare.Input{Base: []*results.File{base}, Head: []*results.File{other}, Force: true}, compare.DefaultThresholds())
		if err != nil || len(c.Warnings) == 0 || !strings.Contains(c.Warnings[0], "time scale") {
			t.Errorf("forced: err %v, warnings %q", err, c.Warnings)
		}
	}
}
