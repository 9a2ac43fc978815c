package compare

import "github.com/speedmatrix/speedmatrix/results"

// Overrides are the thresholds a user may set in a configuration file: compare.fdr,
// compare.false_alarm, compare.thresholds (δ by metric name) and store.min_history. A zero or
// absent value keeps DefaultThresholds'.
type Overrides struct {
	FDR, FalseAlarm float64
	// Delta is the minimum relative change by metric name ("ttft_ms": 0.08).
	Delta      map[string]float64
	MinHistory int
}

// Thresholds returns the documented defaults (DefaultThresholds) with o applied where set: the
// thresholds the bot and run's adaptive job compare with.
func (o Overrides) Thresholds() Thresholds {
	th := DefaultThresholds()
	if v := o.FDR; v > 0 {
		th.FDR = v
	}
	if v := o.FalseAlarm; v > 0 {
		th.FalseAlarm = v
	}
	for k, v := range o.Delta {
		if v > 0 {
			th.Delta[results.Metric(k)] = v
		}
	}
	if n := o.MinHistory; n > 0 {
		th.MinHistory = n
	}
	return th
}
