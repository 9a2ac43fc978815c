package bench

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/speedmatrix/speedmatrix/results"
)

// TestMergeBlocksCellStates pins what each cell of the merged file ends as, for prefill and
// decode alike: a cell not measured in one block keeps that block's status and error (naming the
// block) and no trials, even when a later block measured it; a decode cell queued in any block
// is queued; a prefill cell stays valid.
func TestMergeBlocksCellStates(t *testing.T) {
	pre := func(st results.Status) results.PrefillCell {
		c := results.PrefillCell{Context: 8192, ContextLabel: "8K", Status: st}
		if st.Measured() {
			c.Trials = []results.PrefillTrial{{TTFTMs: 100, PromptTokens: 8192, PromptTokPerS: 81920}}
		} else {
			c.Error = "scout failed"
		}
		return c
	}
	dec := func(conc int, st results.Status) results.DecodeCell {
		c := results.DecodeCell{Context: 8192, ContextLabel: "8K", Concurrency: conc, Status: st}
		if st.Measured() {
			tr := results.DecodeTrial{WindowSeconds: 10, BinSeconds: 1}
			v, n := 100.0, 1000
			tr.TotalTokPerS, tr.OutputTokens = &v, &n
			c.Trials = []results.DecodeTrial{tr}
		} else if st == results.StatusError {
			c.Error = "a stream failed"
		}
		return c
	}
	file := func(p results.PrefillCell, d ...results.DecodeCell) *results.File {
		return &results.File{Schema: results.SchemaV1, Run: results.Run{ID: "x", Source: results.SourceMeasured},
			Prefill: []results.PrefillCell{p}, Decode: d}
	}
	m, err := MergeBlocks([]*results.File{
		file(pre(results.StatusValid), dec(1, results.StatusValid), dec(4, results.StatusQueued), dec(8, results.StatusValid)),
		file(pre(results.StatusError), dec(1, results.StatusQueued), dec(4, results.StatusValid), dec(8, results.StatusOverCapacity)),
		file(pre(results.StatusValid), dec(1, results.StatusValid), dec(4, results.StatusValid), dec(8, results.StatusValid)),
	}, []int{1, 4, 5})
	if err != nil {
		t.Fatal(err)
	}
	type state struct {
		Status results.Status
		Error  string
		Trials int
	}
	got := map[string]state{}
	for _, c := range m.Prefill {
		got[c.ID().String()] = state{c.Status, c.Error, len(c.Trials)}
	}
	for _, c := range m.Decode {
		got[c.ID().String()] = state{c.Status, c.Error, len(c.Trials)}
	}
	want := map[string]state{
		"prefill/8K":  {results.StatusError, "block 4: scout failed", 0},
		"decode/8K/1": {results.StatusQueued, "", 3},
		"decode/8K/4": {results.StatusQueued, "", 3},
		"decode/8K/8": {results.StatusOverCapacity, "", 0},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("merged cells (-want +got):\n%s", diff)
	}
}
