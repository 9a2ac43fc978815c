package compare

import (
	"math"
	"strings"
	"time"

	"github.com/speedmatrix/speedmatrix/compare/stats"
	"github.com/speedmatrix/speedmatrix/results"
)

// PlanRerunsFor chooses which of the first look c's advised reruns (c.Rerun) a GPU budget pays
// for, by what each can change: the chance that its second look flags a regression, plus a
// little (decideWeight) for every cell-metric it would decide at all. That chance is the
// predictive power of the rerun (Spiegelhalter et al.'s "predictive probability"): given the
// first look's estimate d̂ with standard error s₁, and s₂ the standard error after the advised
// trials, the second look's estimate is normal around d̂ with variance s₁² − s₂², and it flags a
// regression when it is worse than both δ and c·s₂ (c the second look's Bonferroni critical
// value over the re-measured cell-metrics). So a cell whose estimate points to a slowdown is
// worth more than one whose estimate sits at zero, a row whose pooled test is close to flagging
// more than a far one, and a cell in a row already flagged as a regression is worth only what it
// decides (the regression is found). Candidates are funded in the order of value per minute,
// as long as they fit; a decode row whose advised runs do not fit is funded in part (as many
// runs as fit, at least two) when those runs still have a chance of flagging it. Everything else
// is as PlanReruns.
func PlanRerunsFor(c *results.Comparison, cost CellCost, budget time.Duration) RerunPlan {
	if c == nil || c.Rerun == nil {
		return RerunPlan{}
	}
	return planReruns(c.Rerun, cost, budget, newRerunValue(c))
}

// decideWeight is what deciding one cell-metric at all (unchanged, or an improvement) is worth
// beside finding a regression (1).
const decideWeight = 0.01

// rerunValue values the candidates of one comparison's rerun advice.
type rerunValue struct {
	adv     *results.RerunAdvice
	cells   map[string]*results.CellComparison
	rows    map[string]*results.RowComparison
	flagged map[string]bool
	zCI, c2 float64
}

func newRerunValue(c *results.Comparison) *rerunValue {
	v := &rerunValue{adv: c.Rerun, cells: map[string]*results.CellComparison{}, rows: map[string]*results.RowComparison{}, flagged: map[string]bool{}}
	conf := c.Settings.ConfidenceLevel
	if !(conf > 0 && conf < 1) {
		conf = 0.95
	}
	v.zCI = stats.NormalQuantile(1 - (1-conf)/2)
	for i := range c.Cells {
		cc := &c.Cells[i]
		v.cells[cc.Cell] = cc
		if cc.Phase == results.PhaseDecode && cc.Verdict == results.VerdictRegression {
			v.flagged[cc.ContextLabel] = true
		}
	}
	for i := range c.Rows {
		r := &c.Rows[i]
		v.rows[r.ContextLabel] = r
		if r.Verdict == results.VerdictRegression {
			v.flagged[r.ContextLabel] = true
		}
	}
	// The second look's family: every re-measured cell-metric and row test.
	m := len(c.Rerun.Rows)
	for _, it := range c.Rerun.Items {
		m += len(it.Metrics)
	}
	for _, r := range c.Rerun.Rows {
		m += len(strings.Split(r.Cells, ",")) * len(results.Metrics(results.PhaseDecode))
	}
	level := c.Rerun.Rule.Level2
	if !(level > 0 && level < 1) {
		level = 0.0038
	}
	v.c2 = stats.NormalQuantile(1 - level/float64(2*max(1, m)))
	return v
}

// shrink returns the factor by which a standard error from kb and kh runs shrinks after further
// runs more (on the head alone when the advice is head-only), for equal variances a side.
func (v *rerunValue) shrink(kb, kh, further int) float64 {
	kb, kh = max(kb, 1), max(kh, 1)
	nb := kb + further
	if v.adv.HeadOnly {
		nb = kb
	}
	return math.Sqrt((1/float64(nb) + 1/float64(kh+further)) / (1/float64(kb) + 1/float64(kh)))
}

// flagChance is the predictive probability that a second look flags a regression: worse by w
// now (oriented, positive when worse) with standard error s1, s2 after the rerun, threshold
// thr (δ on the same scale).
func (v *rerunValue) flagChance(w, s1, s2, thr float64) float64 {
	if !(s1 > 0) || math.IsNaN(w) {
		return 0
	}
	spread := math.Sqrt(math.Max(s1*s1-s2*s2, 1e-12))
	return stats.NormalCDF((w - math.Max(v.c2*s2, thr)) / spread)
}

// item values a cell's rerun.
func (v *rerunValue) item(it *results.RerunItem) float64 {
	value := decideWeight * float64(max(1, len(it.Metrics)))
	cc := v.cells[it.Cell]
	if cc == nil || (cc.Phase == results.PhaseDecode && v.flagged[cc.ContextLabel]) {
		return value
	}
	best := 0.0
	for _, mc := range cc.Metrics {
		if mc.Change == nil || mc.Noise == nil || !containsMetric(it.Metrics, mc.Metric) {
			continue
		}
		d, lo, hi := math.Log1p(mc.Change.Change), math.Log1p(mc.Change.Low), math.Log1p(mc.Change.High)
		s1 := (hi - lo) / (2 * v.zCI)
		w := d
		if mc.Metric.HigherIsBetter() {
			w = -d
		}
		s2 := s1 * v.shrink(mc.Noise.BaseTrials, mc.Noise.HeadTrials, it.FurtherTrials)
		best = math.Max(best, v.flagChance(w, s1, s2, math.Log1p(mc.Delta)))
	}
	return best + value
}

// row values runs further runs of a whole row; the cell-metrics it decides count only when the
// advised runs are all funded.
func (v *rerunValue) row(r *results.RowRerun, runs int) float64 {
	value := 0.0
	if runs >= r.FurtherTrials {
		value = decideWeight * float64(len(strings.Split(r.Cells, ","))*len(results.Metrics(results.PhaseDecode)))
	}
	rt := v.rows[r.ContextLabel]
	if rt == nil || v.flagged[r.ContextLabel] || !(rt.High > rt.Low) {
		return value
	}
	s1 := (rt.High - rt.Low) / (2 * v.zCI)
	s2 := s1 * v.shrink(rt.BaseRuns, rt.HeadRuns, runs)
	return value + v.flagChance(rt.Effect, s1, s2, 1)
}

// containsMetric reports whether ms holds m.
func containsMetric(ms []results.Metric, m results.Metric) bool {
	for _, x := range ms {
		if x == m {
			return true
		}
	}
	return false
}
