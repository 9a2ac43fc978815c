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
