package compare

import (
	"fmt"
	"math"
	"strings"

	"github.com/speedmatrix/speedmatrix/results"
)

// FingerprintWarnings returns one warning for each difference between the machines that
// measured base and head that can move the numbers by itself, so that a verdict is not read as
// the change's when the machine changed: the GPU model or count, the driver, the power limit,
// clocks locked on one side only or locked at different values, and other processes holding a
// GPU during a run. A fact unknown on either side is not compared, nor are current clocks that
// were not locked (they vary from sample to sample). A different GPU model or count also makes
// Compare refuse the files without Input.Force (setupDifferences); the warning says it again
// when forced, with the sides named.
func FingerprintWarnings(base, head results.Hardware) []string {
	var w []string
	add := func(format string, args ...any) {
		w = append(w, "the machines differ: "+fmt.Sprintf(format, args...)+"; a difference in the numbers may be the machine's, not the change's")
	}
	if base.GPU != "" && head.GPU != "" && base.GPU != head.GPU {
		add("GPU model %q (base) vs %q (head)", base.GPU, head.GPU)
	}
	if base.GPUCount > 0 && head.GPUCount > 0 && base.GPUCount != head.GPUCount {
		add("GPU count %d (base) vs %d (head)", base.GPUCount, head.GPUCount)
	}
	if base.Driver != "" && head.Driver != "" && base.Driver != head.Driver {
		add("driver %q (base) vs %q (head)", base.Driver, head.Driver)
	}
	// nvidia-smi prints the limit with two decimals; a watt either way is the same setting.
	if base.PowerLimitW > 0 && head.PowerLimitW > 0 && math.Abs(base.PowerLimitW-head.PowerLimitW) >= 1 {
		add("power limit %g W (base) vs %g W (head)", base.PowerLimitW, head.PowerLimitW)
	}
	switch {
	case base.ClocksLocked && !head.ClocksLocked:
		add("clocks locked on base only (%s); head ran at boost clocks", base.Clocks)
	case head.ClocksLocked && !base.ClocksLocked:
		add("clocks locked on head only (%s); base ran at boost clocks", head.Clocks)
	case base.ClocksLocked && head.ClocksLocked && base.Clocks != head.Clocks:
		add("clocks locked at different values: %q (base) vs %q (head)", base.Clocks, head.Clocks)
	}
	for _, side := range []struct {
		name string
		h    results.Hardware
	}{{"base", base}, {"head", head}} {
		if len(side.h.OtherGPUProcesses) > 0 {
			w = append(w, fmt.Sprintf("other processes held a GPU when %s was measured (%s); its numbers may be low", side.name, strings.Join(side.h.OtherGPUProcesses, ", ")))
		}
	}
	return w
}
