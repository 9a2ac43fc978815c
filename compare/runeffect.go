package compare

import (
	"math"
	"slices"

	"github.com/speedmatrix/speedmatrix/internal/quantile"
	"github.com/speedmatrix/speedmatrix/results"
	"gonum.org/v1/gonum/stat/distuv"
)

// A run is one server lifetime: one results file (trials inside it are replicates within the
// run; a paired file's blocks are runs of their own and are left to the crossover analysis). A
// run shares a factor across all its cells and trials (GPU clocks, a kernel pick, the machine's
// state that day), and every cell adds its own noise. runEffects estimates each run's factor
// from the matrix itself, so that a cell is compared within its run (against the other cells
// as controls) and a uniform shift of the whole matrix is decided on its own, against the
// run-to-run spread of those factors.
//
// Estimation, per phase, on the deciding metric's log values (one per run: the mean over the
// run's trials):
//   - the base side's runs (base files and history) define each cell's reference, the median of
//     its values after their own factor, and each run's factor is the precision-weighted median
//     of its cells' deviations from the references (weights 1/prior², so that quiet cells
//     dominate); three rounds;
//   - a head run may hold a real change in many cells, so its factor is the shift s that
//     minimises Σ_c min(((y_c − s)/σ_c)², ½) + s²/τ², with y_c its deviations from the
//     references, σ_c the cell's noise (measured on the base side's runs, else its prior), ½
//     the small cost of a cell the shift leaves changed, and τ the run-to-run spread of the base
//     side's factors (2 % when it was not measured), then moves to the mean of the cells within
//     3σ_c of it; a shift must leave at least a quarter of the cells within 3σ_c (a change of
//     every cell alike is the shift's to decide): of the shifts that explain the matrix about
//     as well, the one nearest zero wins, so a slowdown of most rows is not taken for a slower
//     run;
//   - a run holding fewer than half of the cells (a rerun of some cells or rows) takes the
//     factor of its side's first run and counts neither towards τ nor towards the shift;
//   - τ is measured when the base side has at least three whole runs (history), or both sides
//     at least two.
type runEffects struct {
	// base, head and hist are each run's log factor by phase (0 when not estimated).
	base, head, hist []map[results.Phase]float64
	// shift is the head's mean factor minus the base side's, by phase; shiftSE its standard
	// error, shiftDF its degrees of freedom (+Inf from the prior), measured whether τ was.
	shift, shiftSE, shiftDF map[results.Phase]float64
	measured                map[results.Phase]bool
	// tau is the run-to-run SD of the factors by phase.
	tau map[results.Phase]float64
	// tauDF is tau's degrees of freedom by phase; bothSides says, by phase, that each side
	// held at least minSpreadRuns whole runs, so that both measured their own spread.
	tauDF     map[results.Phase]float64
	bothSides map[results.Phase]bool
	// alt is, by phase, the head's other factor where the matrix is ambiguous: a larger one
	// (the head's run faster, so more of its cells slower) that explains it about as well as
	// the one chosen (ambiguityCost). A matrix whose cells split into groups that moved apart
	// can be read either way from one head run; compare then checks the other reading.
	alt map[results.Phase]float64
	// cov is, where the base side's runs show it, the decode shift with the part its run
	// factor shares with the prefill's taken out (covariate.go); nil otherwise.
	cov *phaseCovariate
	// sideDev is, by phase, each whole run of the base side's factor less their mean: how far
	// the base side's own runs strayed (runsSeen); factorSE the standard error of one run's
	// factor, from its cells' noise (a weighted median's: 1.25/√Σw).
	sideDev  map[results.Phase][]float64
	factorSE map[results.Phase]float64
	// headRuns is, by phase, the number of the head's whole runs.
	headRuns map[results.Phase]int
}

// runsSeen returns, for phase p, how many of the base side's whole runs strayed from their mean
// at least as far towards slower as the head's one run did, and of how many; 0, 0 where the
// shift is not slower, the head holds several whole runs (their mean is not one run's factor)
// or the base side fewer than minSpreadRuns. "As far" allows for the factors' own error: a
// run's factor is a weighted median of its cells' deviations, so two runs of one speed differ
// by about √2·factorSE; a run counts when it is within twice that.
func (re *runEffects) runsSeen(p results.Phase) (seen, of int) {
	devs, s := re.sideDev[p], re.shift[p]
	if !(s < 0) || len(devs) < minSpreadRuns || re.headRuns[p] != 1 {
		return 0, 0
	}
	margin := 2 * math.Sqrt2 * re.factorSE[p]
	for _, d := range devs {
		if d <= s+margin {
			seen++
		}
	}
	return seen, len(devs)
}

// ambiguityCost is how much dearer (in the choice's squared standard scores, twice a negative
// log likelihood) another head factor may be and still count as an explanation of the matrix
// about as good: the 99 % point of χ² with one degree of freedom.
const ambiguityCost = 6.63

// defaultRunCV is the run-to-run SD of a run's factor assumed where none was measured.
const defaultRunCV = 0.02

// minSpreadRuns is the fewest whole runs each side must hold for the shift test to trust the
// runs' own spread below defaultRunCV (shiftFloor).
const minSpreadRuns = 3

// shiftFloor returns the least run-to-run SD the shift test of phase p assumes: defaultRunCV,
// the spread GPUs show across days, which guards a history quiet by chance (ten runs of which
// none met the slower kernel pick one run in five gets, then a head run that did); or, where
// each side measured its own spread on minSpreadRuns or more whole runs, the lesser of that and
// the 95 % upper confidence bound of the measured spread (τ·√(df/χ²_{df,0.05})). A side of
// three runs that all met the slower pick against three that all missed it stays possible,
// but a head side's runs then disagree with each other as often as the base side's do, and
// the bound follows them; a spread measured on both sides far below 2 % (a server whose
// runs agree) is no longer hidden behind a floor that no run of it came near.
func (re *runEffects) shiftFloor(p results.Phase) float64 {
	if !re.bothSides[p] || !(re.tauDF[p] >= 2) {
		return defaultRunCV
	}
	ucb := re.tau[p] * math.Sqrt(re.tauDF[p]/distuv.ChiSquared{K: re.tauDF[p]}.Quantile(0.05))
	return math.Min(defaultRunCV, ucb)
}

// runCap is k: a cell whose deviation from the shift exceeds k of its noise is left out of the
// shift's estimate.
const runCap = 3.0

// changeCost is what a cell that the shift does not explain costs in the choice between shifts
// (in squared standard scores): little, because a change of the engine moves many cells
// together (rows, columns, most of the matrix), while a whole run as far off as s costs (s/τ)²,
// as rare as the measured spread of run factors makes it. So when most cells moved by the same
// amount, that is read as a change of those cells unless the run-to-run spread makes a shift
// that large ordinary.
const changeCost = 0.5

// runValues returns the deciding metric's log value of every measured cell of phase p in f
// (the mean of its trials' log values).
func runValues(f *results.File, p results.Phase) map[results.CellID]float64 {
	out := map[results.CellID]float64{}
	m := results.DecidingMetric(p)
	if p == results.PhasePrefill {
		for i := range f.Prefill {
			c := &f.Prefill[i]
			if !c.Status.Measured() {
				continue
			}
			var logs []float64
			for _, t := range c.Trials {
				if t.PromptTokPerS > 0 {
					logs = append(logs, math.Log(t.PromptTokPerS))
				}
			}
			if len(logs) == 0 {
				if l, ok := logOf(c.PromptTokPerS); ok {
					logs = append(logs, l)
				}
			}
			if len(logs) > 0 {
				out[c.ID()] = meanOf(logs)
			}
		}
		return out
	}
	for i := range f.Decode {
		c := &f.Decode[i]
		if !c.Status.Measured() {
			continue
		}
		var logs []float64
		for k := range c.Trials {
			if l, ok := logOf(decodeTrialValue(&c.Trials[k], m)); ok {
				logs = append(logs, l)
			}
		}
		if len(logs) == 0 {
			if l, ok := logOf(c.Value(m)); ok {
				logs = append(logs, l)
			}
		}
		if len(logs) > 0 {
			out[c.ID()] = meanOf(logs)
		}
	}
	return out
}

// weightedMedian returns the weighted median of xs.
func weightedMedian(xs, ws []float64) float64 {
	idx := argsort(xs)
	var total float64
	for _, w := range ws {
		total += w
	}
	var acc float64
	for _, i := range idx {
		acc += ws[i]
		if acc >= total/2 {
			return xs[i]
		}
	}
	return xs[idx[len(idx)-1]]
}

// estimateRunEffects estimates the factors of the runs of base, head and history. It returns
// nil where there is nothing to estimate from (fewer than four cells of a phase in common).
//
// override, where it holds a phase, is the head's factor to take for that phase instead of the
// one chosen (the other reading of an ambiguous matrix).
func estimateRunEffects(base, head, hist []*results.File, th Thresholds, override map[results.Phase]float64) *runEffects {
	re := &runEffects{alt: map[results.Phase]float64{},
		base: make([]map[results.Phase]float64, len(base)), head: make([]map[results.Phase]float64, len(head)),
		hist: make([]map[results.Phase]float64, len(hist)), shift: map[results.Phase]float64{},
		shiftSE: map[results.Phase]float64{}, shiftDF: map[results.Phase]float64{}, measured: map[results.Phase]bool{},
		tau: map[results.Phase]float64{}, tauDF: map[results.Phase]float64{}, bothSides: map[results.Phase]bool{},
		sideDev: map[results.Phase][]float64{}, factorSE: map[results.Phase]float64{}, headRuns: map[results.Phase]int{},
	}
	for _, l := range [][]map[results.Phase]float64{re.base, re.head, re.hist} {
		for i := range l {
			l[i] = map[results.Phase]float64{}
		}
	}
	for _, p := range []results.Phase{results.PhasePrefill, results.PhaseDecode} {
		re.phase(p, base, head, hist, th, override)
	}
	re.cov = re.covariate()
	return re
}

// phase estimates the factors of one phase.
func (re *runEffects) phase(p results.Phase, base, head, hist []*results.File, th Thresholds, override map[results.Phase]float64) {
	m := results.DecidingMetric(p)
	var side []map[results.CellID]float64 // the base side: base files, then history
	for _, f := range base {
		side = append(side, runValues(f, p))
	}
	for _, f := range hist {
		side = append(side, runValues(f, p))
	}
	var heads []map[results.CellID]float64
	for _, f := range head {
		heads = append(heads, runValues(f, p))
	}
	// The cells: in the first base file and the first head file.
	var cells []results.CellID
	for id := range side[0] {
		if _, ok := heads[0][id]; ok {
			cells = append(cells, id)
		}
	}
	slices.SortFunc(cells, func(a, b results.CellID) int {
		switch {
		case a.String() < b.String():
			return -1
		case a.String() > b.String():
			return 1
		}
		return 0
	})
	if len(cells) < 4 {
		return
	}
	prior := make([]float64, len(cells))
	w := make([]float64, len(cells))
	for i, id := range cells {
		prior[i] = th.Prior.CV(id, m)
		w[i] = 1 / (prior[i] * prior[i])
	}
	a, ref := sideFactors(side, cells, w)
	// Each cell's own noise around its run's factor: measured on the base side's runs where
	// there are three or more (floored at a tenth of the prior, so that a cell that happened to
	// agree does not weigh like a certainty), else its prior.
	if len(side) >= 3 {
		for i, id := range cells {
			var rs []float64
			for j, run := range side {
				if x, ok := run[id]; ok {
					rs = append(rs, x-ref[i]-a[j])
				}
			}
			if len(rs) >= 3 {
				var ss float64
				for _, r := range rs {
					ss += r * r
				}
				sd := math.Sqrt(ss / float64(len(rs)-1))
				prior[i] = math.Max(sd, prior[i]/10)
				w[i] = 1 / (prior[i] * prior[i])
			}
		}
	}
	// A run holding fewer than half of the cells (a rerun of some cells or rows) has too few
	// controls to tell its own factor from a change of its cells: it takes the factor of its
	// side's first whole run (the reruns of a job measure the server of its first pass) and
	// counts neither towards τ nor towards the side's mean factor.
	whole := func(run map[results.CellID]float64) bool {
		n := 0
		for _, id := range cells {
			if _, ok := run[id]; ok {
				n++
			}
		}
		return 2*n >= len(cells)
	}
	var aw []float64 // the base side's whole runs' factors
	for j, run := range side {
		if whole(run) || j == 0 {
			aw = append(aw, a[j])
		} else {
			a[j] = a[0]
		}
	}
	// τ from the base side's factors, and from the head's when it has several runs.
	var ss, df float64
	if len(aw) >= 2 {
		ss, df = varianceOf(aw)*float64(len(aw)-1), float64(len(aw)-1)
	}
	tau := defaultRunCV
	hs := make([]float64, len(heads))
	nWhole := 0 // the head's whole runs
	for k, run := range heads {
		if k == 0 || whole(run) {
			nWhole++
		}
	}
	measured := len(aw) >= 3 || (len(aw) >= 2 && nWhole >= 2)
	if measured && df > 0 {
		tau = math.Max(math.Sqrt(ss/df), 1e-4)
	}
	// The head's shift is chosen against at least defaultRunCV, as the shift test is
	// (groups.go): a history can be quiet by chance (ten runs of which none met the slower
	// kernel pick that one run in five gets), and a τ measured that small would make every
	// shift of a whole run dearer than calling all its cells changed, so a slower run read as
	// a slowdown of every row.
	choice := math.Max(tau, defaultRunCV)
	var hw []float64 // the head's whole runs' factors
	var wholeHeads []map[results.CellID]float64
	var wholeIdx []int
	for k, run := range heads {
		if k == 0 || whole(run) {
			wholeHeads, wholeIdx = append(wholeHeads, run), append(wholeIdx, k)
		}
	}
	if len(wholeHeads) >= 2 {
		// Several head runs: their factors relative to each other are measured as the base
		// side's are (no change of the code tells them apart), and the one shift between the
		// sides is chosen once, on the head side's consensus. Chosen run by run, a change of
		// every cell alike read as a slower run in some head runs and as changed cells in
		// others, which both spread the head's factors and pulled the shift towards zero.
		// Each run's own factor is then taken against the head side's consensus, as a lone
		// head run's is against the base (headShift: the mean of the cells near the best
		// shift, not one dominant cell's deviation): the code is the same in every head run,
		// so nothing but the run tells them apart.
		_, href := sideFactors(wholeHeads, cells, w)
		consensus := map[results.CellID]float64{}
		for i, id := range cells { // every cell is in the first head run
			consensus[id] = href[i]
		}
		shift, _ := headShift(consensus, cells, ref, prior, w, choice)
		if v, ok := override[p]; ok {
			shift = v
		}
		for j, k := range wholeIdx {
			own, _ := headShift(wholeHeads[j], cells, href, prior, w, choice)
			hs[k] = shift + own
			hw = append(hw, hs[k])
		}
	} else {
		var alt float64
		hs[0], alt = headShift(heads[0], cells, ref, prior, w, choice)
		if nWhole == 1 && alt > hs[0] {
			re.alt[p] = alt
		}
		if v, ok := override[p]; ok {
			hs[0] = v
		}
		hw = append(hw, hs[0])
	}
	for k, run := range heads {
		if k > 0 && !whole(run) {
			hs[k] = hs[0]
		}
	}
	if len(hw) >= 2 {
		ss += varianceOf(hw) * float64(len(hw)-1)
		df += float64(len(hw) - 1)
		if measured {
			tau = math.Max(math.Sqrt(ss/df), 1e-4)
		}
	}
	for j := range base {
		re.base[j][p] = a[j]
	}
	for j := range hist {
		re.hist[j][p] = a[len(base)+j]
	}
	for k := range heads {
		re.head[k][p] = hs[k]
	}
	re.shift[p] = meanOf(hw) - meanOf(aw)
	for _, f := range aw {
		re.sideDev[p] = append(re.sideDev[p], f-meanOf(aw))
	}
	var sw float64
	for _, x := range w {
		sw += x
	}
	re.factorSE[p] = 1.2533 / math.Sqrt(sw)
	re.headRuns[p] = len(hw)
	re.tau[p] = tau
	re.tauDF[p] = df
	re.bothSides[p] = measured && len(hw) >= minSpreadRuns && len(aw) >= minSpreadRuns
	re.measured[p] = measured
	if measured {
		re.shiftSE[p] = tau * math.Sqrt(1/float64(len(hw))+1/float64(len(aw)))
		re.shiftDF[p] = df
	} else {
		// Unmeasured: the run-to-run spread is taken as the quiet cells' prior.
		q := math.Inf(1)
		for _, c := range prior {
			q = math.Min(q, c)
		}
		re.shiftSE[p] = math.Max(q, 0.01) * math.Sqrt(1/float64(len(hw))+1/float64(len(aw)))
		re.shiftDF[p] = math.Inf(1)
	}
}

// sideFactors returns the log factor of each of runs (its cells' precision-weighted median
// deviation from the references, weights w) and the reference of each cell (the median of its
// values after their runs' factors; every cell must be in the first run), by three alternating rounds.
func sideFactors(runs []map[results.CellID]float64, cells []results.CellID, w []float64) (a, ref []float64) {
	a = make([]float64, len(runs))
	ref = make([]float64, len(cells))
	for range 3 {
		for i, id := range cells {
			var xs []float64
			for j, run := range runs {
				if x, ok := run[id]; ok {
					xs = append(xs, x-a[j])
				}
			}
			ref[i] = quantile.Median(xs) // never empty: every cell is in the first run
		}
		for j, run := range runs {
			var ds, ws []float64
			for i, id := range cells {
				if x, ok := run[id]; ok {
					ds, ws = append(ds, x-ref[i]), append(ws, w[i])
				}
			}
			if len(ds) > 0 {
				a[j] = weightedMedian(ds, ws)
			}
		}
	}
	return a, ref
}

// headShift returns the factor of one head run (see runEffects), and alt: the largest factor
// that explains the run about as well (within ambiguityCost of the best), which is the best
// itself when none does.
func headShift(run map[results.CellID]float64, cells []results.CellID, ref, prior, w []float64, tau float64) (best, alt float64) {
	var ys, ps, ws []float64
	for i, id := range cells {
		if x, ok := run[id]; ok {
			ys, ps, ws = append(ys, x-ref[i]), append(ps, prior[i]), append(ws, w[i])
		}
	}
	if len(ys) == 0 {
		return 0, 0
	}
	cost := func(s float64) float64 {
		c := s * s / (tau * tau)
		for i, y := range ys {
			z := (y - s) / ps[i]
			c += math.Min(z*z, changeCost)
		}
		return c
	}
	// refine moves s to the precision-weighted mean of the cells it explains, shrunk to 0 by τ.
	refine := func(s float64) float64 {
		num, den := 0.0, 1/(tau*tau)
		for i, y := range ys {
			if math.Abs(y-s) <= runCap*ps[i] {
				num += y * ws[i]
				den += ws[i]
			}
		}
		return num / den
	}
	// explains reports whether s leaves at least a quarter of the cells within 3σ: a shift that
	// explains fewer would call nearly every cell changed, and a change of every cell alike is
	// the shift's to decide (against τ), not the cells'.
	explains := func(s float64) bool {
		n := 0
		for i, y := range ys {
			if math.Abs(y-s) <= runCap*ps[i] {
				n++
			}
		}
		return 4*n >= len(ys)
	}
	// weighs reports whether the cells s explains hold at least a quarter of the precision
	// (weights ws): another reading of the run must explain cells its noise pins down. A reading
	// that explains only noisy cells (one request at a time, whose noise is 20 %, lies within
	// 3σ of any factor) while every precise cell lies beyond 3σ of it explains nothing: on a
	// loaded machine whose cells scattered by ±3 % around a history that agreed to 0.4 %, such a
	// reading called an unchanged engine's run 2 % faster and one of its cells unproven.
	weighs := func(s float64) bool {
		var in, all float64
		for i, y := range ys {
			all += ws[i]
			if math.Abs(y-s) <= runCap*ps[i] {
				in += ws[i]
			}
		}
		return 4*in >= all
	}
	wm := weightedMedian(ys, ws)
	cands := append([]float64{0, wm}, ys...)
	best, bestCost := wm, math.Inf(1)
	var fits, costs []float64
	for _, s := range cands {
		for range 3 {
			s = refine(s)
		}
		if !explains(s) {
			continue
		}
		c := cost(s)
		fits, costs = append(fits, s), append(costs, c)
		if c < bestCost {
			best, bestCost = s, c
		}
	}
	alt = best
	for i, s := range fits {
		if costs[i] <= bestCost+ambiguityCost && s > alt && weighs(s) {
			alt = s
		}
	}
	return best, alt
}

// adjustment returns what to subtract from the log value of metric m of a run with factors f:
// the factor for rates, its negative for latencies (a faster run has shorter ones), nothing for
// speculative acceptance.
func adjustment(f map[results.Phase]float64, p results.Phase, m results.Metric) float64 {
	if f == nil || m == results.MetricSpecAcceptance {
		return 0
	}
	if m.HigherIsBetter() {
		return f[p]
	}
	return -f[p]
}

// argsort returns the indices of xs in ascending order of their values, ties in index order.
func argsort(xs []float64) []int {
	idx := make([]int, len(xs))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		switch {
		case xs[a] < xs[b]:
			return -1
		case xs[a] > xs[b]:
			return 1
		}
		return 0
	})
	return idx
}
