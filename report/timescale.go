package report

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/speedmatrix/speedmatrix/results"
)

// A results file measured against the built-in simulator at a speedup holds its numbers as
// measured: rates that many times the profile's, times that many times shorter. The renderings
// for people show them in the profile's time instead (rates ÷ the scale, times × the scale), so
// that a simulated GPU reads like the GPU, and say so in one line; CSV keeps the numbers as
// measured with the scale in a column.

// simulatorNotePrefix starts the note that in-process simulator runs wrote before the page
// stated the time scale itself; the page drops it, since it describes the measured numbers.
const simulatorNotePrefix = "measured against the built-in simulator"

// factor formats a time scale: "20", "2.5".
func factor(s float64) string { return strconv.FormatFloat(s, 'g', -1, 64) }

// pageTimeScaleLine is the page's statement of its time scale, "" for a real server.
func pageTimeScaleLine(s float64) string {
	if s == 1 {
		return ""
	}
	x := factor(s)
	return fmt.Sprintf("Simulated at %s× the profile's speed: figures are in the profile's time (rates ÷ %s, times × %s); the results file holds them as measured.", x, x, x)
}

// comparisonTimeScaleLine is a comparison's statement of its sides' time scales, "" when both
// measured real servers.
func comparisonTimeScaleLine(c *results.Comparison) string {
	b, h := c.Base.Scale(), c.Head.Scale()
	switch {
	case b == 1 && h == 1:
		return ""
	case b == h:
		x := factor(b)
		return fmt.Sprintf("Simulated at %s× the profile's speed: figures are in the profile's time (rates ÷ %s, times × %s); the results files hold them as measured.", x, x, x)
	}
	side := func(s float64) string {
		if s == 1 {
			return "1× (a real server)"
		}
		return factor(s) + "×"
	}
	return fmt.Sprintf("Simulated at different speeds, base at %s, head at %s: each side's figures are in its profile's time (rates ÷ its speedup, times × it); the results files hold them as measured.", side(b), side(h))
}

// inProfileTime returns a copy of f whose summary numbers are in the profile's time (rates ÷
// s, times × s; counts unchanged), without raw trials: what the page shows. f is not changed.
func inProfileTime(f *results.File, s float64) *results.File {
	if s == 1 {
		return f
	}
	rate := func(p *float64) *float64 {
		if p == nil {
			return nil
		}
		x := *p / s
		return &x
	}
	dur := func(p *float64) *float64 {
		if p == nil {
			return nil
		}
		x := *p * s
		return &x
	}
	out := *f
	out.Run.SecondsPerMeasurement *= s
	out.Prefill = make([]results.PrefillCell, len(f.Prefill))
	for i, c := range f.Prefill {
		c.PromptTokPerS, c.TTFTMs, c.Trials = rate(c.PromptTokPerS), dur(c.TTFTMs), nil
		out.Prefill[i] = c
	}
	out.Decode = make([]results.DecodeCell, len(f.Decode))
	for i, c := range f.Decode {
		m := &c.DecodeMetrics
		m.TotalTokPerS, m.PerRequestTokPerS = rate(m.TotalTokPerS), rate(m.PerRequestTokPerS)
		m.TTFTMs, m.TBTMs, m.InterChunkMs, m.ClientQueueMs = dur(m.TTFTMs), dur(m.TBTMs), dur(m.InterChunkMs), dur(m.ClientQueueMs)
		m.MeasuredSeconds = dur(m.MeasuredSeconds)
		c.Trials = nil
		out.Decode[i] = c
	}
	out.Notes = nil
	for _, n := range f.Notes {
		if !strings.HasPrefix(n, simulatorNotePrefix) {
			out.Notes = append(out.Notes, n)
		}
	}
	return &out
}
