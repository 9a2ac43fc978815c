package compare

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/speedmatrix/speedmatrix/compare/stats"
	"github.com/speedmatrix/speedmatrix/internal/quantile"
	"github.com/speedmatrix/speedmatrix/internal/textout"
	"github.com/speedmatrix/speedmatrix/results"
)

// pending is one cell-metric in the test family.
type pending struct {
	id     results.CellID
	metric results.Metric
	out    *results.MetricComparison
	est    stats.Estimate
	// vb and vh are the per-run variances (log scale) of the two sides; kb and kh their trial
	// counts. They let the advice predict the standard error after more trials.
	vb, vh float64
	kb, kh int
	p      float64
	// b and h are the two sides' data of the cell (for the row test).
	b, h *sideData
	// pairs is set when the sides are paired runs' (paired.go).
	pairs *pairRuns
	// shift is the head's run factor over the base side's on this metric's log scale
	// (runeffect.go): est.Diff is the cell's change within its run, est.Diff + shift its whole
	// change, whose standard error adds shiftSE. shiftMeasured says τ was measured.
	shift, shiftSE float64
	shiftMeasured  bool
}

// withShift takes the run factors' shift for p's phase and metric (none without re).
func (p *pending) withShift(re *runEffects) {
	if re == nil || p.metric == results.MetricSpecAcceptance {
		return
	}
	d := re.shift[p.id.Phase]
	if !p.metric.HigherIsBetter() {
		d = -d
	}
	p.shift, p.shiftSE, p.shiftMeasured = d, re.shiftSE[p.id.Phase], re.measured[p.id.Phase]
}

// total returns the cell's whole change (within its run, plus the run's shift) as an estimate.
func (p *pending) total() stats.Estimate {
	e := p.est
	e.Diff += p.shift
	e.SE = math.Sqrt(e.SE*e.SE + p.shiftSE*p.shiftSE)
	return e
}

// lostReason says what a head cell holds for metric m instead of a usable value, and what the
// base had (its geometric mean).
func lostReason(h *sideData, m results.Metric, base float64) string {
	unit := "ms"
	if m.HigherIsBetter() {
		unit = "tok/s"
	}
	var v *float64
	switch {
	case h.decode != nil:
		v = h.decode.Value(m)
	case h.prefill != nil:
		v = h.prefill.Value(m)
	}
	had := fmt.Sprintf("base had %s %s", strconv.FormatFloat(base, 'g', 4, 64), unit)
	if v == nil {
		return fmt.Sprintf("head has no %s where %s: the measured cell lost its number", m.Title(), had)
	}
	s := fmt.Sprintf("head reads %s %s where %s", strconv.FormatFloat(*v, 'g', 4, 64), unit, had)
	if *v == 0 && m.HigherIsBetter() {
		return s + ": a 100 % drop"
	}
	return s + ": not a usable value"
}

// estimate fills p.out with the change, interval, p-values and noise of one cell-metric and
// reports whether it joins the test family.
func (p *pending) estimate(b, h *sideData, hist historyNoise, measured float64, th Thresholds) bool {
	m, out := p.metric, p.out
	p.b, p.h = b, h
	bs, hs := b.sample(m), h.sample(m)
	out.Base, out.Head = bs.summary, hs.summary
	if len(bs.logs) == 0 || len(hs.logs) == 0 {
		out.Verdict = results.VerdictNotComparable
		switch {
		case len(bs.logs) == 0 && len(hs.logs) == 0:
			out.Reason = "no value in either run"
		case len(bs.logs) == 0:
			out.Reason = "no value in base"
		case m == results.MetricSpecAcceptance:
			out.Reason = "no speculative acceptance measured in head" // a missing counter says nothing of the engine
		default:
			// Both cells were measured (a status change is decided before), the base has the
			// number and the head has none it could be compared by: a 100 % drop (or an
			// unbounded rise of a latency) is a regression, never a pass.
			out.Verdict = results.VerdictRegression
			out.Reason = lostReason(h, m, math.Exp(meanOf(bs.logs)))
		}
		return false
	}
	kb, kh := len(bs.logs), len(hs.logs)
	cb, ch := meanOf(bs.logs), meanOf(hs.logs)
	prior := th.Prior.CV(p.id, m)
	noise := &results.Noise{BaseTrials: kb, HeadTrials: kh}
	aboveprior := measured > prior && !math.IsInf(measured, 0)
	if aboveprior {
		// Noise measured on this machine above the prior: the prior is wrong here.
		noise.PriorCV, noise.MeasuredCV = ptr(prior), ptr(measured)
		prior = measured
	}
	prior2 := prior * prior
	// floor2 is the floor a few trials take (trialsnoise.go): the prior, or a single run's
	// within-run noise where it is above (as the first look's within estimate took it).
	floor2 := prior2
	for _, w := range []float64{bs.withinVar, hs.withinVar} {
		if w > floor2 {
			floor2 = w
		}
	}
	var se, df float64
	diff := ch - cb
	switch {
	case p.pairs != nil && p.estimatePaired(b, h, noise, th): // pairs of one paired run (paired.go)
		se, df, diff = p.est.SE, p.est.DF, p.est.Diff
	case kb >= 2 && kh >= 2 && (varianceOf(bs.logs) > 0 || varianceOf(hs.logs) > 0):
		vb, vh := varianceOf(bs.logs), varianceOf(hs.logs)
		e := stats.WelchFromSummaries(ch, vh, kh, cb, vb, kb)
		se, df = e.SE, e.DF
		p.vb, p.vh = vb, vh
		noise.Source = results.NoiseTrials
		noise.CV = math.Sqrt((float64(kb-1)*vb + float64(kh-1)*vh) / float64(kb+kh-2))
		// Few trials (a rerun's) pool with the history's runs, or are floored by the prior
		// (trialsnoise.go).
		if v, d, src, ok := fewTrialsNoise(float64(kb-1)*vb+float64(kh-1)*vh, float64(kb+kh-2), hist, floor2, th); ok {
			p.vb, p.vh = v, v
			se, df = math.Sqrt(v*(1/float64(kb)+1/float64(kh))), d
			noise.Source, noise.CV = src, math.Sqrt(v)
		}
	case (kb >= 2 || kh >= 2) && (kb < 2 || kh < 2) && max(kb, kh)-1 < minTrialDF && varianceOf(longer(bs.logs, hs.logs)) > 0 &&
		fewTrialsOK(longer(bs.logs, hs.logs), hist, floor2, th):
		// A few repeated runs of one side against one run of the other (trialsnoise.go).
		l := longer(bs.logs, hs.logs)
		v, d, src, _ := fewTrialsNoise(float64(len(l)-1)*varianceOf(l), float64(len(l)-1), hist, floor2, th)
		p.vb, p.vh = v, v
		se, df = math.Sqrt(v*(1/float64(kb)+1/float64(kh))), d
		noise.Source, noise.CV = src, math.Sqrt(v)
		if kb == 1 && hist.usable(th) {
			// A head rerun against one stored base run with history: the base pools the
			// history's newest level, as the first look's did.
			pool := append(slices.Clone(bs.logs), hist.level...)
			diff = ch - meanOf(pool)
			se = math.Sqrt(v * (1/float64(len(pool)) + 1/float64(kh)))
			noise.PooledRuns = len(pool)
			kb = len(pool)
		}
	case (kb >= 2 || kh >= 2) && (kb < 2 || kh < 2) && max(kb, kh) > hist.n && varianceOf(longer(bs.logs, hs.logs)) > 0 &&
		!(kb == 1 && hist.usable(th)):
		// Repeated trials of one commit only: their spread is the run-to-run noise of both (two
		// runs too: where they are noisier than the floor, their one degree of freedom rather
		// than a prior the data contradict). Not where one base run has a usable history: the
		// head's many trials say nothing of the base run's own draw, which the history's level
		// pools (below); a base run that drew a heavy tail otherwise blocked a head measured
		// again (t₃ noise, budgeted job).
		s2 := varianceOf(longer(bs.logs, hs.logs))
		p.vb, p.vh = s2, s2
		se = math.Sqrt(s2 * (1/float64(kb) + 1/float64(kh)))
		df = float64(max(kb, kh) - 1)
		noise.Source = results.NoiseTrials
		noise.CV = math.Sqrt(s2)
	case hist.usable(th):
		// The pooled baseline: the base's runs and the history's newest level are runs of the
		// default branch at one level, so the base's value is their mean (after each run's
		// factor), and the head is compared with it, not with one run.
		s2 := hist.v
		pool := hist.level // the history's newest level, the base's run last (compare.go)
		if len(bs.logs) != 1 || len(hs.logs) != 1 {
			pool = append(slices.Clone(bs.logs), hist.level...)
		}
		diff = ch - meanOf(pool)
		p.vb, p.vh = s2, s2
		// A run holding fewer samples than the history's runs (a slowed head's window of
		// fewer draft steps) is noisier than they were: its own sampling variance floors its
		// share (samples.go); its degrees of freedom are the model's, not the history's.
		poolVar := s2 / float64(len(pool))
		if kb == 1 && bs.samplingVar > s2 {
			poolVar += (bs.samplingVar - s2) / float64(len(pool)*len(pool))
		}
		df = hist.df
		if kh == 1 && hs.samplingVar > s2 {
			p.vh = hs.samplingVar
			noise.WithinCV = ptr(math.Sqrt(hs.samplingVar))
			df = stats.Satterthwaite([]float64{poolVar, p.vh}, []float64{hist.df, math.Inf(1)})
		}
		se = math.Sqrt(poolVar + p.vh/float64(kh))
		noise.PooledRuns = len(pool)
		kb = len(pool) // the advice's base runs
		noise.Source = results.NoiseHistory
		noise.CV = math.Sqrt(s2)
	case !math.IsNaN(bs.withinVar) || !math.IsNaN(hs.withinVar):
		side := func(w, wdf float64) (float64, float64) {
			if !math.IsNaN(w) && w > prior2 {
				return w, wdf
			}
			return prior2, math.Inf(1)
		}
		vb, dfb := side(bs.withinVar, bs.withinDF)
		vh, dfh := side(hs.withinVar, hs.withinDF)
		p.vb, p.vh = vb, vh
		a, c := vb/float64(kb), vh/float64(kh)
		se = math.Sqrt(a + c)
		df = stats.Satterthwaite([]float64{a, c}, []float64{dfb, dfh})
		noise.Source = results.NoiseWithin
		noise.CV = math.Sqrt((vb + vh) / 2)
		w := math.NaN()
		for _, x := range []float64{bs.withinVar, hs.withinVar} {
			if !math.IsNaN(x) && (math.IsNaN(w) || x > w) {
				w = x
			}
		}
		noise.WithinCV = ptr(math.Sqrt(w))
		if aboveprior && vb == prior2 && vh == prior2 {
			// The window saw less than the measured noise: the measured noise alone set it.
			noise.Source = results.NoiseMeasured
		}
	default:
		p.vb, p.vh = prior2, prior2
		se = math.Sqrt(prior2 * (1/float64(kb) + 1/float64(kh)))
		df = math.Inf(1)
		noise.Source = results.NoisePrior
		noise.CV = prior
		if aboveprior {
			noise.Source = results.NoiseMeasured
			break
		}
		noise.PriorReason, noise.Samples = priorReason(b, h, kb, kh, m)
		if noise.PriorReason == results.PriorFewSamples {
			noise.SamplesNeeded = withinNeeded
		}
	}
	if noise.Source == results.NoiseTrials && b.runs() < 2 && h.runs() < 2 && p.pairs == nil {
		// Trials inside one run (one server lifetime on each side) are replicates within it:
		// their spread cannot see what varies between runs, so each side's value keeps at least
		// the prior's run-to-run noise, as one run's would.
		vb, vh := varianceOf(bs.logs), varianceOf(hs.logs)
		a, c := math.Max(vb/float64(kb), prior2), math.Max(vh/float64(kh), prior2)
		se = math.Sqrt(a + c)
		df = math.Inf(1)
		if a > prior2 && c > prior2 {
			df = stats.Satterthwaite([]float64{a, c}, []float64{float64(kb - 1), float64(kh - 1)})
		}
		p.vb, p.vh = math.Max(vb, prior2), math.Max(vh, prior2)
		noise.Source = results.NoiseWithin
		noise.WithinCV = ptr(math.Sqrt(math.Max(vb, vh)))
		noise.CV = math.Sqrt((p.vb + p.vh) / 2)
	}
	if noise.Source == results.NoiseHistory && hist.levels > 1 {
		noise.Levels, noise.LevelFrom = hist.levels, hist.at
	}
	if noise.Source != results.NoisePrior && noise.Source != results.NoiseWithin && noise.Source != results.NoiseMeasured {
		noise.PriorCV, noise.MeasuredCV = nil, nil // trials or history measured it directly
	}
	if !math.IsInf(df, 1) {
		noise.DF = ptr(df)
	}
	out.Noise = noise
	p.kb, p.kh = kb, kh
	p.est = stats.Estimate{Diff: diff, SE: se, DF: df}
	if kb >= th.MinRankTrials && kh >= th.MinRankTrials && noise.Source != results.NoisePaired {
		if mw, err := stats.MannWhitney(hs.logs, bs.logs, stats.TwoSided); err == nil {
			out.RankP = ptr(mw.P)
		}
	}
	p.finish(th)
	return true
}

// longer returns the longer of two samples.
func longer(a, b []float64) []float64 {
	if len(b) > len(a) {
		return b
	}
	return a
}

// finish computes the p-value, interval and TOST from p.est.
func (p *pending) finish(th Thresholds) {
	out := p.out
	r := p.est.Test(0, stats.TwoSided, th.ConfidenceLevel)
	p.p = r.P
	d := th.Delta[p.metric]
	if th.MinimumEffect {
		// H0: the change lies within [log(1 − δ), log(1 + δ)]; two-sided over both directions.
		up := p.est.Test(math.Log1p(d), stats.Greater, th.ConfidenceLevel).P
		down := p.est.Test(math.Log1p(-d), stats.Less, th.ConfidenceLevel).P
		p.p = math.Min(1, 2*math.Min(up, down))
	}
	out.P = ptr(p.p)
	// What is shown, and what TOST shows within ±δ, is the whole change; what is tested against
	// the cell's noise is the change within its run (the shift is tested on its own: groups.go).
	tot := p.total()
	tr := tot.Test(0, stats.TwoSided, th.ConfidenceLevel)
	out.Change = &results.Change{Change: math.Expm1(tot.Diff), Low: math.Expm1(tr.CILow), High: math.Expm1(tr.CIHigh)}
	out.TOSTP = ptr(tot.TOST(math.Log1p(-d), math.Log1p(d)))
	_ = r
}

// minEmpiricalNull is the fewest guessed-noise tests of one phase and metric from which the
// matrix checks its prior.
const minEmpiricalNull = 8

// empiricalNull checks the guessed noise (prior, or within-run batch means floored by the prior)
// against the matrix itself, after Efron's empirical null (2004): within each phase and metric,
// the z-scores of the cell-metrics whose noise was guessed should spread like a standard normal
// when most cells did not change. Their robust spread, 1.4826 × the median absolute deviation
// from their median, estimates how much the guess understates the noise; when it exceeds 1, every
// such standard error of the group is multiplied by it (never divided: a prior that is too large
// only costs power). The spread is taken around the median, not around 0, so a change shared by
// the whole matrix stays visible, and the least of it and the spreads of differences between
// neighbouring cells is taken (see nullSpread), so that a slowdown of whole rows or columns is
// not taken for noise. It returns a warning per adjusted group.
func empiricalNull(tests []*pending, th Thresholds) []string {
	// Cells are grouped by the prior they were given too: cells of a wide prior (concurrency 1
	// under speculative decoding, 20 %) have small z-scores whatever the noise and would hide the
	// quiet cells' excess.
	type key struct {
		phase  results.Phase
		metric results.Metric
		prior  float64
	}
	groups := map[key][]*pending{}
	var order []key
	for _, t := range tests {
		if src := t.out.Noise.Source; src != results.NoisePrior && src != results.NoiseWithin {
			continue
		}
		if t.est.SE <= 0 {
			continue
		}
		k := key{t.id.Phase, t.metric, math.Round(th.Prior.CV(t.id, t.metric) * 1e4)}
		if groups[k] == nil {
			order = append(order, k)
		}
		groups[k] = append(groups[k], t)
	}
	rowOf := map[string]int{} // a context's place in the matrix, in the order of the tests
	for _, t := range tests {
		if _, ok := rowOf[t.id.ContextLabel]; !ok {
			rowOf[t.id.ContextLabel] = len(rowOf)
		}
	}
	var warnings []string
	for _, k := range order {
		g := groups[k]
		if len(g) < minEmpiricalNull {
			continue
		}
		scale := nullSpread(g, rowOf)
		if !(scale > 1) {
			continue
		}
		for _, t := range g {
			t.est.SE *= scale
			t.vb *= scale * scale
			t.vh *= scale * scale
			t.out.Noise.CV *= scale
			t.out.Noise.Scale = ptr(scale)
			t.finish(th)
		}
		warnings = append(warnings, fmt.Sprintf("%s %s: the changes across the matrix spread %.2f× more than the assumed noise allows; the noise of its %s with guessed noise was scaled up by %.2f (empirical null)", k.phase, k.metric, scale, textout.Plural(len(g), "cell", "cells"), scale))
	}
	return warnings
}

// nullSpread returns the robust spread of the z-scores of g, a group of one phase, metric and
// prior: the least of three estimates, each 1.4826 × a median absolute deviation. One is the
// spread around the group's median; the others are the spreads of the differences between
// neighbours, cells next to each other in one row (by concurrency) or in one column (by
// context), each difference divided by √2 (used from minNeighbourDiffs differences on). A real
// change confined to some rows, to a column or shared by the whole matrix inflates at most some
// of them (a slowdown of the rows from 32K on is most of the matrix: around the median, the quiet
// rows look as noisy as the change is large; a slowed middle row sits in every difference down
// a column), while noise beyond the prior inflates all three.
func nullSpread(g []*pending, rowOf map[string]int) float64 {
	z := make([]float64, len(g))
	for i, t := range g {
		z[i] = t.est.Diff / t.est.SE
	}
	med := quantile.Median(z)
	dev := make([]float64, len(z))
	for i, v := range z {
		dev[i] = math.Abs(v - med)
	}
	spread := 1.4826 * quantile.Median(dev)
	idx := make([]int, len(g))
	for i := range idx {
		idx[i] = i
	}
	neighbours := func(same func(a, b *pending) bool, less func(a, b *pending) int) {
		slices.SortStableFunc(idx, func(a, b int) int { return less(g[a], g[b]) })
		var diffs []float64
		for n := 1; n < len(idx); n++ {
			if a, b := g[idx[n-1]], g[idx[n]]; same(a, b) && a.id != b.id {
				diffs = append(diffs, math.Abs(z[idx[n]]-z[idx[n-1]])/math.Sqrt2)
			}
		}
		if len(diffs) >= minNeighbourDiffs {
			spread = math.Min(spread, 1.4826*quantile.Median(diffs))
		}
	}
	row := func(t *pending) int { return rowOf[t.id.ContextLabel] }
	neighbours(func(a, b *pending) bool { return a.id.ContextLabel == b.id.ContextLabel }, func(a, b *pending) int {
		return cmp.Or(cmp.Compare(row(a), row(b)), cmp.Compare(a.id.Concurrency, b.id.Concurrency))
	})
	neighbours(func(a, b *pending) bool { return a.id.Concurrency == b.id.Concurrency }, func(a, b *pending) int {
		return cmp.Or(cmp.Compare(a.id.Concurrency, b.id.Concurrency), cmp.Compare(row(a), row(b)))
	})
	return spread
}

// minNeighbourDiffs is the fewest differences between neighbours from which nullSpread takes
// their spread.
const minNeighbourDiffs = 6

// adjustAll runs Benjamini–Hochberg over one family: every cell-metric tested, every row test
// and every group test.
func adjustAll(tests []*pending, rows []*rowPending, groups []*groupPending) (cells, rowQs, groupQs []float64) {
	ps := make([]float64, 0, len(tests)+len(rows)+len(groups))
	for _, t := range tests {
		ps = append(ps, t.p)
	}
	for _, r := range rows {
		ps = append(ps, r.p)
	}
	for _, g := range groups {
		ps = append(ps, g.p)
	}
	qs := stats.AdjustBH(ps)
	a, b := len(tests), len(tests)+len(rows)
	return qs[:a], qs[a:b], qs[b:]
}

// decide gives each cell-metric its verdict from its BH-adjusted p-value qs[i] in a family of m.
func decide(tests []*pending, qs []float64, m int, th Thresholds, level float64) {
	// A cell whose whole interval is slower than δ is held to it at the false coverage level of
	// Benjamini and Yekutieli (2005) over the cells of its table (its phase and metric, as a
	// report shows them: the decode matrix, the prefill row): of the n cells, the r so selected
	// are given intervals at level 1 − r·(1 − conf)/n, so that the share of them that miss their
	// change stays within 1 − conf however many cells a report picks out (r = 1: Bonferroni).
	type table struct {
		phase  results.Phase
		metric results.Metric
	}
	n, r := map[table]int{}, map[table]int{}
	for _, t := range tests {
		if d, k := th.Delta[t.metric], (table{t.id.Phase, t.metric}); decides(t.metric, t.id.Phase) {
			n[k]++
			if tot := t.total().Test(0, stats.TwoSided, th.ConfidenceLevel); slowBeyond(math.Expm1(tot.CILow), math.Expm1(tot.CIHigh), t.metric, d) {
				r[k]++
			}
		}
	}
	for i, t := range tests {
		out := t.out
		out.Q = ptr(qs[i])
		d := th.Delta[t.metric]
		ch := out.Change.Change
		worse := (ch < 0) == t.metric.HigherIsBetter()
		beyond := math.Abs(ch) > d
		sig := qs[i] <= level
		rankOK := out.RankP == nil || *out.RankP <= th.FDR
		if mdc, ok := minDetectable(t.est, level/float64(m), th.Power); ok {
			if th.MinimumEffect {
				mdc = math.Expm1(math.Log1p(d) + math.Log1p(mdc))
			}
			out.MDC = ptr(math.Max(mdc, d))
		}
		ci := fmt.Sprintf("%s (%g%% CI %s … %s)", pct(ch), th.ConfidenceLevel*100, pct(out.Change.Low), pct(out.Change.High))
		// Tested is the change within the run; shown (ch) is the whole change: both must be
		// beyond δ the same way.
		within := math.Expm1(t.est.Diff)
		beyond = beyond && math.Abs(within) > d && (within < 0) == (ch < 0)
		measured := t.measuredNoise()
		note := !decides(t.metric, t.id.Phase)
		k := table{t.id.Phase, t.metric}
		famConf := 1 - float64(max(r[k], 1))*(1-th.ConfidenceLevel)/float64(max(n[k], 1))
		fr := t.total().Test(0, stats.TwoSided, famConf)
		famLow, famHigh := math.Expm1(fr.CILow), math.Expm1(fr.CIHigh)
		switch {
		case sig && beyond && rankOK && note:
			out.Verdict = results.VerdictInconclusive
			out.Note = results.NoteBetter
			if worse {
				out.Note = results.NoteWorse
			}
			out.Reason = fmt.Sprintf("%s, beyond ±%s; q = %.2g ≤ %.3g among the notes: a note, the cell is decided on its %s", ci, pct0(d), qs[i], level, results.DecidingMetric(t.id.Phase).Title())
		case sig && beyond && rankOK && !measured && worse:
			out.Verdict = results.VerdictUnproven
			out.Reason = fmt.Sprintf("%s, beyond ±%s at q = %.2g, but only a prior (%s) bounds its noise: no history, separate runs or pairs measured it; history or a paired run decides it", ci, pct0(d), qs[i], t.out.Noise.Source)
		case sig && beyond && rankOK && !measured:
			out.Verdict = results.VerdictInconclusive
			out.Reason = fmt.Sprintf("%s, beyond ±%s at q = %.2g, but only a prior (%s) bounds its noise", ci, pct0(d), qs[i], t.out.Noise.Source)
		case sig && beyond && rankOK:
			out.Verdict = results.VerdictImprovement
			if worse {
				out.Verdict = results.VerdictRegression
			}
			out.Reason = fmt.Sprintf("%s, beyond ±%s; q = %.2g ≤ %.3g", ci, pct0(d), qs[i], level)
		case !note && slowBeyond(out.Change.Low, out.Change.High, t.metric, d) && slowBeyond(famLow, famHigh, t.metric, d):
			// No pass over a shown slowdown: the whole interval a report shows is slower than δ,
			// and so is the interval at the family's level (famConf: one cell of many is what a
			// report picks out), but the family's test did not decide it (or the rank test
			// disagreed).
			out.Verdict = results.VerdictUnproven
			out.Reason = fmt.Sprintf("%s: the whole interval is slower than ±%s, at the level of its table's cells too (%.4g%% CI %s … %s, %d cells), but not significant among every test of the matrix (q = %.2g > %.3g); a rerun of the cell or a paired run decides it",
				ci, pct0(d), famConf*100, pct(famLow), pct(famHigh), n[k], qs[i], level)
		case *out.TOSTP <= th.EquivalenceAlpha:
			out.Verdict = results.VerdictUnchanged
			out.Reason = fmt.Sprintf("%s, within ±%s (TOST p = %.2g)", ci, pct0(d), *out.TOSTP)
		default:
			out.Verdict = results.VerdictInconclusive
			switch {
			case sig && beyond:
				out.Reason = fmt.Sprintf("%s, but the rank test of the trials disagrees (p = %.2g)", ci, *out.RankP)
			case sig:
				out.Reason = fmt.Sprintf("%s: a real change, but not shown to be within ±%s", ci, pct0(d))
			case !note && slowBeyond(out.Change.Low, out.Change.High, t.metric, d):
				out.Reason = fmt.Sprintf("%s: the whole interval is slower than ±%s, but not at the level of its table's %d cells (%.4g%% CI %s … %s), nor significant among every test of the matrix (q = %.2g > %.3g)",
					ci, pct0(d), n[k], famConf*100, pct(famLow), pct(famHigh), qs[i], level)
				// It is judged at its table's level, and shows that interval: a cell a
				// comparison passes never shows a slowdown beyond δ.
				out.Change.Low, out.Change.High, out.Change.Level = famLow, famHigh, famConf
			case out.Change.High < -d || out.Change.Low > d:
				out.Reason = fmt.Sprintf("%s: the whole interval is beyond ±%s, but not significant among every test of the matrix (q = %.2g > %.3g)", ci, pct0(d), qs[i], level)
			case out.MDC != nil:
				out.Reason = fmt.Sprintf("%s spans ±%s; this cell detects changes of %s or more", ci, pct0(d), pct0(*out.MDC))
			default:
				out.Reason = fmt.Sprintf("%s spans ±%s; this cell is too noisy to detect any change", ci, pct0(d))
			}
		}
	}
}

// minDetectable returns the smallest relative change that a test of level alpha detects with the
// given power at the estimate's standard error: exp((t_{1−α/2} + t_{power})·SE) − 1. ok is false
// when that is beyond any plausible change (more than a factor of 100).
func minDetectable(e stats.Estimate, alpha, power float64) (float64, bool) {
	z := stats.TQuantile(1-alpha/2, e.DF) + stats.TQuantile(power, e.DF)
	l := z * e.SE
	if math.IsNaN(l) || l > math.Log(100) {
		return 0, false
	}
	return math.Expm1(l), true
}

// slowBeyond reports whether the interval [low, high] of a relative change of metric m lies
// wholly on the slow side of δ: every value in it slower than δ.
func slowBeyond(low, high float64, m results.Metric, d float64) bool {
	if m.HigherIsBetter() {
		return high < -d
	}
	return low > d
}

// meanChange returns the mean whole change of ts (log scale) with its interval at level conf:
// the cells' within-run changes taken as independent, the phase's shift between runs (the same
// for every cell of a phase) shared by all of them, so that its uncertainty does not shrink
// with the number of cells. ok is false for no cells.
func meanChange(ts []*pending, conf float64) (mean, low, high float64, ok bool) {
	e, ok := meanEstimate(ts)
	if !ok {
		return 0, 0, 0, false
	}
	r := e.Test(0, stats.TwoSided, conf)
	return e.Diff, r.CILow, r.CIHigh, true
}

// meanEstimate is meanChange's estimate: the mean whole change, its standard error and
// degrees of freedom (+Inf where the normal applies).
func meanEstimate(ts []*pending) (stats.Estimate, bool) {
	n := len(ts)
	if n == 0 {
		return stats.Estimate{}, false
	}
	var sum, shiftVar float64
	vars := make([]float64, 0, n+1)
	dfs := make([]float64, 0, n+1)
	shifts := map[results.Phase]float64{}
	for _, t := range ts {
		sum += t.est.Diff + t.shift
		v := t.est.SE * t.est.SE / float64(n*n)
		vars, dfs = append(vars, v), append(dfs, t.est.DF)
		shifts[t.id.Phase] = t.shiftSE
	}
	for _, se := range shifts {
		shiftVar += se * se
	}
	if shiftVar > 0 {
		vars, dfs = append(vars, shiftVar), append(dfs, math.Inf(1))
	}
	var tv float64
	for _, v := range vars {
		tv += v
	}
	e := stats.Estimate{Diff: sum / float64(n), SE: math.Sqrt(tv), DF: stats.Satterthwaite(vars, dfs)}
	if !(e.DF > 0) {
		e.DF = math.Inf(1)
	}
	return e, true
}

// geomean returns the geometric-mean change of decode total tok/s over the tested cells, with
// its interval (meanChange: independent cells, the decode shift between runs shared).
func geomean(tests []*pending, conf float64) *results.Change {
	var ts []*pending
	for _, t := range tests {
		if t.id.Phase == results.PhaseDecode && t.metric == results.MetricTotalTokPerS {
			ts = append(ts, t)
		}
	}
	mean, low, high, ok := meanChange(ts, conf)
	if !ok {
		return nil
	}
	return &results.Change{Change: math.Expm1(mean), Low: math.Expm1(low), High: math.Expm1(high), Cells: len(ts)}
}

// advise plans the rerun of the inconclusive cell-metrics: how many further trials per side
// make the smallest detectable change at most 2δ with the configured power at the second look's
// level (Bonferroni over every metric of the re-measured cells, normal quantiles), and the rule
// for that look. Cells that would need more than MaxFurtherTrials are listed as undecidable.
func advise(tests []*pending, th Thresholds, plan stats.TwoLook) *results.RerunAdvice {
	var inc []*pending
	for _, t := range tests {
		if t.out.Verdict == results.VerdictInconclusive {
			inc = append(inc, t)
		}
	}
	if len(inc) == 0 {
		return nil
	}
	adv := &results.RerunAdvice{HeadOnly: th.HeadOnlyReruns, Rule: results.SequentialRule{
		Method: "lan-demets-" + string(th.Spending), FDR: th.FDR, Level1: plan.Level1, Level2: plan.Level2,
		InformationFraction: th.PlannedFraction,
	}}
	if th.Look == 2 {
		adv.Rule.Text = fmt.Sprintf("This was the second look (BH at %.3g). The plan allows no third look: "+
			"cells still inconclusive stay inconclusive; raise δ for them or reduce their noise.", plan.Level2)
		for _, t := range inc {
			adv.Undecidable = addUndecidable(adv.Undecidable, t)
		}
		return adv
	}
	// The second look's family is every metric of the re-measured cells. Plan each test at the
	// Bonferroni share of the second look's level over that family, and shrink the family to the
	// cells that can be decided until it settles.
	needed := func(t *pending, z float64) int {
		target := math.Log1p(2*th.Delta[t.metric]) / z
		if th.MinimumEffect {
			target = (math.Log1p(2*th.Delta[t.metric]) - math.Log1p(th.Delta[t.metric])) / z
		}
		return furtherTrials(t.vb, t.kb, t.vh, t.kh, target, th.MaxFurtherTrials, th.HeadOnlyReruns) // headonly.go
	}
	// needsBase says that measuring both sides would decide t where head trials cannot.
	needsBase := func(t *pending, z float64) bool {
		if !th.HeadOnlyReruns {
			return false
		}
		target := math.Log1p(2*th.Delta[t.metric]) / z
		if th.MinimumEffect {
			target = (math.Log1p(2*th.Delta[t.metric]) - math.Log1p(th.Delta[t.metric])) / z
		}
		return furtherTrials(t.vb, t.kb, t.vh, t.kh, target, th.MaxFurtherTrials, false) > 0
	}
	listed := map[results.CellID]bool{}
	for _, t := range inc {
		listed[t.id] = true
	}
	// metricsIn is the number of metrics compared in a cell: its phase's, and speculative
	// acceptance where it is compared.
	accepted := map[results.CellID]bool{}
	for _, t := range tests {
		if t.metric == results.MetricSpecAcceptance {
			accepted[t.id] = true
		}
	}
	metricsIn := func(id results.CellID) int {
		n := len(results.Metrics(id.Phase))
		if accepted[id] {
			n++
		}
		return n
	}
	var z float64
	for range 10 {
		family := 0
		for id := range listed {
			family += metricsIn(id)
		}
		alpha := plan.Level2 / float64(max(1, family))
		z = stats.NormalQuantile(1-alpha/2) + stats.NormalQuantile(th.Power)
		next := map[results.CellID]bool{}
		for _, t := range inc {
			if needed(t, z) > 0 {
				next[t.id] = true
			}
		}
		if len(next) == len(listed) || len(next) == 0 {
			break
		}
		listed = next
	}
	// Rows that no cell of theirs decides are measured whole for the row test.
	zFor := func(extraRows int) float64 {
		family := extraRows
		for id := range listed {
			family += metricsIn(id)
		}
		alpha := plan.Level2 / float64(max(1, family))
		return stats.NormalQuantile(1-alpha/2) + stats.NormalQuantile(th.Power)
	}
	plans := planRows(tests, th, func(t *pending) bool {
		return t.out.Verdict == results.VerdictInconclusive && needed(t, z) == 0
	}, zFor)
	inRow := map[results.CellID]int{}
	var rowTexts []string
	for _, rp := range plans {
		// A row is measured at least as often as its cells would have been one by one.
		for _, t := range inc {
			if slices.Contains(rp.cells, t.id) {
				rp.trials = max(rp.trials, needed(t, z))
			}
		}
		for _, id := range rp.cells {
			inRow[id] = rp.trials
		}
		adv.Rows = append(adv.Rows, results.RowRerun{ContextLabel: rp.row, Cells: cellList(rp.cells), FurtherTrials: rp.trials})
		rowTexts = append(rowTexts, fmt.Sprintf("row %s %d more times", rp.row, rp.trials))
	}
	items := map[string]*results.RerunItem{}
	var order []string
	for _, t := range inc {
		if n, ok := inRow[t.id]; ok {
			t.out.FurtherTrials = ptr(n)
			continue
		}
		n := needed(t, z)
		cell := t.id.String()
		if n == 0 {
			adv.Undecidable = addUndecidable(adv.Undecidable, t)
			if needsBase(t, z) {
				markNeedsBase(adv.Undecidable, cell)
			}
			continue
		}
		t.out.FurtherTrials = ptr(n)
		it := items[cell]
		if it == nil {
			it = &results.RerunItem{Cell: cell}
			items[cell] = it
			order = append(order, cell)
		}
		it.Metrics = append(it.Metrics, t.metric)
		it.FurtherTrials = max(it.FurtherTrials, n)
	}
	var cells []string
	for _, cell := range order {
		it := items[cell]
		adv.Items = append(adv.Items, *it)
		cells = append(cells, cell)
		adv.Trials = max(adv.Trials, it.FurtherTrials)
	}
	adv.Cells = strings.Join(cells, ",")
	sides := "on base and on head"
	if th.HeadOnlyReruns {
		sides = "on the head (the base's runs stay as they are)"
	}
	measure := fmt.Sprintf("Measure the listed cells %d more times %s", adv.Trials, sides)
	switch {
	case len(plans) > 0 && len(cells) > 0:
		measure += fmt.Sprintf(", and the cells of %s, each run holding all of a row's cells", strings.Join(rowTexts, ", "))
	case len(plans) > 0:
		measure = fmt.Sprintf("Measure the cells of %s %s, each run holding all of a row's cells", strings.Join(rowTexts, ", "), sides)
	case len(cells) == 0:
		measure = "No head trials decide a listed cell"
	}

	adv.Rule.Text = fmt.Sprintf("%s, then compare once more with "+
		"--look 2 --cells (every listed cell), giving each side's files comma-separated (BASE,BASE_RERUN HEAD,HEAD_RERUN) so that the trials pool. "+
		"The second look runs Benjamini–Hochberg at %.3g; with this first look at %.3g the two looks spend %g, "+
		"which keeps the false discovery rate at q = %g and the whole-matrix false-alarm rate at %g (Lan–DeMets %s-type spending at t = %g; the second level assumes independent looks, "+
		"which is conservative). Do not look a third time.",
		measure, plan.Level2, plan.Level1, th.Budget(), th.FDR, th.FalseAlarm, th.Spending, th.PlannedFraction)
	if nb := needsBaseCells(adv.Undecidable); nb != "" {
		adv.Rule.Text += fmt.Sprintf(" Not decidable by head trials, %s needs base reruns or paired mode (run --paired): the base's runs alone are too noisy for any number of head trials to decide it.", nb)
	}
	return adv
}

// addUndecidable adds t's metric to its cell's entry in list.
func addUndecidable(list []results.UndecidableItem, t *pending) []results.UndecidableItem {
	cell := t.id.String()
	for i := range list {
		if list[i].Cell == cell {
			list[i].Metrics = append(list[i].Metrics, t.metric)
			return list
		}
	}
	return append(list, results.UndecidableItem{Cell: cell, Metrics: []results.Metric{t.metric}})
}

// pct formats a fraction as a signed percentage with one decimal.
func pct(f float64) string {
	return fmt.Sprintf("%+.1f%%", f*100)
}

// pct0 formats a fraction as an unsigned percentage, trimmed.
func pct0(f float64) string {
	return strings.TrimSuffix(strings.TrimSuffix(fmt.Sprintf("%.1f", f*100), "0"), ".") + "%"
}
