package quantile

import (
	"math"
	"slices"
)

// Median returns the median of xs — the middle value, or the mean of the two middle values for
// an even count — or NaN when xs is empty. It does not modify xs.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
