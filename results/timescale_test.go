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
