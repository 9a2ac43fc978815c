package compare

import (
	"math"

	"github.com/speedmatrix/speedmatrix/compare/stats"
	"github.com/speedmatrix/speedmatrix/results"
)

// minTrialDF is the fewest degrees of freedom the trials' own variance needs to stand alone
// (both sides' trials less one each: 3 trials a side give 4). Below it, a rerun's few trials
// would set the noise with a t quantile so large at the matrix's levels (t₂ at 10⁻⁴ is about
// 70) that no rerun could decide anything; the advice that asked for them assumed the noise the
// first look had (history or prior), and fewTrialsNoise keeps it.
const minTrialDF = 4

// fewTrialsNoise returns the per-run variance and degrees of freedom of a cell-metric whose
// trials (sum of squares ss over tdf degrees of freedom: both sides' trials, or one side's
// repeated runs against a single run of the other) are too few to stand alone: with history
// (at least th.MinHistory runs that vary), the pooled variance of the trials and the history
// (the same run-to-run noise, measured twice), its degrees of freedom summed, noise source
// history; without, the prior (prior2, the squared CV) with infinite degrees of freedom where
// it is above the trials' variance and the sharper test, noise source trials. ok is false when
// the trials stand alone: enough degrees of freedom, or nothing better.
func fewTrialsNoise(ss, tdf float64, hist historyNoise, prior2 float64, th Thresholds) (v, df float64, source string, ok bool) {
	if tdf >= minTrialDF || !(tdf > 0) {
		return 0, 0, "", false
	}
	if hist.usable(th) {
		return (ss + hist.df*hist.v) / (tdf + hist.df), tdf + hist.df, results.NoiseHistory, true
	}
	// Without history the prior floors the trials' variance where that is the sharper test: never
	// where the trials alone, with their t quantile, would decide a smaller change (a very quiet
	// cell), judged at a fixed level from the variances alone, never from the change.
	t := ss / tdf
	if !(prior2 > 0) || t >= prior2 {
		return 0, 0, "", false
	}
	tq, zq := stats.TQuantile(1-floorLevel/2, tdf), stats.NormalQuantile(1-floorLevel/2)
	if tq*tq*t <= zq*zq*prior2 {
		return 0, 0, "", false
	}
	return prior2, math.Inf(1), results.NoiseTrials, true
}

// floorLevel is the level at which fewTrialsNoise weighs the prior floor against the trials'
// own t test: about a cell-metric's share of the matrix's false-alarm budget.
const floorLevel = 1e-4

// fewTrialsOK reports whether fewTrialsNoise has something to add to the repeated runs l.
func fewTrialsOK(l []float64, hist historyNoise, prior2 float64, th Thresholds) bool {
	_, _, _, ok := fewTrialsNoise(float64(len(l)-1)*varianceOf(l), float64(len(l)-1), hist, prior2, th)
	return ok
}
