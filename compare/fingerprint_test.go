package compare_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/speedmatrix/speedmatrix/compare"
	"github.com/speedmatrix/speedmatrix/results"
)

// TestFingerprintWarnings: each difference of the machines that can move the numbers by itself
// is one warning; facts unknown on a side, and current clocks that were not locked, are not.
func TestFingerprintWarnings(t *testing.T) {
	h200 := results.Hardware{GPU: "NVIDIA H200", GPUCount: 2, Driver: "570.133.20", CUDA: "12.8", PowerLimitW: 700,
		PersistenceMode: "Enabled", Clocks: "SM 1980 MHz, memory 3201 MHz (not locked)"}
	locked := func(h results.Hardware, clocks string) results.Hardware {
		h.ClocksLocked, h.Clocks = true, clocks
		return h
	}
	with := func(f func(*results.Hardware)) results.Hardware {
		h := h200
		f(&h)
		return h
	}
	tests := []struct {
		name       string
		base, head results.Hardware
		want       []string // substrings, one per warning, in order
	}{
		{"same machine", h200, h200, nil},
		{"nothing known", results.Hardware{}, results.Hardware{}, nil},
		{"one side unknown", h200, results.Hardware{GPU: "NVIDIA H200"}, nil},
		{"unlocked clocks differ", h200, with(func(h *results.Hardware) { h.Clocks = "SM 1755 MHz, memory 3201 MHz (not locked)" }), nil},
		{"GPU model", h200, with(func(h *results.Hardware) { h.GPU = "NVIDIA H100 80GB HBM3" }), []string{`GPU model "NVIDIA H200" (base) vs "NVIDIA H100 80GB HBM3" (head)`}},
		{"GPU count", h200, with(func(h *results.Hardware) { h.GPUCount = 1 }), []string{"GPU count 2 (base) vs 1 (head)"}},
		{"driver", h200, with(func(h *results.Hardware) { h.Driver = "575.51.03" }), []string{`driver "570.133.20" (base) vs "575.51.03" (head)`}},
		{"power limit", h200, with(func(h *results.Hardware) { h.PowerLimitW = 600 }), []string{"power limit 700 W (base) vs 600 W (head)"}},
		{"power limit rounding", h200, with(func(h *results.Hardware) { h.PowerLimitW = 700.3 }), nil},
		{"locked on head only", h200, locked(h200, "locked: SM 1980 MHz, memory 3201 MHz"), []string{"clocks locked on head only"}},
		{"locked on base only", locked(h200, "locked: SM 1980 MHz, memory 3201 MHz"), h200, []string{"clocks locked on base only"}},
		{"locked at different values", locked(h200, "locked: SM 1980 MHz, memory 3201 MHz"), locked(h200, "locked: SM 1700 MHz, memory 3201 MHz"),
			[]string{`clocks locked at different values: "locked: SM 1980 MHz, memory 3201 MHz" (base) vs "locked: SM 1700 MHz, memory 3201 MHz" (head)`}},
		{"locked alike", locked(h200, "locked: SM 1980 MHz, memory 3201 MHz"), locked(h200, "locked: SM 1980 MHz, memory 3201 MHz"), nil},
		{"other GPU process", h200, with(func(h *results.Hardware) { h.OtherGPUProcesses = []string{"pid 9 python (30000 MiB)"} }),
			[]string{"other processes held a GPU when head was measured (pid 9 python (30000 MiB))"}},
		{"several", h200, with(func(h *results.Hardware) { h.Driver, h.PowerLimitW = "575.51.03", 600 }), []string{"driver", "power limit"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := compare.FingerprintWarnings(tt.base, tt.head)
			if len(got) != len(tt.want) {
				t.Fatalf("FingerprintWarnings = %q, want %d warnings like %q", got, len(tt.want), tt.want)
			}
			for i, w := range tt.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("warning %d = %q, want it to say %q", i, got[i], w)
				}
			}
		})
	}
}

// TestCompareWarnsOnFingerprint: compare carries the fingerprint warnings of the first base and
// head files into the comparison's warnings.
func TestCompareWarnsOnFingerprint(t *testing.T) {
	base := summaryFile("m", map[int]float64{1: 150, 8: 600}, nil)
	head := summaryFile("m", map[int]float64{1: 150, 8: 600}, nil)
	base.Hardware.Driver, head.Hardware.Driver = "570.133.20", "575.51.03"
	head.Hardware.ClocksLocked, head.Hardware.Clocks = true, "locked: SM 1980 MHz, memory 3201 MHz"
	c, err := compare.Compare(compare.Input{Base: []*results.File{base}, Head: []*results.File{head}}, compare.DefaultThresholds())
	if err != nil {
		t.Fatal(err)
	}
	want := compare.FingerprintWarnings(base.Hardware, head.Hardware)
	if len(want) != 2 {
		t.Fatalf("FingerprintWarnings = %q, want 2", want)
	}
	var got []string
	for _, w := range c.Warnings {
		if strings.Contains(w, "machines differ") {
			got = append(got, w)
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("comparison warnings about the machines (-want +got):\n%s", diff)
	}
}
