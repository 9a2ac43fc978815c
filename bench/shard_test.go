package bench

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/speedmatrix/speedmatrix/results"
)

// TestPlanShardsWholeRowsBalanced checks, for the full and quick matrices and a custom one, that
// every planned cell is in exactly one shard, that every cell of a context row is in the same
// shard, that shards measure their rows in ascending context, and that the longest shard is
// within the balance the greedy hand-out guarantees: at most the mean plus the longest row. For
// the full matrix in 4 shards it must be the best split of whole rows there is: the 1024K row
// (two 1M-token prefills) with the 8K row, 1.19× the mean — any shard of three rows would take
// longer, so with two rows each the 1024K row's shard cannot be shorter.
func TestPlanShardsWholeRowsBalanced(t *testing.T) {
	custom := DefaultConfig()
	custom.Matrix = Matrix{Contexts: []int{4 * k, 8 * k, 64 * k}, Concurrency: []int{1, 2}, PrefillContexts: []int{256 * k}}
	quick := DefaultConfig()
	quick.Matrix = QuickMatrix()
	cells := DefaultConfig()
	cells.Cells = []results.CellID{{Phase: results.PhaseDecode, ContextLabel: "8K", Concurrency: 1}, {Phase: results.PhasePrefill, ContextLabel: "1024K"},
		{Phase: results.PhaseDecode, ContextLabel: "32K", Concurrency: 8}, {Phase: results.PhaseDecode, ContextLabel: "8K", Concurrency: 32}}
	for _, tt := range []struct {
		name     string
		cfg      Config
		shards   []int
		rows     int
		maxRatio float64 // max shard ÷ mean shard, where the test pins it
	}{
		{"full", DefaultConfig(), []int{1, 2, 3, 4, 8}, 8, 0},
		{"quick", quick, []int{1, 2}, 2, 0},
		{"custom", custom, []int{1, 2, 3, 4}, 4, 0},
		{"cells", cells, []int{1, 2, 3}, 3, 0},
	} {
		for _, n := range tt.shards {
			p, err := PlanShards(tt.cfg, n)
			if err != nil {
				t.Fatalf("%s in %d: %v", tt.name, n, err)
			}
			if len(p.Rows) != tt.rows || len(p.Shards) != n {
				t.Fatalf("%s in %d: %d rows, %d shards; want %d rows", tt.name, n, len(p.Rows), len(p.Shards), tt.rows)
			}
			full, _ := buildPlan(planInput{Matrix: tt.cfg.Matrix, PrefillFromDecode: tt.cfg.PrefillFromDecode, Cells: tt.cfg.Cells, MaxTokens: tt.cfg.MaxTokens})
			want := map[results.CellID]bool{}
			for _, c := range plannedCells(full, 1) {
				want[c.ID] = true
			}
			shardOf := map[results.CellID]int{}
			rowShard := map[string]int{}
			var total, longest, largestRow time.Duration
			for _, r := range p.Rows {
				largestRow = max(largestRow, r.Expected)
			}
			for _, s := range p.Shards {
				if len(s.Cells) == 0 {
					t.Errorf("%s in %d: shard %s is empty", tt.name, n, s)
				}
				if s.Plan != p.ID || s.Count != n {
					t.Errorf("%s in %d: shard %s carries plan %q of %d, want %q", tt.name, n, s, s.Plan, s.Count, p.ID)
				}
				last := 0
				for _, c := range s.Cells {
					if j, dup := shardOf[c]; dup {
						t.Errorf("%s in %d: %s in shards %d and %d", tt.name, n, c, j, s.Index)
					}
					shardOf[c] = s.Index
					ctx, _ := results.ParseContext(c.ContextLabel)
					if ctx < last {
						t.Errorf("%s in %d: shard %s measures %s after a longer context", tt.name, n, s, c)
					}
					last = ctx
				}
				for _, r := range s.Rows {
					label := results.ContextLabel(r)
					if j, ok := rowShard[label]; ok && j != s.Index {
						t.Errorf("%s in %d: row %s in shards %d and %d", tt.name, n, label, j, s.Index)
					}
					rowShard[label] = s.Index
				}
				total += s.Expected
				longest = max(longest, s.Expected)
			}
			if len(shardOf) != len(want) {
				t.Errorf("%s in %d: shards hold %d cells, the plan %d", tt.name, n, len(shardOf), len(want))
			}
			for c := range want {
				if _, ok := shardOf[c]; !ok {
					t.Errorf("%s in %d: cell %s in no shard", tt.name, n, c)
				}
				ctx, _ := results.ParseContext(c.ContextLabel)
				if s := rowShard[results.ContextLabel(ctx)]; s != shardOf[c] {
					t.Errorf("%s in %d: cell %s in shard %d, its row in shard %d", tt.name, n, c, shardOf[c], s)
				}
			}
			mean := total / time.Duration(n)
			if longest > mean+largestRow {
				t.Errorf("%s in %d: longest shard %v beyond the mean %v plus the longest row %v", tt.name, n, longest, mean, largestRow)
			}
			if tt.name == "full" && n == 4 {
				if best := p.Rows[0].Expected + p.Rows[7].Expected; longest != best {
					t.Errorf("full in 4: longest shard %v, want the best split's %v (8K row + 1024K row; mean %v)", longest, best, mean)
				}
			}
		}
	}
}

// TestPlanShardsFullMatrixPinned pins the full matrix's split in 4 shards (30 s windows, one
// trial): rows handed out longest first to the shard expected to finish first.
func TestPlanShardsFullMatrixPinned(t *testing.T) {
	p, err := PlanShards(DefaultConfig(), 4)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range p.Shards {
		var labels []string
		for _, r := range s.Rows {
			labels = append(labels, results.ContextLabel(r))
		}
		got = append(got, s.String()+" "+strings.Join(labels, ",")+" "+s.Expected.Round(time.Minute).String())
	}
	want := []string{"1/4 8K,1024K 12m0s", "2/4 16K,512K 10m0s", "3/4 32K,256K 9m0s", "4/4 64K,128K 9m0s"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("full matrix in 4 shards (-want +got):\n%s", diff)
	}
}

// TestPlanShardsDeterministic checks that a plan is a function of its settings: the same
// settings give the same plan and identity, other shards, trials or windows another identity.
func TestPlanShardsDeterministic(t *testing.T) {
	a, _ := PlanShards(DefaultConfig(), 4)
	b, _ := PlanShards(DefaultConfig(), 4)
	if diff := cmp.Diff(a, b); diff != "" {
		t.Fatalf("two plans of the same settings differ:\n%s", diff)
	}
	three, _ := PlanShards(DefaultConfig(), 3)
	trials := DefaultConfig()
	trials.Trials = 3
	tr, _ := PlanShards(trials, 4)
	window := DefaultConfig()
	window.Duration = time.Minute
	w, _ := PlanShards(window, 4)
	for name, id := range map[string]string{"3 shards": three.ID, "3 trials": tr.ID, "60 s windows": w.ID} {
		if id == a.ID {
			t.Errorf("%s: plan id %s, the same as 4 shards of the defaults", name, id)
		}
	}
}

func TestPlanShardsRefuses(t *testing.T) {
	quick := DefaultConfig()
	quick.Matrix = QuickMatrix()
	for _, tt := range []struct {
		name string
		cfg  Config
		n    int
		want string
	}{
		{"more shards than rows", DefaultConfig(), 9, "at most 8 shards"},
		{"quick in 3", quick, 3, "at most 2 shards"},
		{"none", DefaultConfig(), 0, "at least 1"},
	} {
		_, err := PlanShards(tt.cfg, tt.n)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want one saying %q", tt.name, err, tt.want)
		}
	}
}

// TestPrefillCostLikeReference checks the prefill estimate against the reference report: 8K in
// 671 ms, 128K in 10.4 s, 1019K in 104 s (within 15 %).
func TestPrefillCostLikeReference(t *testing.T) {
	for _, c := range []struct {
		tokens int
		want   time.Duration
	}{{8 * k, 671 * time.Millisecond}, {128 * k, 10392 * time.Millisecond}, {1019 * k, 104385 * time.Millisecond}} {
		got := PrefillCost(c.tokens)
		if r := float64(got) / float64(c.want); r < 0.85 || r > 1.15 {
			t.Errorf("PrefillCost(%s) = %v, the reference measured %v", results.ContextLabel(c.tokens), got, c.want)
		}
	}
}

func TestParseShard(t *testing.T) {
	for _, s := range []string{"1/1", "2/4", " 4/4 "} {
		if _, _, err := ParseShard(s); err != nil {
			t.Errorf("ParseShard(%q): %v", s, err)
		}
	}
	for _, s := range []string{"", "0/4", "5/4", "1/0", "a/4", "2", "2/4/1", "-1/4"} {
		if _, _, err := ParseShard(s); err == nil {
			t.Errorf("ParseShard(%q) accepted it", s)
		}
	}
}

// TestRunShardMeasuresItsRows checks that a run with a Shard measures only its rows' cells
// (with the server trimming nothing), records the shard, and keeps the whole plan's settings.
func TestRunShardMeasuresItsRows(t *testing.T) {
	h := newHarness(t, steady())
	cfg := testConfig([]int{512, 1024, 2048}, []int{1}, 300*time.Millisecond, 101)
	plan, err := PlanShards(cfg, 2)
	if err != nil {
		t.Fatal(err)
	}
	s := plan.Shards[1].Shard
	cfg.Shard = &s
	f, err := h.runner.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := results.Validate(f); err != nil {
		t.Fatal(err)
	}
	var got []results.CellID
	for i := range f.Prefill {
		got = append(got, f.Prefill[i].ID())
	}
	for i := range f.Decode {
		got = append(got, f.Decode[i].ID())
	}
	var want []results.CellID
	for _, c := range plan.Shards[1].Cells {
		if c.Phase == results.PhasePrefill {
			want = append(want, c)
		}
	}
	for _, c := range plan.Shards[1].Cells {
		if c.Phase == results.PhaseDecode {
			want = append(want, c)
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("shard 2/2 measured (-want +got):\n%s", diff)
	}
	var labels []string
	for _, r := range s.Rows {
		labels = append(labels, results.ContextLabel(r))
	}
	if diff := cmp.Diff(&results.Shard{Index: 2, Count: 2, Plan: plan.ID, Contexts: labels}, f.Run.Shard); diff != "" {
		t.Errorf("run.shard (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"512", "1K", "2K"}, f.Run.Settings.Contexts); diff != "" {
		t.Errorf("settings.contexts must be the whole plan's (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"512", "1K", "2K"}, f.Run.Settings.PrefillContexts); diff != "" {
		t.Errorf("settings.prefill_contexts must be the whole plan's (-want +got):\n%s", diff)
	}
}
