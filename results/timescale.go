package results

import (
	"math"
	"time"
)

// TimeScale returns how many times faster than the model it stands for the measured server ran:
// the built-in simulator's speedup (run.settings.simulator.speedup), 1 for a real server. The
// file holds every number as measured; reports show them in the model's time (rates ÷ the
// scale, times × the scale) and say so. Counts, ratios and statistics need no scaling.
func (f *File) TimeScale() float64 {
	if s := f.Run.Settings; s != nil && s.Simulator != nil && s.Simulator.Speedup > 0 {
		return s.Simulator.Speedup
	}
	return 1
}

// WallTime returns d, a duration in the profile's time (a configured GPU budget), as f's wall
// time: d ÷ TimeScale, so that a simulator run faster than its profile spends a budget as the
// profile's GPU would, and reports, which show GPU time in the profile's time, show the budget
// given beside what of it was spent. A nil f is a real server's: d itself.
func (f *File) WallTime(d time.Duration) time.Duration {
	if f == nil {
		return d
	}
	return time.Duration(float64(d) / f.TimeScale())
}

// InProfileTime returns a value of m measured at time scale s in the profile's time: a rate
// divided by s, a time multiplied by it; nil stays nil, and a speculative acceptance length (a
// count per step, not a time) and any value at scale 1 are returned as they are.
func (m Metric) InProfileTime(v *float64, s float64) *float64 {
	if v == nil || s == 1 || m == MetricSpecAcceptance {
		return v
	}
	x := *v * s
	if m.HigherIsBetter() {
		x = *v / s
	}
	return &x
}

// Scale returns the side's time scale: TimeScale, or 1 when the comparison file does not say.
func (r ComparedRun) Scale() float64 {
	if r.TimeScale > 0 {
		return r.TimeScale
	}
	return 1
}

// validTimeScale reports whether a time scale read from a file can divide rates: 0 (absent) or
// a positive finite number.
func validTimeScale(x float64) bool {
	return x == 0 || (x > 0 && !math.IsInf(x, 0))
}

// validateTimeScale checks the simulator's speedup of a results file.
func validateTimeScale(v *validator, f *File) {
	if s := f.Run.Settings; s != nil && s.Simulator != nil && !validTimeScale(s.Simulator.Speedup) {
		v.addf("run: settings.simulator.speedup is %v; want a positive number (how many times faster than its profile the simulator ran)", s.Simulator.Speedup)
	}
}
