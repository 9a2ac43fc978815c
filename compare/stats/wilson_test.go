package stats

import "testing"

// TestWilson: Wilson score intervals against R's prop.test(k, n, correct = FALSE)$conf.int.
func TestWilson(t *testing.T) {
	for _, tc := range []struct {
		k, n      int
		low, high float64
	}{
		{0, 100, 0, 0.03699},
		{6, 1000, 0.002756, 0.013012},
		{50, 100, 0.40383, 0.59617},
	} {
		low, high := Wilson(tc.k, tc.n, 1.959964)
		near(t, "low", low, tc.low, 1e-4)
		near(t, "high", high, tc.high, 1e-4)
	}
	if low, high := Wilson(0, 0, 1.96); low != 0 || high != 0 {
		t.Errorf("no trials: %v … %v, want 0 … 0", low, high)
	}
}
