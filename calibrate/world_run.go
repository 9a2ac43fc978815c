package calibrate

import (
	"context"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"time"

	"github.com/speedmatrix/speedmatrix/adaptive"
	"github.com/speedmatrix/speedmatrix/compare"
	"github.com/speedmatrix/speedmatrix/results"
)

// WorldSettings say what the world calibration measures.
type WorldSettings struct {
	Models     []WorldModel
	Procedures []Procedure
	Shapes     []Shape
	// Pairs is the number of A/A comparisons, and of A/B comparisons per shape, in each
	// (model, procedure) row.
	Pairs int
	Seed  uint64
	// Thresholds are compare's.
	Thresholds compare.Thresholds
	// Workers is how many comparisons run at once (0: GOMAXPROCS). The figures do not depend
	// on it.
	Workers int
	// Progress, when not nil, is called after each comparison with the number done and the
	// total (from one goroutine at a time).
	Progress func(done, total int)
}

// DefaultWorldSettings are the full table: every model, procedure and shape, 1000 pairs each.
func DefaultWorldSettings() WorldSettings {
	return WorldSettings{Models: WorldModels(), Procedures: Procedures(), Shapes: Shapes(), Pairs: 1000, Seed: 1,
		Thresholds: compare.DefaultThresholds()}
}

// WorldReport is the world calibration's table: one row per (model, procedure).
type WorldReport struct {
	Seed  uint64     `json:"seed"`
	Pairs int        `json:"pairs"`
	Rows  []WorldRow `json:"rows"`
}

// WorldRow is one (model, procedure)'s figures.
type WorldRow struct {
	Model     WorldModel `json:"model"`
	Procedure Procedure  `json:"procedure"`
	// FalseBlocks is the share of A/A comparisons whose matrix verdict is regression (the exit
	// status 3 of speedmatrix compare).
	FalseBlocks Rate `json:"aa_false_blocks"`
	// AAUndecided is the share of A/A comparisons left undecided (exit status 4: a cell
	// unproven or incomplete), which the bot's check fails under github.undecided: failure.
	AAUndecided Rate `json:"aa_undecided"`
	// Detection is, per shape, the share of A/B comparisons whose matrix verdict is regression.
	Detection []ShapeRate `json:"detection"`
	// Unchanged, Unproven and Inconclusive are the shares of the A/A comparisons' tested cells
	// (every cell whose verdict is not not_comparable, pooled over the comparisons) with that
	// cell verdict. Their intervals take the cells as independent, which cells of one matrix
	// are not: read them as the shares' precision, not as a test.
	Unchanged Rate `json:"aa_cells_unchanged"`
	// CoreUnchanged is Unchanged over the prefill cells and the decode cells at 8 requests or
	// more: the cells whose noise a pooled baseline of history runs can bound tightly enough to
	// show no change beyond δ (the 1–4-request columns' run-to-run noise is 2–20 %).
	CoreUnchanged Rate `json:"aa_core_cells_unchanged"`
	Unproven      Rate `json:"aa_cells_unproven"`
	Inconclusive  Rate `json:"aa_cells_inconclusive"`
	// Marks are the targets that apply to this row and whether it meets them.
	Marks []Mark `json:"marks,omitempty"`
}

// ShapeRate is the detection of one slowdown shape: Rate the share found a regression (exit
// status 3), Undecided the share left undecided instead (exit status 4: unproven or
// incomplete; the check still fails under github.undecided: failure, but no cell is named
// slower).
type ShapeRate struct {
	Shape     Shape `json:"shape"`
	Rate      Rate  `json:"rate"`
	Undecided Rate  `json:"undecided"`
	// Passed is the share that passed (exit status 0): the slowdown missed.
	Passed Rate `json:"passed"`
}

// Mark is one target and whether the row meets it.
type Mark struct {
	Target string `json:"target"`
	Pass   bool   `json:"pass"`
}

// job is one comparison of the world calibration.
type job struct {
	row   int
	model WorldModel
	proc  Procedure
	shape Shape // "" for A/A
	index int
}

// outcome of one job: the matrix verdict and, for A/A, the cell verdicts.
type worldOutcome struct {
	regression, undecided, passed bool
	cells                         results.VerdictCounts
	// core counts the prefill cells and the decode cells at 8 requests or more.
	core results.VerdictCounts
}

// seedOf returns the stream of a job: a hash of its model, procedure and shape with the seed,
// and its index, so that a job draws the same numbers whatever ran before it or beside it.
func (s WorldSettings) seedOf(j job) (uint64, uint64) {
	h := fnv.New64a()
	fmt.Fprintf(h, "%d|%s|%s|%s", s.Seed, j.model, j.proc, j.shape)
	return h.Sum64(), uint64(j.index)
}

// sides draws the files of one job: a fresh synthetic server (NewMatrix), then the base,
// head and history as the procedure measures them, the head slowed by the job's shape.
// It returns the head run's factor too (1 where the procedure draws several head runs).
func (s WorldSettings) sides(j job) (in compare.Input, headFactor float64) {
	a, b := s.seedOf(j)
	r := rand.New(rand.NewPCG(a, b))
	m := NewMatrix(r.Uint64(), 1)
	w, shape := j.model, j.shape
	headFactor = 1
	switch j.proc {
	case ProcPaired:
		base, head := m.WorldPaired(r, w, "paired", shape)
		in.Base, in.Head = []*results.File{base}, []*results.File{head}
	case ProcTrials3:
		in.Base = []*results.File{m.WorldRun(r, w, "base", runsPerSide, "")}
		in.Head = []*results.File{m.WorldRun(r, w, "head", runsPerSide, shape)}
	case ProcRuns3:
		for k := range runsPerSide {
			in.Base = append(in.Base, m.WorldRun(r, w, fmt.Sprintf("base-%d", k+1), 1, ""))
			in.Head = append(in.Head, m.WorldRun(r, w, fmt.Sprintf("head-%d", k+1), 1, shape))
		}
	default:
		in.Base = []*results.File{m.WorldRun(r, w, "base", 1, "")}
		headFactor = w.runFactor(r)
		in.Head = []*results.File{m.WorldRunAt(r, w, "head", 1, shape, headFactor)}
		if j.proc == ProcHistory || j.proc == ProcBudget {
			for k := range historyRuns {
				in.History = append(in.History, m.WorldRun(r, w, fmt.Sprintf("hist-%d", k+1), 1, ""))
			}
		}
	}
	return in, headFactor
}

// run compares one job's sides (ProcBudget: with the reruns its budget buys, then the second
// look).
func (s WorldSettings) run(j job) (worldOutcome, error) {
	th := s.Thresholds
	th.Look = 1
	var c *results.Comparison
	var err error
	if j.proc == ProcBudget {
		c, err = s.budgeted(j, th)
	} else {
		in, _ := s.sides(j)
		c, err = compare.Compare(in, th)
	}
	if err != nil {
		return worldOutcome{}, fmt.Errorf("%s/%s/%s comparison %d: %w", j.model, j.proc, shapeName(j.shape), j.index, err)
	}
	exit := results.OutcomeOf(c.Verdict).Exit
	o := worldOutcome{regression: exit == results.ExitRegression, undecided: exit == results.ExitUndecided, passed: exit == results.ExitPass}
	if j.shape == "" {
		for _, cell := range c.Cells {
			if cell.Verdict == results.VerdictNotComparable {
				continue // the shares are of the tested cells
			}
			o.cells.Add(cell.Verdict)
			if cell.Phase == results.PhasePrefill || cell.Concurrency >= 8 {
				o.core.Add(cell.Verdict)
			}
		}
	}
	return o, nil
}

// budgeted runs the bot's adaptive job (adaptive.Run) on job j: the first look against the
// stored base and its history, the head-only reruns that budgetMinutes of GPU time buys
// (priced by DefaultCosts; each rerun a window of the advised cells and trials on the server
// of the head's first pass, so with its run factor, and the head's slowdown), and the second
// look over the pooled head. The clock is the
// predicted cost of what was measured.
func (s WorldSettings) budgeted(j job, th compare.Thresholds) (*results.Comparison, error) {
	in, headFactor := s.sides(j)
	a, b := s.seedOf(j)
	m := NewMatrix(rand.New(rand.NewPCG(a, b)).Uint64(), 1) // the server sides drew
	r := rand.New(rand.NewPCG(a^0x9e3779b97f4a7c15, b))     // the reruns' own stream
	costs := DefaultCosts()
	cost := func(cell string, trials int) time.Duration { return m.CellCost(costs, cell, trials, 1) }
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	reruns := 0
	out, err := adaptive.Run(context.Background(), adaptive.Job{
		Compare: in, Thresholds: th, Budget: budgetMinutes * time.Minute, Cost: cost,
		Now: func() time.Time { return clock },
		Measure: func(_ context.Context, cells []string, trials int) (*results.File, error) {
			var ids []results.CellID
			for _, c := range cells {
				id, err := results.ParseCellID(c)
				if err != nil {
					return nil, err
				}
				ids = append(ids, id)
				clock = clock.Add(cost(c, trials))
			}
			reruns++
			return onlyCells(m.WorldRunAt(r, j.model, fmt.Sprintf("head-rerun-%d", reruns), trials, j.shape, headFactor), ids), nil
		},
	})
	if err != nil {
		return nil, err
	}
	return out.Final, nil
}

// onlyCells returns f holding only the cells of keep.
func onlyCells(f *results.File, keep []results.CellID) *results.File {
	want := map[results.CellID]bool{}
	for _, id := range keep {
		want[id] = true
	}
	out := *f
	out.Prefill, out.Decode = nil, nil
	for _, c := range f.Prefill {
		if want[c.ID()] {
			out.Prefill = append(out.Prefill, c)
		}
	}
	for _, c := range f.Decode {
		if want[c.ID()] {
			out.Decode = append(out.Decode, c)
		}
	}
	return &out
}

func shapeName(s Shape) string {
	if s == "" {
		return "A/A"
	}
	return string(s)
}

// RunWorld runs the world calibration: for every (model, procedure), s.Pairs A/A comparisons
// and s.Pairs A/B comparisons per shape, each on a fresh synthetic server, s.Workers at a time.
// Each comparison is seeded by s.Seed and its place in the table, so the report is the same
// whatever the parallelism. It stops with ctx's error when ctx is done.
func RunWorld(ctx context.Context, s WorldSettings) (*WorldReport, error) {
	if s.Pairs < 1 {
		return nil, fmt.Errorf("world calibration: pairs %d: want at least 1", s.Pairs)
	}
	if len(s.Models) == 0 || len(s.Procedures) == 0 {
		return nil, fmt.Errorf("world calibration: want at least one model and one procedure")
	}
	rep := &WorldReport{Seed: s.Seed, Pairs: s.Pairs}
	var jobs []job
	for _, w := range s.Models {
		for _, p := range s.Procedures {
			row := len(rep.Rows)
			rep.Rows = append(rep.Rows, WorldRow{Model: w, Procedure: p})
			for _, shape := range append([]Shape{""}, s.Shapes...) {
				for i := range s.Pairs {
					jobs = append(jobs, job{row: row, model: w, proc: p, shape: shape, index: i})
				}
			}
		}
	}
	out := make([]worldOutcome, len(jobs))
	err := Parallel(ctx, s.Workers, len(jobs), func(i int) error {
		o, err := s.run(jobs[i])
		out[i] = o
		return err
	}, s.Progress)
	if err != nil {
		return nil, err
	}
	tallyWorld(rep, s, jobs, out)
	return rep, nil
}

// tallyWorld turns the outcomes into the rows' rates and marks.
func tallyWorld(rep *WorldReport, s WorldSettings, jobs []job, out []worldOutcome) {
	type counts struct {
		aa, aaU, aaN int
		det          map[Shape][4]int
		cells, core  results.VerdictCounts
	}
	cs := make([]counts, len(rep.Rows))
	for i, j := range jobs {
		c := &cs[j.row]
		o := out[i]
		if j.shape == "" {
			c.aaN++
			if o.regression {
				c.aa++
			}
			if o.undecided {
				c.aaU++
			}
			c.cells.AddCounts(o.cells)
			c.core.AddCounts(o.core)
			continue
		}
		if c.det == nil {
			c.det = map[Shape][4]int{}
		}
		d := c.det[j.shape]
		d[1]++
		if o.regression {
			d[0]++
		}
		if o.undecided {
			d[2]++
		}
		if o.passed {
			d[3]++
		}
		c.det[j.shape] = d
	}
	for k := range rep.Rows {
		row, c := &rep.Rows[k], cs[k]
		row.FalseBlocks, row.AAUndecided = rate(c.aa, c.aaN), rate(c.aaU, c.aaN)
		for _, shape := range s.Shapes {
			d := c.det[shape]
			row.Detection = append(row.Detection, ShapeRate{Shape: shape, Rate: rate(d[0], d[1]), Undecided: rate(d[2], d[1]), Passed: rate(d[3], d[1])})
		}
		tested := c.cells.Total()
		row.Unchanged, row.Unproven, row.Inconclusive = rate(c.cells.Unchanged, tested), rate(c.cells.Unproven, tested), rate(c.cells.Inconclusive, tested)
		row.CoreUnchanged = rate(c.core.Unchanged, c.core.Total())
		row.Marks = marks(row)
	}
}

// marks returns the targets that apply to row and whether it meets each. Issue 21's: the A/A
// upper bound ≤ 2 % everywhere; with history under Gaussian and spec-decode noise, ≥ 70 % of the
// A/A prefill and 8+ request cells unchanged (against one base run or at 1–4 requests the
// intervals cannot fit inside δ). Issue 33's, under every model with history and with three
// separate runs a side: A/A undecided ≤ 5 %, rows ≥ 32K detected in ≥ 90 % (≥ 80 % under
// bimodal runs), and a 5 % slowdown of every decode cell passing (exit 0) in ≤ 2 %. Detection,
// undecided, pass and unchanged targets are met by the point estimate.
func marks(row *WorldRow) []Mark {
	out := []Mark{{Target: "A/A false blocks: 95 % upper bound ≤ 2 %", Pass: row.FalseBlocks.N > 0 && row.FalseBlocks.High <= 0.02}}
	if row.Procedure != ProcHistory && row.Procedure != ProcRuns3 {
		return out
	}
	out = append(out, Mark{Target: "A/A undecided ≤ 5 %", Pass: row.AAUndecided.N > 0 && row.AAUndecided.P <= 0.05})
	want := 0.90
	if row.Model == WorldBimodal {
		want = 0.80
	}
	for _, d := range row.Detection {
		switch d.Shape {
		case ShapeRowsFrom32K:
			out = append(out, Mark{Target: fmt.Sprintf("rows>=32K detected ≥ %.0f %%", want*100), Pass: d.Rate.N > 0 && d.Rate.P >= want})
		case ShapeDecode5:
			out = append(out, Mark{Target: "decode5 passed ≤ 2 %", Pass: d.Passed.N > 0 && d.Passed.P <= 0.02})
		}
	}
	if row.Procedure == ProcHistory && (row.Model == WorldGaussian || row.Model == WorldSpec) {
		out = append(out, Mark{Target: "A/A prefill and 8+ request cells unchanged ≥ 70 %", Pass: row.CoreUnchanged.N > 0 && row.CoreUnchanged.P >= 0.70})
	}
	return out
}
