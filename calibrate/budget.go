package calibrate

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/speedmatrix/speedmatrix/compare"
	"github.com/speedmatrix/speedmatrix/compare/stats"
	"github.com/speedmatrix/speedmatrix/results"
)

// The budgeted procedure is the bot's adaptive job (issue 13): a first pass of one run a side,
// then compare.PlanRerunsFor picks which of the advised reruns the GPU budget pays for, those are
// measured on both sides, and the second look (Look = 2) decides on the pooled trials. Its
// figures are set against the naive procedure: NaiveTrials fixed trials a side and one
// comparison.
//
// GPU time counts what the job measures (Costs): by default both sides, first pass and reruns,
// as paired mode does. With StoredBaseline, as the bot's adaptive job does with a baseline from
// the store, the base's one stored run was measured earlier and costs the job nothing; the
// reruns measure the head alone (the second look pools more head trials against the one base
// run, and the advice asks for head trials: compare.Thresholds.HeadOnlyReruns), and the naive
// procedure measures NaiveTrials head trials against that one base run.

// Procedure names.
const (
	ProcedureBudgeted = "budgeted"
	ProcedureNaive    = "naive"
)

// ProcedureFigures are one procedure's error rates and GPU time over the simulated comparisons.
type ProcedureFigures struct {
	// Procedure is ProcedureBudgeted or ProcedureNaive; Trials the naive trials a side.
	Procedure string
	Trials    int
	// AARegression is the share of A/A comparisons with any regression verdict (either look).
	AARegression Rate
	// ABRowFlagged is the share of A/B comparisons in which the slowed row has a regression
	// verdict; ABDecidable the share of A/B comparisons whose slowed row the budgeted procedure's
	// measurement could decide (rowDecidable), and ABFlaggedDecidable the detection among those.
	ABRowFlagged       Rate
	ABDecidable        Rate
	ABFlaggedDecidable Rate
	// ABFalseOutside is the share of A/B comparisons with a regression verdict outside the
	// slowed row.
	ABFalseOutside Rate
	ByRow          []BudgetRowRate
	// MeanGPU and MaxGPU are the GPU time of one comparison, both sides, first pass and reruns;
	// MeanRerun and MaxRerun the reruns' part.
	MeanGPU, MaxGPU     time.Duration
	MeanRerun, MaxRerun time.Duration
	// Undecided is the mean share of tested cell-metrics still inconclusive at the end.
	Undecided float64
	// OverBudget is the share of comparisons that left an advised rerun out for want of budget.
	OverBudget Rate
}

// BudgetRowRate is one slowed row's figures.
type BudgetRowRate struct {
	Row string
	// Decidable is the share of the row's A/B comparisons the budget could decide; Flagged the
	// detection among those; FlaggedAll the detection in all of them.
	Decidable, Flagged, FlaggedAll Rate
}

// BudgetReport is the budgeted calibration: the budgeted procedure and the naive one on the same
// matrices.
type BudgetReport struct {
	Settings Settings
	// FirstPass is the mean GPU time of one run of the whole matrix on both sides.
	FirstPass time.Duration
	// Tests is the number of cell-metrics tested in one comparison.
	Tests           int
	Budgeted, Naive ProcedureFigures
}

// procOutcome is what one simulated procedure found and spent.
type procOutcome struct {
	first, second *results.Comparison
	gpu, rerun    time.Duration
	// overBudget lists what the plan left out for want of budget.
	overBudget []compare.UndecidedCost
}

// undecided counts the cell-metrics still inconclusive at the end of o: the first comparison's
// verdicts, overridden by the second look's where it retested a cell.
func (o procOutcome) undecided() (inconclusive, tests int) {
	if o.first == nil {
		return 0, 0
	}
	tests = o.first.Summary.Tests
	retested := map[string]results.Verdict{}
	if o.second != nil {
		for _, c := range o.second.Cells {
			for _, mc := range c.Metrics {
				retested[c.Cell+"|"+string(mc.Metric)] = mc.Verdict
			}
		}
	}
	for _, c := range o.first.Cells {
		for _, mc := range c.Metrics {
			v := mc.Verdict
			if w, ok := retested[c.Cell+"|"+string(mc.Metric)]; ok {
				v = w
			}
			if v == results.VerdictInconclusive {
				inconclusive++
			}
		}
	}
	return inconclusive, tests
}

// draw returns n runs of side ("base" or "head") of the listed cells (all when nil).
func draw(m *Matrix, r *rand.Rand, side string, n int, slow *Slowdown, cells []results.CellID) []*results.File {
	var fs []*results.File
	for t := range n {
		fs = append(fs, m.RunCells(r, fmt.Sprintf("%s-%d", side, t), slow, cells))
	}
	return fs
}

// firstPass draws trials runs of the head (and of the base, or with a stored baseline the one
// run the store holds of it) and the history, and compares them at the first look with
// thresholds th.
func (s Settings) firstPass(m *Matrix, r *rand.Rand, slow *Slowdown, trials int, th compare.Thresholds) (compare.Input, *results.Comparison, error) {
	baseTrials := trials
	if s.StoredBaseline {
		baseTrials = 1
	}
	in := compare.Input{Base: draw(m, r, "base", baseTrials, nil, nil), Head: draw(m, r, "head", trials, slow, nil)}
	for h := range s.History {
		in.History = append(in.History, m.Run(r, fmt.Sprintf("hist-%d", h), nil))
	}
	th.Look = 1
	c, err := compare.Compare(in, th)
	return in, c, err
}

// singleLook is the information fraction that makes the first look spend (almost) the whole
// error budget: a procedure that never looks twice needs none of it kept for a second look.
const singleLook = 0.999

// naive runs the naive procedure: NaiveTrials runs a side and one comparison, which spends the
// whole error budget since there is no second look.
func (s Settings) naive(m *Matrix, r *rand.Rand, slow *Slowdown) (procOutcome, error) {
	th := s.Thresholds
	th.PlannedFraction = singleLook
	_, c, err := s.firstPass(m, r, slow, s.NaiveTrials, th)
	if err != nil {
		return procOutcome{}, err
	}
	return procOutcome{first: c, gpu: time.Duration(s.sides()) * m.RunCost(s.Costs, nil, nil, s.NaiveTrials)}, nil
}

// sides returns the number of sides the job measures: 1 (the head) with a stored baseline, else 2.
func (s Settings) sides() int {
	if s.StoredBaseline {
		return 1
	}
	return 2
}

// budgeted runs the budgeted procedure: the first pass, the plan within s.Budget, the funded
// reruns (on both sides, or on the head alone with a stored baseline) and the second look.
func (s Settings) budgeted(m *Matrix, r *rand.Rand, slow *Slowdown) (procOutcome, error) {
	th := s.Thresholds
	th.HeadOnlyReruns = s.StoredBaseline // the advice is for what is measured again: the head alone, or both sides
	in, first, err := s.firstPass(m, r, slow, 1, th)
	if err != nil {
		return procOutcome{}, err
	}
	o := procOutcome{first: first, gpu: time.Duration(s.sides()) * m.RunCost(s.Costs, nil, nil, 1)}
	cost := func(cell string, trials int) time.Duration { return m.CellCost(s.Costs, cell, trials, s.sides()) }
	plan := compare.PlanRerunsFor(first, cost, s.Budget)
	for _, u := range plan.Undecided {
		if u.Reason == compare.UndecidedOverBudget {
			o.overBudget = append(o.overBudget, u)
		}
	}
	if len(plan.Items) == 0 && len(plan.Rows) == 0 {
		return o, nil
	}
	// Each funded item gets its own advised trials: the t-th rerun run holds the items that
	// still want a trial; each funded row is run whole its advised number of times. Per side
	// the reruns pay each context's warm-up and scout once (RunCost).
	trials := map[results.CellID]int{}
	var order []results.CellID
	add := func(id results.CellID, n int) {
		if _, ok := trials[id]; !ok {
			order = append(order, id)
		}
		trials[id] += n
	}
	most := 0
	for _, it := range plan.Items {
		id, err := results.ParseCellID(it.Cell)
		if err != nil {
			return procOutcome{}, err
		}
		add(id, it.FurtherTrials)
		most = max(most, it.FurtherTrials)
	}
	for t := range most {
		var cells []results.CellID
		for _, it := range plan.Items {
			if it.FurtherTrials > t {
				id, _ := results.ParseCellID(it.Cell)
				cells = append(cells, id)
			}
		}
		if !s.StoredBaseline {
			in.Base = append(in.Base, m.RunCells(r, fmt.Sprintf("base-rerun-%d", t), nil, cells))
		}
		in.Head = append(in.Head, m.RunCells(r, fmt.Sprintf("head-rerun-%d", t), slow, cells))
	}
	for _, row := range plan.Rows {
		var cells []results.CellID
		for cs := range strings.SplitSeq(row.Cells, ",") {
			id, err := results.ParseCellID(cs)
			if err != nil {
				return procOutcome{}, err
			}
			cells = append(cells, id)
			add(id, row.FurtherTrials)
		}
		if !s.StoredBaseline {
			in.Base = append(in.Base, draw(m, r, "base-"+row.ContextLabel+"-rerun", row.FurtherTrials, nil, cells)...)
		}
		in.Head = append(in.Head, draw(m, r, "head-"+row.ContextLabel+"-rerun", row.FurtherTrials, slow, cells)...)
	}
	in.Cells = order
	o.rerun = time.Duration(s.sides()) * m.RunCost(s.Costs, order, trials, 0)
	o.gpu += o.rerun
	th.Look = 2
	o.second, err = compare.Compare(in, th)
	return o, err
}

// rowDecidable says whether the measurement o bought could decide a 2δ change of the row, by
// the noise alone (not by what it found, so that selecting on it does not inflate detection):
// at either look, some cell-metric of the row had a smallest detectable change (MDC) of at most
// 2δ, or the row test's standard error, read off its confidence interval, was small enough to
// detect 2δ with the configured power at that look's level.
func (o procOutcome) rowDecidable(row string, th compare.Thresholds) bool {
	plan, err := th.Plan()
	if err != nil {
		return false
	}
	return powered(o.first, row, th, plan.Level1) || powered(o.second, row, th, plan.Level2)
}

// powered says whether c could detect 2δ in row at BH level alpha (see rowDecidable).
func powered(c *results.Comparison, row string, th compare.Thresholds, alpha float64) bool {
	if c == nil {
		return false
	}
	for _, cell := range c.Cells {
		if cell.Phase != results.PhaseDecode || cell.ContextLabel != row {
			continue
		}
		for _, mc := range cell.Metrics {
			if mc.MDC != nil && *mc.MDC <= 2*th.Delta[mc.Metric] {
				return true
			}
		}
	}
	z := stats.NormalQuantile(1-alpha/2) + stats.NormalQuantile(th.Power)
	zCI := stats.NormalQuantile(1 - (1-th.ConfidenceLevel)/2)
	for _, r := range c.Rows {
		if r.ContextLabel != row || !(r.High > r.Low) {
			continue
		}
		if se := (r.High - r.Low) / (2 * zCI); z*se <= 2 {
			return true
		}
	}
	return false
}

// budgetTally accumulates one procedure's figures.
type budgetTally struct {
	aaReg, aaN         int
	abN, abFlag, abOut int
	decN, decFlag      int
	n, over            int
	gpu, rerun         time.Duration
	maxGPU, maxRerun   time.Duration
	undecided          float64
	rows               map[string]*[4]int // decidable, flagged among decidable, flagged, n
	rowOrder           []string
	procedure          string
	trials             int
}

func (t *budgetTally) note(o procOutcome) {
	t.n++
	t.gpu += o.gpu
	t.rerun += o.rerun
	t.maxGPU = max(t.maxGPU, o.gpu)
	t.maxRerun = max(t.maxRerun, o.rerun)
	if len(o.overBudget) > 0 {
		t.over++
	}
	if inc, tests := o.undecided(); tests > 0 {
		t.undecided += float64(inc) / float64(tests)
	}
}

func (t *budgetTally) aa(o procOutcome) {
	t.note(o)
	t.aaN++
	for _, c := range []*results.Comparison{o.first, o.second} {
		if c == nil {
			continue
		}
		reg := c.Summary.Counts.Regression > 0
		for _, r := range c.Rows {
			reg = reg || r.Verdict == results.VerdictRegression
		}
		if reg {
			t.aaReg++
			return
		}
	}
}

// ab notes an A/B comparison of the slowed row; decidable is the budgeted procedure's verdict
// on whether the budget could decide it.
func (t *budgetTally) ab(o procOutcome, row string, decidable bool) {
	t.note(o)
	t.abN++
	in1, out1, _, _ := regressions(o.first, row)
	in2, out2, _, _ := regressions(o.second, row)
	flagged := in1+in2 > 0
	if t.rows == nil {
		t.rows = map[string]*[4]int{}
	}
	rr := t.rows[row]
	if rr == nil {
		rr = &[4]int{}
		t.rows[row] = rr
		t.rowOrder = append(t.rowOrder, row)
	}
	rr[3]++
	if flagged {
		t.abFlag++
		rr[2]++
	}
	if decidable {
		t.decN++
		rr[0]++
		if flagged {
			t.decFlag++
			rr[1]++
		}
	}
	if out1+out2 > 0 {
		t.abOut++
	}
}

func (t *budgetTally) figures() ProcedureFigures {
	f := ProcedureFigures{
		Procedure: t.procedure, Trials: t.trials,
		AARegression: rate(t.aaReg, t.aaN), ABRowFlagged: rate(t.abFlag, t.abN),
		ABDecidable: rate(t.decN, t.abN), ABFlaggedDecidable: rate(t.decFlag, t.decN),
		ABFalseOutside: rate(t.abOut, t.abN), MaxGPU: t.maxGPU, MaxRerun: t.maxRerun,
		OverBudget: rate(t.over, t.n),
	}
	if t.n > 0 {
		f.MeanGPU = t.gpu / time.Duration(t.n)
		f.MeanRerun = t.rerun / time.Duration(t.n)
		f.Undecided = t.undecided / float64(t.n)
	}
	for _, row := range t.rowOrder {
		rr := t.rows[row]
		f.ByRow = append(f.ByRow, BudgetRowRate{Row: row, Decidable: rate(rr[0], rr[3]), Flagged: rate(rr[1], rr[0]), FlaggedAll: rate(rr[2], rr[3])})
	}
	return f
}

// RunBudget simulates the budgeted procedure, and the naive one when s.NaiveTrials > 0, on the
// same synthetic servers as Run draws them (noise model s.Noise): s.AA A/A and s.AB A/B
// comparisons, the A/B ones slowing the decode rows in turn by 2δ. The naive procedure's
// detection "on decidable rows" counts the comparisons whose row the budgeted procedure could
// decide. It stops early when ctx is done.
func RunBudget(ctx context.Context, s Settings) (*BudgetReport, error) {
	rep := &BudgetReport{Settings: s}
	budgeted := budgetTally{procedure: ProcedureBudgeted}
	naive := budgetTally{procedure: ProcedureNaive, trials: s.NaiveTrials}
	run := func(m *Matrix, seed, i uint64, slow *Slowdown) (b, n procOutcome, err error) {
		b, err = s.budgeted(m, rand.New(rand.NewPCG(seed, i)), slow)
		if err != nil || s.NaiveTrials <= 0 {
			return b, n, err
		}
		n, err = s.naive(m, rand.New(rand.NewPCG(seed+0x9e3779b9, i)), slow)
		return b, n, err
	}
	for i := range s.AA {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		m := NewMatrixNoise(s.Seed*1_000_003+uint64(i), s.NoiseScale, s.Noise)
		b, n, err := run(m, s.Seed, uint64(i), nil)
		if err != nil {
			return nil, err
		}
		rep.Tests = b.first.Summary.Tests
		budgeted.aa(b)
		if s.NaiveTrials > 0 {
			naive.aa(n)
		}
	}
	th := s.Thresholds
	for i := range s.AB {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		m := NewMatrixNoise(s.Seed*2_000_003+uint64(i), s.NoiseScale, s.Noise)
		row := results.ContextLabel(contexts[i%len(contexts)])
		slow := &Slowdown{ContextLabel: row, RateFactor: 1 - 2*th.Delta[results.MetricTotalTokPerS], TTFTFactor: 1 + 2*th.Delta[results.MetricTTFT]}
		b, n, err := run(m, s.Seed+1, uint64(i), slow)
		if err != nil {
			return nil, err
		}
		dec := b.rowDecidable(row, th)
		budgeted.ab(b, row, dec)
		if s.NaiveTrials > 0 {
			naive.ab(n, row, dec)
		}
	}
	rep.Budgeted = budgeted.figures()
	rep.FirstPass = rep.Budgeted.MeanGPU - rep.Budgeted.MeanRerun
	if s.NaiveTrials > 0 {
		rep.Naive = naive.figures()
	}
	return rep, nil
}
