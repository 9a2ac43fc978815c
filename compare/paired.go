package compare

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/speedmatrix/speedmatrix/compare/stats"
	"github.com/speedmatrix/speedmatrix/internal/quantile"
	"github.com/speedmatrix/speedmatrix/results"
)

// pairRuns names the paired run of each file of the two sides (index: the file's place).
type pairRuns struct {
	base, head []string
	// common is each pair's common log-ratio over the cells by phase (pairEffects): what the
	// pair's two server runs differ by in every cell, removed from each cell's pairs.
	common map[results.Phase]map[pairKey]float64
}

// pairingOf returns the pairing the comparison uses, and the paired run of every file: each side's
// files are sides of paired runs (`run --paired`) in an interleaved scheme, and every paired run
// on one side is on the other too (one file each: a first comparison; several: the pooled
// second look after a further paired run). Otherwise it is nil, with a warning when the files
// are sides of paired runs that cannot be paired. The pairing it returns is the first run's
// scheme with the runs' ids joined by commas and their blocks added up.
func pairingOf(in Input) (*results.Pairing, *pairRuns, string) {
	runs := &pairRuns{}
	ids := map[string][2]int{} // files per side of each paired run
	var order []string
	for k, side := range [][]*results.File{in.Base, in.Head} {
		for _, f := range side {
			p := f.Run.Pairing
			if p == nil {
				return nil, nil, ""
			}
			if p.Scheme != results.PairingABBA {
				return nil, nil, "" // sequential blocks are not pairs
			}
			if _, seen := ids[p.ID]; !seen {
				order = append(order, p.ID)
			}
			n := ids[p.ID]
			n[k]++
			ids[p.ID] = n
			if k == 0 {
				runs.base = append(runs.base, p.ID)
			} else {
				runs.head = append(runs.head, p.ID)
			}
		}
	}
	out := *in.Base[0].Run.Pairing
	out.Side, out.Order, out.Blocks = "", "", 0
	for _, id := range order {
		if n := ids[id]; n != [2]int{1, 1} {
			return nil, nil, fmt.Sprintf("both sides come from paired runs, but different paired runs (run %s is in %d base and %d head files): compared unpaired; compare the base and head files of the same `run --paired` runs", id, n[0], n[1])
		}
	}
	blocks := map[string]int{}
	for _, f := range in.Base {
		blocks[f.Run.Pairing.ID] = f.Run.Pairing.Blocks
	}
	for i, f := range in.Head {
		if f.Run.Pairing.Side == sideOf(in.Base, f.Run.Pairing.ID) {
			return nil, nil, fmt.Sprintf("head file %d is the %s side of paired run %s, as its base file is: compared unpaired", i+1, f.Run.Pairing.Side, f.Run.Pairing.ID)
		}
	}
	for _, id := range order {
		out.Blocks += blocks[id]
	}
	out.ID = strings.Join(order, ",")
	return &out, runs, ""
}

// sideOf returns the side of paired run id among files.
func sideOf(files []*results.File, id string) string {
	for _, f := range files {
		if f.Run.Pairing.ID == id {
			return f.Run.Pairing.Side
		}
	}
	return ""
}

// pairedTrial is one side's value of a metric in one pair.
type pairedTrial struct {
	log   float64
	block int
}

// pairKey names one pair: its paired run and its number in it.
type pairKey struct {
	run  string
	pair int
}

// sortPairs puts keys in pair order: by paired run, then by number.
func sortPairs(keys []pairKey) {
	slices.SortFunc(keys, func(a, b pairKey) int { return cmp.Or(strings.Compare(a.run, b.run), cmp.Compare(a.pair, b.pair)) })
}

// pairTrials returns the log values of metric m of one side's trials by pair; runs names the
// paired run of each of the side's files.
func (s *sideData) pairTrials(m results.Metric, runs []string) map[pairKey]pairedTrial {
	out := map[pairKey]pairedTrial{}
	add := func(d *results.DecodeCell, p *results.PrefillCell, file int) {
		if file >= len(runs) {
			return
		}
		switch {
		case d != nil:
			for i := range d.Trials {
				t := &d.Trials[i]
				if l, ok := logOf(decodeTrialValue(t, m)); ok && t.Pair > 0 {
					out[pairKey{runs[file], t.Pair}] = pairedTrial{l, t.Block}
				}
			}
		case p != nil:
			for _, t := range p.Trials {
				v := t.TTFTMs
				if m == results.MetricPromptTokPerS {
					v = t.PromptTokPerS
				}
				if v > 0 && t.Pair > 0 {
					out[pairKey{runs[file], t.Pair}] = pairedTrial{math.Log(v), t.Block}
				}
			}
		}
	}
	add(s.decode, s.prefill, s.file)
	for _, e := range s.extra {
		add(e.decode, e.prefill, e.file)
	}
	return out
}

// pairDiffs returns, in pair order, the head − base log differences of metric m over the pairs
// both sides measured, less each pair's common log-ratio (pairEffects; rates less it,
// latencies plus it, acceptance as it is), and for each whether the head's block came first.
func pairDiffs(b, h *sideData, m results.Metric, runs *pairRuns) (d []float64, headFirst []bool) {
	keys, raw, hf := rawPairDiffs(b, h, m, runs)
	phase := results.PhaseDecode
	if b.prefill != nil {
		phase = results.PhasePrefill
	}
	for i, k := range keys {
		d = append(d, raw[i]-adjustment(map[results.Phase]float64{phase: runs.common[phase][k]}, phase, m))
	}
	return d, hf
}

// rawPairDiffs returns the pairs both sides measured, in pair order, with the head − base log
// differences of metric m and whether the head's block came first.
func rawPairDiffs(b, h *sideData, m results.Metric, runs *pairRuns) (pairs []pairKey, d []float64, headFirst []bool) {
	bt, ht := b.pairTrials(m, runs.base), h.pairTrials(m, runs.head)
	for k := range bt {
		if _, ok := ht[k]; ok {
			pairs = append(pairs, k)
		}
	}
	sortPairs(pairs)
	for _, k := range pairs {
		d = append(d, ht[k].log-bt[k].log)
		headFirst = append(headFirst, ht[k].block < bt[k].block)
	}
	return pairs, d, headFirst
}

// pairEffects is runEffects for a paired comparison: each pair's blocks are two server runs, and
// what those two runs differ by is shared by every cell of a phase (a slower run of one side,
// another kernel pick). Per phase, on the deciding metric, each pair's common log-ratio is chosen
// over its cells' log-ratios as a head run's factor is (headShift, with the prior as each cell's
// noise and defaultRunCV as the runs' spread); it is recorded in runs.common and removed from
// each cell's pairs, so
// that a cell is tested within its pairs against its own noise, and the phase's shift (the
// crossover estimate over the pairs' common log-ratios, with their spread: stats.PairedEstimate)
// is the shift test's (groups.go), against the spread between the pairs' runs. Without it, one
// pair's slower run moved every cell alike and their tests, each on two degrees of freedom,
// failed together (A/A false blocks 2–3.5 % under run-level drift or bimodal runs).
func pairEffects(base, head map[results.CellID]*sideData, runs *pairRuns, nHist int, th Thresholds) *runEffects {
	re := &runEffects{hist: make([]map[results.Phase]float64, nHist), shift: map[results.Phase]float64{},
		shiftSE: map[results.Phase]float64{}, shiftDF: map[results.Phase]float64{}, measured: map[results.Phase]bool{},
		tau: map[results.Phase]float64{}}
	for j := range re.hist {
		re.hist[j] = map[results.Phase]float64{}
	}
	runs.common = map[results.Phase]map[pairKey]float64{}
	commons := map[results.Phase][]float64{}
	for _, ph := range []results.Phase{results.PhasePrefill, results.PhaseDecode} {
		m := results.DecidingMetric(ph)
		byPair := map[pairKey]map[results.CellID]float64{}
		hfOf := map[pairKey]bool{}
		var cells []results.CellID
		for id, b := range base {
			h := head[id]
			if id.Phase != ph || h == nil || !b.status.Measured() || !h.status.Measured() {
				continue
			}
			keys, d, hf := rawPairDiffs(b, h, m, runs)
			if len(keys) == 0 {
				continue
			}
			cells = append(cells, id)
			for i, k := range keys {
				if byPair[k] == nil {
					byPair[k] = map[results.CellID]float64{}
				}
				byPair[k][id] = d[i]
				hfOf[k] = hf[i]
			}
		}
		if len(cells) < 4 || len(byPair) < 2 {
			continue
		}
		slices.SortFunc(cells, func(a, b results.CellID) int { return strings.Compare(a.String(), b.String()) })
		ref, prior, w := make([]float64, len(cells)), make([]float64, len(cells)), make([]float64, len(cells))
		for i, id := range cells {
			prior[i] = th.Prior.CV(id, m)
			w[i] = 1 / (prior[i] * prior[i])
		}
		var keys []pairKey
		for k := range byPair {
			keys = append(keys, k)
		}
		sortPairs(keys)
		// The pairs' common log-ratio is chosen once, on their consensus (each cell's median
		// log-ratio over the pairs), as a head run's factor is (runeffect.go): a change of
		// most cells alike is read as theirs unless a run-to-run spread of defaultRunCV makes
		// a shift that large ordinary. Each pair's own part is then its common log-ratio
		// against that consensus. Chosen pair by pair, a change of every cell alike read as
		// the pair's runs in some pairs and as changed cells in others, which spread the
		// pairs' common log-ratios and pulled the shift towards zero (a 5 % slowdown of every
		// decode cell passed in 10–17 % of paired comparisons).
		consensus := map[results.CellID]float64{}
		cref := make([]float64, len(cells))
		for i, id := range cells {
			var xs []float64
			for _, k := range keys {
				if x, ok := byPair[k][id]; ok {
					xs = append(xs, x)
				}
			}
			if len(xs) > 0 {
				cref[i] = quantile.Median(xs)
				consensus[id] = cref[i]
			}
		}
		shift, _ := headShift(consensus, cells, ref, prior, w, defaultRunCV)
		common := map[pairKey]float64{}
		var g []float64
		var hf []bool
		for _, k := range keys {
			own, _ := headShift(byPair[k], cells, cref, prior, w, defaultRunCV)
			c := shift + own
			common[k] = c
			g, hf = append(g, c), append(hf, hfOf[k])
		}
		pe, err := stats.PairedEstimate(g, hf)
		if err != nil {
			continue
		}
		runs.common[ph] = common
		re.shift[ph] = pe.Diff
		re.shiftSE[ph] = math.Max(pe.SE, 1e-6)
		// Referred to the normal: a few pairs give the spread two or three degrees of freedom,
		// under which no shift would ever be significant, and the shift test floors the spread
		// at defaultRunCV per run (groups.go), which the pairs' own spread replaces only where
		// it is larger.
		re.shiftDF[ph] = math.Inf(1)
		// The pairs' common log-ratios differ by two runs' factors: τ, one run's spread, is theirs
		// over √2.
		re.tau[ph] = math.Max(math.Sqrt(float64(pe.Pairs)/2)*pe.SE, 1e-6)
		re.measured[ph] = true
		commons[ph] = g
	}
	re.cov = pairedCovariate(commons, th.Delta[results.MetricPromptTokPerS])
	return re
}

// pairedCovariate is the decode shift net of the prefill's for a paired comparison
// (covariate.go): where the pairs' common log-ratios of the two phases move together (each
// pair's two server runs differ by a factor of the machine, which moves both phases), the
// decode log-ratios are regressed on the prefill ones over the pairs, and the intercept, the
// decode change of a pair whose runs did not differ, is the net shift, on the regression's
// residual spread with n − 2 degrees of freedom. It is nil without both phases over the same
// pairs, with fewer than four pairs, where the phases do not move together (R² of decode on
// prefill below covMinR2, or a slope that is not positive), or where the pairs' mean prefill
// log-ratio lies beyond prefillDelta: the runs of a pair alternate on one machine, so a mean
// that far is the code's more than the runs', and the intercept, an extrapolation to a prefill
// the code left alone, would read a prefill made faster as a slower decode.
func pairedCovariate(commons map[results.Phase][]float64, prefillDelta float64) *phaseCovariate {
	x, y := commons[results.PhasePrefill], commons[results.PhaseDecode]
	if len(x) != len(y) || len(y) < 4 {
		return nil
	}
	mx, my := meanOf(x), meanOf(y)
	if math.Abs(mx) > math.Log1p(prefillDelta) {
		return nil
	}
	var sxx, sxy, syy float64
	for i := range x {
		sxx += (x[i] - mx) * (x[i] - mx)
		sxy += (x[i] - mx) * (y[i] - my)
		syy += (y[i] - my) * (y[i] - my)
	}
	if !(sxx > 0) || !(syy > 0) || sxy <= 0 {
		return nil
	}
	r2, beta := sxy*sxy/(sxx*syy), sxy/sxx
	if r2 < covMinR2 {
		return nil
	}
	n := float64(len(y))
	df := n - 2
	s2 := math.Max((syy-beta*sxy)/df, 1e-10)
	return &phaseCovariate{Shift: my - beta*mx, SE: math.Sqrt(s2 * (1/n + mx*mx/sxx)), DF: df, Beta: beta, R2: r2}
}

// estimatePaired sets p's estimate from the pairs of a paired run: the two-period crossover
// estimate of the log-ratio (stats.PairedEstimate), which removes a drift between blocks, and the
// sign-flip test of the pairs' drift-corrected log-ratios as the rank check where it can reach q. It reports false,
// leaving p alone, when fewer than two pairs hold the metric or their spread is zero.
func (p *pending) estimatePaired(b, h *sideData, noise *results.Noise, th Thresholds) bool {
	d, hf := pairDiffs(b, h, p.metric, p.pairs)
	pe, err := stats.PairedEstimate(d, hf)
	if err != nil || !(pe.SE > 0) {
		return false
	}
	n := float64(pe.Pairs)
	// One run's variance on each side such that SE² = vb/n + vh/n: the advice's predictions
	// then hold for more pairs.
	v := n * pe.SE * pe.SE / 2
	p.vb, p.vh = v, v
	p.est = pe.Estimate
	noise.Source = results.NoisePaired
	noise.CV = math.Sqrt(v)
	noise.Pairs = pe.Pairs
	if pe.PeriodAdjusted {
		noise.Drift = ptr(math.Expm1(pe.Period))
	}
	// The check is asked only where it can agree: its smallest p, 2/2^n, must reach q (six pairs
	// at q = 0.05); with fewer it would veto every change.
	if pe.Pairs >= th.MinRankTrials && pe.Pairs <= stats.MaxSignFlipPairs && 2/math.Ldexp(1, pe.Pairs) <= th.FDR {
		r := make([]float64, len(d))
		for i, x := range d {
			// Base first: x = Δ + period; head first: x = Δ − period.
			if hf[i] {
				r[i] = x + pe.Period
			} else {
				r[i] = x - pe.Period
			}
		}
		if sp, err := stats.SignFlip(r); err == nil {
			p.out.RankP = ptr(sp)
		}
	}
	return true
}

// pairedAdvice adds to the rerun advice of a paired comparison how to measure the further
// trials: as one more paired run of the listed cells, whose pairs pool with these at the second
// look (separate runs of base and head would add trials without pairs).
func pairedAdvice(adv *results.RerunAdvice, pairing *results.Pairing) {
	if adv == nil || pairing == nil || adv.Trials == 0 || adv.Cells == "" {
		return
	}
	adv.Rule.Text += fmt.Sprintf(" This comparison is paired: measure the further trials as one more paired run, "+
		"run --paired --blocks %d --cells %s, and give its base and head files after these, so that its pairs pool with these.", max(adv.Trials, 2), adv.Cells)
}

// pairedRow returns the paired estimate of a row's score change in a paired comparison: for each
// pair that holds every cell-metric of the row on both sides, the score difference
// Σ w·(log head − log base − the pair's common log-ratio), and their crossover estimate (stats.PairedEstimate), which removes a
// drift between blocks as for a cell. ok is false when the comparison is not paired, fewer than
// two pairs hold the whole row, or the differences do not vary.
func pairedRow(ts []*pending, w []float64) (est stats.Estimate, pairs int, ok bool) {
	if len(ts) == 0 || ts[0].pairs == nil {
		return est, 0, false
	}
	runs := ts[0].pairs
	type pairMaps struct{ b, h map[pairKey]pairedTrial }
	maps := make([]pairMaps, len(ts))
	for i, t := range ts {
		maps[i] = pairMaps{t.b.pairTrials(t.metric, runs.base), t.h.pairTrials(t.metric, runs.head)}
	}
	var keys []pairKey
	for k := range maps[0].b {
		all := true
		for _, m := range maps {
			_, inB := m.b[k]
			_, inH := m.h[k]
			if !inB || !inH {
				all = false
				break
			}
		}
		if all {
			keys = append(keys, k)
		}
	}
	sortPairs(keys)
	var d []float64
	var hf []bool
	for _, k := range keys {
		var y float64
		for i, m := range maps {
			// Within the pair: less the pair's common log-ratio (pairEffects), as a cell's is.
			ph := ts[i].id.Phase
			a := adjustment(map[results.Phase]float64{ph: runs.common[ph][k]}, ph, ts[i].metric)
			y += w[i] * (m.h[k].log - m.b[k].log - a)
		}
		d = append(d, y)
		hf = append(hf, maps[0].h[k].block < maps[0].b[k].block)
	}
	pe, err := stats.PairedEstimate(d, hf)
	if err != nil || !(pe.SE > 0) {
		return est, 0, false
	}
	return pe.Estimate, pe.Pairs, true
}
