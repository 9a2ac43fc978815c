package vmatrix

import (
	"fmt"
	"io"
	"math"
	"slices"
	"time"

	"github.com/speedmatrix/speedmatrix/results"
)

// OptionsFor returns the options that measure the same matrix as f on a server of
// maxModelLen: its prefill contexts (at most maxModelLen − 1 tokens), its decode contexts (at
// most maxModelLen − max_tokens − 64, as the reference tool trims them) and concurrency levels,
// its max_tokens and window. Cells keep f's labels.
func OptionsFor(f *results.File, maxModelLen int) Options {
	o := ReferenceOptions(0)
	o.PrefillContexts, o.Contexts, o.Concurrency = nil, nil, nil
	o.Labels = map[int]string{}
	if f.Run.MaxOutputTokens > 0 {
		o.MaxTokens = f.Run.MaxOutputTokens
	}
	for _, c := range f.Prefill {
		ctx := min(c.Context, maxModelLen-1)
		o.PrefillContexts = append(o.PrefillContexts, ctx)
		o.Labels[ctx] = c.ContextLabel
	}
	for _, c := range f.Decode {
		ctx := min(c.Context, maxModelLen-o.MaxTokens-64)
		o.Labels[ctx] = c.ContextLabel
		if !slices.Contains(o.Contexts, ctx) {
			o.Contexts = append(o.Contexts, ctx)
		}
		if !slices.Contains(o.Concurrency, c.Concurrency) {
			o.Concurrency = append(o.Concurrency, c.Concurrency)
		}
	}
	if f.Run.SecondsPerMeasurement > 0 {
		o.Window = time.Duration(f.Run.SecondsPerMeasurement * float64(time.Second))
	}
	return o
}

// CellDiff is one cell of a measured matrix next to the same cell of a reference.
type CellDiff struct {
	Phase                results.Phase
	Label                string
	Concurrency          int
	RefStatus, Status    results.Status
	Ref, Got             *float64 // prompt tok/s (prefill) or total tok/s (decode)
	RefActive, GotActive *float64
}

// Rel returns Got/Ref − 1, NaN when either is missing.
func (d CellDiff) Rel() float64 {
	if d.Ref == nil || d.Got == nil || *d.Ref == 0 {
		return math.NaN()
	}
	return *d.Got / *d.Ref - 1
}

// Compare pairs the cells of got with those of ref by identity, in ref's order.
func Compare(ref, got *results.File) []CellDiff {
	var out []CellDiff
	for _, rc := range ref.Prefill {
		d := CellDiff{Phase: results.PhasePrefill, Label: rc.ContextLabel, RefStatus: rc.Status, Ref: rc.PromptTokPerS}
		for _, gc := range got.Prefill {
			if gc.Context == rc.Context || gc.ContextLabel == rc.ContextLabel {
				d.Status, d.Got = gc.Status, gc.PromptTokPerS
				break
			}
		}
		out = append(out, d)
	}
	for _, rc := range ref.Decode {
		d := CellDiff{Phase: results.PhaseDecode, Label: rc.ContextLabel, Concurrency: rc.Concurrency, RefStatus: rc.Status, Ref: rc.TotalTokPerS, RefActive: rc.AvgActiveRequests}
		for _, gc := range got.Decode {
			if gc.ContextLabel == rc.ContextLabel && gc.Concurrency == rc.Concurrency {
				d.Status, d.Got, d.GotActive = gc.Status, gc.TotalTokPerS, gc.AvgActiveRequests
				break
			}
		}
		out = append(out, d)
	}
	return out
}

// WriteTable writes the comparison as an aligned text table.
func WriteTable(w io.Writer, diffs []CellDiff) error {
	num := func(p *float64, format string) string {
		if p == nil {
			return "—"
		}
		return fmt.Sprintf(format, *p)
	}
	if _, err := fmt.Fprintf(w, "%-8s %-7s %4s %-13s %-13s %10s %10s %7s %7s %7s\n", "phase", "context", "C", "ref status", "sim status", "ref tok/s", "sim tok/s", "diff", "ref act", "sim act"); err != nil {
		return err
	}
	for _, d := range diffs {
		c, rel := "", "—"
		if d.Phase == results.PhaseDecode {
			c = fmt.Sprint(d.Concurrency)
		}
		if r := d.Rel(); !math.IsNaN(r) {
			rel = fmt.Sprintf("%+.1f%%", 100*r)
		}
		if _, err := fmt.Fprintf(w, "%-8s %-7s %4s %-13s %-13s %10s %10s %7s %7s %7s\n", d.Phase, d.Label, c, d.RefStatus, d.Status,
			num(d.Ref, "%.1f"), num(d.Got, "%.1f"), rel, num(d.RefActive, "%.1f"), num(d.GotActive, "%.1f")); err != nil {
			return err
		}
	}
	return nil
}
