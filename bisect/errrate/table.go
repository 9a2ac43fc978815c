package errrate

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"
)

// pct formats a rate's share.
func pctOf(p float64) string { return fmt.Sprintf("%.1f %%", 100*p) }

// WriteMarkdown writes the table as Markdown.
func (rep *Report) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "| slowdown | commits | procedure | culprit right | wrong (95 %% CI) | open (bad not reproduced) | mean steps | max steps | mean GPU time |\n")
	fmt.Fprintf(&b, "|---:|---:|---|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range rep.Rows {
		fmt.Fprintf(&b, "| %.0f %% | %d | %s | %s | %s (%.1f–%.1f %%) | %s (%s) | %.1f | %d | %s |\n", 100*r.Slowdown, r.Range, r.Procedure.Name,
			pctOf(r.Right.P), pctOf(r.Wrong.P), 100*r.Wrong.Low, 100*r.Wrong.High, pctOf(r.Open.P), pctOf(r.NotReproduced.P), r.MeanSteps, r.MaxSteps, minutes(r.MeanGPU))
	}
	s := rep.Settings
	fmt.Fprintf(&b, "\n%d bisections a row, noise model %s, %d history runs, budget %d steps, seed %d; a step is one round (a rerun counts; a k-ary round of N−1 commits counts once), GPU time is every measured commit's (the runners' together).\n",
		s.Bisections, s.Model, s.History, s.Budget.Steps, s.Seed)
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteJSON writes the report as JSON.
func (rep *Report) WriteJSON(w io.Writer) error {
	e := json.NewEncoder(w)
	e.SetIndent("", "  ")
	return e.Encode(rep)
}

func minutes(d time.Duration) string { return fmt.Sprintf("%.1f min", d.Minutes()) }
