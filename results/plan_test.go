package results_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/speedmatrix/speedmatrix/results"
)

// TestPlannedCells checks that the plan recorded in a run's settings reads back with the labels
// the runner gives its cells, and what a partial run did not reach.
func TestPlannedCells(t *testing.T) {
	id := func(s string) results.CellID {
		c, err := results.ParseCellID(s)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	ids := func(ss ...string) []results.CellID {
		var out []results.CellID
		for _, s := range ss {
			out = append(out, id(s))
		}
		return out
	}
	tests := []struct {
		name     string
		settings *results.Settings
		server   *results.Server
		want     []results.CellID
	}{
		{"matrix", &results.Settings{Contexts: []string{"32K", "8K"}, Concurrency: []int{1, 8}, PrefillContexts: []string{"8K", "32K"}}, nil,
			ids("prefill/8K", "prefill/32K", "decode/8K/1", "decode/8K/8", "decode/32K/1", "decode/32K/8")},
		{"trimmed to max_model_len", &results.Settings{Contexts: []string{"1024K"}, Concurrency: []int{1}, PrefillContexts: []string{"1019K", "1024K"}, MaxTokens: 4096},
			&results.Server{MaxModelLen: 1048576}, ids("prefill/1019K", "prefill/1024K", "decode/1019K/1")},
		{"too long to trim", &results.Settings{Contexts: []string{"1024K"}, Concurrency: []int{1}, MaxTokens: 4096},
			&results.Server{MaxModelLen: 131072}, ids("decode/1024K/1")},
		{"cells", &results.Settings{Cells: []string{"decode/1024K/2", "prefill/16K"}, MaxTokens: 4096},
			&results.Server{MaxModelLen: 1048576}, ids("prefill/16K", "decode/1019K/2")},
		{"no settings", nil, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &results.File{Run: results.Run{Settings: tt.settings}, Server: tt.server}
			if d := cmp.Diff(tt.want, f.PlannedCells()); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
	f := readRealRun(t)
	f.Decode = f.Decode[:1]
	if d := cmp.Diff(ids("decode/8K/8", "decode/32K/1", "decode/32K/8"), f.NotMeasured()); d != "" {
		t.Errorf("NotMeasured (-want +got):\n%s", d)
	}
}
