package compare

import (
	"math"

	"gonum.org/v1/gonum/mathext"

	"github.com/speedmatrix/speedmatrix/results"
)

// Moderated history variances. Ten history runs measure a cell's variance on nine degrees of
// freedom: a t quantile of 1.83 for the 90 % interval that shows a cell unchanged, and a
// variance that is off by a factor of two in one cell out of ten. The cells of one noise class
// (one phase and one prior CV: the same concurrency band) are alike, so each cell's variance is
// shrunk toward its class's, as empirical Bayes does for many parallel tests (Smyth 2004,
// limma's moderated t): the class's prior variance s₀² and its degrees of freedom d₀ are fitted
// to the spread of the cells' log variances, a cell's variance becomes
// (d₀·s₀² + d·s²)/(d₀ + d) on d₀ + d degrees of freedom, and where the cells' variances differ
// more than sampling explains, d₀ comes out small and little changes. d₀ is capped at
// maxModerationDF.

// maxModerationDF caps the prior degrees of freedom a class lends a cell.
const maxModerationDF = 60

// minModerationCells is the fewest cells with history noise a class needs to be fitted.
const minModerationCells = 5

// trigamma returns ψ₁(x) for x > 0.
func trigamma(x float64) float64 {
	var acc float64
	for x < 6 {
		acc += 1 / (x * x)
		x++
	}
	x2 := x * x
	return acc + 1/x + 1/(2*x2) + 1/(6*x2*x) - 1/(30*x2*x2*x) + 1/(42*x2*x2*x2*x) - 1/(30*x2*x2*x2*x2*x)
}

// trigammaInverse returns y with ψ₁(y) = v (v > 0), by bisection on the log scale (ψ₁ falls).
func trigammaInverse(v float64) float64 {
	lo, hi := 1e-6, 1e7
	for range 200 {
		mid := math.Sqrt(lo * hi)
		if trigamma(mid) > v {
			lo = mid
		} else {
			hi = mid
		}
	}
	return math.Sqrt(lo * hi)
}

// moderationPrior fits s₀² and d₀ to the variances vs on their degrees of freedom ds. ok is false
// when there are too few.
func moderationPrior(vs, ds []float64) (s02, d0 float64, ok bool) {
	if len(vs) < minModerationCells {
		return 0, 0, false
	}
	es := make([]float64, len(vs))
	var tri float64
	for i, v := range vs {
		if !(v > 0) || !(ds[i] > 0) {
			return 0, 0, false
		}
		es[i] = math.Log(v) - mathext.Digamma(ds[i]/2) + math.Log(ds[i]/2)
		tri += trigamma(ds[i] / 2)
	}
	mean := meanOf(es)
	excess := varianceOf(es) - tri/float64(len(vs))
	d0 = maxModerationDF
	if excess > 0 {
		d0 = math.Min(2*trigammaInverse(excess), maxModerationDF)
	}
	s02 = math.Exp(mean + mathext.Digamma(d0/2) - math.Log(d0/2))
	return s02, d0, true
}

// moderateHistory moderates the history variances of the deciding tests, class by class.
func moderateHistory(tests []*pending, th Thresholds) {
	type class struct {
		phase results.Phase
		prior float64
	}
	byClass := map[class][]*pending{}
	var order []class
	for _, t := range tests {
		if t.out.Noise == nil || t.out.Noise.Source != results.NoiseHistory || !(t.est.DF > 0) || math.IsInf(t.est.DF, 1) {
			continue
		}
		k := class{t.id.Phase, math.Round(th.Prior.CV(t.id, t.metric) * 1e4)}
		if byClass[k] == nil {
			order = append(order, k)
		}
		byClass[k] = append(byClass[k], t)
	}
	for _, k := range order {
		ts := byClass[k]
		vs, ds := make([]float64, len(ts)), make([]float64, len(ts))
		for i, t := range ts {
			vs[i], ds[i] = t.vb, t.est.DF
		}
		s02, d0, ok := moderationPrior(vs, ds)
		if !ok {
			continue
		}
		for i, t := range ts {
			v := (d0*s02 + ds[i]*vs[i]) / (d0 + ds[i])
			t.est.SE *= math.Sqrt(v / vs[i])
			t.est.DF = d0 + ds[i]
			t.vb, t.vh = v, v
			t.out.Noise.CV = math.Sqrt(v)
			t.out.Noise.DF = ptr(t.est.DF)
			t.out.Noise.Moderated = ptr(d0)
			t.finish(th)
		}
	}
}
