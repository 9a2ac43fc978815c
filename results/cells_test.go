package results

import "testing"

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
