package report

import (
	"fmt"
	"math"

	"github.com/speedmatrix/speedmatrix/internal/numfmt"
	"github.com/speedmatrix/speedmatrix/results"
)

// pairingLine says that a comparison was paired (one `run --paired`: base and head served
// alternately in blocks), how, and the largest drift per block it removed; "" when it was not.
func pairingLine(c *results.Comparison) string {
	p := c.Settings.Pairing
	if p == nil {
		return ""
	}
	s := fmt.Sprintf("Paired A/B: base and head were served alternately on one machine, %d blocks each in %s order; every change is from the per-pair head/base ratios", p.Blocks, p.Scheme)
	drift := 0.0
	for _, cell := range c.Cells {
		for _, m := range cell.Metrics {
			if m.Noise != nil && m.Noise.Drift != nil {
				drift = math.Max(drift, math.Abs(*m.Noise.Drift))
			}
		}
	}
	if drift > 0 {
		s += fmt.Sprintf(", with the drift between blocks (up to %s%% per block) removed", numfmt.Fixed(drift*100, 1))
	}
	return s + "."
}
