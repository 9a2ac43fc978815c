package errrate

import (
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/speedmatrix/speedmatrix/bisect"
	"github.com/speedmatrix/speedmatrix/calibrate"
	"github.com/speedmatrix/speedmatrix/compare"
	"github.com/speedmatrix/speedmatrix/results"
)

// History is a scripted range of synthetic commits: commit 0 is the good one, 1..n follow it;
// from each commit of Culprit on, the decode rates of Cells are multiplied by its factor (0.9
// for 10 % slower; several culprits multiply). Step measures and decides commits of it as a
// bisect.StepFunc.
type History struct {
	Matrix     *calibrate.Matrix
	Model      calibrate.WorldModel
	Culprit    map[int]float64
	Cells      []results.CellID
	Thresholds compare.Thresholds
	Costs      calibrate.Costs
	Rand       *rand.Rand
	// Skip lists commits that do not build.
	Skip map[int]bool

	n       int
	history []*results.File
	// runs holds every run measured of a commit (the good commit's: its stored run); pooled
	// holds a commit's runs measured in one search, pooled by a rerun.
	runs   map[string][]*results.File
	pooled map[string][]*results.File // by search and commit
	index  map[string]int
}

// Init makes the range of n commits, the good commit's stored run (the whole matrix) and
// history runs of its era.
func (h *History) Init(n, history int) {
	h.n = n
	h.runs, h.pooled, h.index = map[string][]*results.File{}, map[string][]*results.File{}, map[string]int{}
	for i := 0; i <= n; i++ {
		h.index[h.Name(i)] = i
	}
	h.runs[h.Name(0)] = []*results.File{h.Matrix.SlowedRun(h.Rand, h.Model, "good", nil, h.slow(0))}
	for k := range history {
		h.history = append(h.history, h.Matrix.SlowedRun(h.Rand, h.Model, fmt.Sprintf("hist-%d", k+1), nil, h.slow(0)))
	}
}

// Name returns commit i's name.
func (h *History) Name(i int) string { return fmt.Sprintf("c%06d", i) }

// Range returns the names of commits 1..n.
func (h *History) Range() []string {
	var out []string
	for i := 1; i <= h.n; i++ {
		out = append(out, h.Name(i))
	}
	return out
}

// slow returns the factor of commit i's decode rates per cell.
func (h *History) slow(i int) func(results.CellID) float64 {
	f := 1.0
	for c, x := range h.Culprit {
		if c <= i {
			f *= x
		}
	}
	affected := map[results.CellID]bool{}
	for _, id := range h.Cells {
		affected[id] = true
	}
	return func(id results.CellID) float64 {
		if affected[id] {
			return f
		}
		return 1
	}
}

// Step measures each commit of req once more (one run of the cells) and compares its runs
// against req.Base with compare.Compare: the base's stored run and the history, the commit's
// runs of this search pooled, at look min(runs, 2).
func (h *History) Step(_ context.Context, req bisect.Request) ([]bisect.Measurement, error) {
	base := h.runs[req.Base]
	if len(base) == 0 {
		return nil, fmt.Errorf("synthetic history: base %s has no run", req.Base)
	}
	names := CellNames(h.Cells)
	gpu := h.Matrix.RunCost(h.Costs, h.Cells, nil, 1)
	var out []bisect.Measurement
	for _, c := range req.Commits {
		i, ok := h.index[c]
		if !ok {
			return nil, fmt.Errorf("synthetic history: no commit %s", c)
		}
		if h.Skip[i] {
			out = append(out, bisect.Measurement{Commit: c, Verdict: bisect.Skip, Reason: "the build failed"})
			continue
		}
		f := h.Matrix.SlowedRun(h.Rand, h.Model, fmt.Sprintf("%s-%d", c, len(h.runs[c])+1), h.Cells, h.slow(i))
		h.runs[c] = append(h.runs[c], f)
		key := fmt.Sprintf("%s|%d|%s", req.Base, req.Search, c)
		h.pooled[key] = append(h.pooled[key], f)
		th := h.Thresholds
		th.Look = min(2, len(h.pooled[key]))
		cmp, err := compare.Compare(compare.Input{Base: base, Head: h.pooled[key], History: h.history, Cells: h.Cells}, th)
		if err != nil {
			return nil, fmt.Errorf("synthetic history: comparing %s with %s: %w", c, req.Base, err)
		}
		m := bisect.StepVerdict(cmp, names)
		m.Commit, m.GPUTime = c, gpu
		out = append(out, m)
	}
	return out, nil
}
