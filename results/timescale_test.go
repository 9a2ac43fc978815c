package results_test

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/speedmatrix/speedmatrix/results"
)

func TestTimeScale(t *testing.T) {
	tests := []struct {
		name     string
		settings *results.Settings
		want     float64
	}{
		{"real server", nil, 1},
		{"no simulator", &results.Settings{Matrix: "quick"}, 1},
		{"simulator without speedup", &results.Settings{Simulator: &results.SimulatorSettings{Profile: "p"}}, 1},
		{"simulator at 20×", &results.Settings{Simulator: &results.SimulatorSettings{Profile: "p", Speedup: 20}}, 20},
	}
	for _, tt := range tests {
		f := measured()
		f.Run.Settings = tt.settings
		if got := f.TimeScale(); got != tt.want {
			t.Errorf("%s: TimeScale() = %v, want %v", tt.name, got, tt.want)
		}
	}
	if got := (results.ComparedRun{}).Scale(); got != 1 {
		t.Errorf("ComparedRun without time_scale: Scale() = %v, want 1", got)
	}
	if got := (results.ComparedRun{TimeScale: 20}).Scale(); got != 20 {
		t.Errorf("ComparedRun time_scale 20: Scale() = %v, want 20", got)
	}
}

// TestValidateRejectsBadSpeedup: the speedup divides every rendered rate, so it must be a
// positive finite number.
func TestValidateRejectsBadSpeedup(t *testing.T) {
	for _, s := range []float64{-20, math.Inf(1), math.NaN()} {
		f := measured()
		f.Run.Settings.Simulator = &results.SimulatorSettings{Profile: "p", Speedup: s}
		err := results.Validate(f)
		if err == nil || !strings.Contains(err.Error(), "settings.simulator.speedup") {
			t.Errorf("speedup %v: Validate = %v, want a problem naming settings.simulator.speedup", s, err)
		}
	}
	c := &results.Comparison{Schema: results.ComparisonSchemaV1, Verdict: results.VerdictUnchanged,
		Settings: results.ComparisonSettings{FDR: 0.05, Look: 1}, Head: results.ComparedRun{TimeScale: -2}}
	if err := results.ValidateComparison(c); err == nil || !strings.Contains(err.Error(), "head.time_scale") {
		t.Errorf("comparison with head time_scale -2: %v, want a problem naming head.time_scale", err)
	}
}

// TestWallTime: a budget given in the GPU's time is spent by a simulator run ×20 in a
// twentieth of the wall time, by a real server (or no file) in the time itself.
func TestWallTime(t *testing.T) {
	sim := &results.File{Run: results.Run{Settings: &results.Settings{Simulator: &results.SimulatorSettings{Profile: "p", Speedup: 20}}}}
	for _, tc := range []struct {
		name string
		f    *results.File
		want time.Duration
	}{{"simulator ×20", sim, time.Minute}, {"real server", &results.File{}, 20 * time.Minute}, {"no file", nil, 20 * time.Minute}} {
		if got := tc.f.WallTime(20 * time.Minute); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestMetricInProfileTime checks a value's conversion to the profile's time: rates divided by
// the scale, times multiplied, acceptance and scale 1 kept, nil kept.
func TestMetricInProfileTime(t *testing.T) {
	v := func(x float64) *float64 { return &x }
	tests := []struct {
		name string
		m    results.Metric
		in   *float64
		s    float64
		want *float64
	}{
		{"rate at 20×", results.MetricTotalTokPerS, v(2000), 20, v(100)},
		{"prompt rate at 2×", results.MetricPromptTokPerS, v(9000), 2, v(4500)},
		{"TTFT at 20×", results.MetricTTFT, v(10), 20, v(200)},
		{"TBT at 4×", results.MetricTBT, v(1.5), 4, v(6)},
		{"acceptance is a count", results.MetricSpecAcceptance, v(3.04), 20, v(3.04)},
		{"real server", results.MetricTTFT, v(10), 1, v(10)},
		{"no value", results.MetricTBT, nil, 20, nil},
	}
	for _, tt := range tests {
		got := tt.m.InProfileTime(tt.in, tt.s)
		if (got == nil) != (tt.want == nil) || (got != nil && *got != *tt.want) {
			t.Errorf("%s: InProfileTime = %v; want %v", tt.name, deref(got), deref(tt.want))
		}
	}
	if in := v(2000); results.MetricTotalTokPerS.InProfileTime(in, 20) == in || *in != 2000 {
		t.Error("InProfileTime changed or returned its argument at a scale")
	}
}

// deref is *p for a message, or "nil".
func deref(p *float64) any {
	if p == nil {
		return "nil"
	}
	return *p
}

// TestMetricFormatValue checks each metric's value with its unit and three significant digits.
func TestMetricFormatValue(t *testing.T) {
	tests := []struct {
		m    results.Metric
		v    float64
		want string
	}{
		{results.MetricTotalTokPerS, 153.94, "153.9 tok/s"},
		{results.MetricPerRequestTokPerS, 8.234, "8.23 tok/s"},
		{results.MetricPromptTokPerS, 12000, "12.0K tok/s"},
		{results.MetricTTFT, 671.4, "671 ms"},
		{results.MetricTTFT, 2.345, "2.35 ms"},
		{results.MetricTBT, 0.7, "0.700 ms"},
		{results.MetricSpecAcceptance, 3.041, "3.04 tokens/step"},
	}
	for _, tt := range tests {
		if got := tt.m.FormatValue(tt.v); got != tt.want {
			t.Errorf("%s.FormatValue(%v) = %q; want %q", tt.m, tt.v, got, tt.want)
		}
	}
}
