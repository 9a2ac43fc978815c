package calibrate

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"

	"github.com/speedmatrix/speedmatrix/compare"
	"github.com/speedmatrix/speedmatrix/results"
)

// The advice check: does following the PR comment's rerun advice decide what it promised? For
// each world comparison (a noise model, a procedure of one head run, a slowdown shape or none)
// whose first look leaves cells undecided, every `/bench rerun` the comment advises
// (AdviceSettings.Advise: report.AdvisedReruns, given by the caller, since report's tests draw
// their matrices here) is done as the bot does it: the head alone measured again on the named
// cells with the configured trials, in a job of its own (a server run of its own, so its own
// run factor), its trials pooled with the first pass at the second look on those cells
// (compare.MergeLooks keeps every other cell's first-look verdict). A promised cell is decided
// when its merged verdict is slower, faster or unchanged.

// AdviceSettings say what the advice check measures.
type AdviceSettings struct {
	// World gives the models, procedures (ProcOne and ProcHistory: one head run), shapes
	// (none: A/A alone), pairs, seed, thresholds and workers.
	World WorldSettings
	// Trials is each rerun's trials per cell: the configured trials (1 by default).
	Trials int
	// Advise returns the cells of each `/bench rerun` the PR comment advises for a first look.
	Advise func(*results.Comparison) [][]string
}

// AdviceReport is the advice check's table: one row per (model, procedure, shape).
type AdviceReport struct {
	Seed   uint64      `json:"seed"`
	Pairs  int         `json:"pairs"`
	Trials int         `json:"rerun_trials"`
	Rows   []AdviceRow `json:"rows"`
}

// AdviceRow is one (model, procedure, shape)'s figures. Shape is "" for A/A.
type AdviceRow struct {
	Model     WorldModel `json:"model"`
	Procedure Procedure  `json:"procedure"`
	Shape     Shape      `json:"shape,omitempty"`
	// Advised is the share of comparisons whose comment advised at least one rerun.
	Advised Rate `json:"advised"`
	// Reruns is the number of advised `/bench rerun` commands followed.
	Reruns int `json:"reruns"`
	// CellsDecided is the share of the promised cells (every cell an advised rerun names) that
	// the rerun decided; RerunsDecided the share of advised reruns that decided every cell they
	// named.
	CellsDecided  Rate `json:"cells_decided"`
	RerunsDecided Rate `json:"reruns_decided"`
	// Blocked is the share of the advised comparisons whose verdict after the reruns is
	// regression (for A/A: false blocks the reruns added or kept).
	Blocked Rate `json:"blocked_after"`
}

// adviceOutcome is one comparison's.
type adviceOutcome struct {
	advised                bool
	reruns, rerunsDecided  int
	promised, cellsDecided int
	blocked                bool
}

// RunAdvice runs the advice check, s.World.Workers comparisons at a time; the figures do not
// depend on the parallelism.
func RunAdvice(ctx context.Context, s AdviceSettings) (*AdviceReport, error) {
	ws := s.World
	if ws.Pairs < 1 {
		return nil, fmt.Errorf("advice check: pairs %d: want at least 1", ws.Pairs)
	}
	if s.Advise == nil {
		return nil, fmt.Errorf("advice check: no advice to follow")
	}
	if s.Trials < 1 {
		return nil, fmt.Errorf("advice check: rerun trials %d: want at least 1", s.Trials)
	}
	for _, p := range ws.Procedures {
		if p != ProcOne && p != ProcHistory {
			return nil, fmt.Errorf("advice check: procedure %s: want %s or %s (one head run, as a pull request's first pass)", p, ProcOne, ProcHistory)
		}
	}
	if len(ws.Models) == 0 || len(ws.Procedures) == 0 {
		return nil, fmt.Errorf("advice check: want at least one model and one procedure")
	}
	rep := &AdviceReport{Seed: ws.Seed, Pairs: ws.Pairs, Trials: s.Trials}
	var jobs []job
	for _, w := range ws.Models {
		for _, p := range ws.Procedures {
			for _, shape := range append([]Shape{""}, ws.Shapes...) {
				row := len(rep.Rows)
				rep.Rows = append(rep.Rows, AdviceRow{Model: w, Procedure: p, Shape: shape})
				for i := range ws.Pairs {
					jobs = append(jobs, job{row: row, model: w, proc: p, shape: shape, index: i})
				}
			}
		}
	}
	out := make([]adviceOutcome, len(jobs))
	err := Parallel(ctx, ws.Workers, len(jobs), func(i int) error {
		o, err := s.follow(jobs[i])
		out[i] = o
		return err
	}, ws.Progress)
	if err != nil {
		return nil, err
	}
	type counts struct{ n, advised, reruns, rerunsDecided, promised, cellsDecided, blocked int }
	cs := make([]counts, len(rep.Rows))
	for i, j := range jobs {
		c, o := &cs[j.row], out[i]
		c.n++
		if !o.advised {
			continue
		}
		c.advised++
		c.reruns += o.reruns
		c.rerunsDecided += o.rerunsDecided
		c.promised += o.promised
		c.cellsDecided += o.cellsDecided
		if o.blocked {
			c.blocked++
		}
	}
	for k := range rep.Rows {
		row, c := &rep.Rows[k], cs[k]
		row.Advised, row.Reruns = rate(c.advised, c.n), c.reruns
		row.CellsDecided, row.RerunsDecided = rate(c.cellsDecided, c.promised), rate(c.rerunsDecided, c.reruns)
		row.Blocked = rate(c.blocked, c.advised)
	}
	return rep, nil
}

// decided reports whether a cell verdict decides the cell.
func decided(v results.Verdict) bool {
	return v == results.VerdictRegression || v == results.VerdictImprovement || v == results.VerdictUnchanged
}

// follow compares one job's first pass as the bot does (head-only reruns advised) and follows
// every rerun its comment advises.
func (s AdviceSettings) follow(j job) (adviceOutcome, error) {
	var o adviceOutcome
	in, _ := s.World.sides(j)
	th := s.World.Thresholds
	th.Look, th.HeadOnlyReruns = 1, true
	first, err := compare.Compare(in, th)
	if err != nil {
		return o, fmt.Errorf("%s/%s/%s comparison %d: %w", j.model, j.proc, shapeName(j.shape), j.index, err)
	}
	goals := s.Advise(first)
	if len(goals) == 0 {
		return o, nil
	}
	o.advised = true
	a, b := s.World.seedOf(j)
	m := NewMatrix(rand.New(rand.NewPCG(a, b)).Uint64(), 1) // the server the sides drew
	r := rand.New(rand.NewPCG(a^0x6a09e667f3bcc908, b))     // the reruns' own stream
	final := first
	for k, g := range goals {
		var ids []results.CellID
		for _, c := range g {
			id, err := results.ParseCellID(c)
			if err != nil {
				return o, err
			}
			ids = append(ids, id)
		}
		// A job of its own: its own server run, so its own run factor.
		again := onlyCells(m.WorldRun(r, j.model, fmt.Sprintf("head-rerun-%d", k+1), s.Trials, j.shape), ids)
		in2 := in
		in2.Head = []*results.File{in.Head[0], again}
		in2.Cells = ids
		th2 := th
		th2.Look = 2
		second, err := compare.Compare(in2, th2)
		if err != nil {
			return o, fmt.Errorf("%s/%s/%s comparison %d, rerun %d: %w", j.model, j.proc, shapeName(j.shape), j.index, k+1, err)
		}
		merged := compare.MergeLooks(first, second)
		all := true
		for _, c := range merged.Cells {
			if !slices.Contains(g, c.Cell) {
				continue
			}
			o.promised++
			if decided(c.Verdict) {
				o.cellsDecided++
			} else {
				all = false
			}
		}
		o.reruns++
		if all {
			o.rerunsDecided++
		}
		final = compare.MergeLooks(final, second)
	}
	o.blocked = final.Verdict == results.VerdictRegression
	return o, nil
}

// adviceTarget is the share of promised cells following the advice must decide for the comment
// to say the rerun decides them; below it, the comment says it may.
const adviceTarget = 0.80

// table returns the advice report's header and rows.
func (rep *AdviceReport) table() (header []string, rows [][]string) {
	header = []string{"model", "procedure", "head", "advised", "reruns", "promised cells decided", "reruns that decided all", "blocked after", "≥ 80 % decided"}
	for _, r := range rep.Rows {
		mark := "–"
		if r.CellsDecided.N > 0 {
			mark = "no"
			if r.CellsDecided.P >= adviceTarget {
				mark = "yes"
			}
		}
		head := "A/A"
		if r.Shape != "" {
			head = string(r.Shape) + " slower"
		}
		rows = append(rows, []string{string(r.Model), string(r.Procedure), head, pct1(r.Advised), fmt.Sprint(r.Reruns),
			r.CellsDecided.short(), pct1(r.RerunsDecided), pct1(r.Blocked), mark})
	}
	return header, rows
}

// legend explains the advice table.
func (rep *AdviceReport) legend() string {
	return fmt.Sprintf("advised: comparisons whose first look left cells undecided and whose PR comment advised a /bench rerun; reruns: the advised commands followed, each as the bot runs it "+
		"(the head alone, %d trial(s) a cell, a job and server run of its own, pooled with the first pass at the second look); promised cells decided: the cells the reruns named that came out slower, faster or unchanged "+
		"[95 %% Wilson interval, cells taken as independent] n; blocked after: advised comparisons whose verdict after the reruns is regression; seed %d, %d pairs a row.", rep.Trials, rep.Seed, rep.Pairs)
}

// WriteText writes the advice table as aligned text.
func (rep *AdviceReport) WriteText(w io.Writer) error {
	header, rows := rep.table()
	return writeTextTable(w, "Does following the rerun advice decide what it promised? (synthetic full matrices)", header, rows, rep.legend())
}

// WriteMarkdown writes the advice table as a Markdown table.
func (rep *AdviceReport) WriteMarkdown(w io.Writer) error {
	header, rows := rep.table()
	return writeMarkdownTable(w, header, rows, rep.legend())
}

// WriteJSON writes the advice report as indented JSON.
func (rep *AdviceReport) WriteJSON(w io.Writer) error { return writeJSON(w, rep) }
