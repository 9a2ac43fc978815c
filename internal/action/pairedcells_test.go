package action

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/speedmatrix/speedmatrix/config"
	"github.com/speedmatrix/speedmatrix/results"
)

// fullMatrix is the full matrix's cells as the plan lists them: per context, ascending, its
// prefill cell and its decode cells at 1 … 128 requests.
func fullMatrix() []string {
	var out []string
	for _, ctx := range []string{"8K", "16K", "32K", "64K", "128K", "256K", "512K", "1024K"} {
		out = append(out, "prefill/"+ctx)
		for c := 1; c <= 128; c *= 2 {
			out = append(out, fmt.Sprintf("decode/%s/%d", ctx, c))
		}
	}
	return out
}

// fakePrice prices a cell list as the plan does, roughly: each decode cell 32 s, each context
// touched its scout and warm-up, 2 × 0.6 s × its size in 8K units.
func fakePrice(cfg config.Config) ([]string, time.Duration, error) {
	cells := []string(cfg.Cells)
	if len(cells) == 0 {
		cells = fullMatrix()
	}
	var d time.Duration
	touched := map[string]bool{}
	for _, s := range cells {
		id, err := results.ParseCellID(s)
		if err != nil {
			return nil, 0, err
		}
		if !touched[id.ContextLabel] {
			touched[id.ContextLabel] = true
			n, _ := results.ParseContext(id.ContextLabel)
			d += time.Duration(2 * 0.6 * float64(n) / 8192 * float64(time.Second))
		}
		if id.Phase == results.PhaseDecode {
			d += 32 * time.Second
		}
	}
	return cells, d, nil
}

// TestPairedCellOrder checks the order a budgeted paired run adds cells in: every round of the
// Latin square holds one decode cell of each context and of each concurrency, the first the
// anti-diagonal (8K at 128 requests … 1024K at 1), each row's prefill with its first decode
// cell, and every cell exactly once.
func TestPairedCellOrder(t *testing.T) {
	units := PairedCellOrder(fullMatrix())
	if got, want := strings.Join(units[0], ","), "prefill/8K,decode/8K/128"; got != want {
		t.Errorf("first unit %s, want %s", got, want)
	}
	if got, want := strings.Join(units[7], ","), "prefill/1024K,decode/1024K/1"; got != want {
		t.Errorf("eighth unit %s, want %s", got, want)
	}
	var all []string
	for _, u := range units {
		all = append(all, u...)
	}
	if got, want := sortedCopy(all), sortedCopy(fullMatrix()); !slices.Equal(got, want) {
		t.Fatalf("the order holds %d cells, want each of the matrix's %d once", len(got), len(want))
	}
	for round := range 8 {
		var cells []string
		for _, u := range units[round*8 : round*8+8] {
			cells = append(cells, u[len(u)-1])
		}
		rows, cols := rowsAndColumns(cells)
		if len(rows) != 8 || len(cols) != 8 {
			t.Errorf("round %d %v: %d contexts and %d concurrencies, want 8 of each", round, cells, len(rows), len(cols))
		}
	}
	// A prefill-only context comes first; a row without the round's column waits for a round
	// with one of its own.
	units = PairedCellOrder([]string{"prefill/4K", "prefill/8K", "decode/8K/1", "decode/8K/8", "prefill/16K", "decode/16K/8"})
	want := [][]string{{"prefill/4K"}, {"prefill/8K", "decode/8K/8"}, {"decode/8K/1"}, {"prefill/16K", "decode/16K/8"}}
	if fmt.Sprint(units) != fmt.Sprint(want) {
		t.Errorf("order %v, want %v", units, want)
	}
}

// TestChoosePairedCells checks the cells a paired run affords within a budget: the whole matrix
// when it fits; else the units in PairedCellOrder's order that keep the run, builds and loads
// included, within the budget, at paired.blocks a side, fewer (not below 2) when not even the
// first fits; refused with the cheapest run's cost below that. The choice says which contexts
// and concurrencies it left out.
func TestChoosePairedCells(t *testing.T) {
	serve := &config.Serve{Command: []string{"vllm", "serve"}}
	for _, tc := range []struct {
		name      string
		budget    time.Duration
		serve     *config.Serve
		build     string
		blocks    int
		wantCells int // 0: refused
		wantBlock int
		whole     bool
		left      string // the choice's Line says this
		wantErr   string
	}{
		{name: "simulators, a large budget: the whole matrix", budget: 10 * time.Hour, blocks: 4, wantCells: 72, wantBlock: 4, whole: true,
			left: "the whole matrix (72 cells) fits"},
		{name: "the example's 75 min: round 0 without the two longest contexts", budget: 75 * time.Minute, serve: serve, build: "auto", blocks: 4, wantCells: 13, wantBlock: 4,
			left: "no cell of contexts 512K, 1024K or concurrencies 2 (not looked at"},
		{name: "no builds or loads to reserve: more rounds", budget: 75 * time.Minute, blocks: 4, wantCells: 16, wantBlock: 4},
		{name: "a full build leaves 2 blocks a side", budget: 75 * time.Minute, serve: serve, build: "full", blocks: 4, wantBlock: 2, wantCells: 2},
		{name: "nothing fits", budget: 20 * time.Minute, serve: serve, build: "full", blocks: 4,
			wantErr: "a paired run needs at least 2 blocks a side, about 1h14m0s of GPU time for its first cells prefill/8K,decode/8K/128 (1h12m0s of builds and model loads"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := config.Default()
			cfg.Budget = config.Duration(tc.budget)
			cfg.Paired.Blocks = tc.blocks
			cfg.Engine.Serve = tc.serve
			cfg.Engine.Build.Mode = tc.build
			ch, err := ChoosePairedCells(cfg, fakePrice)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(ch.Cells) != tc.wantCells || ch.Blocks != tc.wantBlock || ch.Whole != tc.whole || ch.Of != 72 {
				t.Errorf("%d cells of %d, %d blocks, whole %v; want %d cells, %d blocks, whole %v", len(ch.Cells), ch.Of, ch.Blocks, ch.Whole, tc.wantCells, tc.wantBlock, tc.whole)
			}
			if ch.Estimate > tc.budget || ch.Estimate != ch.Overhead+2*time.Duration(ch.Blocks)*ch.Block {
				t.Errorf("estimate %v (overhead %v, block %v × 2 × %d): want the sum, within the budget %v", ch.Estimate, ch.Overhead, ch.Block, ch.Blocks, tc.budget)
			}
			if _, d, _ := fakePrice(config.Config{Run: config.Run{Cells: config.List(ch.Cells)}}); d != ch.Block {
				t.Errorf("block %v, the cells' price %v", ch.Block, d)
			}
			if !strings.Contains(ch.Line(), tc.left) {
				t.Errorf("line %q, want it to say %q", ch.Line(), tc.left)
			}
		})
	}
}
