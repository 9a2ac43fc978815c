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
// predictive power of the rerun (Spiegelhalter, Freedman and Blackburn 1986): given the first
// look's estimate d̂ with standard error s₁, a skeptical prior on the true change (0 for nine
// cell-metrics in ten, else normal around 0 with SD 2δ: changeShare, changeScale), and s₂ the
// standard error after the advised trials, the second
// look's pooled estimate is normal, and it flags a regression when it is worse than both δ and
// c·s₂ (c the second look's Bonferroni critical value over the re-measured cell-metrics). A
// row's chance comes from its row test, or from its cells when one run a side has none. So a cell whose estimate points to a slowdown is
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

// The prior on a true change that the value assumes, in units of δ: most cell-metrics (and
// rows) of a comparison did not change, so the change is 0 with probability 1 − changeShare,
// and otherwise normal around 0 with SD changeScale (2δ, the size of change the advice is
// planned to detect). Among some 200 cell-metrics a few lean two or three standard errors
// towards a slowdown by chance; the spike at 0 keeps them from looking like a slowdown worth
// the budget, while a row whose cells agree, or an estimate far out, still does.
const (
	changeScale = 2.0
	changeShare = 0.1
)

// flagChance is the predictive probability that a second look flags a regression: worse by w
// now (in units of δ, positive when worse) with standard error s1, s2 after the rerun,
// threshold thr (δ). The true change has the prior above, updated by the first look; the
// second look's estimate pools the first look's with the rerun's.
func (v *rerunValue) flagChance(w, s1, s2, thr float64) float64 {
	if !(s1 > 0) || !(s2 > 0) || math.IsNaN(w) {
		return 0
	}
	i1, iF := 1/(s1*s1), 1/(s2*s2)
	i2 := math.Max(iF-i1, 1e-12)
	bar := math.Max(v.c2*s2, thr)
	// Given a true change with posterior mean pm and variance pv, the pooled estimate is
	// normal with mean (i1·w + i2·pm)/iF and variance (i2/iF)²·(1/i2 + pv).
	chance := func(pm, pv float64) float64 {
		mean := (i1*w + i2*pm) / iF
		sd := (i2 / iF) * math.Sqrt(1/i2+pv)
		return stats.NormalCDF((mean - bar) / sd)
	}
	slabV := changeScale * changeScale
	pv := 1 / (i1 + 1/slabV)
	slab := chance(w*i1*pv, pv)
	null := chance(0, 0)
	// The posterior weight of a real change: prior odds times the likelihood ratio of w under
	// N(0, s1² + slabV) against N(0, s1²).
	lr := math.Sqrt(s1*s1/(s1*s1+slabV)) * math.Exp(w*w/2*(1/(s1*s1)-1/(s1*s1+slabV)))
	odds := changeShare / (1 - changeShare) * lr
	post := 1.0
	if !math.IsInf(odds, 1) {
		post = odds / (1 + odds)
	}
	return post*slab + (1-post)*null
}

// item values a cell's rerun.
func (v *rerunValue) item(it *results.RerunItem) float64 {
	value := decideWeight * float64(max(1, len(it.Metrics)))
	cc := v.cells[it.Cell]
	if cc == nil || (cc.Phase == results.PhaseDecode && v.flagged[cc.ContextLabel]) {
		return value
	}
	return value + v.cellChance(cc, it.Metrics, it.FurtherTrials)
}

// oriented returns a cell-metric's change in units of its δ, positive when worse, and its
// standard error in the same units; ok is false when it has no estimate.
func (v *rerunValue) oriented(mc *results.MetricComparison) (w, s float64, ok bool) {
	if mc.Change == nil || mc.Noise == nil || !(mc.Delta > 0) {
		return 0, 0, false
	}
	d, lo, hi := math.Log1p(mc.Change.Change), math.Log1p(mc.Change.Low), math.Log1p(mc.Change.High)
	e := math.Log1p(mc.Delta)
	s = (hi - lo) / (2 * v.zCI) / e
	w = d / e
	if mc.Metric.HigherIsBetter() {
		w = -w
	}
	return w, s, s > 0 && !math.IsInf(s, 0) && !math.IsNaN(w)
}

// cellChance is the best chance that one of the listed metrics of cc (all when ms is nil)
// is flagged after further trials.
func (v *rerunValue) cellChance(cc *results.CellComparison, ms []results.Metric, further int) float64 {
	best := 0.0
	for i := range cc.Metrics {
		mc := &cc.Metrics[i]
		if mc.Verdict != results.VerdictInconclusive || (ms != nil && !containsMetric(ms, mc.Metric)) {
			continue
		}
		w, s1, ok := v.oriented(mc)
		if !ok {
			continue
		}
		s2 := s1 * v.shrink(mc.Noise.BaseTrials, mc.Noise.HeadTrials, further)
		best = math.Max(best, v.flagChance(w, s1, s2, 1))
	}
	return best
}

// row values runs further runs of a whole row; the cell-metrics it decides count only when the
// advised runs are all funded.
func (v *rerunValue) row(r *results.RowRerun, runs int) float64 {
	value := 0.0
	if runs >= r.FurtherTrials {
		value = decideWeight * float64(len(strings.Split(r.Cells, ","))*len(results.Metrics(results.PhaseDecode)))
	}
	if v.flagged[r.ContextLabel] {
		return value
	}
	// The row test's chance: from the first look's row test, or (one run a side has none) from
	// its cells, each cell's most precise metric (a cell's metrics are nearly one measurement),
	// the cells independent and weighted by their precision, as the row test weights them.
	var chance float64
	if rt := v.rows[r.ContextLabel]; rt != nil && rt.High > rt.Low {
		s1 := (rt.High - rt.Low) / (2 * v.zCI)
		chance = v.flagChance(rt.Effect, s1, s1*v.shrink(rt.BaseRuns, rt.HeadRuns, runs), 1)
	} else {
		var sw, swy float64
		kb, kh := 1, 1
		for cell := range strings.SplitSeq(r.Cells, ",") {
			cc := v.cells[cell]
			if cc == nil {
				continue
			}
			bw, bs := 0.0, math.Inf(1)
			for i := range cc.Metrics {
				if w, s, ok := v.oriented(&cc.Metrics[i]); ok && s < bs {
					bw, bs = w, s
					kb, kh = cc.Metrics[i].Noise.BaseTrials, cc.Metrics[i].Noise.HeadTrials
				}
			}
			if !math.IsInf(bs, 1) {
				sw += 1 / (bs * bs)
				swy += bw / (bs * bs)
			}
		}
		if sw > 0 {
			s1 := 1 / math.Sqrt(sw)
			chance = v.flagChance(swy/sw, s1, s1*v.shrink(kb, kh, runs), 1)
		}
	}
	// Each cell measured again may also be flagged on its own.
	for cell := range strings.SplitSeq(r.Cells, ",") {
		if cc := v.cells[cell]; cc != nil {
			chance = math.Max(chance, v.cellChance(cc, nil, runs))
		}
	}
	return value + chance
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
