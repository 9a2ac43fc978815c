package bench

import (
	"testing"

	"github.com/speedmatrix/speedmatrix/results"
)

// TestPairOrder pins the block orders: ABBA alternates the order of each pair, sequential serves
// every base block first.
func TestPairOrder(t *testing.T) {
	tests := []struct {
		scheme string
		n      int
		want   string
		err    bool
	}{
		{results.PairingABBA, 1, "AB", false},
		{results.PairingABBA, 2, "ABBA", false},
		{results.PairingABBA, 3, "ABBAAB", false},
		{results.PairingABBA, 4, "ABBAABBA", false},
		{results.PairingSequential, 3, "AAABBB", false},
		{results.PairingABBA, 0, "", true},
		{"ABAB", 2, "", true},
	}
	for _, tc := range tests {
		got, err := PairOrder(tc.scheme, tc.n)
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("PairOrder(%s, %d) = %q, %v; want %q (error %v)", tc.scheme, tc.n, got, err, tc.want, tc.err)
		}
	}
	// Every pair of ABBA holds one block of each side, adjacent.
	o, _ := PairOrder(results.PairingABBA, 5)
	for k := 0; k < 5; k++ {
		if o[2*k] == o[2*k+1] {
			t.Errorf("pair %d of %s is %c%c", k+1, o, o[2*k], o[2*k+1])
		}
	}
}
