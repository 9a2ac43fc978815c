package results_test

import (
	"strings"
	"testing"

	"github.com/speedmatrix/speedmatrix/results"
)

// pairedRun returns the real run as the head side of a paired run of 2 blocks, its trials
// marked with their blocks and pairs.
func pairedRun(t *testing.T) *results.File {
	f := readRealRun(t)
	f.Run.Pairing = &results.Pairing{ID: "p", Scheme: results.PairingABBA, Blocks: 2, Side: "head", Order: "ABBA"}
	for i := range f.Decode {
		for j := range f.Decode[i].Trials {
			f.Decode[i].Trials[j].Pair, f.Decode[i].Trials[j].Block = j+1, []int{2, 3}[j]
		}
	}
	for i := range f.Prefill {
		for j := range f.Prefill[i].Trials {
			f.Prefill[i].Trials[j].Pair, f.Prefill[i].Trials[j].Block = j+1, []int{2, 3}[j]
		}
	}
	return f
}

// TestValidatePairing checks that a paired side validates, and that Validate names a pairing
// that cannot be: an unknown side, no blocks, an order that is not the blocks', a trial's pair
// beyond the blocks or its block beyond the order, a pair in a file without pairing.
func TestValidatePairing(t *testing.T) {
	if err := results.Validate(pairedRun(t)); err != nil {
		t.Fatalf("a paired side does not validate: %v", err)
	}
	tests := []struct {
		name string
		edit func(f *results.File)
		want string
	}{
		{"side", func(f *results.File) { f.Run.Pairing.Side = "left" }, `run.pairing.side "left" is neither base nor head`},
		{"blocks", func(f *results.File) { f.Run.Pairing.Blocks = 0 }, "run.pairing.blocks 0: want at least 1"},
		{"no id", func(f *results.File) { f.Run.Pairing.ID = "" }, "run.pairing.id: missing"},
		{"order", func(f *results.File) { f.Run.Pairing.Order = "ABBX" }, `run.pairing.order "ABBX": want 2 blocks of A and 2 of B`},
		{"pair beyond", func(f *results.File) { f.Decode[0].Trials[1].Pair = 3 }, "decode cell 8K×1 (decode[0]) trial 2: pair 3 is beyond the 2 blocks of the pairing"},
		{"block beyond", func(f *results.File) { f.Prefill[0].Trials[0].Block = 5 }, "trial 1: block 5 is beyond the 4 blocks of the order"},
		{"negative", func(f *results.File) { f.Decode[0].Trials[0].Block = -1 }, "decode cell 8K×1 (decode[0]) trial 1: block -1 and pair 1 must not be negative"},
		{"no pairing", func(f *results.File) { f.Run.Pairing = nil }, "decode cell 8K×1 (decode[0]) trial 1: carries pair 1 but the run has no pairing"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := pairedRun(t)
			tc.edit(f)
			err := results.Validate(f)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Validate: %v\nwant a problem containing %q", err, tc.want)
			}
		})
	}
}
