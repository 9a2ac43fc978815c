package compare

import (
	"math"
	"strings"

	"github.com/speedmatrix/speedmatrix/results"
)

// furtherTrials returns the fewest further trials k ≤ limit after which the standard error of
// the log difference is at most target, or 0 when none is. vb and vh are the sides' per-run
// variances, kb and kh their runs so far. Both sides gain k trials, or with headOnly the head
// alone: vb/kb + vh/(kh + k), whose base term no head trial lowers, so a base whose runs alone
// exceed target cannot be decided (Thresholds.HeadOnlyReruns).
func furtherTrials(vb float64, kb int, vh float64, kh int, target float64, limit int, headOnly bool) int {
	if headOnly && vb/float64(kb) >= target*target {
		return 0
	}
	for k := 1; k <= limit; k++ {
		nb := kb + k
		if headOnly {
			nb = kb
		}
		if math.Sqrt(vb/float64(nb)+vh/float64(kh+k)) <= target {
			return k
		}
	}
	return 0
}

// markNeedsBase gives cell's entry in list the reason results.UndecidableNeedsBase.
func markNeedsBase(list []results.UndecidableItem, cell string) {
	for i := range list {
		if list[i].Cell == cell {
			list[i].Reason = results.UndecidableNeedsBase
		}
	}
}

// needsBaseCells returns the cells of list that need base reruns, joined by commas.
func needsBaseCells(list []results.UndecidableItem) string {
	var cells []string
	for _, u := range list {
		if u.Reason == results.UndecidableNeedsBase {
			cells = append(cells, u.Cell)
		}
	}
	return strings.Join(cells, ", ")
}
