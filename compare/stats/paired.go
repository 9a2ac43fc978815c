package stats

import (
	"fmt"
	"math"
)

// Paired is the estimate of a change from paired differences (PairedEstimate).
type Paired struct {
	Estimate
	// Pairs is how many differences it used.
	Pairs int
	// PeriodAdjusted is set when both orders occurred among at least three pairs and the
	// period effect was fitted; Period is then that effect, the later block's log value minus
	// the earlier one's beyond the change (a drift per block), else 0.
	PeriodAdjusted bool
	Period         float64
}

// PairedEstimate returns the change estimated from paired differences d (head − base of the
// blocks of one pair, on the log scale) with its standard error and degrees of freedom.
// headFirst, when not nil, says for each pair whether the head's block ran first.
//
// When both orders occur among at least three pairs, it is the two-period crossover analysis
// (Jones & Kenward, Design and Analysis of Cross-Over Trials, ch. 2): each order group's mean
// difference is the change plus or minus the period effect (what the later block gains over the
// earlier one: drift), so the change is the mean of the two groups' means and the period effect
// half their difference; the variance is the pooled within-group variance of the differences,
// n − 2 degrees of freedom. A drift linear in time, which makes ABBA's differences swing by ±γ,
// leaves neither the estimate nor its error. Otherwise it is the one-sample t of the
// differences (n − 1 degrees of freedom). It needs at least two pairs.
func PairedEstimate(d []float64, headFirst []bool) (Paired, error) {
	n := len(d)
	if n < 2 {
		return Paired{}, fmt.Errorf("a paired estimate needs two pairs (got %d): %w", n, ErrTooFewSamples)
	}
	if headFirst != nil && len(headFirst) != n {
		return Paired{}, fmt.Errorf("paired estimate: %d differences but %d orders", n, len(headFirst))
	}
	var g [2][]float64 // base first, head first
	for i, x := range d {
		k := 0
		if headFirst != nil && headFirst[i] {
			k = 1
		}
		g[k] = append(g[k], x)
	}
	if n >= 3 && len(g[0]) > 0 && len(g[1]) > 0 {
		m0, m1 := mean(g[0]), mean(g[1])
		var ss float64
		for k, grp := range g {
			m := []float64{m0, m1}[k]
			for _, x := range grp {
				ss += (x - m) * (x - m)
			}
		}
		df := float64(n - 2)
		s2 := ss / df
		se := math.Sqrt(s2 / 4 * (1/float64(len(g[0])) + 1/float64(len(g[1]))))
		return Paired{Estimate: Estimate{Diff: (m0 + m1) / 2, SE: se, DF: df}, Pairs: n, PeriodAdjusted: true, Period: (m0 - m1) / 2}, nil
	}
	m := mean(d)
	var ss float64
	for _, x := range d {
		ss += (x - m) * (x - m)
	}
	return Paired{Estimate: Estimate{Diff: m, SE: math.Sqrt(ss / float64(n-1) / float64(n)), DF: float64(n - 1)}, Pairs: n}, nil
}

// MaxSignFlipPairs is the most pairs SignFlip enumerates (2^20 sign vectors).
const MaxSignFlipPairs = 20

// SignFlip returns the exact two-sided p-value of the sign-flip permutation test of "the
// differences d are symmetric about 0": the share of the 2^n sign vectors s with |Σ sᵢdᵢ| at
// least |Σ dᵢ| (Fisher's randomization test of paired data). It is the rank-free check of a
// paired change, as Mann–Whitney is of unpaired trials; the smallest p it can give is 2/2^n.
func SignFlip(d []float64) (float64, error) {
	n := len(d)
	if n == 0 {
		return 0, fmt.Errorf("sign-flip test needs a pair: %w", ErrTooFewSamples)
	}
	if n > MaxSignFlipPairs {
		return 0, fmt.Errorf("sign-flip test: %d pairs, at most %d are enumerated", n, MaxSignFlipPairs)
	}
	var obs float64
	for _, x := range d {
		obs += x
	}
	obs = math.Abs(obs)
	tol := 1e-12 * (obs + 1)
	count := 0
	for mask := 0; mask < 1<<n; mask++ {
		var s float64
		for i, x := range d {
			if mask&(1<<i) != 0 {
				s -= x
			} else {
				s += x
			}
		}
		if math.Abs(s) >= obs-tol {
			count++
		}
	}
	return float64(count) / float64(int(1)<<n), nil
}

func mean(xs []float64) float64 {
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}
