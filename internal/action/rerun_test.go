package action

import (
	"testing"

	"github.com/speedmatrix/speedmatrix/config"
	"github.com/speedmatrix/speedmatrix/ghbot"
	"github.com/speedmatrix/speedmatrix/results"
	"github.com/speedmatrix/speedmatrix/store"
)

// TestRerunSeries: a rerun's file names its cells in its settings, which store.ConfigID counts;
// the store is asked for it as the configured matrix's series (the configured cells, or none),
// so that the rerun finds the baseline and the first pass of the whole matrix. Any other run is
// looked up as it is.
func TestRerunSeries(t *testing.T) {
	file := func(cells ...string) *results.File {
		return &results.File{Hardware: results.Hardware{GPU: "H200", GPUCount: 1}, Run: results.Run{ServedModel: "m",
			Settings: &results.Settings{Contexts: []string{"8K", "32K"}, Concurrency: []int{1, 8}, DurationSeconds: 30, Cells: cells}}}
	}
	for _, tc := range []struct {
		name       string
		configured []string
		p          plan
		want       *results.File
	}{
		{"whole matrix configured", nil, plan{Kind: ghbot.RunCommand, Cells: []string{"decode/8K/8"}}, file()},
		{"cells configured", []string{"decode/8K/1", "prefill/8K"}, plan{Kind: ghbot.RunCommand, Cells: []string{"decode/8K/1"}}, file("decode/8K/1", "prefill/8K")},
		{"not a rerun: paired", nil, plan{Kind: ghbot.RunCommand, Cells: []string{"decode/8K/8"}, Paired: "asked"}, file("decode/8K/8")},
		{"not a rerun: a pull request", nil, plan{Kind: ghbot.RunPullRequest, Cells: []string{"decode/8K/8"}}, file("decode/8K/8")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j := &job{cfg: config.Config{Run: config.Run{Cells: tc.configured}}}
			head := file(tc.p.Cells...)
			got := j.seriesFile(tc.p, head)
			if store.ConfigID(got) != store.ConfigID(tc.want) {
				t.Errorf("series %v, want %v", got.Run.Settings.Cells, tc.want.Run.Settings.Cells)
			}
			if len(head.Run.Settings.Cells) != len(tc.p.Cells) {
				t.Errorf("the head's own settings changed: %v", head.Run.Settings.Cells)
			}
		})
	}
}
