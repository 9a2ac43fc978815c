package config

import (
	"github.com/speedmatrix/speedmatrix/compare"
	"github.com/speedmatrix/speedmatrix/results"
)

// Thresholds does return compare's thresholds under the configuration: the documented defaults
// with compare.fdr, compare.false_alarm, compare.thresholds and store.min_history applied where
// set. The bot and run's adaptive job compare with these.
func (c Config) Thresholds() compare.Thresholds {
	th := compare.DefaultThresholds()
	if v := c.Compare.FDR; v > 0 {
		th.FDR = v
	}
	if v := c.Compare.FalseAlarm; v > 0 {
		th.FalseAlarm = v
	}
	for k, v := range c.Compare.Thresholds {
		if v > 0 {
			th.Delta[results.Metric(k)] = v
		}
	}
	if n := c.Store.MinHistory; n > 0 {
		th.MinHistory = n
	}
	return th
}
