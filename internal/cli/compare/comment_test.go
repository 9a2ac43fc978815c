package compare

import (
	"testing"

	"github.com/speedmatrix/speedmatrix/results"
)

// TestRerunsHeadOnly: the comment's rerun advice is for the head alone, as `/bench rerun`
// measures it, unless a head file is a paired run's (its rerun pairs again), as the action's.
func TestRerunsHeadOnly(t *testing.T) {
	plain := &results.File{}
	paired := &results.File{}
	paired.Run.Pairing = &results.Pairing{ID: "p", Scheme: results.PairingABBA, Blocks: 2, Side: "head", Order: "ABBA"}
	for _, tc := range []struct {
		name string
		head []*results.File
		want bool
	}{
		{"no head", nil, false},
		{"one run", []*results.File{plain}, true},
		{"a run and its rerun", []*results.File{plain, plain}, true},
		{"a paired run", []*results.File{paired}, false},
		{"a run and a paired rerun", []*results.File{plain, paired}, false},
	} {
		if got := rerunsHeadOnly(tc.head); got != tc.want {
			t.Errorf("%s: rerunsHeadOnly = %v, want %v", tc.name, got, tc.want)
		}
	}
}
