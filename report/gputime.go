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
