package results

import (
	"fmt"
	"strings"
)

// validatePairing checks a paired side (Run.Pairing) and the block and pair of every trial: a
// known side, at least one block, an order of that many blocks of each side, trials whose pair
// and block lie within them, and no pair in a file without a pairing.
func validatePairing(v *validator, f *File) {
	p := f.Run.Pairing
	blocks, order := 0, 0
	if p != nil {
		if p.ID == "" {
			v.addf("run.pairing.id: missing; the base and head files of one paired run share it")
		}
		if p.Side != "base" && p.Side != "head" {
			v.addf("run.pairing.side %q is neither base nor head", p.Side)
		}
		if p.Blocks < 1 {
			v.addf("run.pairing.blocks %d: want at least 1", p.Blocks)
		}
		if p.Order != "" && (strings.Count(p.Order, "A") != p.Blocks || strings.Count(p.Order, "B") != p.Blocks || len(p.Order) != 2*p.Blocks) {
			v.addf("run.pairing.order %q: want %d blocks of A and %d of B", p.Order, p.Blocks, p.Blocks)
		}
		blocks, order = p.Blocks, len(p.Order)
	}
	trial := func(tw string, block, pair int) {
		switch {
		case block < 0 || pair < 0:
			v.addf("%s: block %d and pair %d must not be negative", tw, block, pair)
		case p == nil && (block > 0 || pair > 0):
			v.addf("%s: carries pair %d but the run has no pairing", tw, pair)
		case p != nil && pair > blocks:
			v.addf("%s: pair %d is beyond the %d blocks of the pairing", tw, pair, blocks)
		case p != nil && order > 0 && block > order:
			v.addf("%s: block %d is beyond the %d blocks of the order", tw, block, order)
		}
	}
	for i := range f.Prefill {
		c := &f.Prefill[i]
		for j, t := range c.Trials {
			trial(fmt.Sprintf("prefill cell %s (prefill[%d]) trial %d", c.ContextLabel, i, j+1), t.Block, t.Pair)
		}
	}
	for i := range f.Decode {
		c := &f.Decode[i]
		for j := range c.Trials {
			t := &c.Trials[j]
			trial(fmt.Sprintf("decode cell %s×%d (decode[%d]) trial %d", c.ContextLabel, c.Concurrency, i, j+1), t.Block, t.Pair)
		}
	}
}
