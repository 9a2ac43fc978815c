package merge

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/speedmatrix/speedmatrix/results"
)

// TestBlocksCellStates pins what each cell of the merged file ends as, for prefill and
// decode alike: a cell not measured in one block keeps that block's status and error (naming the
// block) and no trials, even when a later block measured it; a decode cell queued in any block
// is queued; a prefill cell stays valid.
func TestBlocksCellStates(t *testing.T) {
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
	m, err := Blocks([]*results.File{
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

// TestBlocks checks that a side's blocks join into one file: each cell's trials in block
// order with their block and pair, the summaries recomputed from them, a cell that failed in a
// block failing in the merged file.
func TestBlocks(t *testing.T) {
	f64 := func(v float64) *float64 { return &v }
	i := func(v int) *int { return &v }
	block := func(tokens int, prefillTTFT float64, status results.Status) *results.File {
		tr := results.DecodeTrial{WindowSeconds: 10, BinSeconds: 1}
		tr.OutputTokens, tr.MeasuredSeconds = i(tokens), f64(10)
		tr.TotalTokPerS = f64(float64(tokens) / 10)
		d := results.DecodeCell{Context: 8192, ContextLabel: "8K", Concurrency: 4, Status: status}
		if status.Measured() {
			d.Trials = []results.DecodeTrial{tr}
			d.DecodeMetrics = tr.DecodeMetrics
		} else {
			d.Error = "a stream failed"
		}
		p := results.PrefillCell{Context: 8192, ContextLabel: "8K", Status: results.StatusValid,
			Trials: []results.PrefillTrial{{TTFTMs: prefillTTFT, PromptTokens: 8192, PromptTokPerS: 8192 / prefillTTFT * 1000}}}
		p.TTFTMs, p.PromptTokPerS, p.PromptTokens, p.CompletedRequests = f64(prefillTTFT), f64(8192/prefillTTFT*1000), i(8192), i(1)
		return &results.File{Schema: results.SchemaV1, Run: results.Run{ID: "x", Source: results.SourceMeasured},
			Prefill: []results.PrefillCell{p}, Decode: []results.DecodeCell{d}}
	}
	m, err := Blocks([]*results.File{block(1000, 100, results.StatusValid), block(3000, 200, results.StatusValid), block(2000, 300, results.StatusValid)}, []int{1, 4, 5})
	if err != nil {
		t.Fatal(err)
	}
	d := m.Decode[0]
	var got [][2]int
	for _, tr := range d.Trials {
		got = append(got, [2]int{tr.Block, tr.Pair})
	}
	if diff := cmp.Diff([][2]int{{1, 1}, {4, 2}, {5, 3}}, got); diff != "" {
		t.Errorf("decode trials' (block, pair) (-want +got):\n%s", diff)
	}
	if *d.TotalTokPerS != 200 || *d.OutputTokens != 6000 {
		t.Errorf("decode summary %g tok/s over %d tokens, want 200 over 6000", *d.TotalTokPerS, *d.OutputTokens)
	}
	p := m.Prefill[0]
	if len(p.Trials) != 3 || p.Trials[2].Pair != 3 || p.Trials[2].Block != 5 || *p.TTFTMs != 200 || *p.CompletedRequests != 3 {
		t.Errorf("prefill cell %+v, want 3 trials with median TTFT 200", p)
	}
	if m.Run.Settings == nil || m.Run.Settings.Trials != 3 {
		t.Errorf("settings %+v, want trials 3", m.Run.Settings)
	}

	m, err = Blocks([]*results.File{block(1000, 100, results.StatusValid), block(0, 200, results.StatusError)}, []int{1, 4})
	if err != nil {
		t.Fatal(err)
	}
	if d := m.Decode[0]; d.Status != results.StatusError || d.Error != "block 4: a stream failed" || len(d.Trials) != 0 {
		t.Errorf("a cell that failed in one block: %+v, want status error naming the block", d)
	}
	if _, err := Blocks(nil, nil); err == nil {
		t.Error("no blocks: no error")
	}
}
