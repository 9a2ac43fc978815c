package errrate

import (
	"context"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"time"

	"github.com/speedmatrix/speedmatrix/bisect"
	"github.com/speedmatrix/speedmatrix/calibrate"
	"github.com/speedmatrix/speedmatrix/compare"
	"github.com/speedmatrix/speedmatrix/results"
)

// Procedure is one way to bisect.
type Procedure struct {
	Name    string `json:"name"`
	Runners int    `json:"runners"`
	// Plain reads every verdict but bad as good, without reruns (git bisect run on the
	// comparison's exit status).
	Plain bool `json:"plain"`
}

// DefaultProcedures are plain one-point-per-step bisection, bisect with reruns on 2 runners
// (one point a step) and on 4 (three points a step).
func DefaultProcedures() []Procedure {
	return []Procedure{{Name: "plain", Runners: 2, Plain: true}, {Name: "bisect", Runners: 2}, {Name: "bisect, 4 runners", Runners: 4}}
}

// Settings say what to simulate.
type Settings struct {
	Slowdowns  []float64 // shares, 0.10 for 10 % slower
	Ranges     []int     // commits after the good one
	Bisections int       // per slowdown × range × procedure
	Procedures []Procedure
	Model      calibrate.WorldModel
	Seed       uint64
	// History is the number of stored default-branch runs of the good commit's era the
	// comparison takes its noise from (10: store.min_history).
	History int
	Budget  bisect.Budget
	Workers int
}

// DefaultSettings are the table of docs/bisect.md.
func DefaultSettings() Settings {
	return Settings{Slowdowns: []float64{0.05, 0.10, 0.20}, Ranges: []int{4, 16, 64}, Bisections: 200,
		Procedures: DefaultProcedures(), Model: calibrate.WorldGaussian, Seed: 1, History: 10,
		Budget: bisect.Budget{Steps: 12}, Workers: 2}
}

// Row is one slowdown × range × procedure.
type Row struct {
	Slowdown  float64   `json:"slowdown"`
	Range     int       `json:"range"`
	Procedure Procedure `json:"procedure"`
	// Right named the true culprit alone; Wrong named another commit (or two); Open ended with
	// a range or with no regression reproduced, which is a true statement but no culprit;
	// NotReproduced is the part of Open whose bad commit did not measure bad.
	Right, Wrong, Open, NotReproduced calibrate.Rate
	MeanSteps                         float64       `json:"mean_steps"`
	MaxSteps                          int           `json:"max_steps"`
	MeanGPU                           time.Duration `json:"mean_gpu_ns"`
}

// Report is the table.
type Report struct {
	Settings Settings `json:"settings"`
	Rows     []Row    `json:"rows"`
}

// outcome of one bisection.
type outcome struct {
	right, wrong, notRepro bool
	steps                  int
	gpu                    time.Duration
}

type job struct {
	row, index int
	slow       float64
	n          int
	proc       Procedure
}

// Run runs every bisection of s, s.Workers at a time; each is seeded by s.Seed and its place
// in the table, so the report does not depend on the parallelism.
func Run(ctx context.Context, s Settings) (*Report, error) {
	if s.Bisections < 1 || len(s.Slowdowns) == 0 || len(s.Ranges) == 0 || len(s.Procedures) == 0 {
		return nil, fmt.Errorf("bisect error rate: want at least one bisection, slowdown, range and procedure")
	}
	rep := &Report{Settings: s}
	var jobs []job
	for _, sl := range s.Slowdowns {
		if !(sl > 0 && sl < 1) {
			return nil, fmt.Errorf("bisect error rate: slowdown %v: want a share between 0 and 1, e.g. 0.1", sl)
		}
		for _, n := range s.Ranges {
			if n < 1 {
				return nil, fmt.Errorf("bisect error rate: range %d: want at least 1 commit", n)
			}
			for _, p := range s.Procedures {
				rep.Rows = append(rep.Rows, Row{Slowdown: sl, Range: n, Procedure: p})
				for i := range s.Bisections {
					jobs = append(jobs, job{row: len(rep.Rows) - 1, index: i, slow: sl, n: n, proc: p})
				}
			}
		}
	}
	out := make([]outcome, len(jobs))
	err := calibrate.Parallel(ctx, s.Workers, len(jobs), func(i int) error {
		var err error
		out[i], err = s.bisectOne(ctx, jobs[i])
		return err
	}, nil)
	if err != nil {
		return nil, err
	}
	type acc struct {
		right, wrong, notRepro, n, steps, max int
		gpu                                   time.Duration
	}
	accs := make([]acc, len(rep.Rows))
	for i, j := range jobs {
		a := &accs[j.row]
		a.n++
		a.steps += out[i].steps
		a.max = max(a.max, out[i].steps)
		a.gpu += out[i].gpu
		if out[i].right {
			a.right++
		}
		if out[i].wrong {
			a.wrong++
		}
		if out[i].notRepro {
			a.notRepro++
		}
	}
	for k := range rep.Rows {
		a := accs[k]
		r := &rep.Rows[k]
		r.Right, r.Wrong, r.Open = calibrate.NewRate(a.right, a.n), calibrate.NewRate(a.wrong, a.n), calibrate.NewRate(a.n-a.right-a.wrong, a.n)
		r.NotReproduced = calibrate.NewRate(a.notRepro, a.n)
		r.MeanSteps, r.MaxSteps, r.MeanGPU = float64(a.steps)/float64(a.n), a.max, a.gpu/time.Duration(a.n)
	}
	return rep, nil
}

// seedOf returns the stream of one bisection: its slowdown, range and index with the seed, the
// same for every procedure, so that the procedures bisect the same histories.
func (s Settings) seedOf(j job) (uint64, uint64) {
	h := fnv.New64a()
	fmt.Fprintf(h, "%d|%g|%d", s.Seed, j.slow, j.n)
	return h.Sum64(), uint64(j.index)
}

// bisectOne runs one bisection of job j.
func (s Settings) bisectOne(ctx context.Context, j job) (outcome, error) {
	a, b := s.seedOf(j)
	r := rand.New(rand.NewPCG(a, b))
	m := calibrate.NewMatrix(r.Uint64(), 1)
	culprit := 1 + r.IntN(j.n)
	h := &History{Matrix: m, Model: s.Model, Culprit: map[int]float64{culprit: 1 - j.slow}, Thresholds: compare.DefaultThresholds(),
		Costs: calibrate.DefaultCosts(), Rand: rand.New(rand.NewPCG(a^0x9e3779b97f4a7c15, b))}
	h.Cells = AffectedCells(m)
	h.Init(j.n, s.History)
	res, err := bisect.Run(ctx, bisect.Config{Good: h.Name(0), Commits: h.Range(), Cells: CellNames(h.Cells), Runners: j.proc.Runners,
		Plain: j.proc.Plain, Budget: s.Budget}, h.Step)
	if err != nil {
		return outcome{}, err
	}
	o := outcome{steps: res.Steps, gpu: res.GPUTime, notRepro: res.NotReproduced}
	var named []string
	for _, g := range res.Regressions {
		if g.Culprit != "" {
			named = append(named, g.Culprit)
		}
	}
	switch {
	case len(named) == 1 && named[0] == h.Name(culprit) && !res.SecondRemains:
		o.right = true
	case len(named) > 0:
		o.wrong = true
	}
	return o, nil
}

// AffectedCells returns the decode cells of m measured at 8 or more requests: the cells a
// slowdown at high concurrency moves.
func AffectedCells(m *calibrate.Matrix) []results.CellID {
	var out []results.CellID
	for _, tc := range m.Cells {
		if tc.ID.Phase == results.PhaseDecode && tc.ID.Concurrency >= 8 && tc.Status.Measured() {
			out = append(out, tc.ID)
		}
	}
	return out
}

// CellNames returns the cells' text forms.
func CellNames(ids []results.CellID) []string {
	var out []string
	for _, id := range ids {
		out = append(out, id.String())
	}
	return out
}
