package bench

import (
	"context"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/speedmatrix/speedmatrix/results"
)

// gapStreamer is a Streamer whose streams lose the tokens that arrive inside a gap the test
// opens (gapProgress): a stalled engine, as the window's bins see it.
type gapStreamer struct {
	Streamer
	mu   sync.Mutex
	gaps [][2]time.Time
}

func (g *gapStreamer) Stream(ctx context.Context, req StreamRequest, onEvent func(StreamEvent)) (StreamResult, error) {
	res, err := g.Streamer.Stream(ctx, req, onEvent)
	g.mu.Lock()
	defer g.mu.Unlock()
	kept := res.Events[:0]
	for _, ev := range res.Events {
		lost := false
		for _, gp := range g.gaps {
			if !ev.At.Before(gp[0]) && ev.At.Before(gp[1]) {
				lost = true
			}
		}
		if lost {
			res.OutputTokens -= ev.Tokens
			continue
		}
		kept = append(kept, ev)
	}
	res.Events = kept
	return res, err
}

// gapProgress opens a gap in the streams of gapStreamer when a window of the cell opens: from
// from to to (fractions of the window), in the first `windows` windows of the cell (0: all).
type gapProgress struct {
	noProgress
	g        *gapStreamer
	cell     results.CellID
	window   time.Duration
	from, to float64
	windows  int
	seen     int
}

func (p *gapProgress) Phase(id results.CellID, phase string) {
	if phase != PhaseWindow || id != p.cell {
		return
	}
	p.seen++
	if p.windows > 0 && p.seen > p.windows {
		return
	}
	now := time.Now()
	p.g.mu.Lock()
	p.g.gaps = append(p.g.gaps, [2]time.Time{now.Add(time.Duration(p.from * float64(p.window))), now.Add(time.Duration(p.to * float64(p.window)))})
	p.g.mu.Unlock()
}

// TestDisturbedWindow checks what a run does with a window whose bins show a stall or a step:
// it measures the cell again while re-measures are left, else decides from the undisturbed bins
// (a stall), else keeps the window and says so (a step); either way the disturbed window is kept
// in the cell's Disturbed with why, and its number is not the cell's.
func TestDisturbedWindow(t *testing.T) {
	tests := []struct {
		name       string
		remeasures int
		from, to   float64
		windows    int // disturbed windows (0: every one)
		want       []string
		trialShort bool // the cell's trial is a cut of the window
	}{
		{"stall, measured again", 4, 0.35, 0.65, 1, []string{results.UsedRemeasure}, false},
		{"stall, no re-measure: undisturbed bins", 0, 0.45, 0.7, 1, []string{results.UsedUndisturbedBins}, true},
		{"stall every time: two re-measures, then undisturbed bins", 4, 0.45, 0.7, 0, []string{results.UsedRemeasure, results.UsedRemeasure, results.UsedUndisturbedBins}, true},
		{"stall in the middle, no re-measure: too few undisturbed bins on either side", 0, 0.35, 0.65, 1, []string{results.UsedDisturbed}, false},
		{"step, no re-measure: kept as measured", 0, 0.6, 2, 1, []string{results.UsedDisturbed}, false},
		{"undisturbed", 4, 0, 0, 1, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newHarnessSim(t, steady())
				g := &gapStreamer{Streamer: h.runner.Stream}
				h.runner.Stream = g
				cfg := testConfig([]int{1024}, []int{2}, time.Second, 100000)
				cfg.Timeouts.Bin = 50 * time.Millisecond
				cfg.Remeasures = tt.remeasures
				id := results.CellID{Phase: results.PhaseDecode, ContextLabel: "1K", Concurrency: 2}
				if tt.to > 0 {
					h.runner.Progress = &gapProgress{g: g, cell: id, window: cfg.Duration, from: tt.from, to: tt.to, windows: tt.windows}
				}
				f, err := h.runner.Run(context.Background(), cfg)
				if err != nil {
					t.Fatal(err)
				}
				if err := results.Validate(f); err != nil {
					t.Fatalf("invalid results: %v", err)
				}
				cell := decodeCell(t, f, "1K", 2)
				var used []string
				for _, d := range cell.Disturbed {
					used = append(used, d.Used)
					if d.Why == "" {
						t.Errorf("disturbed window without why: %+v", d.Disturbance)
					}
				}
				if !slices.Equal(used, tt.want) {
					for _, d := range cell.Disturbed {
						t.Logf("%s: %s", d.Used, d.Why)
					}
					t.Fatalf("disturbed windows used %v, want %v", used, tt.want)
				}
				if len(cell.Trials) != 1 {
					t.Fatalf("%d trials, want 1", len(cell.Trials))
				}
				tr := cell.Trials[0]
				if short := tr.WindowSeconds < 0.9; short != tt.trialShort {
					t.Errorf("trial of %.3g s, want a cut of the window: %v", tr.WindowSeconds, tt.trialShort)
				}
				// The fake server's streams make ≈ 200 tok/s each: 400 tok/s at C = 2.
				got := *cell.TotalTokPerS
				if tt.want == nil || tt.want[len(tt.want)-1] != results.UsedDisturbed {
					if !within(got, 400, 0.06, 0) {
						t.Errorf("total tok/s %.0f, want ≈ 400 (the undisturbed level)", got)
					}
				} else if got > 0.8*400 {
					t.Errorf("total tok/s %.0f: the kept disturbed window should show its disturbance", got)
				}
				remeasured := 0
				for _, u := range tt.want {
					if u == results.UsedRemeasure {
						remeasured++
					}
				}
				if b := f.Run.Budget; b.Remeasures != remeasured || (remeasured > 0) != (b.RemeasureSeconds > 0) {
					t.Errorf("budget: %d re-measures in %.2f s, want %d", b.Remeasures, b.RemeasureSeconds, remeasured)
				}
				if f.Run.Settings.Remeasures != tt.remeasures {
					t.Errorf("settings.remeasures %d, want %d", f.Run.Settings.Remeasures, tt.remeasures)
				}
			})
		})
	}
}

// TestShuffledOrder checks the measuring order: contexts and each context's decode cells in an
// order drawn from the seed (recorded), a context's scout before its decode cells, every cell's
// order and start in the results, and the file itself in matrix order.
func TestShuffledOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarnessSim(t, steady())
		cfg := testConfig([]int{1024, 2048, 4096}, []int{1, 2, 4}, 200*time.Millisecond, 100000)
		cfg.Order = results.OrderShuffled
		cfg.OrderSeed = 42
		f, err := h.runner.Run(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		if err := results.Validate(f); err != nil {
			t.Fatalf("invalid results: %v", err)
		}
		if s := f.Run.Settings; s.Order != results.OrderShuffled || s.OrderSeed != 42 {
			t.Errorf("settings order %q seed %d, want shuffled, 42", s.Order, s.OrderSeed)
		}
		type placed struct {
			id      results.CellID
			order   int
			started time.Time
		}
		var all []placed
		scout := map[string]int{}
		for _, c := range f.Prefill {
			all = append(all, placed{c.ID(), c.Order, c.Started})
			scout[c.ContextLabel] = c.Order
		}
		var fileOrder []results.CellID
		for _, c := range f.Decode {
			all = append(all, placed{c.ID(), c.Order, c.Started})
			fileOrder = append(fileOrder, c.ID())
			if c.Order < scout[c.ContextLabel] {
				t.Errorf("%s measured (order %d) before its context's scout (%d)", c.ID(), c.Order, scout[c.ContextLabel])
			}
		}
		if !slices.IsSortedFunc(fileOrder, func(a, b results.CellID) int {
			if a.ContextLabel != b.ContextLabel {
				return slices.Index([]string{"1K", "2K", "4K"}, a.ContextLabel) - slices.Index([]string{"1K", "2K", "4K"}, b.ContextLabel)
			}
			return a.Concurrency - b.Concurrency
		}) {
			t.Errorf("decode cells not in matrix order in the file: %v", fileOrder)
		}
		slices.SortFunc(all, func(a, b placed) int { return a.order - b.order })
		var measured []results.CellID
		for i, p := range all {
			if p.order != i+1 {
				t.Fatalf("orders %v: want 1 … %d, each once", all, len(all))
			}
			if i > 0 && p.started.Before(all[i-1].started) {
				t.Errorf("%s (order %d) started before %s", p.id, p.order, all[i-1].id)
			}
			measured = append(measured, p.id)
		}
		var matrix []results.CellID
		for _, c := range []string{"1K", "2K", "4K"} {
			matrix = append(matrix, results.CellID{Phase: results.PhasePrefill, ContextLabel: c})
			for _, n := range []int{1, 2, 4} {
				matrix = append(matrix, results.CellID{Phase: results.PhaseDecode, ContextLabel: c, Concurrency: n})
			}
		}
		if slices.Equal(measured, matrix) {
			t.Errorf("measured in matrix order with seed 42: %v", measured)
		}
	})
}

// TestShufflePlanSeeded checks that the order is a function of the seed, and that different
// seeds give different orders of the full matrix.
func TestShufflePlanSeeded(t *testing.T) {
	order := func(seed uint64) []results.CellID {
		plan, _ := buildPlan(planInput{Matrix: FullMatrix(), PrefillFromDecode: true, MaxTokens: 4096})
		shufflePlan(plan, seed)
		var out []results.CellID
		for _, c := range plannedCells(plan, 1) {
			out = append(out, c.ID)
		}
		return out
	}
	if a, b := order(7), order(7); !slices.Equal(a, b) {
		t.Errorf("seed 7 gave two orders")
	}
	if a, b := order(7), order(8); slices.Equal(a, b) {
		t.Errorf("seeds 7 and 8 gave one order")
	}
	cfg := Config{RunID: "sm-1"}
	other := Config{RunID: "sm-2"}
	if orderSeed(&cfg) == orderSeed(&other) || orderSeed(&cfg) == 0 {
		t.Errorf("run IDs sm-1 and sm-2 drew seeds %d and %d", orderSeed(&cfg), orderSeed(&other))
	}
	// The shards of one plan merge into one run: they share the plan's seed.
	cfg.Shard, other.Shard = &Shard{Index: 1, Count: 2, Plan: "p1"}, &Shard{Index: 2, Count: 2, Plan: "p1"}
	if orderSeed(&cfg) != orderSeed(&other) {
		t.Errorf("two shards of one plan drew seeds %d and %d", orderSeed(&cfg), orderSeed(&other))
	}
}
