package compare

import (
	"fmt"
	"strings"

	"github.com/speedmatrix/speedmatrix/results"
)

// reasonMissingInHead is the reason of a cell the base measured and the head lacks.
const reasonMissingInHead = "missing in head"

// closedCell returns a cell's verdict once missing data is counted: a cell the base has and
// the head lacks is incomplete, not merely not comparable; any other cell keeps v.
func closedCell(cell *results.CellComparison, v results.Verdict) results.Verdict {
	if cell.Reason == reasonMissingInHead {
		return results.VerdictIncomplete
	}
	return v
}

// closeVerdict sets the matrix's verdict and VerdictReason by closedVerdict and, when the head
// is incomplete, warns with the reason so that every report names it.
func closeVerdict(c *results.Comparison, head []*results.File) {
	c.Verdict, c.VerdictReason = closedVerdict(c.Verdict, c.Cells, head)
	if c.VerdictReason != "" {
		c.Warnings = append(c.Warnings, "the head is incomplete: "+c.VerdictReason)
	}
}

// closedVerdict returns the matrix's verdict and its reason once missing data is counted: a
// regression stays a regression; otherwise a head whose run ended early (Run.Partial) or
// that lacks cells the base has makes the matrix incomplete, whatever the other cells say.
func closedVerdict(v results.Verdict, cells []results.CellComparison, head []*results.File) (results.Verdict, string) {
	var why []string
	for i, f := range head {
		if f == nil || !f.Run.Partial {
			continue
		}
		r := "the head run is partial (it ended before every planned cell was measured)"
		if len(head) > 1 {
			r = fmt.Sprintf("head file %d is partial (it ended before every planned cell was measured)", i+1)
		}
		if f.Run.PartialReason != "" {
			r += ": " + f.Run.PartialReason
		}
		why = append(why, r)
	}
	var missing []string
	for _, c := range cells {
		if c.Verdict == results.VerdictIncomplete && c.Reason == reasonMissingInHead {
			missing = append(missing, c.Cell)
		}
	}
	if len(missing) > 0 {
		why = append(why, fmt.Sprintf("%d cells the base measured are missing in the head: %s", len(missing), strings.Join(missing, ", ")))
	}
	if len(why) == 0 {
		return v, ""
	}
	reason := strings.Join(why, "; ") + "; rerun the head so that it measures every cell"
	if v == results.VerdictRegression {
		return v, reason
	}
	return results.VerdictIncomplete, reason
}
