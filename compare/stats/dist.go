package stats

import (
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// stdNormal is the standard normal distribution.
var stdNormal = distuv.Normal{Mu: 0, Sigma: 1}

// TQuantile returns the p quantile of Student's t distribution with df degrees of freedom (R's
// qt(p, df)). A df of +Inf, or one above 1e7, gives the normal quantile.
func TQuantile(p, df float64) float64 {
	if math.IsInf(df, 1) || df > 1e7 {
		return stdNormal.Quantile(p)
	}
	return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Quantile(p)
}

// TCDF returns P(T ≤ t) for Student's t with df degrees of freedom (R's pt(t, df)); +Inf df is
// the normal CDF.
func TCDF(t, df float64) float64 {
	if math.IsInf(df, 1) || df > 1e7 {
		return stdNormal.CDF(t)
	}
	return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.CDF(t)
}

// TSurvival returns P(T > t) for Student's t with df degrees of freedom, accurate in the far
// upper tail.
func TSurvival(t, df float64) float64 {
	if math.IsInf(df, 1) || df > 1e7 {
		return stdNormal.Survival(t)
	}
	return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Survival(t)
}

// NormalQuantile returns the p quantile of the standard normal distribution (R's qnorm(p)).
func NormalQuantile(p float64) float64 { return stdNormal.Quantile(p) }

// NormalCDF returns the standard normal CDF at x (R's pnorm(x)).
func NormalCDF(x float64) float64 { return stdNormal.CDF(x) }
