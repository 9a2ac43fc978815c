package compare

import (
	"testing"

	"github.com/speedmatrix/speedmatrix/results"
)

// TestScatterIsNotAnotherReading: an unchanged engine's one run on a loaded machine (bot_flow, the
// quick matrix at 10×) whose precise cells scattered by ±3 % around a history that agreed to
// 0.4 %, while its single-request cells (noise 4–14 %) fit any factor: the run is read as it
// is, with no other factor to test its cells against (before, "+1.5 % rather than −0.5 %", and
// decode 8K × 32's −3.2 % was unproven, so blocked). Cells that move as a group still give the
// other reading: TestAmbiguousRunDoesNotPass.
func TestScatterIsNotAnotherReading(t *testing.T) {
	cells := []results.CellID{
		{Phase: results.PhaseDecode, ContextLabel: "8K", Concurrency: 1}, {Phase: results.PhaseDecode, ContextLabel: "8K", Concurrency: 8},
		{Phase: results.PhaseDecode, ContextLabel: "8K", Concurrency: 32}, {Phase: results.PhaseDecode, ContextLabel: "32K", Concurrency: 1},
		{Phase: results.PhaseDecode, ContextLabel: "32K", Concurrency: 8}, {Phase: results.PhaseDecode, ContextLabel: "32K", Concurrency: 32},
	}
	moved := []float64{0.005, -0.019, -0.032, -0.022, -0.003, 0.021} // the head's cells against the pooled base
	noise := []float64{0.039, 0.010, 0.0039, 0.014, 0.0041, 0.0059}  // each cell's own, from the base side's runs
	run := map[results.CellID]float64{}
	ref, w := make([]float64, len(cells)), make([]float64, len(cells))
	for i, id := range cells {
		run[id] = moved[i]
		w[i] = 1 / (noise[i] * noise[i])
	}
	best, alt := headShift(run, cells, ref, noise, w, defaultRunCV)
	if alt != best {
		t.Errorf("the run's factor %+.2f %%, and another reading %+.2f %%: scatter read as a second factor", 100*best, 100*alt)
	}
}
