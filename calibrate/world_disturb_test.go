package calibrate

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/speedmatrix/speedmatrix/compare"
	"github.com/speedmatrix/speedmatrix/results"
)

// TestWorldDisturbanceDraws checks the four disturbance models' draws over many runs: the
// measuring order a permutation of the measured cells, 1–3 stalled decode windows a run 15–30 %
// slower (half of them dips), a throttle in 15 % of runs of 4–8 % from a random position on, a
// drift along the order with SD 3 % and a warm-up in half of the runs.
func TestWorldDisturbanceDraws(t *testing.T) {
	const n = 4000
	m := NewMatrix(1, 1)
	r := rand.New(rand.NewPCG(11, 11))
	var stalls, dips, throttled, warm int
	var slopes []float64
	for range n {
		for _, w := range []WorldModel{WorldStall, WorldThrottle, WorldOrderDrift, WorldLoadNoise} {
			d := m.drawDisturbance(r, w, 2)
			var pos []int
			for _, p := range d.pos {
				pos = append(pos, p)
			}
			slices.Sort(pos)
			for i, p := range pos {
				if p != 2*i {
					t.Fatalf("%s: positions %v, want 0, 2, 4, … (two trials a cell)", w, pos)
				}
			}
			switch w {
			case WorldStall:
				if k := len(d.stalls); k < 1 || k > 3 {
					t.Fatalf("stall: %d stalled windows, want 1–3", k)
				}
				for id, s := range d.stalls {
					if id.Phase != results.PhaseDecode || s.depth < stallLo || s.depth > stallHi {
						t.Fatalf("stall %s depth %.3f, want a decode cell 15–30 %% slower", id, s.depth)
					}
					stalls++
					if s.dip {
						dips++
					}
				}
			case WorldThrottle:
				if d.throttleAt >= 0 {
					throttled++
					if f := -math.Expm1(d.throttle); f < throttleLo || f > throttleHi {
						t.Fatalf("throttle %.3f, want 4–8 %%", f)
					}
				}
			case WorldOrderDrift:
				slopes = append(slopes, d.slope)
				if d.warm < 0 {
					warm++
				}
			case WorldLoadNoise:
				if d.throttleAt >= 0 || d.slope != 0 || len(d.stalls) > 0 {
					t.Fatalf("loadnoise: a disturbance beyond its noise: %+v", d)
				}
			}
		}
	}
	if s := float64(dips) / float64(stalls); math.Abs(s-0.5) > 0.03 {
		t.Errorf("stall: %.3f of stalls are dips, want 0.5", s)
	}
	if s := float64(throttled) / n; math.Abs(s-throttleShare) > 0.02 {
		t.Errorf("throttle: %.3f of runs throttled, want %.2f", s, throttleShare)
	}
	if sd := sdOf(slopes); math.Abs(sd/driftSD-1) > 0.05 {
		t.Errorf("orderdrift: slope SD %.4f, want %.3f", sd, driftSD)
	}
	if s := float64(warm) / n; math.Abs(s-warmupShare) > 0.03 {
		t.Errorf("orderdrift: %.3f of runs warm up, want %.2f", s, warmupShare)
	}
}

// TestWorldLoadCV checks the load-dependent noise: 0.5 % at one 8K request, 4 % at the KV
// cache's edge, growing in between.
func TestWorldLoadCV(t *testing.T) {
	if got := loadCV(8<<10, 1, true); math.Abs(got-0.005) > 1e-9 {
		t.Errorf("8K × 1: CV %.4f, want 0.005", got)
	}
	edge := kvTokens/(16<<10+maxTokens) - 1
	if got := loadCV(16<<10, edge+1, true); math.Abs(got-0.04) > 0.002 {
		t.Errorf("16K × %d (the KV cache's edge): CV %.4f, want 0.04", edge+1, got)
	}
	prev := 0.0
	for _, c := range []int{1, 2, 4, 8, 16, 32, 64, 128} {
		got := loadCV(32<<10, c, true)
		if got < prev {
			t.Errorf("32K × %d: CV %.4f below the lighter load's %.4f", c, got, prev)
		}
		prev = got
	}
}

// disturbedRun draws one run of m under Gaussian-like noise (model w's 1 % per cell) with
// disturbance d, seeded by seed.
func disturbedRun(m *Matrix, w WorldModel, seed uint64, d *disturbance, shape Shape) *results.File {
	return m.worldRunWith(rand.New(rand.NewPCG(seed, 1)), w, fmt.Sprintf("run-%d", seed), 1, shape.Factor, 1, d)
}

// orderOf returns a disturbance of w with m's cells in a random order and nothing else.
func orderOf(m *Matrix, seed uint64) *disturbance {
	d := m.drawDisturbance(rand.New(rand.NewPCG(seed, 2)), WorldLoadNoise, 1)
	d.model = WorldThrottle
	return d
}

// TestWorldDisturbedFiles checks that the files carry the disturbances as specified: a throttle
// slows exactly the cells from its position on, a dip shows in the stalled window's bins (a
// third of them far below the rest) and takes the window's mean down by its depth, and every
// trial's start is its position in the order.
func TestWorldDisturbedFiles(t *testing.T) {
	m := NewMatrix(3, 1)
	d := orderOf(m, 3)
	plain := disturbedRun(m, WorldThrottle, 5, d, "")
	d.throttleAt, d.throttle = 20, math.Log(0.94)
	var id results.CellID
	for c, p := range d.pos {
		if c.Phase == results.PhaseDecode && c.Concurrency == 8 {
			id = c
			d.stalls = map[results.CellID]stall{c: {depth: 0.25, dip: true, at: 0.5}}
			_ = p
			break
		}
	}
	got := disturbedRun(m, WorldThrottle, 5, d, "")
	if err := results.Validate(got); err != nil {
		t.Fatalf("disturbed run invalid: %v", err)
	}
	var after, before []float64
	for i := range got.Decode {
		c, p := &got.Decode[i], &plain.Decode[i]
		if !c.Status.Measured() {
			continue
		}
		if c.ID() == id {
			bins := c.Trials[0].BinOutputTokens
			xs := make([]float64, len(bins))
			for k, b := range bins {
				xs[k] = float64(b)
			}
			med, low := quantileMedian(xs), 0
			for _, x := range xs {
				if x < 0.3*med {
					low++
				}
			}
			if low != m.Windows/3 {
				t.Errorf("stalled %s: %d of %d bins in the dip, want %d", id, low, len(bins), m.Windows/3)
			}
			continue
		}
		l := math.Log(*c.TotalTokPerS / *p.TotalTokPerS)
		if d.pos[c.ID()] >= 20 {
			after = append(after, l)
		} else {
			before = append(before, l)
		}
		if want := d.startOf(c.ID(), 0); !c.Trials[0].Start.Equal(want) || want.IsZero() {
			t.Errorf("%s: start %v, want %v", c.ID(), c.Trials[0].Start, want)
		}
	}
	if step := meanLog(after) - meanLog(before); math.Abs(step-math.Log(0.94)) > 0.012 {
		t.Errorf("throttle: the cells from position 20 on %.4f slower than those before (log), want %.4f", step, math.Log(0.94))
	}
	for i := range got.Prefill {
		c := &got.Prefill[i]
		if c.Trials[0].Start.IsZero() {
			t.Errorf("prefill %s: no start", c.ID())
		}
	}
}

// TestCompareSurvivesDisturbances compares files drawn with each disturbance, ten history runs
// a side: an A/A comparison whose head run is throttled, drifts, or holds a stalled window is
// not a regression (exit 3), and a slowdown of the rows ≥ 32K is found (exit 3) whether the
// head or the history holds throttled runs. Before disturbed.go and lonecell.go these blocked
// (throttle, drift, stall) or passed.
func TestCompareSurvivesDisturbances(t *testing.T) {
	type setup func(m *Matrix, seed uint64, run int, d *disturbance) // run −1: head, 0: base, 1…: history
	throttleHead := func(m *Matrix, seed uint64, run int, d *disturbance) {
		if run < 0 {
			d.throttleAt, d.throttle = 15+int(seed%20), math.Log(0.93)
		}
	}
	driftHead := func(m *Matrix, seed uint64, run int, d *disturbance) {
		if run < 0 {
			d.slope = -0.06
		}
	}
	stallHead := func(dip bool) setup {
		return func(m *Matrix, seed uint64, run int, d *disturbance) {
			if run >= 0 {
				return
			}
			ids := decodeIDs(m)
			id := ids[int(seed)%len(ids)]
			d.stalls = map[results.CellID]stall{id: {depth: 0.25, dip: dip, at: 0.4}}
		}
	}
	throttleHistory := func(m *Matrix, seed uint64, run int, d *disturbance) {
		if run >= 1 && run <= 4 {
			d.throttleAt, d.throttle = 5+3*run, math.Log(0.94)
		}
	}
	cases := []struct {
		name  string
		setup setup
		shape Shape
		// aa: an A/A comparison, which must not exit 3; else the slowdown must exit 3.
		aa bool
	}{
		{"throttled head A/A", throttleHead, "", true},
		{"drifting head A/A", driftHead, "", true},
		{"head window with a dip A/A", stallHead(true), "", true},
		{"head window stalled throughout A/A", stallHead(false), "", true},
		{"throttled head, rows>=32K", throttleHead, ShapeRowsFrom32K, false},
		{"throttled history, rows>=32K", throttleHistory, ShapeRowsFrom32K, false},
	}
	th := compare.DefaultThresholds()
	th.Look = 1
	for _, tc := range cases {
		for seed := uint64(1); seed <= 4; seed++ {
			m := NewMatrix(seed, 1)
			draw := func(run int, shape Shape) *results.File {
				d := orderOf(m, seed*100+uint64(run+1))
				tc.setup(m, seed, run, d)
				return disturbedRun(m, WorldThrottle, seed*1000+uint64(run+1), d, shape)
			}
			in := compare.Input{Base: []*results.File{draw(0, "")}, Head: []*results.File{draw(-1, tc.shape)}}
			for k := 1; k <= historyRuns; k++ {
				in.History = append(in.History, draw(k, ""))
			}
			c, err := compare.Compare(in, th)
			if err != nil {
				t.Fatalf("%s seed %d: %v", tc.name, seed, err)
			}
			exit := results.OutcomeOf(c.Verdict).Exit
			switch {
			case tc.aa && exit == results.ExitRegression:
				t.Errorf("%s seed %d: blocked as a regression (%s); warnings %q", tc.name, seed, c.VerdictReason, c.Warnings)
			case !tc.aa && exit != results.ExitRegression:
				t.Errorf("%s seed %d: exit %d, want 3 (regression)", tc.name, seed, exit)
			}
		}
	}
}

func meanLog(xs []float64) float64 {
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

func quantileMedian(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

// decodeIDs returns m's measured decode cells at 8 requests or more (the quiet ones, where a
// stall stands out most), in the matrix's order.
func decodeIDs(m *Matrix) []results.CellID {
	var out []results.CellID
	for _, tc := range m.Cells {
		if tc.ID.Phase == results.PhaseDecode && tc.Status.Measured() && tc.ID.Concurrency >= 8 {
			out = append(out, tc.ID)
		}
	}
	return out
}

// TestCompareDecodeNetOfPrefill checks the covariate of the decode shift: under run drift (a
// factor per run on every cell, CV 2 %) with ten history runs, a head run 3 % faster than
// usual whose decode cells are all 5 % slower reads, by its decode cells alone, like a usual
// run; its prefill, which the code did not move, tells the run's factor apart. The slowdown
// must not pass (exit 0). Before covariate.go five of these six passed.
func TestCompareDecodeNetOfPrefill(t *testing.T) {
	th := compare.DefaultThresholds()
	th.Look = 1
	for seed := uint64(1); seed <= 6; seed++ {
		r := rand.New(rand.NewPCG(seed, 77))
		m := NewMatrix(r.Uint64(), 1)
		in := compare.Input{Base: []*results.File{m.WorldRun(r, WorldDrift, "base", 1, "")}}
		for k := range historyRuns {
			in.History = append(in.History, m.WorldRun(r, WorldDrift, fmt.Sprintf("hist-%d", k+1), 1, ""))
		}
		in.Head = []*results.File{m.WorldRunAt(r, WorldDrift, "head", 1, ShapeDecode5, 1.03)}
		c, err := compare.Compare(in, th)
		if err != nil {
			t.Fatal(err)
		}
		if exit := results.OutcomeOf(c.Verdict).Exit; exit == results.ExitPass {
			t.Errorf("seed %d: every decode cell 5 %% slower in a 3 %% faster run passed (%s)", seed, c.Verdict)
		}
	}
}

// TestCompareRowMajorOrder checks that an order which lines up with the matrix (row after row,
// as the runner measured before it randomized its order) is not tested for steps: there a
// slowdown of the longest rows, measured last, is a step along the order, and removing it as a
// throttle would pass it.
func TestCompareRowMajorOrder(t *testing.T) {
	th := compare.DefaultThresholds()
	th.Look = 1
	for seed := uint64(1); seed <= 3; seed++ {
		m := NewMatrix(seed, 1)
		rowMajor := func() *disturbance {
			d := orderOf(m, seed)
			i := 0
			for _, tc := range m.Cells { // prefill first, then decode row after row
				if tc.Status.Measured() {
					d.pos[tc.ID] = i
					i++
				}
			}
			return d
		}
		// The rows at 256K and longer, the last measured, 10 % slower.
		late := func(id results.CellID, context int) float64 {
			if id.Phase == results.PhaseDecode && context >= 256<<10 {
				return 0.9
			}
			return 1
		}
		none := func(results.CellID, int) float64 { return 1 }
		draw := func(k int, slow func(results.CellID, int) float64) *results.File {
			return m.worldRunWith(rand.New(rand.NewPCG(seed*1000+uint64(k), 1)), WorldThrottle, fmt.Sprintf("run-%d", k), 1, slow, 1, rowMajor())
		}
		in := compare.Input{Base: []*results.File{draw(0, none)}, Head: []*results.File{draw(99, late)}}
		for k := 1; k <= historyRuns; k++ {
			in.History = append(in.History, draw(k, none))
		}
		c, err := compare.Compare(in, th)
		if err != nil {
			t.Fatal(err)
		}
		if exit := results.OutcomeOf(c.Verdict).Exit; exit != results.ExitRegression {
			t.Errorf("seed %d: rows ≥ 256K 10 %% slower in a row-major run: exit %d, want 3; warnings %q", seed, exit, c.Warnings)
		}
		for _, w := range c.Warnings {
			if strings.Contains(w, "measuring order") {
				t.Errorf("seed %d: the slowdown of the last rows taken for a step along the order: %s", seed, w)
			}
		}
	}
}
