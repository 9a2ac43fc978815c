package history

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/speedmatrix/speedmatrix/compare/changepoint"
	"github.com/speedmatrix/speedmatrix/internal/numfmt"
	"github.com/speedmatrix/speedmatrix/internal/textout"
	"github.com/speedmatrix/speedmatrix/results"
)

// ShortCommit returns the first 7 characters of a commit, or "-" when there is none.
func ShortCommit(c string) string {
	if c == "" {
		return "-"
	}
	if len(c) > 7 {
		return c[:7]
	}
	return c
}

// DateText formats a run's start in UTC ("2025-03-01 12:00"), or "-" when it is not known.
func DateText(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format("2006-01-02 15:04")
}

// StatusText returns the point's status as the table prints it: "valid", "over capacity",
// "valid (no value)", or "absent" for a run without the cell.
func (p Point) StatusText() string {
	switch {
	case p.Status == "":
		return "absent"
	case p.Value == nil && p.Status.Measured():
		return string(p.Status) + " (no value)"
	}
	return strings.ReplaceAll(string(p.Status), "_", " ")
}

// SetupLine names what the history measured, from its latest run: "model · vllm 0.9 · 2× H200".
func SetupLine(f *results.File) string {
	var parts []string
	if f.Run.ServedModel != "" {
		parts = append(parts, f.Run.ServedModel)
	}
	if f.Engine.Name != "" {
		parts = append(parts, strings.TrimSpace(f.Engine.Name+" "+f.Engine.Version))
	}
	if f.Hardware.GPU != "" {
		g := f.Hardware.GPU
		if f.Hardware.GPUCount > 1 {
			g = fmt.Sprintf("%d× %s", f.Hardware.GPUCount, g)
		}
		parts = append(parts, g)
	}
	return strings.Join(parts, " · ")
}

// direction says which way is better.
func direction(m results.Metric) string {
	if m.HigherIsBetter() {
		return "higher is better"
	}
	return "lower is better"
}

// MethodText describes the detection a series used, for a heading.
func (s *Series) MethodText() string {
	return methodText(s.Settings, strings.TrimPrefix(numfmt.FormatPercent(s.Delta), "+"))
}

// methodText describes detector settings with the minimum change given as text.
func methodText(set changepoint.Settings, minChange string) string {
	return fmt.Sprintf("E-divisive means, %d permutations, p ≤ %v, |change| ≥ %s, at least %d runs a level",
		set.Permutations, set.Alpha, minChange, set.MinSize)
}

// MethodText describes the detection of the history's series with the minimum change as "the
// metric's δ", for a heading; "" for a history without series.
func (h *History) MethodText() string {
	if len(h.Series) == 0 {
		return ""
	}
	return methodText(h.Series[0].Settings, "the metric's δ")
}

// ShiftText describes one shift in a line: "regression at abc1234 (2025-03-01 12:00, after
// 0123456): 1,234 → 1,160 tok/s (-6.0%), p = 0.005".
func (s *Series) ShiftText(sh Shift) string {
	after := ""
	if sh.Previous != "" {
		after = ", after " + ShortCommit(sh.Previous)
	}
	return fmt.Sprintf("%s at %s (%s%s): %s → %s (%s), p = %.3g", sh.Direction, ShortCommit(sh.Commit), DateText(sh.Date), after,
		s.Metric.FormatValue(sh.Before), s.Metric.FormatValue(sh.After), numfmt.FormatPercent(sh.Change), sh.P)
}

// WriteText writes the series as a table (commit, date, value, status, a mark at each shift) and
// its shifts.
func WriteText(w io.Writer, s *Series) error {
	ew := &textout.ErrWriter{W: w}
	fmt.Fprintf(ew, "%s · %s (%s) · %d runs, %d with a value\n\n", s.Cell, s.Metric.Title(), direction(s.Metric), len(s.Points), s.Values())
	shiftAt := map[int]Shift{}
	for _, sh := range s.Shifts {
		shiftAt[sh.Index] = sh
	}
	var table strings.Builder
	tw := tabwriter.NewWriter(&table, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "Commit\tDate\t%s\tStatus\t\n", s.Metric.Title())
	for i, p := range s.Points {
		v := numfmt.Dash
		if p.Value != nil {
			v = s.Metric.FormatValue(*p.Value)
		}
		mark := ""
		if sh, ok := shiftAt[i]; ok {
			mark = "← " + string(sh.Direction) + " " + numfmt.FormatPercent(sh.Change)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", ShortCommit(p.Commit), DateText(p.Date), v, p.StatusText(), mark)
	}
	tw.Flush()
	for line := range strings.Lines(table.String()) {
		fmt.Fprintln(ew, strings.TrimRight(line, " \n"))
	}
	fmt.Fprintf(ew, "\nChange points (%s):\n", s.MethodText())
	if len(s.Shifts) == 0 {
		fmt.Fprintln(ew, "  none")
	}
	for _, sh := range s.Shifts {
		fmt.Fprintf(ew, "  %s\n", s.ShiftText(sh))
	}
	return ew.Err
}

// WriteSummary writes every shift of the history, one line each, and how many series had none.
func WriteSummary(w io.Writer, h *History) error {
	ew := &textout.ErrWriter{W: w}
	for _, warn := range h.Warnings {
		fmt.Fprintf(ew, "warning: %s\n", warn)
	}
	first, last := "-", "-"
	if n := len(h.Files); n > 0 {
		first, last = ShortCommit(h.Files[0].Engine.Commit), ShortCommit(h.Files[n-1].Engine.Commit)
	}
	fmt.Fprintf(ew, "%d runs (%s … %s), %d cell-metrics\n", len(h.Files), first, last, len(h.Series))
	if len(h.Series) > 0 {
		fmt.Fprintf(ew, "Change points (%s):\n", h.MethodText())
	}
	tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', 0)
	quiet := 0
	for _, s := range h.Series {
		if len(s.Shifts) == 0 {
			quiet++
		}
		for _, sh := range s.Shifts {
			fmt.Fprintf(tw, "  %s\t%s\t%s\n", s.Cell, s.Metric.Title(), s.ShiftText(sh))
		}
	}
	tw.Flush()
	if quiet == len(h.Series) {
		fmt.Fprintln(ew, "  none")
	}
	fmt.Fprintf(ew, "%s without a change point\n", textout.Plural(quiet, "cell-metric", "cell-metrics"))
	return ew.Err
}
