package stats

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/integrate/quad"
)

// Spending is an alpha-spending function of Lan and DeMets (1983): the share of the total
// two-sided error rate alpha spent by information fraction t in (0, 1].
type Spending string

// The spending functions.
const (
	// SpendPocock is the Pocock-type function α·ln(1 + (e − 1)·t): it spends much early, so the
	// first look keeps most of its power.
	SpendPocock Spending = "pocock"
	// SpendOBrienFleming is the O'Brien–Fleming-type function 2 − 2Φ(z_{1−α/2}/√t): it spends
	// little early and keeps the final look near the single-look level.
	SpendOBrienFleming Spending = "obrien-fleming"
)

// Spent returns the cumulative two-sided error rate spent at information fraction t.
func (s Spending) Spent(alpha, t float64) (float64, error) {
	if t <= 0 || t > 1 || alpha <= 0 || alpha >= 1 {
		return 0, fmt.Errorf("spending: need 0 < t ≤ 1 and 0 < alpha < 1 (got t=%v alpha=%v)", t, alpha)
	}
	switch s {
	case SpendPocock:
		return alpha * math.Log(1+(math.E-1)*t), nil
	case SpendOBrienFleming:
		return 2 - 2*stdNormal.CDF(stdNormal.Quantile(1-alpha/2)/math.Sqrt(t)), nil
	}
	return 0, fmt.Errorf("unknown spending function %q (want %q or %q)", string(s), SpendPocock, SpendOBrienFleming)
}

// CrossSecond returns P(|Z1| < c1, |Z2| ≥ c2) for standard normal test statistics Z1, Z2 of
// the first and second look with correlation rho = √t1 (t1 the information fraction at the
// first look): the error rate the second look adds under the null hypothesis.
func CrossSecond(c1, c2, rho float64) float64 {
	if rho >= 1 {
		if c2 >= c1 {
			return 0
		}
		return 2 * (stdNormal.CDF(c1) - stdNormal.CDF(c2))
	}
	s := math.Sqrt(1 - rho*rho)
	f := func(z1 float64) float64 {
		// P(|Z2| ≥ c2 | Z1 = z1), Z2 | z1 ~ N(ρ z1, 1 − ρ²).
		m := rho * z1
		tail := stdNormal.Survival((c2-m)/s) + stdNormal.CDF((-c2-m)/s)
		return stdNormal.Prob(z1) * tail
	}
	return quad.Fixed(f, -c1, c1, 200, nil, 0)
}

// SecondLookBoundary returns the critical value c2 for |Z| at the second of two looks such that
// a first look at c1 and the second together keep the two-sided error rate at alpha:
// P(|Z1| ≥ c1) + P(|Z1| < c1, |Z2| ≥ c2) = alpha, with corr(Z1, Z2) = √t1. It fails when the
// first look already spent alpha.
func SecondLookBoundary(c1, alpha, t1 float64) (float64, error) {
	spent1 := 2 * stdNormal.Survival(c1)
	rest := alpha - spent1
	if rest <= 0 {
		return 0, fmt.Errorf("second look: the first look (|z| ≥ %.3f) spent %.4g of alpha %.4g", c1, spent1, alpha)
	}
	if t1 <= 0 || t1 > 1 {
		return 0, fmt.Errorf("second look: information fraction %v is not in (0, 1]", t1)
	}
	rho := math.Sqrt(t1)
	lo, hi := 0.0, 40.0
	if CrossSecond(c1, lo, rho) < rest {
		// Even rejecting always at the second look adds less than what is left.
		return 0, nil
	}
	for range 200 {
		mid := (lo + hi) / 2
		if CrossSecond(c1, mid, rho) > rest {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi, nil
}

// TwoLook is a two-look group-sequential plan for a two-sided error rate Alpha.
type TwoLook struct {
	Alpha float64
	// C1 and C2 are the critical |z| values of the two looks; Level1 and Level2 are the
	// nominal two-sided significance levels they correspond to (2·(1 − Φ(c))).
	C1, C2         float64
	Level1, Level2 float64
	// T1 is the information fraction of the first look the plan assumed.
	T1 float64
}

// PlanTwoLooks returns the two-look plan for alpha with the spending function s when the first
// look has information fraction t1 (1/2 when the second look doubles the data).
func PlanTwoLooks(alpha, t1 float64, s Spending) (TwoLook, error) {
	a1, err := s.Spent(alpha, t1)
	if err != nil {
		return TwoLook{}, err
	}
	c1 := stdNormal.Quantile(1 - a1/2)
	c2, err := SecondLookBoundary(c1, alpha, t1)
	if err != nil {
		return TwoLook{}, err
	}
	return TwoLook{Alpha: alpha, C1: c1, C2: c2, Level1: a1, Level2: 2 * stdNormal.Survival(c2), T1: t1}, nil
}
