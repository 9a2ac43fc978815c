package compare

import (
	"math"

	"gonum.org/v1/gonum/stat/distuv"

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
	// covMinDF is the fewest degrees of freedom the regression's residuals must have (three
	// separate runs a side give 3; ten history runs and the base 9).
	covMinDF = 3
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

// covariate returns the decode shift net of the prefill's, or nil where the runs cannot
// measure it: the regression is fitted on the base side's runs and, where the head has several
// whole runs, on the head's too, each side centred on its own mean (so a change of the code,
// which moves the head's side as a whole, is not in the slope); it needs covMinDF degrees of
// freedom, R² ≥ covMinR2, and the head's prefill factor within the base side's range.
func (re *runEffects) covariate() *phaseCovariate {
	type pt struct{ x, y float64 }
	var side, head []pt
	for _, l := range [][]map[results.Phase]float64{re.base, re.hist} {
		for _, f := range l {
			x, okx := f[results.PhasePrefill]
			y, oky := f[results.PhaseDecode]
			if okx && oky {
				side = append(side, pt{x, y})
			}
		}
	}
	for _, f := range re.head {
		head = append(head, pt{f[results.PhasePrefill], f[results.PhaseDecode]})
	}
	if len(side) < 2 || len(head) == 0 || !re.measured[results.PhasePrefill] || !re.measured[results.PhaseDecode] {
		return nil
	}
	mean := func(ps []pt) (mx, my float64) {
		for _, p := range ps {
			mx += p.x
			my += p.y
		}
		return mx / float64(len(ps)), my / float64(len(ps))
	}
	var sxx, sxy, syy float64
	n, groups := 0, 0
	for _, ps := range [][]pt{side, head} {
		if len(ps) < 2 {
			continue
		}
		groups++
		mx, my := mean(ps)
		for _, p := range ps {
			sxx += (p.x - mx) * (p.x - mx)
			sxy += (p.x - mx) * (p.y - my)
			syy += (p.y - my) * (p.y - my)
			n++
		}
	}
	df := float64(n - groups - 1)
	if df < covMinDF || !(sxx > 0) || !(syy > 0) || sxy <= 0 {
		return nil
	}
	r2 := sxy * sxy / (sxx * syy)
	if r2 < covMinR2 {
		return nil
	}
	beta := sxy / sxx
	s2 := (syy - beta*sxy) / df
	bx, by := mean(side)
	hx, hy := mean(head)
	dx := hx - bx
	var bxx float64
	for _, p := range side {
		bxx += (p.x - bx) * (p.x - bx)
	}
	// The range is of the spread the runs may have, not only of the few the base side holds:
	// three runs that agreed by chance (their SD 0.1–0.3 % where the machine's runs spread by
	// 2 %) put an ordinary run's prefill factor out of it. So the spread is at least the lesser
	// of defaultRunCV and the 95 % upper confidence bound of the prefill factors' SD within the
	// sides (shiftFloor's rule).
	spread := math.Sqrt(bxx / float64(len(side)-1))
	if dfw := float64(n - groups); dfw >= 2 {
		ucb := math.Sqrt(sxx/dfw) * math.Sqrt(dfw/distuv.ChiSquared{K: dfw}.Quantile(0.05))
		spread = math.Max(spread, math.Min(defaultRunCV, ucb))
	}
	if math.Abs(dx) > covRange*spread {
		return nil
	}
	nb, nh := float64(len(side)), float64(len(head))
	return &phaseCovariate{
		Shift: hy - by - beta*dx,
		SE:    math.Sqrt(math.Max(s2, 1e-10) * (1/nh + 1/nb + dx*dx/sxx)),
		DF:    df, Beta: beta, R2: r2,
	}
}
