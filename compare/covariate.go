package compare

import (
	"math"

	"github.com/speedmatrix/speedmatrix/results"
)

// A run's factor moves both phases where it comes from the machine (clocks, thermals, the
// process's placement): a run that is 4 % slower at decode is slower at prefill too, while a
// change of the code's decode path leaves prefill where it was. One head run cannot tell a
// uniform decode slowdown of 5 % from a slower run by its decode cells alone (runs move by
// 2–6 %), but where the base side's runs show that their decode and prefill factors move
// together, the head's prefill factor tells how much of its decode shift is the run's:
// covariate regresses the base side's decode factors on their prefill factors and tests the
// head's decode shift net of what its prefill factor predicts. The shift test (groups.go)
// takes that test beside its own, Bonferroni, and only towards slower: a prefill the code made
// slower must not make decode read faster, and the covariate is used only where the head's
// prefill factor lies within the base side's range of run factors (a prefill the code moved is
// not a run's factor).

// Thresholds of the covariate.
const (
	// covMinRuns is the fewest whole base-side runs the regression is fitted on.
	covMinRuns = 8
	// covMinR2 is the least share of the decode factors' variance the prefill factors must
	// explain on the base side.
	covMinR2 = 0.5
	// covRange is how many of the base side's prefill-factor SDs the head's may lie from their
	// mean.
	covRange = 3.0
)

// phaseCovariate is the decode shift net of the prefill's: Shift its estimate (log, positive
// faster), SE its standard error, DF its degrees of freedom, Beta the slope and R2 the share
// of the base side's decode-factor variance the prefill factors explain.
type phaseCovariate struct {
	Shift, SE, DF, Beta, R2 float64
}

// covariate returns the decode shift net of the prefill's, or nil where the base side has
// fewer than covMinRuns runs, its factors do not move together (R² < covMinR2), or the head's
// prefill factor lies outside their range.
func (re *runEffects) covariate() *phaseCovariate {
	var xs, ys []float64
	for _, l := range [][]map[results.Phase]float64{re.base, re.hist} {
		for _, f := range l {
			x, okx := f[results.PhasePrefill]
			y, oky := f[results.PhaseDecode]
			if okx && oky {
				xs, ys = append(xs, x), append(ys, y)
			}
		}
	}
	if len(xs) < covMinRuns || len(re.head) == 0 || !re.measured[results.PhasePrefill] || !re.measured[results.PhaseDecode] {
		return nil
	}
	mx, my := meanOf(xs), meanOf(ys)
	var sxx, sxy, syy float64
	for i := range xs {
		sxx += (xs[i] - mx) * (xs[i] - mx)
		sxy += (xs[i] - mx) * (ys[i] - my)
		syy += (ys[i] - my) * (ys[i] - my)
	}
	if !(sxx > 0) || !(syy > 0) {
		return nil
	}
	r2 := sxy * sxy / (sxx * syy)
	if r2 < covMinR2 || sxy <= 0 {
		return nil
	}
	beta := sxy / sxx
	n := float64(len(xs))
	s2 := (syy - beta*sxy) / (n - 2)
	var hx, hy []float64
	for _, f := range re.head {
		hx, hy = append(hx, f[results.PhasePrefill]), append(hy, f[results.PhaseDecode])
	}
	dx := meanOf(hx) - mx
	if math.Abs(dx) > covRange*math.Sqrt(sxx/(n-1)) {
		return nil
	}
	nh := float64(len(hx))
	return &phaseCovariate{
		Shift: meanOf(hy) - my - beta*dx,
		SE:    math.Sqrt(math.Max(s2, 1e-10) * (1/nh + 1/n + dx*dx/sxx)),
		DF:    n - 2, Beta: beta, R2: r2,
	}
}
