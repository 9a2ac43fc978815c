package report

import (
	"testing"

	"github.com/speedmatrix/speedmatrix/results"
)

// TestRerunPriceWords checks the price of a /bench rerun as the bot runs it: the head alone
// with the configured trials, or paired on both sides with the run's blocks; the build and
// the model load from the job's GPU time where it recorded them, else said to be unpriced;
// the simulator's figures in the profile's time.
func TestRerunPriceWords(t *testing.T) {
	// One decode trial of 30 s and nothing else: every rerun trial costs 30 s as measured.
	file := func(scale float64, g *results.GPUTime, pairing *results.Pairing) *results.File {
		f := &results.File{Run: results.Run{SecondsPerMeasurement: 30, GPUTime: g, Pairing: pairing,
			Budget:   &results.Budget{WindowSeconds: 30},
			Settings: &results.Settings{Trials: 2}}}
		if scale != 1 {
			f.Run.SecondsPerMeasurement /= scale
			f.Run.Budget.WindowSeconds /= scale
			f.Run.Settings.Simulator = &results.SimulatorSettings{Profile: "p", Speedup: scale}
		}
		f.Decode = []results.DecodeCell{{Context: 8192, ContextLabel: "8K", Concurrency: 1, Status: results.StatusValid}}
		return f
	}
	cells := []string{"decode/8K/1", "decode/8K/2", "decode/32K/1"}
	for _, tc := range []struct {
		name        string
		f           *results.File
		paired      bool
		words, note string
	}{
		{"a GPU job", file(1, &results.GPUTime{BuildSeconds: 900, LoadSeconds: 300, BudgetSeconds: 3600}, nil), false,
			"About 23 min of GPU time: the engine build 15 min (none if the runner kept this head's), the model load 5 min, the measurement 3 min (3 cells × 2 trials).",
			"`/bench rerun` measures them on the head alone, 2 trials each as this run did, pooled with it for the last look; calibrated, it decides 5 in 6 such cells, 1 in 5 if runs drift. With the job's budget (60 min) it may rerun them further, up to the budget.\n"},
		{"a cached build", file(1, &results.GPUTime{LoadSeconds: 300}, nil), false,
			"About 8 min of GPU time: no engine build (this run reused one; an empty cache adds one), the model load 5 min, the measurement 3 min (3 cells × 2 trials).",
			"`/bench rerun` measures them on the head alone, 2 trials each as this run did, pooled with it for the last look; calibrated, it decides 5 in 6 such cells, 1 in 5 if runs drift.\n"},
		{"paired", file(1, &results.GPUTime{BuildSeconds: 1800, LoadSeconds: 600}, &results.Pairing{Blocks: 4}), true,
			"About 52 min of GPU time: the engine build 30 min (none if the runner kept this head's), the model load 10 min, the measurement 12 min (3 cells × 4 trials × 2 sides).",
			"`/bench rerun` measures the cells again paired, on base and head (4 trials each, as this run did), a first look of its own: it may decide them, not will.\n"},
		{"the simulator at ×20", file(20, &results.GPUTime{MeasureSeconds: 2}, nil), false,
			"About 3 min of GPU time for the measurement (3 cells × 2 trials).",
			"`/bench rerun` measures them on the head alone, 2 trials each as this run did, pooled with it for the last look; calibrated, it decides 5 in 6 such cells, 1 in 5 if runs drift. The simulator builds and loads nothing, so the engine build and the model load a GPU job adds are not priced.\n"},
		{"no job", file(1, nil, nil), false,
			"About 3 min of GPU time for the measurement (3 cells × 2 trials).",
			"`/bench rerun` measures them on the head alone, 2 trials each as this run did, pooled with it for the last look; calibrated, it decides 5 in 6 such cells, 1 in 5 if runs drift. This run recorded no engine build or model load, so they are not priced.\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &results.Comparison{}
			if tc.paired {
				c.Settings.Pairing = &results.Pairing{Blocks: 4}
			}
			m := newModel(c, CommentContext{Head: tc.f})
			p := m.priceRerun(cells)
			if got := p.words(); got != tc.words {
				t.Errorf("words:\n got %q\nwant %q", got, tc.words)
			}
			if got := p.note(); got != tc.note {
				t.Errorf("note:\n got %q\nwant %q", got, tc.note)
			}
		})
	}
}
