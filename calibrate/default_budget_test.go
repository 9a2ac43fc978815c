package calibrate

import (
	"testing"
	"time"
)

// TestDefaultBudgetHalvesNaive checks that the default rerun budget keeps the budgeted
// procedure's worst case within half the naive procedure's GPU time by the cost model (both
// sides measured: a first pass of one run a side plus the budget, against 3 trials a side), the
// goal of issue 13; and says what a stored baseline needs for the same (the head's first pass
// plus the budget against 3 head trials).
func TestDefaultBudgetHalvesNaive(t *testing.T) {
	s := DefaultSettings()
	m := NewMatrixNoise(1, 1, NoiseSpec)
	one, naive := m.RunCost(s.Costs, nil, nil, 1), m.RunCost(s.Costs, nil, nil, s.NaiveTrials)
	if worst := 2*one + s.Budget; worst > naive { // 2·naive / 2
		t.Errorf("default budget %v: worst GPU time %v is above half the naive %v", s.Budget, worst, 2*naive)
	}
	if stored := one + 15*time.Minute; 2*stored > naive {
		t.Errorf("with a stored baseline, 15m of reruns: %v is above half the naive %v", stored, naive)
	}
}
