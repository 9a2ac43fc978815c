package config

import (
	"testing"

	"github.com/speedmatrix/speedmatrix/compare"
	"github.com/speedmatrix/speedmatrix/results"
)

// TestThresholds checks that the configuration's compare and store keys reach compare's
// thresholds, and that unset keys keep compare's defaults.
func TestThresholds(t *testing.T) {
	def := compare.DefaultThresholds()
	if got := Default().Thresholds(); got.FDR != def.FDR || got.FalseAlarm != def.FalseAlarm || got.Delta[results.MetricTotalTokPerS] != def.Delta[results.MetricTotalTokPerS] {
		t.Errorf("defaults: FDR %g, false alarm %g, δ %g; want compare's", got.FDR, got.FalseAlarm, got.Delta[results.MetricTotalTokPerS])
	}
	c := Default()
	c.Compare.FDR, c.Compare.FalseAlarm = 0.1, 0.02
	c.Compare.Thresholds = map[string]float64{string(results.MetricTTFT): 0.08}
	c.Store.MinHistory = 7
	got := c.Thresholds()
	if got.FDR != 0.1 || got.FalseAlarm != 0.02 || got.Delta[results.MetricTTFT] != 0.08 || got.MinHistory != 7 {
		t.Errorf("got FDR %g, false alarm %g, TTFT δ %g, min history %d; want 0.1, 0.02, 0.08, 7", got.FDR, got.FalseAlarm, got.Delta[results.MetricTTFT], got.MinHistory)
	}
	if compare.DefaultThresholds().Delta[results.MetricTTFT] == 0.08 {
		t.Error("the configuration's δ leaked into compare's defaults")
	}
}
