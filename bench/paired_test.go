package bench

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/speedmatrix/speedmatrix/results"
)

// TestPairOrder pins the block orders: ABBA alternates the order of each pair, sequential serves
// every base block first.
func TestPairOrder(t *testing.T) {
	tests := []struct {
		scheme string
		n      int
		want   string
		err    bool
	}{
		{results.PairingABBA, 1, "AB", false},
		{results.PairingABBA, 2, "ABBA", false},
		{results.PairingABBA, 3, "ABBAAB", false},
		{results.PairingABBA, 4, "ABBAABBA", false},
		{results.PairingSequential, 3, "AAABBB", false},
		{results.PairingABBA, 0, "", true},
		{"ABAB", 2, "", true},
	}
	for _, tc := range tests {
		got, err := PairOrder(tc.scheme, tc.n)
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("PairOrder(%s, %d) = %q, %v; want %q (error %v)", tc.scheme, tc.n, got, err, tc.want, tc.err)
		}
	}
	// Every pair of ABBA holds one block of each side, adjacent.
	o, _ := PairOrder(results.PairingABBA, 5)
	for k := 0; k < 5; k++ {
		if o[2*k] == o[2*k+1] {
			t.Errorf("pair %d of %s is %c%c", k+1, o, o[2*k], o[2*k+1])
		}
	}
}

// TestMergeBlocks checks that a side's blocks join into one file: each cell's trials in block
// order with their block and pair, the summaries recomputed from them, a cell that failed in a
// block failing in the merged file.
func TestMergeBlocks(t *testing.T) {
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
	m, err := MergeBlocks([]*results.File{block(1000, 100, results.StatusValid), block(3000, 200, results.StatusValid), block(2000, 300, results.StatusValid)}, []int{1, 4, 5})
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

	m, err = MergeBlocks([]*results.File{block(1000, 100, results.StatusValid), block(0, 200, results.StatusError)}, []int{1, 4})
	if err != nil {
		t.Fatal(err)
	}
	if d := m.Decode[0]; d.Status != results.StatusError || d.Error != "block 4: a stream failed" || len(d.Trials) != 0 {
		t.Errorf("a cell that failed in one block: %+v, want status error naming the block", d)
	}
	if _, err := MergeBlocks(nil, nil); err == nil {
		t.Error("no blocks: no error")
	}
}
