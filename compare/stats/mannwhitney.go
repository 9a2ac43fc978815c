package stats

import (
	"errors"
	"fmt"
	"math"
	"sort"
)

// Alternative is the alternative hypothesis of a test.
type Alternative int

// The alternatives, named as R names them.
const (
	TwoSided Alternative = iota // the locations differ
	Less                        // x is located below y
	Greater                     // x is located above y
)

// ExactLimit is the sample size below which (in each sample, without ties) MannWhitney uses the
// exact distribution of U, as R's wilcox.test does ("less than 50 finite values").
const ExactLimit = 50

// MannWhitneyResult is the outcome of a Mann–Whitney U test.
type MannWhitneyResult struct {
	// U is R's W statistic: the number of pairs (x_i, y_j) with x_i > y_j, ties counting ½.
	U float64
	P float64
	// Exact tells whether P comes from the exact null distribution (no ties, both samples
	// smaller than ExactLimit) or from the normal approximation with tie and continuity
	// correction.
	Exact bool
}

// ErrTooFewSamples is returned when a test needs more samples than it got.
var ErrTooFewSamples = errors.New("too few samples")

// MannWhitney runs the two-sample Wilcoxon rank-sum (Mann–Whitney U) test of x against y, with
// the conventions of R's wilcox.test(x, y, alternative, exact = NULL, correct = TRUE): the exact
// p-value when both samples have fewer than ExactLimit values and there are no ties, otherwise the
// normal approximation with the tie correction of the variance and a continuity correction of ½.
func MannWhitney(x, y []float64, alt Alternative) (MannWhitneyResult, error) {
	n1, n2 := len(x), len(y)
	if n1 == 0 || n2 == 0 {
		return MannWhitneyResult{}, fmt.Errorf("mann-whitney needs at least one value in each sample (got %d and %d): %w", n1, n2, ErrTooFewSamples)
	}
	for _, v := range append(append([]float64(nil), x...), y...) {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return MannWhitneyResult{}, fmt.Errorf("mann-whitney: non-finite value %v", v)
		}
	}
	ranks, tieSizes := rank(append(append([]float64(nil), x...), y...))
	var rx float64
	for i := range n1 {
		rx += ranks[i]
	}
	u := rx - float64(n1*(n1+1))/2
	res := MannWhitneyResult{U: u}
	if len(tieSizes) == 0 && n1 < ExactLimit && n2 < ExactLimit {
		res.Exact = true
		cdf := uCDF(n1, n2)
		w := int(math.Round(u))
		le := cdf[w] // P(U ≤ w)
		ge := 1.0    // P(U ≥ w)
		if w > 0 {
			ge = 1 - cdf[w-1]
		}
		switch alt {
		case Less:
			res.P = le
		case Greater:
			res.P = ge
		default:
			res.P = math.Min(1, 2*math.Min(le, ge))
		}
		return res, nil
	}
	n := float64(n1 + n2)
	var tieSum float64
	for _, t := range tieSizes {
		tf := float64(t)
		tieSum += tf*tf*tf - tf
	}
	sigma := math.Sqrt(float64(n1*n2) / 12 * ((n + 1) - tieSum/(n*(n-1))))
	z := u - float64(n1*n2)/2
	if sigma == 0 {
		// Every value is the same: no evidence either way.
		res.P = 1
		return res, nil
	}
	var corr float64
	switch alt {
	case TwoSided:
		corr = 0.5 * sign(z)
	case Greater:
		corr = 0.5
	case Less:
		corr = -0.5
	}
	z = (z - corr) / sigma
	switch alt {
	case Less:
		res.P = stdNormal.CDF(z)
	case Greater:
		res.P = stdNormal.Survival(z)
	default:
		res.P = math.Min(1, 2*math.Min(stdNormal.CDF(z), stdNormal.Survival(z)))
	}
	return res, nil
}

func sign(v float64) float64 {
	switch {
	case v > 0:
		return 1
	case v < 0:
		return -1
	}
	return 0
}

// rank returns the mid-ranks (1-based, ties averaged) of v and the sizes of its tie groups
// (only groups of two or more).
func rank(v []float64) ([]float64, []int) {
	idx := make([]int, len(v))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return v[idx[a]] < v[idx[b]] })
	ranks := make([]float64, len(v))
	var ties []int
	for i := 0; i < len(idx); {
		j := i
		for j+1 < len(idx) && v[idx[j+1]] == v[idx[i]] {
			j++
		}
		mid := float64(i+j)/2 + 1
		for k := i; k <= j; k++ {
			ranks[idx[k]] = mid
		}
		if j > i {
			ties = append(ties, j-i+1)
		}
		i = j + 1
	}
	return ranks, ties
}

// uCDF returns P(U ≤ u) for u = 0 … n1·n2 under the null hypothesis, from the counts of
// arrangements (the recursion of Mann and Whitney, 1947, as in R's cwilcox).
func uCDF(n1, n2 int) []float64 {
	// c(u; m, n) = c(u−n; m−1, n) + c(u; m, n−1): the largest value is an x (it beats all n
	// y-values) or a y. prev holds n − 1, cur n, both flat over (m, u).
	maxU := n1 * n2
	w := maxU + 1
	prev := make([]float64, (n1+1)*w)
	cur := make([]float64, (n1+1)*w)
	for m := 0; m <= n1; m++ {
		prev[m*w] = 1 // n = 0: one arrangement, u = 0
	}
	for n := 1; n <= n2; n++ {
		clear(cur)
		for m := 0; m <= n1; m++ {
			row, up := cur[m*w:(m+1)*w], prev[m*w:(m+1)*w]
			for u := 0; u <= m*n; u++ {
				c := up[u]
				if m > 0 && u >= n {
					c += cur[(m-1)*w+u-n]
				}
				row[u] = c
			}
		}
		prev, cur = cur, prev
	}
	counts := prev[n1*w : (n1+1)*w]
	var total float64
	for _, c := range counts {
		total += c
	}
	cdf := make([]float64, w)
	var acc float64
	for u, c := range counts {
		acc += c
		cdf[u] = acc / total
	}
	return cdf
}
