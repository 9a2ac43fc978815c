package report

import (
	"fmt"
	"strings"
	"time"

	"github.com/speedmatrix/speedmatrix/results"
)

// GPUTimeLine returns one line saying the GPU time a job spent by phase and against its budget,
// e.g. "52m14s of 1h budget: build 3m2s, load 4m10s, measurement 30m1s, reruns 15m1s (4)".
func GPUTimeLine(g *results.GPUTime) string {
	if g == nil {
		return ""
	}
	d := func(s float64) string { return time.Duration(s * float64(time.Second)).Round(time.Second).String() }
	var parts []string
	if g.BuildSeconds > 0 {
		parts = append(parts, "build "+d(g.BuildSeconds))
	}
	if g.LoadSeconds > 0 {
		parts = append(parts, "load "+d(g.LoadSeconds))
	}
	parts = append(parts, "measurement "+d(g.MeasureSeconds))
	if g.Reruns > 0 || g.RerunSeconds > 0 {
		parts = append(parts, fmt.Sprintf("reruns %s (%d)", d(g.RerunSeconds), g.Reruns))
	}
	total := d(g.BuildSeconds + g.LoadSeconds + g.MeasureSeconds + g.RerunSeconds)
	if g.BudgetSeconds > 0 {
		total += " of a " + d(g.BudgetSeconds) + " budget"
	}
	return total + ": " + strings.Join(parts, ", ")
}

// gpuTime is the comment's block on the job's GPU time: by phase against the budget, and the
// cells left undecided with what deciding each would cost. Empty when the job recorded none.
func (m *model) gpuTime() string {
	var g *results.GPUTime
	switch {
	case m.c != nil && m.c.GPUTime != nil:
		g = m.c.GPUTime
	case m.x.Head != nil:
		g = m.x.Head.Run.GPUTime
	}
	if g == nil {
		return ""
	}
	g = m.inProfileSeconds(g)
	var b strings.Builder
	fmt.Fprintf(&b, "<details><summary>GPU time: %s</summary>\n\n%s.\n", seconds(g.BuildSeconds+g.LoadSeconds+g.MeasureSeconds+g.RerunSeconds), GPUTimeLine(g))
	var priced, stuck, second, base []results.UndecidedCost
	for _, u := range g.Undecided {
		switch u.Reason {
		case results.UndecidedOverBudget:
			priced = append(priced, u)
		case results.UndecidedSecondLook:
			second = append(second, u)
		case results.UndecidedNeedsBase:
			base = append(base, u)
		default:
			stuck = append(stuck, u)
		}
	}
	if len(priced) > 0 {
		var total float64
		b.WriteString("\nUndecided because the budget ran out, with what deciding each would cost:\n\n| Cell | Metrics | Further trials | GPU time |\n|---|---|---:|---:|\n")
		for _, u := range priced {
			name := cellCode(u.Cell)
			if u.Row != "" {
				name = "row " + EscapeText(u.Row, 20) + " (" + name + ")"
			}
			fmt.Fprintf(&b, "| %s | %s | %d | %s |\n", name, metricTitles(u.Metrics), u.FurtherTrials, seconds(u.CostSeconds))
			total += u.CostSeconds
		}
		fmt.Fprintf(&b, "\nDeciding them all would cost about %s more.\n", seconds(total))
	}
	if len(second) > 0 {
		fmt.Fprintf(&b, "\nStill inconclusive after the rerun's second look, the last the method allows: %s.\n", undecidedCells(second))
	}
	if len(base) > 0 {
		fmt.Fprintf(&b, "\nHead trials alone cannot decide (the baseline's runs are too noisy); they need base reruns or paired mode (`run --paired`): %s.\n", undecidedCells(base))
	}
	if len(stuck) > 0 {
		fmt.Fprintf(&b, "\nNo number of further trials within the advice's limit decides: %s.\n", undecidedCells(stuck))
	}
	b.WriteString("\n</details>\n")
	return b.String()
}

// inProfileSeconds returns g in the profile's time where the head was simulated faster (every
// duration times the time scale), so that the comment has one time base; g itself is kept.
func (m *model) inProfileSeconds(g *results.GPUTime) *results.GPUTime {
	s := 1.0
	switch {
	case m.c != nil:
		s = m.c.Head.Scale()
	case m.x.Head != nil:
		s = m.x.Head.TimeScale()
	}
	if s == 1 {
		return g
	}
	out := *g
	out.BudgetSeconds *= s
	out.BuildSeconds *= s
	out.LoadSeconds *= s
	out.MeasureSeconds *= s
	out.RerunSeconds *= s
	out.Undecided = nil
	for _, u := range g.Undecided {
		u.CostSeconds *= s
		out.Undecided = append(out.Undecided, u)
	}
	return &out
}

// seconds formats a GPU time in seconds as a duration rounded to the second.
func seconds(s float64) string {
	return time.Duration(s * float64(time.Second)).Round(time.Second).String()
}

// metricTitles lists metrics by their titles.
func metricTitles(ms []results.Metric) string {
	var ts []string
	for _, m := range ms {
		ts = append(ts, m.Title())
	}
	if len(ts) == 0 {
		return Dash
	}
	return strings.Join(ts, ", ")
}

// undecidedCells lists the cells of us as code, with their metrics.
func undecidedCells(us []results.UndecidedCost) string {
	var parts []string
	for _, u := range us {
		parts = append(parts, cellCode(u.Cell)+" ("+metricTitles(u.Metrics)+")")
	}
	return strings.Join(parts, ", ")
}

// cellCode shows a cell list as code when every item is a cell, else as escaped text.
func cellCode(list string) string {
	cells := validCells(list)
	if len(cells) == 0 || len(cells) != len(strings.Split(list, ",")) {
		return EscapeText(list, 200)
	}
	return "`" + strings.Join(cells, ",") + "`"
}
