package stats

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/stat"
)

// Estimate is a difference with its standard error and degrees of freedom: what a t test and a
// t interval need. DF is +Inf when the standard error is known (a normal approximation).
type Estimate struct {
	Diff float64
	SE   float64
	DF   float64
}

// TResult is the outcome of a t test on an Estimate.
type TResult struct {
	T      float64
	DF     float64
	P      float64
	CILow  float64
	CIHigh float64
}

// WelchT runs Welch's two-sample t test of mean(x) − mean(y) against mu with a two-sided
// confidence interval at level conf, as R's t.test(x, y, mu = mu, var.equal = FALSE,
// conf.level = conf) does. Both samples need at least two values.
func WelchT(x, y []float64, mu float64, alt Alternative, conf float64) (TResult, error) {
	e, err := WelchEstimate(x, y)
	if err != nil {
		return TResult{}, err
	}
	return e.Test(mu, alt, conf), nil
}

// WelchEstimate returns mean(x) − mean(y) with the Welch standard error and the
// Welch–Satterthwaite degrees of freedom.
func WelchEstimate(x, y []float64) (Estimate, error) {
	if len(x) < 2 || len(y) < 2 {
		return Estimate{}, fmt.Errorf("welch t needs two values in each sample (got %d and %d): %w", len(x), len(y), ErrTooFewSamples)
	}
	mx, vx := stat.MeanVariance(x, nil)
	my, vy := stat.MeanVariance(y, nil)
	return WelchFromSummaries(mx, vx, len(x), my, vy, len(y)), nil
}

// WelchFromSummaries returns the Welch estimate of m1 − m2 from two samples' means, variances
// (n − 1 denominators) and sizes.
func WelchFromSummaries(m1, v1 float64, n1 int, m2, v2 float64, n2 int) Estimate {
	a, b := v1/float64(n1), v2/float64(n2)
	return Estimate{Diff: m1 - m2, SE: math.Sqrt(a + b), DF: Satterthwaite([]float64{a, b}, []float64{float64(n1 - 1), float64(n2 - 1)})}
}

// Satterthwaite returns the Welch–Satterthwaite degrees of freedom of a sum of independent
// variance components v with degrees of freedom df ((Σv)² / Σ v²/df). A component with +Inf df
// (a known variance) adds nothing to the denominator; the result is +Inf when every component
// is known, and 0 when the sum is 0.
func Satterthwaite(v, df []float64) float64 {
	var sum, den float64
	for i := range v {
		sum += v[i]
		if !math.IsInf(df[i], 1) && df[i] > 0 {
			den += v[i] * v[i] / df[i]
		}
	}
	if sum == 0 {
		return 0
	}
	if den == 0 {
		return math.Inf(1)
	}
	return sum * sum / den
}

// Test returns the t test of Diff against mu and the two-sided confidence interval for Diff at
// level conf.
func (e Estimate) Test(mu float64, alt Alternative, conf float64) TResult {
	r := TResult{DF: e.DF}
	q := TQuantile(1-(1-conf)/2, e.DF)
	r.CILow, r.CIHigh = e.Diff-q*e.SE, e.Diff+q*e.SE
	if e.SE == 0 {
		r.T = math.Copysign(math.Inf(1), e.Diff-mu)
		if e.Diff == mu {
			r.T = 0
		}
	} else {
		r.T = (e.Diff - mu) / e.SE
	}
	switch alt {
	case Less:
		r.P = TCDF(r.T, e.DF)
	case Greater:
		r.P = TSurvival(r.T, e.DF)
	default:
		if r.T == 0 && e.SE == 0 {
			r.P = 1
		} else {
			r.P = math.Min(1, 2*TSurvival(math.Abs(r.T), e.DF))
		}
	}
	return r
}

// TOST runs the two one-sided tests of equivalence (Schuirmann, 1987) of e.Diff to the interval
// (lower, upper): the larger of the p-values of H0: Diff ≤ lower and H0: Diff ≥ upper. A p-value
// at most α shows equivalence at level α; it does so exactly when the two-sided 1 − 2α
// confidence interval lies inside (lower, upper).
func (e Estimate) TOST(lower, upper float64) float64 {
	pl := e.Test(lower, Greater, 0.9).P
	pu := e.Test(upper, Less, 0.9).P
	return math.Max(pl, pu)
}
