package results

import (
	"strings"
	"testing"
)

// TestParseCellIDCanonical checks that a cell id parses to the label results files write, so
// that a cell typed in lower case (run --cells decode/8k/1 measures decode/8K/1) names the same
// cell in compare --cells and history --cell.
func TestParseCellIDCanonical(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"decode/8k/1", "decode/8K/1"},
		{"decode/8K/32", "decode/8K/32"},
		{" 16k/4 ", "decode/16K/4"},
		{"prefill/1024k", "prefill/1024K"},
		{"prefill/4096", "prefill/4096"},
	} {
		id, err := ParseCellID(tc.in)
		if err != nil || id.String() != tc.want {
			t.Errorf("ParseCellID(%q) = %v, %v; want %s", tc.in, id, err, tc.want)
		}
	}
}

// TestParseCellIDMistakes: each mistaken cell says what is wrong with it; decode/8K, a decode
// cell without its concurrency, says so (it once read as the context "DECODE").
func TestParseCellIDMistakes(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"decode/8K", "a decode cell needs its concurrency: decode/8K/C, e.g. decode/8K/32"},
		{"decode/8k", "decode/8K/C"},
		{"decode/8K/x", "concurrency must be a positive integer"},
		{"prefill/huge", `context "HUGE" is not a length`},
		{"decode", "unknown form"},
	} {
		_, err := ParseCellID(tc.in)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseCellID(%q): %v, want an error holding %q", tc.in, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), `"DECODE"`) {
			t.Errorf("ParseCellID(%q): %v reads the phase as a context", tc.in, err)
		}
	}
}

// TestFindAndValue checks the one lookup of a file's cell and of a cell's metric that compare,
// history and disturbed-window tests read through.
func TestFindAndValue(t *testing.T) {
	f := &File{
		Prefill: []PrefillCell{{ContextLabel: "8K", PromptTokPerS: ptr(9000.0), TTFTMs: ptr(910.0)}},
		Decode: []DecodeCell{
			{ContextLabel: "8K", Concurrency: 1, DecodeMetrics: DecodeMetrics{TotalTokPerS: ptr(100.0), PerRequestTokPerS: ptr(100.0), TTFTMs: ptr(80.0), TBTMs: ptr(10.0)}},
			{ContextLabel: "8K", Concurrency: 8, DecodeMetrics: DecodeMetrics{TotalTokPerS: ptr(640.0)}},
		},
	}
	val := func(p *float64) float64 {
		if p == nil {
			return -1
		}
		return *p
	}
	prefill := CellID{Phase: PhasePrefill, ContextLabel: "8K"}
	tests := []struct {
		id   CellID
		m    Metric
		want float64 // -1: no value
	}{
		{prefill, MetricPromptTokPerS, 9000},
		{prefill, MetricTTFT, 910},
		{prefill, MetricTotalTokPerS, -1},
		{CellID{Phase: PhaseDecode, ContextLabel: "8K", Concurrency: 1}, MetricTotalTokPerS, 100},
		{CellID{Phase: PhaseDecode, ContextLabel: "8K", Concurrency: 1}, MetricTBT, 10},
		{CellID{Phase: PhaseDecode, ContextLabel: "8K", Concurrency: 1}, MetricSpecAcceptance, -1},
		{CellID{Phase: PhaseDecode, ContextLabel: "8K", Concurrency: 8}, MetricTotalTokPerS, 640},
		{CellID{Phase: PhaseDecode, ContextLabel: "8K", Concurrency: 8}, MetricTTFT, -1},
	}
	for _, tt := range tests {
		var got float64
		if tt.id.Phase == PhasePrefill {
			got = val(f.FindPrefill(tt.id).Value(tt.m))
		} else {
			got = val(f.FindDecode(tt.id).Value(tt.m))
		}
		if got != tt.want {
			t.Errorf("%s %s = %v, want %v", tt.id, tt.m, got, tt.want)
		}
	}
	for _, id := range []CellID{{Phase: PhaseDecode, ContextLabel: "8K", Concurrency: 32}, {Phase: PhaseDecode, ContextLabel: "32K", Concurrency: 1}} {
		if c := f.FindDecode(id); c != nil {
			t.Errorf("FindDecode(%s) = %v, want nil (no such cell)", id, c.ID())
		}
	}
	if c := f.FindPrefill(CellID{Phase: PhasePrefill, ContextLabel: "32K"}); c != nil {
		t.Errorf("FindPrefill(32K) = %v, want nil", c.ID())
	}
}
