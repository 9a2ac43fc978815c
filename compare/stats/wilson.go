package stats

import "math"

// Wilson returns the Wilson score interval of k successes in n trials at the normal quantile z
// (1.96 for two-sided 95 %; 1.645 for a one-sided 95 % bound), clipped to [0, 1]; 0, 0 for no
// trials.
func Wilson(k, n int, z float64) (low, high float64) {
	if n == 0 {
		return 0, 0
	}
	p, nf := float64(k)/float64(n), float64(n)
	den := 1 + z*z/nf
	center := (p + z*z/(2*nf)) / den
	half := z * math.Sqrt(p*(1-p)/nf+z*z/(4*nf*nf)) / den
	return math.Max(0, center-half), math.Min(1, center+half)
}
