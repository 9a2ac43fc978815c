package results

import "math"

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
