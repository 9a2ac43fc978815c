package engine

import (
	"fmt"
	"math"
	"sort"
)

// Point is one point of a piecewise-linear curve.
type Point struct{ X, Y float64 }

// Timing is the speed of the modelled hardware: how long the engine's steps take.
type Timing struct {
	// Prefill is the cumulative compute time in seconds (Y) to prefill the first X tokens of a
	// prompt, X ascending; (0, 0) is implied and the last segment's slope continues beyond the
	// last point. A chunk of tokens [a, b) costs Prefill(b) − Prefill(a), so one prompt prefilled
	// alone in chunks takes exactly its curve value.
	Prefill []Point
	// Decode is the time in seconds (Y) of one decode step (with speculative decoding: one
	// verification step) by batch size (X), X ascending; interpolated linearly, extrapolated
	// from the end segments.
	Decode []Point
	// DecodePerContextToken is the extra seconds one decode step takes per token of context
	// summed over the sequences in the batch (attention cost).
	DecodePerContextToken float64
	// CachedPerToken is the engine time, in seconds per token, to take up a prompt prefix found
	// in the prefix cache; it is paid in the step that admits the request, while the request
	// counts as running.
	CachedPerToken float64
	// FrontendPerToken and FrontendBase are the API server's work per request before the engine
	// sees it: tokenizing, FrontendPerToken seconds per prompt token, for all requests in
	// parallel, then FrontendBase seconds one request at a time.
	FrontendBase     float64
	FrontendPerToken float64
}

// Validate checks that the curves are usable.
func (t *Timing) Validate() error {
	if len(t.Prefill) == 0 {
		return fmt.Errorf("timing: prefill curve has no points")
	}
	if len(t.Decode) == 0 {
		return fmt.Errorf("timing: decode curve has no points")
	}
	for name, pts := range map[string][]Point{"prefill": t.Prefill, "decode": t.Decode} {
		for i, p := range pts {
			if !(p.X > 0) || !(p.Y > 0) || math.IsInf(p.X, 0) || math.IsInf(p.Y, 0) {
				return fmt.Errorf("timing: %s point %d (%g, %g): both values must be positive", name, i, p.X, p.Y)
			}
			if i > 0 && !(p.X > pts[i-1].X) {
				return fmt.Errorf("timing: %s points must have ascending x (point %d: %g after %g)", name, i, p.X, pts[i-1].X)
			}
		}
	}
	for i := 1; i < len(t.Prefill); i++ {
		if t.Prefill[i].Y < t.Prefill[i-1].Y {
			return fmt.Errorf("timing: prefill time must not fall with length (point %d)", i)
		}
	}
	if t.DecodePerContextToken < 0 || t.FrontendBase < 0 || t.FrontendPerToken < 0 || t.CachedPerToken < 0 {
		return fmt.Errorf("timing: per-token costs and frontend time must not be negative")
	}
	return nil
}

// interp evaluates the piecewise-linear curve pts at x, extrapolating from the end segments.
func interp(pts []Point, x float64) float64 {
	n := len(pts)
	if n == 1 {
		return pts[0].Y
	}
	i := sort.Search(n, func(i int) bool { return pts[i].X >= x })
	switch {
	case i == 0:
		i = 1
	case i == n:
		i = n - 1
	}
	a, b := pts[i-1], pts[i]
	return a.Y + (b.Y-a.Y)*(x-a.X)/(b.X-a.X)
}

// PrefillSeconds returns the cumulative prefill compute time of the first n tokens.
func (t *Timing) PrefillSeconds(n int) float64 {
	x := float64(n)
	if x <= 0 {
		return 0
	}
	first := t.Prefill[0]
	if x <= first.X || len(t.Prefill) == 1 {
		return first.Y * x / first.X
	}
	return interp(t.Prefill, x)
}

// DecodeSeconds returns the time of a decode step of batch sequences holding ctx context tokens
// in all.
func (t *Timing) DecodeSeconds(batch int, ctx int64) float64 {
	s := interp(t.Decode, float64(batch)) + t.DecodePerContextToken*float64(ctx)
	return math.Max(s, 1e-6)
}

// FrontendSeconds returns the API server's time for one request of promptTokens.
func (t *Timing) FrontendSeconds(promptTokens int) float64 {
	return t.FrontendBase + t.FrontendPerToken*float64(promptTokens)
}
