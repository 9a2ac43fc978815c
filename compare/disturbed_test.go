package compare

import "testing"

// TestDipOf finds a stalled stretch of a window's bins and leaves steady or noisy windows alone.
func TestDipOf(t *testing.T) {
	flat := func(n, v int) []int {
		out := make([]int, n)
		for i := range out {
			out[i] = v + (i%3-1)*10
		}
		return out
	}
	dip := flat(40, 890)
	for i := 19; i < 32; i++ {
		dip[i] = 135
	}
	noisy := flat(40, 890)
	for i := 0; i < 40; i += 4 {
		noisy[i] = 400 // scattered low bins are noise, not one stretch
	}
	cases := []struct {
		name  string
		bins  []int
		ok    bool
		at, n int
	}{
		{"the issue's stall: bins 19–31 of 40 at 135 against 890", dip, true, 19, 13},
		{"steady", flat(40, 890), false, 0, 0},
		{"scattered low bins", noisy, false, 0, 0},
		{"too short to tell", []int{10, 900, 900}, false, 0, 0},
	}
	for _, tc := range cases {
		at, n, rest, ok := dipOf(tc.bins)
		if ok != tc.ok || at != tc.at || n != tc.n {
			t.Errorf("%s: dip at %d of %d (ok %v), want at %d of %d (ok %v)", tc.name, at, n, ok, tc.at, tc.n, tc.ok)
		}
		if ok && (rest < 880 || rest > 900) {
			t.Errorf("%s: the rest's mean %.0f, want about 890", tc.name, rest)
		}
	}
}
