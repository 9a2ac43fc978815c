package compare

import (
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/speedmatrix/speedmatrix/compare/stats"
	"github.com/speedmatrix/speedmatrix/internal/textout"
	"github.com/speedmatrix/speedmatrix/results"
)

// Group tests. One noisy cell decides little, and a per-cell test that kept its level under
// heavy-tailed noise could not catch a 10 % slowdown; a slowdown of a decode row, a concurrency
// column or a phase is seen together by its cells. Each group is tested within its runs (the
// cells' changes after each run's factor, runeffect.go), so a run that was slower as a whole
// does not move it, and the whole phase's shift between runs is a test of its own, against the
// run-to-run spread of the run factors.
//
// A group's statistic is robust to heavy tails and mixtures: every cell's within-run change is
// turned into a normal score (its t statistic through its t distribution), clipped at ±2
// (Huber's ψ), and the group's score is Σψ/√(n·E[ψ²]). A clipped score is bounded, so one wild
// cell cannot carry a group, and a sum of bounded scores is close to normal for three or more
// cells; E[ψ²] is measured on the history (each history run's cells scored against the other
// runs: the noise the comparison meets, heavy tails included), never below its normal value
// 0.92. The groups join the cells' Benjamini–Hochberg family. A group is a regression when its
// q is at most the look's level and its cells' mean change is worse than δ; its cells that are
// worse than δ and whose own one-sided p ≤ 0.05 (the change within the run and the whole change
// shown, each) are then regressions too (the group proved the slowdown, the cell shows its
// share). A group whose noise is a prior somewhere is at most unproven.

// psiCap is Huber's clipping point; psiNormal is E[min(Z², 4)] for a standard normal Z.
const (
	psiCap    = 2.0
	psiNormal = 0.9206
)

// A group that is worse than δ and significant by itself, one-sided, keeps the matrix from
// passing although the whole family's test did not find it: it is suspected, so unproven.
// Inconclusive passes a check, and it means that nothing worse than δ was shown or suspected;
// a row 9 % slower at p = 0.0004, or a whole decode phase 11 % slower at z = 5.6 against ten
// runs' spread, is suspected. The levels:
//   - suspectShiftLevel for a phase's shift between runs (Bonferroni over the two phases): a
//     whole phase slower beyond δ is what a reader sees first, and one head run that slow is rare
//     unless the run was (a bimodal machine's slower kernel pick: then a paired run, which
//     cancels the run, decides, and that is its cost);
//   - suspectGroupLevel for the rows and columns, Bonferroni over them (were their scores
//     independent normals, one of them would be suspected in at most 1 % of A/A comparisons;
//     calibrate measures the real share: docs/calibration.md);
//   - suspectUnmeasuredLevel for the rows and columns of a phase whose run-to-run spread nobody
//     measured (one run a side, or trials of one run, and no history): nothing there can block,
//     so suspicion costs an undecided check, not a false block, and passing costs a missed
//     slowdown. An independent generator's heavy-tailed runs (three trials in one file, t₃)
//     passed the rows at 32K and longer 10 % slower in 14 % of comparisons at 1 %: their best
//     row at one-sided p = 0.0008–0.0034 over 14 groups.
const (
	suspectShiftLevel      = 0.05 / 2
	suspectGroupLevel      = 0.01
	suspectUnmeasuredLevel = 0.05
)

// suspectAt returns the one-sided level at which group g of groups is suspected.
func suspectAt(g *groupPending, groups []*groupPending) float64 {
	if g.shift {
		return suspectShiftLevel
	}
	n, level := 0, suspectGroupLevel
	for _, o := range groups {
		switch {
		case !o.shift:
			n++
		case o.out.Phase == g.out.Phase && !o.measured:
			level = suspectUnmeasuredLevel
		}
	}
	return level / float64(max(n, 1))
}

// minGroupCells is the fewest cells with a within-run test a group needs.
const minGroupCells = 3

// groupPending is one group in the test family.
type groupPending struct {
	out   *results.GroupComparison
	tests []*pending
	p     float64
	// measured says every cell's noise (or the shift's τ) was measured.
	measured bool
	shift    bool
	// within is the mean change within the runs (the whole change less the shift); for the shift
	// test, the shift itself.
	within float64
	// shiftSE and shiftDF are, for the shift test, the standard error and degrees of freedom its
	// z was referred to (its interval's).
	shiftSE, shiftDF float64
	// seen and of are, for the shift test, how many of the base side's whole runs were as slow
	// as the head's shift, and of how many (runsSeen); 0 where none was.
	seen, of int
	// net, for the decode shift test, says that it is the shift net of the prefill's
	// (covariate.go), with both shifts: it suspects, it never blocks by itself (the prefill's
	// shift may be the code's, and a prefill made faster must not read as a slower decode).
	net string
}

// df returns the degrees of freedom of g's interval, 0 where the normal applies.
func (g *groupPending) df() float64 {
	df := g.shiftDF
	if !g.shift {
		e, _ := meanEstimate(g.tests)
		df = e.DF
	}
	if math.IsInf(df, 1) || !(df > 0) {
		return 0
	}
	return df
}

// interval returns g's confidence interval of its whole change at level conf: the shift's own
// for a shift test, else the mean whole change of its cells' (meanChange).
func (g *groupPending) interval(conf float64) (low, high float64) {
	if g.shift {
		e := stats.Estimate{Diff: math.Log1p(g.out.Change), SE: g.shiftSE, DF: g.shiftDF}
		if !(e.DF > 0) {
			e.DF = math.Inf(1)
		}
		r := e.Test(0, stats.TwoSided, conf)
		return math.Expm1(r.CILow), math.Expm1(r.CIHigh)
	}
	if _, low, high, ok := meanChange(g.tests, conf); ok {
		return math.Expm1(low), math.Expm1(high)
	}
	return math.Inf(-1), math.Inf(1)
}

// measuredNoise reports whether t's noise is run-to-run noise that was measured: history,
// separate runs, pairs, or noise measured on this machine (never a prior, a window's own
// samples, or trials inside one run).
func (t *pending) measuredNoise() bool {
	if t.out.Noise == nil {
		return false
	}
	if t.out.Noise.Source == results.NoiseTrials {
		return t.b.runs() >= 2 || t.h.runs() >= 2
	}
	return results.MeasuredRunToRun(t.out.Noise.Source)
}

// worseZ returns t's within-run change as a normal score, positive when worse.
func worseZ(t *pending) float64 {
	if !(t.est.SE > 0) {
		return 0
	}
	z := t.est.Diff / t.est.SE
	if t.metric.HigherIsBetter() {
		z = -z
	}
	if !math.IsInf(t.est.DF, 1) && t.est.DF > 0 {
		u := stats.TCDF(z, t.est.DF)
		u = math.Min(math.Max(u, 1e-15), 1-1e-15)
		z = stats.NormalQuantile(u)
	}
	return z
}

func psi(z float64) float64 { return math.Max(-psiCap, math.Min(psiCap, z)) }

// historyScores returns the history's own null scores: each history run's deciding value scored
// against the other runs' (leave one out: the t of one new run against a pooled history, as a
// normal score), over every cell with at least four history runs.
func historyScores(hists map[results.CellID][]float64) []float64 {
	var out []float64
	for _, xs := range hists {
		if len(xs) < 4 {
			continue
		}
		for j := range xs {
			rest := append(slices.Clone(xs[:j]), xs[j+1:]...)
			sd := math.Sqrt(varianceOf(rest))
			if !(sd > 0) {
				continue
			}
			t := (xs[j] - meanOf(rest)) / (sd * math.Sqrt(1+1/float64(len(rest))))
			u := stats.TCDF(t, float64(len(rest)-1))
			u = math.Min(math.Max(u, 1e-15), 1-1e-15)
			out = append(out, stats.NormalQuantile(u))
		}
	}
	return out
}

// heavyTailDF is the t distribution's degrees of freedom a cell's test takes when the history's
// own scores show tails heavier than normal (Student-t with 3 degrees of freedom, the heaviest
// of the noise models calibrated).
const heavyTailDF = 3

// heavyTails reports whether the history's null scores (at least 40) are heavier-tailed than
// normal by either of two tests, each at about 1 % on normal scores: their tail excess
// Σ(|z| − 2)₊ above its normal mean (0.01698 a score) by more than 2.6 of its normal standard
// deviations (0.106·√n), or a Student-t fitted by maximum likelihood (tailFit) better than the
// normal by a likelihood-ratio test. Then a Gaussian test of one cell would false-alarm many
// times its level (issue 21 measured 18 % of A/A comparisons under t₃ noise with ten history
// runs), so the cells' tests take heavyTailDF. On 52 cells × 10 runs the excess alone missed 8 %
// of t₃ histories, and those gave most of the budgeted job's A/A false blocks; with the fit,
// 3 %.
func heavyTails(scores []float64) bool {
	if len(scores) < 40 {
		return false
	}
	var ex float64
	for _, z := range scores {
		ex += math.Max(math.Abs(z)-2, 0)
	}
	n := float64(len(scores))
	return ex > 0.01698*n+2.6*0.106*math.Sqrt(n) || tailFit(scores)
}

// tailDFs are the Student-t degrees of freedom tailFit tries.
var tailDFs = [...]float64{2, 3, 4, 5, 6, 8, 10, 15, 20, 30}

// tailFit reports whether a centred Student-t with a free scale and one of tailDFs degrees of
// freedom fits the scores better than a centred normal by a likelihood-ratio test at 1 % (at
// the boundary the statistic's null is half χ²₀ and half χ²₁, so the cut is χ²₁'s 2 % point,
// 5.41).
func tailFit(scores []float64) bool {
	n := float64(len(scores))
	var ss float64
	for _, z := range scores {
		ss += z * z
	}
	if !(ss > 0) {
		return false
	}
	normal := distuv.Normal{Mu: 0, Sigma: math.Sqrt(ss / n)}
	var normalLL float64
	for _, z := range scores {
		normalLL += normal.LogProb(z)
	}
	best := normalLL
	for _, nu := range tailDFs {
		// The scale's maximum likelihood by the EM fixed point of the t as a normal mixture.
		s2 := ss / n
		for range 100 {
			var num float64
			for _, z := range scores {
				num += (nu + 1) / (nu + z*z/s2) * z * z
			}
			next := num / n
			done := math.Abs(next-s2) <= 1e-10*s2
			s2 = next
			if done {
				break
			}
		}
		d := distuv.StudentsT{Mu: 0, Sigma: math.Sqrt(s2), Nu: nu}
		var ll float64
		for _, z := range scores {
			ll += d.LogProb(z)
		}
		best = math.Max(best, ll)
	}
	return 2*(best-normalLL) > 5.41
}

// psiVariance returns E[ψ²] measured on the history's null scores; psiNormal when there are too
// few.
func psiVariance(scores []float64) float64 {
	var sum float64
	n := len(scores)
	for _, z := range scores {
		p := psi(z)
		sum += p * p
	}
	if n < 20 {
		return psiNormal
	}
	return math.Max(psiNormal, sum/float64(n))
}

// groupTests builds the row, column and phase groups of the deciding tests, and the shift test
// of each phase whose run factors were estimated.
func groupTests(tests []*pending, re *runEffects, scores []float64) []*groupPending {
	e2 := psiVariance(scores)
	type key struct {
		kind  string
		phase results.Phase
		label string
		conc  int
	}
	byKey := map[key][]*pending{}
	var order []key
	add := func(k key, t *pending) {
		if byKey[k] == nil {
			order = append(order, k)
		}
		byKey[k] = append(byKey[k], t)
	}
	phases := map[results.Phase][]*pending{}
	for _, t := range tests {
		if t.metric != results.DecidingMetric(t.id.Phase) || !(t.est.SE > 0) {
			continue
		}
		phases[t.id.Phase] = append(phases[t.id.Phase], t)
		if t.id.Phase == results.PhasePrefill {
			// The prefill cells' changes within the run sum to about nothing (the run's factor
			// is their median): a uniform prefill change is the shift's test, one context its
			// cell's.
			continue
		}
		add(key{kind: results.GroupRow, phase: results.PhaseDecode, label: t.id.ContextLabel}, t)
		add(key{kind: results.GroupColumn, phase: results.PhaseDecode, conc: t.id.Concurrency}, t)
	}
	var out []*groupPending
	for _, k := range order {
		ts := byKey[k]
		if len(ts) < minGroupCells {
			continue
		}
		g := &groupPending{tests: ts, measured: true, out: &results.GroupComparison{Kind: k.kind, Phase: k.phase, ContextLabel: k.label, Concurrency: k.conc}}
		var sum, ch, in float64
		for _, t := range ts {
			sum += psi(worseZ(t))
			ch += t.total().Diff
			in += t.est.Diff
			g.measured = g.measured && t.measuredNoise()
			g.out.Cells = append(g.out.Cells, t.id.String())
		}
		g.out.Z = sum / math.Sqrt(float64(len(ts))*e2)
		g.out.Change = math.Expm1(ch / float64(len(ts)))
		g.within = math.Expm1(in / float64(len(ts)))
		g.p = 2 * (1 - stats.NormalCDF(math.Abs(g.out.Z)))
		g.out.P = g.p
		out = append(out, g)
	}
	if re == nil {
		return out
	}
	for _, ph := range []results.Phase{results.PhasePrefill, results.PhaseDecode} {
		ts := phases[ph]
		if len(ts) < minGroupCells || !(re.shiftSE[ph] > 0) {
			continue
		}
		// Rates: a positive shift is faster. A history can be quiet by chance (ten runs of
		// which none met the slower kernel pick that one run in five gets): the shift is tested
		// against at least defaultRunCV, the run-to-run spread GPUs show across days, so that
		// only a shift beyond what any run may do blocks; where both sides measured their own
		// spread on three or more runs, at least its upper confidence bound (shiftFloor).
		// Where that floor binds, the spread is a fixed assumption, not an estimate from the
		// few runs at hand: the shift is referred to the normal, not to Student's t on their
		// degrees of freedom.
		floor := re.shiftFloor(ph) * re.shiftSE[ph] / math.Max(re.tau[ph], 1e-9)
		se := math.Max(re.shiftSE[ph], floor)
		z := -re.shift[ph] / se
		p := 2 * stats.TSurvival(math.Abs(z), re.shiftDF[ph])
		df := re.shiftDF[ph]
		if math.IsInf(re.shiftDF[ph], 1) || floor >= re.shiftSE[ph] {
			p = 2 * (1 - stats.NormalCDF(math.Abs(z)))
			df = math.Inf(1)
		}
		// A shift that the base side's own runs reached (a machine with two speeds, such as a
		// kernel pick that one run in five gets: then the history holds such runs) is referred
		// to those runs as well, not only to a normal spread they do not follow: its p-value is
		// at least the share of them as slow, (m+1)/(n+1), two-sided. Ten runs of which one was
		// as slow give 0.36; none keeps the normal test alone (a side cannot show a speed it
		// never met, and 1/11 would hide every shift).
		seen, of := 0, 0
		if re.measured[ph] {
			if seen, of = re.runsSeen(ph); seen > 0 {
				p = math.Max(p, math.Min(1, 2*float64(seen+1)/float64(of+1)))
			}
		}
		shift, net := re.shift[ph], false
		// The decode shift net of the prefill's run factor (covariate.go), towards slower only,
		// beside the shift's own test (Bonferroni).
		if c := re.cov; ph == results.PhaseDecode && c != nil && c.Shift < 0 {
			z2 := -c.Shift / c.SE
			if p2 := 2 * stats.TSurvival(z2, c.DF); p2 < p {
				z, p, shift, se, df, net = z2, math.Min(1, 2*p2), c.Shift, c.SE, c.DF, true
			} else {
				p = math.Min(1, 2*p)
			}
		}
		g := &groupPending{tests: ts, measured: re.measured[ph], shift: true, within: math.Expm1(shift), shiftSE: se, shiftDF: df, seen: seen, of: of,
			out: &results.GroupComparison{Kind: results.GroupShift, Phase: ph, Change: math.Expm1(shift), Z: z, P: p}}
		if net {
			g.net = fmt.Sprintf("net of the prefill's (the decode moved %s, the prefill %s)", pct(math.Expm1(re.shift[results.PhaseDecode])), pct(math.Expm1(re.shift[results.PhasePrefill])))
		}
		for _, t := range ts {
			g.out.Cells = append(g.out.Cells, t.id.String())
		}
		g.p = p
		out = append(out, g)
	}
	return out
}

// decideGroups gives each group its verdict from its q, and the cells of a regressed group
// theirs (see the package's group tests).
func decideGroups(groups []*groupPending, qs []float64, th Thresholds, level float64) {
	d := th.Delta[results.MetricTotalTokPerS]
	deltaOf := func(g *groupPending) float64 {
		if g.out.Phase == results.PhasePrefill {
			return th.Delta[results.MetricPromptTokPerS]
		}
		return d
	}
	// The groups whose whole interval is slower than δ are held to it at the false coverage
	// level over the groups (as the cells', decide).
	r := 0
	for _, g := range groups {
		if _, high := g.interval(th.ConfidenceLevel); high < -deltaOf(g) {
			r++
		}
	}
	famConf := 1 - float64(max(r, 1))*(1-th.ConfidenceLevel)/float64(max(len(groups), 1))
	for i, g := range groups {
		out := g.out
		out.Q = qs[i]
		dd := d
		if out.Phase == results.PhasePrefill {
			dd = th.Delta[results.MetricPromptTokPerS]
		}
		// Both the whole change and the change within the runs must be beyond δ: a row that
		// moved with its run is the shift's, a row that moved against a run that moved the other
		// way is not slower.
		worse := out.Change < -dd && g.within < -dd
		better := out.Change > dd && g.within > dd
		sig := out.Q <= level
		suspected, at := false, suspectAt(g, groups)
		out.Low, out.High = g.interval(th.ConfidenceLevel)
		out.DF = g.df()
		// A row or a column is one of many: it is held slower than δ when its interval at the
		// groups' family level is, as the cells' (decide).
		famLow, famHigh := g.interval(famConf)
		name := out.Name()
		if g.net != "" {
			name += ", " + g.net
		}
		desc := fmt.Sprintf("%s: mean change %s (%g%% CI %s … %s) over %s, z = %+.1f", name, pct(out.Change), th.ConfidenceLevel*100, pct(out.Low), pct(out.High), textout.Plural(len(out.Cells), "cell", "cells"), out.Z)
		switch {
		case sig && worse && g.net != "":
			out.Verdict = results.VerdictUnproven
			suspected = true
			out.Reason = fmt.Sprintf("%s, q = %.2g ≤ %.3g: slower than the prefill's run factor predicts, but the prefill may have moved with the code, not with the run; a paired run decides it", desc, out.Q, level)
		case sig && worse && g.measured:
			out.Verdict = results.VerdictRegression
			out.Reason = fmt.Sprintf("%s, q = %.2g ≤ %.3g", desc, out.Q, level)
		case sig && worse:
			out.Verdict = results.VerdictUnproven
			out.Reason = desc + ", but only a prior bounds its noise: history or a paired run decides it"
		case sig && better && g.measured:
			out.Verdict = results.VerdictImprovement
			out.Reason = fmt.Sprintf("%s, q = %.2g ≤ %.3g", desc, out.Q, level)
		case worse && out.Z > 0 && g.p/2 <= at:
			out.Verdict = results.VerdictUnproven
			suspected = true
			out.Reason = fmt.Sprintf("%s: slower beyond δ by itself (one-sided p = %.2g ≤ %.2g), but not significant among every test of the matrix (q = %.2g > %.3g); a paired run or a rerun decides it",
				desc, g.p/2, at, out.Q, level)
			if g.net != "" {
				out.Reason += " (the prefill may have moved with the code, not with the run)"
			}
		case out.High < -dd && famHigh < -dd:
			// No pass over a shown slowdown: the group's whole interval is slower than δ, at
			// the groups' family level too.
			out.Verdict = results.VerdictUnproven
			suspected = true
			out.Reason = fmt.Sprintf("%s: the whole interval is slower than −%s, at the level of the %d groups too (%.4g%% CI up to %s), but not significant among every test of the matrix (q = %.2g > %.3g); a paired run or a rerun decides it",
				desc, pct0(dd), len(groups), famConf*100, pct(famHigh), out.Q, level)
		default:
			out.Verdict = results.VerdictInconclusive
			out.Reason = desc
			if g.seen > 0 && worse {
				out.Reason = fmt.Sprintf("%s: %d of the base side's %d runs %s as slow against their mean, so it may be the machine's speed that run, not the change; a paired run decides it", desc, g.seen, g.of, textout.Pick(g.seen, "was", "were"))
			}
			if out.High < -dd {
				// Slower than δ at the comparison's level but not at the groups': it is judged,
				// and shown, at the latter (no group a comparison passes shows a slowdown).
				out.Reason = fmt.Sprintf("%s: the whole interval is slower than −%s, but not at the level of the %d groups (%.4g%% CI %s … %s)", desc, pct0(dd), len(groups), famConf*100, pct(famLow), pct(famHigh))
				out.Low, out.High, out.Level = famLow, famHigh, famConf
			}
		}
		if out.Verdict != results.VerdictRegression && out.Verdict != results.VerdictImprovement && !suspected {
			continue
		}
		markCells(g, suspected, th)
	}
}

// phaseGroups returns, for each phase whose deciding cells' mean whole change has an interval
// wholly slower than δ while nothing of that phase blocks, a phase group that keeps the matrix
// from passing (unproven): the geometric mean a report shows over a phase is never passed when
// it is shown slower. Its cells that are slower beyond δ by themselves (one-sided p ≤ 0.05) are
// unproven too, as a suspected group's. A phase with a regression or an unproven cell or group
// needs none.
func phaseGroups(tests []*pending, groups []*groupPending, th Thresholds) []*groupPending {
	var out []*groupPending
	for _, ph := range []results.Phase{results.PhasePrefill, results.PhaseDecode} {
		var ts []*pending
		blocked := false
		for _, t := range tests {
			if t.id.Phase != ph || t.metric != results.DecidingMetric(ph) {
				continue
			}
			ts = append(ts, t)
			blocked = blocked || t.out.Verdict == results.VerdictRegression || t.out.Verdict == results.VerdictUnproven
		}
		for _, g := range groups {
			blocked = blocked || (g.out.Phase == ph && (g.out.Verdict == results.VerdictRegression || g.out.Verdict == results.VerdictUnproven))
		}
		mean, low, high, ok := meanChange(ts, th.ConfidenceLevel)
		d := th.Delta[results.DecidingMetric(ph)]
		if blocked || !ok || len(ts) < 2 || !(math.Expm1(high) < -d) {
			continue
		}
		g := &groupPending{tests: ts, within: math.Expm1(mean), out: &results.GroupComparison{Kind: results.GroupPhase, Phase: ph,
			Change: math.Expm1(mean), Low: math.Expm1(low), High: math.Expm1(high), P: 1, Q: 1, Verdict: results.VerdictUnproven}}
		g.out.DF = g.df()
		for _, t := range ts {
			g.out.Cells = append(g.out.Cells, t.id.String())
		}
		g.out.Reason = fmt.Sprintf("%s: mean change %s (%g%% CI %s … %s) over %s: the whole interval is slower than −%s, though no cell, row or column is shown slower by itself; a paired run or a rerun decides it",
			g.out.Name(), pct(g.out.Change), th.ConfidenceLevel*100, pct(g.out.Low), pct(g.out.High), textout.Plural(len(ts), "cell", "cells"), pct0(d))
		markCells(g, true, th)
		out = append(out, g)
	}
	return out
}

// markCells gives the cells of a group that decided (regression, improvement) or is suspected
// (unproven) their share of its verdict: those that moved beyond δ the same way, each
// significant by itself (one-sided p ≤ 0.05), take it (see the package's group tests).
func markCells(g *groupPending, suspected bool, th Thresholds) {
	out := g.out
	// The cells of a regressed (improved) group that moved beyond δ the same way, each
	// significant by itself, are regressions (improvements); those of a suspected group,
	// unproven, so that the comment names the cells that keep the matrix from passing.
	cellVerdict := out.Verdict
	for _, t := range g.tests {
		if suspected && t.out.Verdict != results.VerdictInconclusive {
			continue
		}
		if !suspected && (!t.measuredNoise() || t.out.Verdict == out.Verdict) {
			continue
		}
		e := t.est
		if g.shift || out.Kind == results.GroupPhase {
			e = t.total()
		}
		total := t.total()
		alt, beyond := stats.Greater, total.Diff > math.Log1p(th.Delta[t.metric])
		if (cellVerdict != results.VerdictImprovement) == t.metric.HigherIsBetter() {
			alt, beyond = stats.Less, total.Diff < math.Log1p(-th.Delta[t.metric])
		}
		// The tested change (within the run, or the whole one) and the whole change a report
		// shows are each significant by themselves: a cell marked slower never shows a range
		// that reaches the other side of zero.
		one, shown := e.Test(0, alt, th.ConfidenceLevel).P, total.Test(0, alt, th.ConfidenceLevel).P
		if !beyond || one > memberP || shown > memberP {
			continue
		}
		t.out.Verdict = cellVerdict
		t.out.Reason = fmt.Sprintf("%s (%s; p = %.2g)", pct(t.out.Change.Change), out.Reason, max(one, shown))
		if ch := t.out.Change; !suspected && ch.Low <= 0 && ch.High >= 0 {
			// A cell called slower (faster) whose range, at the comparison's level or at its
			// table's where it was held there, reaches across zero shows the comparison's range
			// where that lies on its side of zero, else the two-sided range of the level it was
			// judged at (one-sided, memberP), named. An unproven cell's range may cross zero:
			// it is not proven.
			r, level := total.Test(0, stats.TwoSided, th.ConfidenceLevel), 0.0
			if r.CILow <= 0 && r.CIHigh >= 0 {
				level = 1 - 2*memberP
				r = total.Test(0, stats.TwoSided, level)
			}
			ch.Low, ch.High, ch.Level = math.Expm1(r.CILow), math.Expm1(r.CIHigh), level
		}
	}
}

// memberP is the one-sided p at which a cell of a decided or suspected group takes its share of
// the group's verdict.
const memberP = 0.05
