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

// Settings say what to simulate.
type Settings struct {
	// AA and AB are the numbers of A/A and A/B whole-matrix comparisons.
	AA, AB int
	Seed   uint64
	// NoiseScale multiplies the realistic CVs (1). Above 1 the true noise exceeds the prior.
	NoiseScale float64
	// Trials is the number of runs pooled on each side (1).
	Trials int
	// History is the number of earlier base runs given as --history (0: none, the prior
	// applies).
	History int
	// TwoLook follows the rerun advice: when the first comparison lists inconclusive cells, it
	// draws the advised further trials of those cells on both sides and compares the pooled
	// trials with Look = 2, as a user following the advice would.
	TwoLook    bool
	Thresholds compare.Thresholds
	// Noise is the model of the decode rates' run-to-run noise (NoiseDefault: the first
	// calibration's ranges).
	Noise Noise
	// Budget is the GPU time the budgeted procedure's reruns may spend after its first pass,
	// both sides (RunBudget); NaiveTrials the fixed trials a side of the naive procedure it is
	// set against (0: none); Costs the GPU-time figures.
	Budget      time.Duration
	NaiveTrials int
	Costs       Costs
	// StoredBaseline has the budgeted calibration measure the head alone in the job, the base's
	// runs coming from the store, as the bot's adaptive job does (RunBudget).
	StoredBaseline bool
}

// DefaultSettings are the full calibration: 1000 A/A and 400 A/B comparisons, one run a side,
// no history, the advised second look, the default thresholds; for the budgeted mode, 30 min of
// reruns (both sides measured, the most that keeps the worst case within half the naive
// procedure's GPU time) against 3 fixed trials a side.
func DefaultSettings() Settings {
	return Settings{AA: 1000, AB: 400, Seed: 1, NoiseScale: 1, Trials: 1, TwoLook: true, Thresholds: compare.DefaultThresholds(),
		Budget: 30 * time.Minute, NaiveTrials: 3, Costs: DefaultCosts()}
}

// Rate is a share k/n with its 95 % Wilson interval.
type Rate struct {
	K    int     `json:"k"`
	N    int     `json:"n"`
	P    float64 `json:"p"`
	Low  float64 `json:"low"`
	High float64 `json:"high"`
}

func rate(k, n int) Rate {
	if n == 0 {
		return Rate{}
	}
	low, high := stats.Wilson(k, n, 1.959964)
	return Rate{K: k, N: n, P: float64(k) / float64(n), Low: low, High: high}
}

// String formats the rate as "0.6 % (6/1000; 95 % CI 0.3–1.3 %)".
func (r Rate) String() string {
	return fmt.Sprintf("%.1f %% (%d/%d; 95 %% CI %.1f–%.1f %%)", r.P*100, r.K, r.N, r.Low*100, r.High*100)
}

// Figures are the error rates after one look or after both.
type Figures struct {
	// AARegression is the share of A/A comparisons with any regression verdict (target ≤ 1 %).
	AARegression Rate
	// AAImprovement is the share of A/A comparisons with any improvement verdict.
	AAImprovement Rate
	// ABRowFlagged is the share of A/B comparisons (a 2δ slowdown in one decode row) in which
	// that row has a regression verdict (target ≥ 90 %); ByRow splits it by slowed row.
	ABRowFlagged Rate
	ByRow        []RowRate
	// ABRowCellsFlagged is the mean share of the slowed row's measured cells flagged.
	ABRowCellsFlagged float64
	// ABFalseOutside is the share of A/B comparisons with a regression verdict outside the
	// slowed row; ABFDP is the mean false discovery proportion among regression verdicts
	// (target ≤ q).
	ABFalseOutside Rate
	ABFDP          float64
}

// Report holds the measured error rates.
type Report struct {
	Settings Settings
	// First is after the first comparison alone; Both after the advised second look too
	// (equal to First without TwoLook).
	First, Both Figures
	// AAUnchanged and AAInconclusive are the mean shares of tested cell-metrics with that
	// verdict in A/A first comparisons.
	AAUnchanged, AAInconclusive float64
	// Tests is the number of cell-metrics tested in one first comparison.
	Tests int
	// Reruns is the share of comparisons that had a second look; MeanRerunTrials the mean
	// advised number of further trials when they did.
	Reruns          Rate
	MeanRerunTrials float64
	// RowReruns is the mean number of whole rows measured again per comparison; MeanRowTrials
	// the mean advised further runs of such a row.
	RowReruns     float64
	MeanRowTrials float64
	// MeanWindows is the mean number of measurement windows (both sides) one comparison's rerun
	// took, and MaxWindows the most; each window is Matrix.Windows seconds of GPU time.
	MeanWindows float64
	MaxWindows  int
	// MeanRowWindows is the part of MeanWindows that measured whole rows.
	MeanRowWindows float64
}

// RowRate is the detection rate for one slowed row.
type RowRate struct {
	Row  string
	Rate Rate
}

// outcome is what one simulated comparison (with its optional second look) found.
type outcome struct {
	first, second *results.Comparison
	// windows is the number of measurement windows the rerun took (both sides); rowWindows the
	// part of them that measured whole rows.
	windows, rowWindows int
}

// regressions returns the regression verdicts of c in the row and outside it, and the row's
// measured and flagged cells.
func regressions(c *results.Comparison, row string) (in, out, rowCells, rowFlagged int) {
	if c == nil {
		return
	}
	for _, cell := range c.Cells {
		isRow := row != "" && cell.Phase == results.PhaseDecode && cell.ContextLabel == row
		if isRow && cell.BaseStatus.Measured() {
			rowCells++
			if cell.Verdict == results.VerdictRegression {
				rowFlagged++
			}
		}
		for _, mc := range cell.Metrics {
			if mc.Verdict != results.VerdictRegression {
				continue
			}
			if isRow {
				in++
			} else {
				out++
			}
		}
	}
	for _, r := range c.Rows {
		if r.Verdict != results.VerdictRegression {
			continue
		}
		if row != "" && r.ContextLabel == row {
			in++
		} else {
			out++
		}
	}
	return
}

// simulate runs one comparison of m (head slowed by slow when not nil) and, when asked, the
// advised second look.
func (s Settings) simulate(m *Matrix, r *rand.Rand, slow *Slowdown) (outcome, error) {
	th := s.Thresholds
	th.Look = 1
	trials := max(1, s.Trials)
	var base, head []*results.File
	for t := range trials {
		base = append(base, m.Run(r, fmt.Sprintf("base-%d", t), nil))
		head = append(head, m.Run(r, fmt.Sprintf("head-%d", t), slow))
	}
	in := compare.Input{Base: base, Head: head}
	for h := range s.History {
		in.History = append(in.History, m.Run(r, fmt.Sprintf("hist-%d", h), nil))
	}
	first, err := compare.Compare(in, th)
	if err != nil {
		return outcome{}, err
	}
	o := outcome{first: first}
	adv := first.Rerun
	if !s.TwoLook || adv == nil || (adv.Cells == "" && len(adv.Rows) == 0) {
		return o, nil
	}
	parse := func(list string) ([]results.CellID, error) {
		var ids []results.CellID
		if list == "" {
			return nil, nil
		}
		for _, cs := range strings.Split(list, ",") {
			id, err := results.ParseCellID(cs)
			if err != nil {
				return nil, err
			}
			ids = append(ids, id)
		}
		return ids, nil
	}
	cells, err := parse(adv.Cells)
	if err != nil {
		return outcome{}, err
	}
	// As the runner measures them: `run --cells CELLS --trials N` and
	// `run --cells ROW_CELLS --trials ROW_N`, on base and on head, one file per run.
	for t := range adv.Trials {
		in.Base = append(in.Base, m.RunCells(r, fmt.Sprintf("base-rerun-%d", t), nil, cells))
		in.Head = append(in.Head, m.RunCells(r, fmt.Sprintf("head-rerun-%d", t), slow, cells))
	}
	o.windows = 2 * len(cells) * adv.Trials
	in.Cells = cells
	for _, row := range adv.Rows {
		rowCells, err := parse(row.Cells)
		if err != nil {
			return outcome{}, err
		}
		for t := range row.FurtherTrials {
			in.Base = append(in.Base, m.RunCells(r, fmt.Sprintf("base-%s-rerun-%d", row.ContextLabel, t), nil, rowCells))
			in.Head = append(in.Head, m.RunCells(r, fmt.Sprintf("head-%s-rerun-%d", row.ContextLabel, t), slow, rowCells))
		}
		o.rowWindows += 2 * len(rowCells) * row.FurtherTrials
		in.Cells = append(in.Cells, rowCells...)
	}
	o.windows += o.rowWindows
	th.Look = 2
	o.second, err = compare.Compare(in, th)
	return o, err
}

// tally accumulates figures.
type tally struct {
	aaReg, aaImp, n    int
	abFlag, abOut, abN int
	fdp, cells         float64
	rows               map[string][2]int
	rowOrder           []string
}

func (t *tally) aa(cs ...*results.Comparison) {
	t.n++
	var reg, imp bool
	for _, c := range cs {
		if c == nil {
			continue
		}
		reg = reg || c.Summary.Counts.Regression > 0
		imp = imp || c.Summary.Counts.Improvement > 0
		for _, r := range c.Rows {
			reg = reg || r.Verdict == results.VerdictRegression
			imp = imp || r.Verdict == results.VerdictImprovement
		}
	}
	if reg {
		t.aaReg++
	}
	if imp {
		t.aaImp++
	}
}

func (t *tally) ab(row string, cs ...*results.Comparison) {
	t.abN++
	if t.rows == nil {
		t.rows = map[string][2]int{}
	}
	var in, out, rowCells, rowFlagged int
	flaggedCells := map[string]bool{}
	for _, c := range cs {
		i, o, rc, _ := regressions(c, row)
		in, out = in+i, out+o
		if c != nil {
			for _, cell := range c.Cells {
				if cell.Phase == results.PhaseDecode && cell.ContextLabel == row && cell.Verdict == results.VerdictRegression {
					flaggedCells[cell.Cell] = true
				}
			}
		}
		rowCells = max(rowCells, rc)
	}
	rowFlagged = len(flaggedCells)
	rr, ok := t.rows[row]
	if !ok {
		t.rowOrder = append(t.rowOrder, row)
	}
	rr[1]++
	if in > 0 {
		t.abFlag++
		rr[0]++
	}
	t.rows[row] = rr
	if out > 0 {
		t.abOut++
	}
	if in+out > 0 {
		t.fdp += float64(out) / float64(in+out)
	}
	if rowCells > 0 {
		t.cells += float64(rowFlagged) / float64(rowCells)
	}
}

func (t *tally) figures() Figures {
	f := Figures{AARegression: rate(t.aaReg, t.n), AAImprovement: rate(t.aaImp, t.n), ABRowFlagged: rate(t.abFlag, t.abN), ABFalseOutside: rate(t.abOut, t.abN)}
	if t.abN > 0 {
		f.ABFDP, f.ABRowCellsFlagged = t.fdp/float64(t.abN), t.cells/float64(t.abN)
	}
	for _, row := range t.rowOrder {
		rr := t.rows[row]
		f.ByRow = append(f.ByRow, RowRate{Row: row, Rate: rate(rr[0], rr[1])})
	}
	return f
}

// Run simulates s and returns the measured rates. Every comparison draws a new synthetic server
// (NewMatrix) and new runs, seeded from s.Seed and its index, so the figures do not hang on one
// lucky matrix. A/B comparisons slow the decode rows in turn (8K, 16K, … 1019K): decode rates
// by 2δ of total tok/s, TTFT by 2δ of TTFT. It stops early when ctx is done.
func Run(ctx context.Context, s Settings) (*Report, error) {
	rep := &Report{Settings: s}
	var first, both tally
	var reruns, comparisons int
	var rerunTrials float64
	var rowReruns, windows, rowWindows int
	var rowTrials float64
	note := func(o outcome) {
		comparisons++
		if o.second != nil {
			reruns++
			rerunTrials += float64(o.first.Rerun.Trials)
			for _, row := range o.first.Rerun.Rows {
				rowReruns++
				rowTrials += float64(row.FurtherTrials)
			}
			windows += o.windows
			rowWindows += o.rowWindows
			rep.MaxWindows = max(rep.MaxWindows, o.windows)
		}
	}
	var unch, inc float64
	for i := range s.AA {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		m := NewMatrixNoise(s.Seed*1_000_003+uint64(i), s.NoiseScale, s.Noise)
		r := rand.New(rand.NewPCG(s.Seed, uint64(i)))
		o, err := s.simulate(m, r, nil)
		if err != nil {
			return nil, err
		}
		note(o)
		first.aa(o.first)
		both.aa(o.first, o.second)
		if t := o.first.Summary.Tests; t > 0 {
			unch += float64(o.first.Summary.Counts.Unchanged) / float64(t)
			inc += float64(o.first.Summary.Counts.Inconclusive) / float64(t)
			rep.Tests = t
		}
	}
	if s.AA > 0 {
		rep.AAUnchanged, rep.AAInconclusive = unch/float64(s.AA), inc/float64(s.AA)
	}
	th := s.Thresholds
	for i := range s.AB {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		m := NewMatrixNoise(s.Seed*2_000_003+uint64(i), s.NoiseScale, s.Noise)
		r := rand.New(rand.NewPCG(s.Seed+1, uint64(i)))
		row := results.ContextLabel(contexts[i%len(contexts)])
		slow := &Slowdown{ContextLabel: row, RateFactor: 1 - 2*th.Delta[results.MetricTotalTokPerS], TTFTFactor: 1 + 2*th.Delta[results.MetricTTFT]}
		o, err := s.simulate(m, r, slow)
		if err != nil {
			return nil, err
		}
		note(o)
		first.ab(row, o.first)
		both.ab(row, o.first, o.second)
	}
	rep.First, rep.Both = first.figures(), both.figures()
	rep.Reruns = rate(reruns, comparisons)
	if reruns > 0 {
		rep.MeanRerunTrials = rerunTrials / float64(reruns)
	}
	if comparisons > 0 {
		rep.RowReruns = float64(rowReruns) / float64(comparisons)
	}
	if rowReruns > 0 {
		rep.MeanRowTrials = rowTrials / float64(rowReruns)
	}
	if comparisons > 0 {
		rep.MeanWindows = float64(windows) / float64(comparisons)
		rep.MeanRowWindows = float64(rowWindows) / float64(comparisons)
	}
	return rep, nil
}
