package bisect

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/speedmatrix/speedmatrix/results"
)

// Named reports whether res named a culprit for every regression it found and left
// none open.
func (res *Result) Named() bool {
	if res.NotReproduced || res.SecondRemains || len(res.Regressions) == 0 {
		return false
	}
	for _, g := range res.Regressions {
		if g.Culprit == "" {
			return false
		}
	}
	return true
}

// RegressedCells returns the cells c found regressed (in a cell, a group or a row), sorted, each
// once: what `speedmatrix bisect --comparison` bisects.
func RegressedCells(c *results.Comparison) []string {
	var out []string
	for _, cell := range c.Cells {
		if cell.Verdict == results.VerdictRegression {
			out = append(out, cell.Cell)
		}
	}
	for _, gr := range c.Groups {
		if gr.Verdict == results.VerdictRegression {
			out = append(out, gr.Cells...)
		}
	}
	for _, r := range c.Rows {
		if r.Verdict == results.VerdictRegression {
			out = append(out, r.Cells...)
		}
	}
	slices.Sort(out)
	out = slices.Compact(out)
	return out
}

// Text formats a change with its interval; "-" for none (a nil change).
func (c *Change) Text() string {
	if c == nil {
		return "-"
	}
	return fmt.Sprintf("%+.1f %% [%+.1f, %+.1f]", 100*c.Change, 100*c.Low, 100*c.High)
}

// WriteText writes the result as text: each round's evidence, then the statement.
func (r *Result) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Bisect %s..%s (%d runners) on %s\n", short(r.Good), short(r.Bad), r.Runners, strings.Join(r.Cells, ", "))
	for _, rd := range r.Rounds {
		for _, m := range rd.Measurements {
			fmt.Fprintf(&b, "step %d: %s %-9s against %s: %s (attempt %d, %s)", rd.Number, short(m.Commit), m.Verdict, short(rd.Base), m.Change.Text(), m.Attempt, m.GPUTime.Round(time.Second))
			if m.Verdict == Skip || m.Verdict == Undecided {
				fmt.Fprintf(&b, ": %s", m.Reason)
			}
			b.WriteString("\n")
		}
	}
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "note: %s\n", n)
	}
	fmt.Fprintf(&b, "%s\n", r.Statement)
	_, err := io.WriteString(w, b.String())
	return err
}
