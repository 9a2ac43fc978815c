package compare

import (
	"testing"

	"github.com/speedmatrix/speedmatrix/results"
)

// TestOverrides checks that a configuration's settings reach the thresholds, and that unset
// ones keep the defaults.
func TestOverrides(t *testing.T) {
	def := DefaultThresholds()
	if got := (Overrides{}).Thresholds(); got.FDR != def.FDR || got.FalseAlarm != def.FalseAlarm || got.MinHistory != def.MinHistory || got.Delta[results.MetricTotalTokPerS] != def.Delta[results.MetricTotalTokPerS] {
		t.Errorf("none set: FDR %g, false alarm %g, min history %d, δ %g; want the defaults", got.FDR, got.FalseAlarm, got.MinHistory, got.Delta[results.MetricTotalTokPerS])
	}
	o := Overrides{FDR: 0.1, FalseAlarm: 0.02, Delta: map[string]float64{string(results.MetricTTFT): 0.08, string(results.MetricTBT): 0}, MinHistory: 7}
	got := o.Thresholds()
	if got.FDR != 0.1 || got.FalseAlarm != 0.02 || got.Delta[results.MetricTTFT] != 0.08 || got.MinHistory != 7 {
		t.Errorf("got FDR %g, false alarm %g, TTFT δ %g, min history %d; want 0.1, 0.02, 0.08, 7", got.FDR, got.FalseAlarm, got.Delta[results.MetricTTFT], got.MinHistory)
	}
	if got.Delta[results.MetricTBT] != def.Delta[results.MetricTBT] || got.Delta[results.MetricTotalTokPerS] != def.Delta[results.MetricTotalTokPerS] {
		t.Errorf("TBT δ %g (set to 0), total δ %g (not set); want the defaults", got.Delta[results.MetricTBT], got.Delta[results.MetricTotalTokPerS])
	}
	if DefaultThresholds().Delta[results.MetricTTFT] == 0.08 {
		t.Error("the configuration's δ leaked into the defaults")
	}
}
