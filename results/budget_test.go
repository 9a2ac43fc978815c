package results

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestSumBudgets checks that budgets of runs measured one after another add up part by part,
// that the ratios follow from the sums, and that CPU time is summed only when every budget has
// one.
func TestSumBudgets(t *testing.T) {
	cpu := func(x float64) *float64 { return &x }
	a := &Budget{WallSeconds: 30, SetupSeconds: 4, WarmupSeconds: 2, PrefillSeconds: 3, ReadinessSeconds: 5, AdmissionSeconds: 4, WindowSeconds: 16, DrainSeconds: 1, OtherSeconds: 1, CPUSeconds: cpu(1)}
	b := &Budget{WallSeconds: 20, SetupSeconds: 2, PrefillSeconds: 2, ReadinessSeconds: 3, AdmissionSeconds: 2, WindowSeconds: 12, DrainSeconds: 1, CPUSeconds: cpu(2), CPUIncludesServer: true}
	for _, tc := range []struct {
		name string
		in   []*Budget
		want *Budget
	}{
		{"none", []*Budget{nil, nil}, nil},
		{"two", []*Budget{a, nil, b}, &Budget{WallSeconds: 50, SetupSeconds: 6, WarmupSeconds: 2, PrefillSeconds: 5, ReadinessSeconds: 8, AdmissionSeconds: 6,
			WindowSeconds: 28, DrainSeconds: 2, OtherSeconds: 1, WallPerMeasured: 50.0 / 33, WallPerServerBound: 50.0 / 41, CPUSeconds: cpu(3), CPUIncludesServer: true}},
		{"one without CPU", []*Budget{a, {WallSeconds: 10, WindowSeconds: 10}}, &Budget{WallSeconds: 40, SetupSeconds: 4, WarmupSeconds: 2, PrefillSeconds: 3, ReadinessSeconds: 5, AdmissionSeconds: 4,
			WindowSeconds: 26, DrainSeconds: 1, OtherSeconds: 1, WallPerMeasured: 40.0 / 29, WallPerServerBound: 40.0 / 35}},
		{"no admission or warm-up recorded", []*Budget{{WallSeconds: 12, WindowSeconds: 10}}, &Budget{WallSeconds: 12, WindowSeconds: 10, WallPerMeasured: 1.2}},
	} {
		if diff := cmp.Diff(tc.want, SumBudgets(tc.in...)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
	}
}
