package compare

import (
	"math"

	"github.com/speedmatrix/speedmatrix/results"
)

// minTrialDF is the fewest degrees of freedom the trials' own variance needs to stand alone
// (both sides' trials less one each: 3 trials a side give 4). Below it, a rerun's few trials
// would set the noise with a t quantile so large at the matrix's levels (t₂ at 10⁻⁴ is about
// 70) that no rerun could decide anything; the advice that asked for them assumed the noise the
// first look had (history or prior), and fewTrialsNoise keeps it.
const minTrialDF = 4

// fewTrialsNoise returns the per-run variance and degrees of freedom of a cell-metric whose
// trials (kb and kh runs with variances vb and vh) are too few to stand alone: with history
// (at least th.MinHistory runs that vary), the pooled variance of the trials and the history
// (the same run-to-run noise, measured twice), its degrees of freedom summed, noise source
// history; without, the trials' pooled variance floored by the prior (prior2, the squared CV),
// noise source trials, infinite degrees of freedom where the prior sets it, as within-run noise
// is floored. ok is false when the trials have enough degrees of freedom.
func fewTrialsNoise(vb float64, kb int, vh float64, kh int, hist []float64, prior2 float64, th Thresholds) (v, df float64, source string, ok bool) {
	tdf := float64(kb + kh - 2)
	if tdf >= minTrialDF {
		return 0, 0, "", false
	}
	ss := float64(kb-1)*vb + float64(kh-1)*vh
	if len(hist) >= th.MinHistory && varianceOf(hist) > 0 {
		hdf := float64(len(hist) - 1)
		return (ss + hdf*varianceOf(hist)) / (tdf + hdf), tdf + hdf, results.NoiseHistory, true
	}
	if !(prior2 > 0) {
		return 0, 0, "", false
	}
	if t := ss / tdf; t > prior2 {
		return t, tdf, results.NoiseTrials, true
	}
	return prior2, math.Inf(1), results.NoiseTrials, true
}
