package calibrate

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/speedmatrix/speedmatrix/compare"
	"github.com/speedmatrix/speedmatrix/results"
)

// TestRunCost pins the cost model on hand-computed runs: decode trials pay readiness (C
// hand-overs and the TTFT), the window and the drain; each context touched pays its warm-up and
// scout once; prefill trials after the first pay another prefill; over-capacity cells nothing.
func TestRunCost(t *testing.T) {
	m := NewMatrix(1, 1)
	c := DefaultCosts()
	cell := func(s string) TrueCell {
		for _, tc := range m.Cells {
			if tc.ID.String() == s {
				return tc
			}
		}
		t.Fatalf("no cell %s", s)
		return TrueCell{}
	}
	trial := func(s string) time.Duration {
		tc := cell(s)
		return time.Duration(tc.ID.Concurrency)*580*time.Millisecond + seconds(tc.TTFT/1000) + 30*time.Second + 100*time.Millisecond
	}
	pre := func(label string) time.Duration {
		tc := cell("prefill/" + label)
		return seconds(float64(tc.Context) / tc.Rate)
	}
	id := func(s string) results.CellID {
		x, err := results.ParseCellID(s)
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	tests := []struct {
		name   string
		cells  []results.CellID
		trials map[results.CellID]int
		n      int
		want   time.Duration
	}{
		{"two cells of one context, two trials", []results.CellID{id("decode/8K/1"), id("decode/8K/2")}, nil, 2,
			2*trial("decode/8K/1") + 2*trial("decode/8K/2") + 2*pre("8K")},
		{"per-cell trials over two contexts", []results.CellID{id("decode/8K/1"), id("decode/1019K/1")},
			map[results.CellID]int{id("decode/8K/1"): 3, id("decode/1019K/1"): 1}, 0,
			3*trial("decode/8K/1") + 2*pre("8K") + trial("decode/1019K/1") + 2*pre("1019K")},
		{"prefill cell, three trials", []results.CellID{id("prefill/256K")}, nil, 3, 2*pre("256K") + 2*pre("256K")},
		{"over capacity costs nothing", []results.CellID{id("decode/1019K/8")}, nil, 5, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := m.RunCost(c, tt.cells, tt.trials, tt.n); got != tt.want {
				t.Errorf("RunCost = %v, want %v", got, tt.want)
			}
		})
	}
	// The whole matrix: every measured decode cell, every context's warm-up and scout, no
	// further prefill at one trial; 3 trials cost 3 windows a cell and 2 more prefills a context.
	var one, three time.Duration
	for _, tc := range m.Cells {
		if tc.ID.Phase == results.PhasePrefill {
			one += 2 * pre(tc.ID.ContextLabel)
			three += 4 * pre(tc.ID.ContextLabel)
			continue
		}
		if tc.Status.Measured() {
			one += trial(tc.ID.String())
			three += 3 * trial(tc.ID.String())
		}
	}
	if got := m.RunCost(c, nil, nil, 1); got != one {
		t.Errorf("one run of the matrix = %v, want %v", got, one)
	}
	if got := m.RunCost(c, nil, nil, 3); got != three {
		t.Errorf("three trials of the matrix = %v, want %v", got, three)
	}
	// The reference's full run at 1× took about 35–45 min (README, "Measured figures").
	if one < 30*time.Minute || one > 50*time.Minute {
		t.Errorf("one run of the matrix = %v, want 30–50 min", one)
	}
}

// TestBudgetedProcedure checks the budgeted procedure's properties on a few comparisons: the
// reruns never cost more than the budget (measured by RunCost, not as planned), the first pass
// is one run a side, a zero budget means no second look, what the plan leaves out is reported,
// and the naive procedure costs NaiveTrials trials a side of the whole matrix.
func TestBudgetedProcedure(t *testing.T) {
	th := compare.DefaultThresholds()
	slow := &Slowdown{ContextLabel: "512K", RateFactor: 1 - 2*th.Delta[results.MetricTotalTokPerS], TTFTFactor: 1 + 2*th.Delta[results.MetricTTFT]}
	for _, budget := range []time.Duration{0, 10 * time.Minute, 45 * time.Minute, 3 * time.Hour} {
		for seed := range uint64(3) {
			s := DefaultSettings()
			s.Budget = budget
			s.Noise = NoiseSpec
			m := NewMatrixNoise(seed+40, 1, s.Noise)
			first := 2 * m.RunCost(s.Costs, nil, nil, 1)
			for _, sl := range []*Slowdown{nil, slow} {
				o, err := s.budgeted(m, rand.New(rand.NewPCG(seed, 1)), sl)
				if err != nil {
					t.Fatal(err)
				}
				if o.rerun > budget {
					t.Errorf("budget %v seed %d: reruns cost %v", budget, seed, o.rerun)
				}
				if o.gpu != first+o.rerun {
					t.Errorf("budget %v seed %d: GPU time %v, want first pass %v + reruns %v", budget, seed, o.gpu, first, o.rerun)
				}
				if budget == 0 && (o.second != nil || o.rerun != 0) {
					t.Errorf("budget 0 seed %d: a second look (%v of reruns)", seed, o.rerun)
				}
				if o.first.Rerun != nil && budget < 3*time.Hour && len(o.overBudget) == 0 {
					t.Errorf("budget %v seed %d: every advised rerun paid for", budget, seed)
				}
				if budget >= 10*time.Minute && o.second == nil {
					t.Errorf("budget %v seed %d: no rerun at all", budget, seed)
				}
			}
			n, err := s.naive(m, rand.New(rand.NewPCG(seed, 2)), nil)
			if err != nil {
				t.Fatal(err)
			}
			if want := 2 * m.RunCost(s.Costs, nil, nil, 3); n.gpu != want || n.second != nil {
				t.Errorf("naive: GPU time %v, second look %v; want %v and none", n.gpu, n.second != nil, want)
			}
			if adv := n.first.Rerun; adv == nil || adv.Rule.Level1 < 0.0099 {
				t.Errorf("naive: one look at BH level %+v, want the whole 0.01", adv)
			}
			for _, c := range n.first.Cells {
				for _, mc := range c.Metrics {
					if mc.Noise != nil && (mc.Noise.BaseTrials != 3 || mc.Noise.HeadTrials != 3) {
						t.Fatalf("naive: %s %s pooled %d+%d trials, want 3+3", c.Cell, mc.Metric, mc.Noise.BaseTrials, mc.Noise.HeadTrials)
					}
				}
			}
		}
	}
}

// TestStoredBaseline: with a stored baseline the job measures the head alone: GPU time is one
// side's, the reruns stay within the budget, and the second look pools more head trials
// against the one base run.
func TestStoredBaseline(t *testing.T) {
	s := DefaultSettings()
	s.StoredBaseline, s.Noise, s.History = true, NoiseNoSpec, 10
	for seed := range uint64(3) {
		m := NewMatrixNoise(seed+90, 1, s.Noise)
		o, err := s.budgeted(m, rand.New(rand.NewPCG(seed, 4)), nil)
		if err != nil {
			t.Fatal(err)
		}
		if first := m.RunCost(s.Costs, nil, nil, 1); o.gpu != first+o.rerun || o.rerun > s.Budget || o.rerun == 0 {
			t.Errorf("seed %d: GPU time %v, reruns %v; want the head's first pass %v + reruns within %v", seed, o.gpu, o.rerun, first, s.Budget)
		}
		if o.second == nil {
			t.Fatalf("seed %d: no second look", seed)
		}
		pooled := 0
		for _, c := range o.second.Cells {
			for _, mc := range c.Metrics {
				if mc.Noise == nil {
					continue
				}
				if mc.Noise.BaseTrials != 1 {
					t.Errorf("seed %d: %s %s pooled %d base trials, want the stored 1", seed, c.Cell, mc.Metric, mc.Noise.BaseTrials)
				}
				if mc.Noise.HeadTrials > 1 {
					pooled++
				}
			}
		}
		if pooled == 0 {
			t.Errorf("seed %d: no cell-metric pooled further head trials", seed)
		}
		n, err := s.naive(m, rand.New(rand.NewPCG(seed, 5)), nil)
		if err != nil {
			t.Fatal(err)
		}
		if want := m.RunCost(s.Costs, nil, nil, 3); n.gpu != want {
			t.Errorf("seed %d: naive GPU time %v, want the head's 3 trials %v", seed, n.gpu, want)
		}
		// The naive procedure with a stored baseline measures 3 head trials against the one
		// stored base run, as the store holds it.
		for _, c := range n.first.Cells {
			for _, mc := range c.Metrics {
				if mc.Noise != nil && (mc.Noise.BaseTrials != 1 || mc.Noise.HeadTrials != 3) {
					t.Fatalf("seed %d: naive %s %s compared %d base and %d head trials, want 1 and 3", seed, c.Cell, mc.Metric, mc.Noise.BaseTrials, mc.Noise.HeadTrials)
				}
			}
		}
	}
}

// TestRerunCostWithinPlan: what the funded reruns cost as measured (each context's prefills
// once a side) is never more than the plan's cost (each cell charged its context's prefills).
func TestRerunCostWithinPlan(t *testing.T) {
	s := DefaultSettings()
	for seed := range uint64(4) {
		m := NewMatrixNoise(seed+70, 1, NoiseNoSpec)
		in, first, err := s.firstPass(m, rand.New(rand.NewPCG(seed, 3)), nil, 1, s.Thresholds)
		if err != nil || len(in.Base) != 1 {
			t.Fatal(err)
		}
		plan := compare.PlanRerunsFor(first, func(cell string, n int) time.Duration { return m.CellCost(s.Costs, cell, n, 2) }, s.Budget)
		o, err := s.budgeted(m, rand.New(rand.NewPCG(seed, 3)), nil)
		if err != nil {
			t.Fatal(err)
		}
		if o.rerun > plan.Cost || plan.Cost > s.Budget {
			t.Errorf("seed %d: reruns cost %v, planned %v, budget %v", seed, o.rerun, plan.Cost, s.Budget)
		}
	}
}

// TestNoiseModels: the spec and no-spec models draw decode-rate CVs in their published ranges.
func TestNoiseModels(t *testing.T) {
	type rng struct{ lo, hi float64 }
	want := map[Noise]map[int]rng{
		NoiseSpec:   {1: {0.08, 0.12}, 2: {0.16, 0.24}, 4: {0.06, 0.09}, 8: {0.004, 0.006}, 16: {0.004, 0.006}},
		NoiseNoSpec: {1: {0.005, 0.02}, 2: {0.005, 0.02}, 4: {0.005, 0.02}, 8: {0.001, 0.01}, 16: {0.001, 0.01}},
	}
	for noise, byC := range want {
		m := NewMatrixNoise(1, 1, noise)
		seen := map[int]bool{}
		for _, c := range m.Cells {
			if c.ID.Phase != results.PhaseDecode || !c.Status.Measured() {
				continue
			}
			r, ok := byC[c.ID.Concurrency]
			if !ok {
				continue
			}
			seen[c.ID.Concurrency] = true
			if c.RateCV < r.lo-1e-12 || c.RateCV > r.hi+1e-12 {
				t.Errorf("%s %s: CV %.4f outside %.3f–%.3f", noise, c.ID, c.RateCV, r.lo, r.hi)
			}
		}
		if diff := cmp.Diff(map[int]bool{1: true, 2: true, 4: true, 8: true, 16: true}, seen); diff != "" {
			t.Errorf("%s: concurrency levels seen (-want +got):\n%s", noise, diff)
		}
	}
	// The default model is the first calibration's, unchanged.
	a, b := NewMatrix(5, 1), NewMatrixNoise(5, 1, NoiseDefault)
	if diff := cmp.Diff(a, b); diff != "" {
		t.Errorf("NewMatrix differs from NewMatrixNoise(NoiseDefault):\n%s", diff)
	}
}

// TestRunBudgetSmall runs the budgeted calibration on a few comparisons and checks its report:
// both procedures tallied, the naive one at three times the first pass's windows, the reruns
// within the budget, and the text holding the table.
func TestRunBudgetSmall(t *testing.T) {
	s := DefaultSettings()
	s.AA, s.AB = 8, 8
	s.Noise = NoiseNoSpec
	rep, err := RunBudget(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	b, n := rep.Budgeted, rep.Naive
	if b.AARegression.N != 8 || b.ABRowFlagged.N != 8 || n.AARegression.N != 8 || n.ABRowFlagged.N != 8 {
		t.Errorf("tallies %+v %+v, want 8 A/A and 8 A/B each", b.AARegression, n.ABRowFlagged)
	}
	if b.MaxRerun > s.Budget || b.MeanGPU-b.MeanRerun != rep.FirstPass {
		t.Errorf("budgeted GPU time mean %v max %v (reruns max %v), first pass %v, budget %v", b.MeanGPU, b.MaxGPU, b.MaxRerun, rep.FirstPass, s.Budget)
	}
	if n.MaxGPU-n.MeanGPU > 5*time.Minute || n.MeanGPU <= 2*rep.FirstPass || n.MeanRerun != 0 {
		t.Errorf("naive GPU time mean %v max %v, reruns %v; want about fixed, above twice the first pass %v, no reruns", n.MeanGPU, n.MaxGPU, n.MeanRerun, rep.FirstPass)
	}
	if len(b.ByRow) != 8 || b.ByRow[0].Row != "8K" {
		t.Errorf("rows %+v, want the 8 decode rows from 8K", b.ByRow)
	}
	var out strings.Builder
	if err := rep.Write(&out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"A/A any regression", "naive (3 trials a side)", "GPU time per comparison, mean / worst", "By slowed row", "1019K"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
}

// TestRowDecidable pins which slowed rows count as decidable: by the power of what was
// measured (a cell-metric's MDC at most 2δ, or a row test precise enough), at either look, and
// never by the verdict.
func TestRowDecidable(t *testing.T) {
	th := compare.DefaultThresholds()
	f := func(x float64) *float64 { return &x }
	cell := func(row string, mdc *float64, v results.Verdict) *results.Comparison {
		return &results.Comparison{Cells: []results.CellComparison{{Cell: "decode/" + row + "/1", Phase: results.PhaseDecode, ContextLabel: row,
			BaseStatus: results.StatusValid, Verdict: v,
			Metrics: []results.MetricComparison{{Metric: results.MetricTotalTokPerS, MDC: mdc, Verdict: v}}}}}
	}
	rowTest := func(low, high float64) *results.Comparison {
		return &results.Comparison{Rows: []results.RowComparison{{ContextLabel: "512K", Low: low, High: high}}}
	}
	tests := []struct {
		name string
		o    procOutcome
		want bool
	}{
		{"a cell with MDC 5 % (2δ = 6 %)", procOutcome{first: cell("512K", f(0.05), results.VerdictInconclusive)}, true},
		{"flagged, but MDC 12 %", procOutcome{first: cell("512K", f(0.12), results.VerdictRegression)}, false},
		{"MDC 12 % at the first look, 5 % at the second", procOutcome{first: cell("512K", f(0.12), results.VerdictInconclusive), second: cell("512K", f(0.05), results.VerdictInconclusive)}, true},
		{"another row's cell powered", procOutcome{first: cell("8K", f(0.01), results.VerdictUnchanged)}, false},
		{"no MDC", procOutcome{first: cell("512K", nil, results.VerdictInconclusive)}, false},
		// 95 % CI half-width 0.5δ: SE 0.26δ, (2.74 + 0.84)·0.26 < 2.
		{"a precise row test", procOutcome{first: rowTest(-0.5, 0.5)}, true},
		// Half-width 2δ: SE 1.02δ, too wide.
		{"a wide row test", procOutcome{first: rowTest(-2, 2)}, false},
	}
	for _, tt := range tests {
		if got := tt.o.rowDecidable("512K", th); got != tt.want {
			t.Errorf("%s: decidable %v, want %v", tt.name, got, tt.want)
		}
	}
}
