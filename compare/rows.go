package compare

import (
	"fmt"
	"math"
	"strings"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/speedmatrix/speedmatrix/compare/stats"
	"github.com/speedmatrix/speedmatrix/results"
)

// rowPending is one decode context row in the test family: the pooled test of all its tested
// cell-metrics.
type rowPending struct {
	label string
	tests []*pending
	// w are the weights of tests (oriented: a worse change raises the score).
	w   []float64
	out *results.RowComparison
	est stats.Estimate
	p   float64
}

// orientation is +1 for a metric whose rise is worse (latency), −1 for throughput.
func orientation(m results.Metric) float64 {
	if m.HigherIsBetter() {
		return -1
	}
	return 1
}

// rowWeights returns the weights of a row's cell-metrics: w ∝ log(1 + δ)/σ² (the weight a 2δ
// change in every metric would favour if the metrics were independent), oriented so that a worse
// change raises the score, and scaled so that a change of exactly δ in every metric, in the worse
// direction, moves the score by 1. Weights are fixed from the variances alone, never from the
// changes, so any correlation only changes the score's variance, which the test measures.
func rowWeights(tests []*pending, th Thresholds) ([]float64, bool) {
	w := make([]float64, len(tests))
	var norm float64
	for i, t := range tests {
		e := math.Log1p(th.Delta[t.metric])
		v := (t.vb + t.vh) / 2
		if !(v > 0) || math.IsInf(v, 0) {
			return nil, false
		}
		w[i] = e / v
		norm += w[i] * e
	}
	if !(norm > 0) {
		return nil, false
	}
	for i, t := range tests {
		w[i] = w[i] / norm * orientation(t.metric)
	}
	return w, true
}

// decodeRows groups the tested decode cell-metrics by context row, in matrix order.
func decodeRows(tests []*pending) (map[string][]*pending, []string) {
	byRow := map[string][]*pending{}
	var order []string
	for _, t := range tests {
		if t.id.Phase != results.PhaseDecode || t.metric == results.MetricSpecAcceptance {
			continue
		}
		if byRow[t.id.ContextLabel] == nil {
			order = append(order, t.id.ContextLabel)
		}
		byRow[t.id.ContextLabel] = append(byRow[t.id.ContextLabel], t)
	}
	return byRow, order
}

// rowTests builds the pooled test of every decode context row whose tested cell-metrics are all
// present in at least two runs (a file and a trial in it) of each side. A run's score is
// Σ w·log(value) over the row's cell-metrics; the row's change is the Welch difference of the
// two sides' mean scores, with the variance measured across runs, so the correlation between the
// metrics of one cell (total tok/s, per-request tok/s and time between tokens are nearly one
// measurement) and between the cells of one run is accounted for, not assumed away.
func rowTests(tests []*pending, th Thresholds) []*rowPending {
	byRow, order := decodeRows(tests)
	var out []*rowPending
	for _, label := range order {
		ts := byRow[label]
		w, ok := rowWeights(ts, th)
		if !ok {
			continue
		}
		score := func(side func(*pending) *sideData) []float64 {
			var runs []map[runKey]float64
			for _, t := range ts {
				runs = append(runs, side(t).decodeRuns(t.metric))
			}
			var ys []float64
			for k := range runs[0] {
				y, all := 0.0, true
				for i, r := range runs {
					l, ok := r[k]
					if !ok {
						all = false
						break
					}
					y += w[i] * l
				}
				if all {
					ys = append(ys, y)
				}
			}
			return ys
		}
		yb := score(func(t *pending) *sideData { return t.b })
		yh := score(func(t *pending) *sideData { return t.h })
		if len(yb) < 2 || len(yh) < 2 || (varianceOf(yb) <= 0 && varianceOf(yh) <= 0) {
			continue
		}
		est, err := stats.WelchEstimate(yh, yb)
		if err != nil || !(est.SE > 0) || !(est.DF > 0) {
			continue // no spread to test against (the runs agree to the last bit)
		}
		pairs := 0
		if e, n, ok := pairedRow(ts, w); ok { // a paired comparison: pair by pair (paired.go)
			est, pairs = e, n
		}
		r := &rowPending{label: label, tests: ts, w: w, est: est, out: &results.RowComparison{ContextLabel: label, BaseRuns: len(yb), HeadRuns: len(yh), Pairs: pairs}}
		seen := map[results.CellID]bool{}
		for _, t := range ts {
			if !seen[t.id] {
				seen[t.id] = true
				r.out.Cells = append(r.out.Cells, t.id.String())
			}
		}
		res := est.Test(0, stats.TwoSided, th.ConfidenceLevel)
		r.p = res.P
		if th.MinimumEffect {
			up := est.Test(1, stats.Greater, th.ConfidenceLevel).P
			down := est.Test(-1, stats.Less, th.ConfidenceLevel).P
			r.p = math.Min(1, 2*math.Min(up, down))
		}
		r.out.Effect, r.out.Low, r.out.High, r.out.DF, r.out.P = est.Diff, res.CILow, res.CIHigh, est.DF, r.p
		out = append(out, r)
	}
	return out
}

// decideRows gives each row test its verdict from its BH-adjusted p-value q: regression
// (improvement) when q is at most the look's level and the score moved worse (better) by more
// than 1 (δ on the weighted average), unchanged when the TOST shows the score within ±1,
// otherwise inconclusive.
func decideRows(rows []*rowPending, qs []float64, th Thresholds, level float64) {
	for i, r := range rows {
		out := r.out
		out.Q = qs[i]
		e := out.Effect
		sig := out.Q <= level
		desc := fmt.Sprintf("row score %+.2fδ (%g%% CI %+.2f … %+.2f; %d+%d runs)", e, th.ConfidenceLevel*100, out.Low, out.High, out.BaseRuns, out.HeadRuns)
		if out.Pairs > 0 {
			desc = strings.Replace(desc, " runs)", fmt.Sprintf(" runs, %d pairs)", out.Pairs), 1)
		}
		measured := true
		for _, t := range r.tests {
			measured = measured && t.measuredNoise() // groups.go
		}
		switch {
		case sig && e > 1 && !measured:
			out.Verdict = results.VerdictUnproven
			out.Reason = fmt.Sprintf("%s, beyond ±1δ at q = %.2g, but its runs are trials inside one run: nothing measured the run-to-run noise", desc, out.Q)
		case sig && e < -1 && !measured:
			out.Verdict = results.VerdictInconclusive
			out.Reason = fmt.Sprintf("%s, beyond ±1δ at q = %.2g, but its runs are trials inside one run", desc, out.Q)
		case sig && math.Abs(e) > 1:
			out.Verdict = results.VerdictImprovement
			if e > 0 {
				out.Verdict = results.VerdictRegression
			}
			out.Reason = fmt.Sprintf("%s, beyond ±1δ; q = %.2g ≤ %.3g", desc, out.Q, level)
		case r.est.TOST(-1, 1) <= th.EquivalenceAlpha:
			out.Verdict = results.VerdictUnchanged
			out.Reason = desc + ", within ±1δ"
		default:
			out.Verdict = results.VerdictInconclusive
			out.Reason = desc + ", neither beyond nor shown within ±1δ"
		}
	}
}

// rowPlan is the rerun of one whole row that no cell of its decides.
type rowPlan struct {
	row    string
	cells  []results.CellID
	trials int
}

// planRows picks the decode rows none of whose tested cell-metrics is decided and at least one
// of whose is undecidable cell by cell (needs more than MaxFurtherTrials), and asks how many
// further runs of the whole row per side make the row test detect a 2δ change in every metric
// with the configured power at the Bonferroni share α of the second look's level: the run
// score's variance is predicted as if the metrics of one cell were perfectly correlated (the
// largest it can be) and cells independent, from each noise estimate's upper confidence bound at
// the level of the configured power. A row that needs more than MaxRowTrials gets MaxRowTrials
// when that still gives it a predicted power of at least 1/2, and is left out otherwise.
func planRows(tests []*pending, th Thresholds, undecidable func(*pending) bool, zFor func(extraRows int) float64) []rowPlan {
	byRow, order := decodeRows(tests)
	type cand struct {
		label  string
		ts     []*pending
		vb, vh float64
		kb, kh int
	}
	var cands []cand
	for _, label := range order {
		ts := byRow[label]
		decided, hard := false, false
		for _, t := range ts {
			if t.out.Verdict != results.VerdictInconclusive {
				decided = true
			}
			if undecidable(t) {
				hard = true
			}
		}
		if decided || !hard {
			continue
		}
		w, ok := rowWeights(ts, th)
		if !ok {
			continue
		}
		c := cand{label: label, ts: ts, kb: math.MaxInt, kh: math.MaxInt}
		sb, sh := map[results.CellID]float64{}, map[results.CellID]float64{}
		for i, t := range ts {
			f := math.Sqrt(upperVarianceFactor(t.est.DF, th.Power))
			sb[t.id] += math.Abs(w[i]) * math.Sqrt(t.vb) * f
			sh[t.id] += math.Abs(w[i]) * math.Sqrt(t.vh) * f
			c.kb, c.kh = min(c.kb, t.kb), min(c.kh, t.kh)
		}
		for id := range sb {
			c.vb += sb[id] * sb[id]
			c.vh += sh[id] * sh[id]
		}
		cands = append(cands, c)
	}
	if th.MaxRowTrials <= 0 || len(cands) == 0 {
		return nil
	}
	target := 2.0
	if th.MinimumEffect {
		target = 1
	}
	needed := func(c cand, z float64) int {
		return furtherTrials(c.vb, c.kb, c.vh, c.kh, target/z, th.MaxRowTrials, th.HeadOnlyReruns) // headonly.go
	}
	var plans []rowPlan
	z := zFor(len(cands))
	zHalf := z - stats.NormalQuantile(th.Power)
	for _, c := range cands {
		n := needed(c, z)
		if n == 0 && needed(c, zHalf) > 0 {
			// The configured power needs more runs than allowed, but at the limit the row test
			// still detects 2δ more often than not (by the conservative prediction): measure
			// up to the limit.
			n = th.MaxRowTrials
		}
		if n == 0 {
			continue
		}
		plan := rowPlan{row: c.label, trials: n}
		seen := map[results.CellID]bool{}
		for _, t := range c.ts {
			if !seen[t.id] {
				seen[t.id] = true
				plan.cells = append(plan.cells, t.id)
			}
		}
		plans = append(plans, plan)
	}
	return plans
}

// upperVarianceFactor returns df/χ²_{df, 1−conf}: the factor that takes a variance estimated
// with df degrees of freedom to its one-sided upper confidence bound at level conf (1 for a
// known variance), so that a plan does not rest on a noise estimate that came out low by chance.
func upperVarianceFactor(df, conf float64) float64 {
	if math.IsInf(df, 1) || !(df >= 1) {
		return 1
	}
	return df / distuv.ChiSquared{K: df}.Quantile(1-conf)
}

// cellList joins cell IDs as the --cells argument.
func cellList(ids []results.CellID) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = id.String()
	}
	return strings.Join(s, ",")
}
