package results_test

import (
	"math"
	"strings"
	"testing"

	"github.com/speedmatrix/speedmatrix/results"
)

// TestValidateFingerprint: the machine's fingerprint fields are checked like the rest of the
// file: a power limit is a finite number not below 0, a GPU process is named.
func TestValidateFingerprint(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(h *results.Hardware)
		want   string // "" for valid
	}{
		{"full fingerprint", func(h *results.Hardware) {
			h.PowerLimitW, h.PersistenceMode, h.ClocksLocked, h.CPUModel, h.CUDA = 700, "Enabled", true, "AMD EPYC 9654", "12.8"
			h.OtherGPUProcesses = []string{"pid 7 python (2048 MiB)"}
		}, ""},
		{"NaN power limit", func(h *results.Hardware) { h.PowerLimitW = math.NaN() }, "hardware: power_limit_w is NaN"},
		{"negative power limit", func(h *results.Hardware) { h.PowerLimitW = -1 }, "hardware: power_limit_w is negative"},
		{"empty process", func(h *results.Hardware) { h.OtherGPUProcesses = []string{"pid 1 x", " "} }, "hardware: other_gpu_processes[1] is empty"},
		{"persistence mode", func(h *results.Hardware) { h.PersistenceMode = "maybe" }, `hardware: persistence_mode "maybe"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := measured()
			tt.mutate(&f.Hardware)
			err := results.Validate(f)
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("Validate = %v, want valid", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("Validate = %v, want a problem saying %q", err, tt.want)
			}
		})
	}
}
