package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/speedmatrix/speedmatrix/results"
)

// TestPartialPageShowsPlannedCells checks that the page of a partial run shows every cell its
// settings planned but the file lacks as not measured, in the prefill list, the decode matrix and
// the All measurements table, and that the page still imports (to the measured cells).
func TestPartialPageShowsPlannedCells(t *testing.T) {
	f, err := results.ReadFile("../results/testdata/measured-2trials.json")
	if err != nil {
		t.Fatal(err)
	}
	// The run planned prefill at 8K and decode at 8K and 32K × 1 and 8; it ended after 8K.
	f.Decode = f.Decode[:2]
	f.Prefill = nil
	f.Run.Partial, f.Run.PartialReason = true, "interrupted (SIGINT)"
	page := string(markdown(t, f))
	for _, want := range []string{
		"| 8K | Not measured | — |",
		"| 32K | Not measured | Not measured |",
		"| Prefill | 8K | 1 | Not measured | — | — | — | — | — | — | — | — |",
		"| Sustained decode | 32K | 1 | Not measured | — | — | — | — | — | — | — | — |",
		"| Sustained decode | 32K | 8 | Not measured | — | — | — | — | — | — | — | — |",
		"2 contexts (8K–32K) × 2 concurrency levels (1–8) · prefill at 8K",
		"Not measured: planned, but the run ended before it reached this cell.",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q:\n%s", want, page)
		}
	}
	back, err := results.Import(strings.NewReader(page), "partial.md")
	if err != nil {
		t.Fatalf("the partial page does not import: %v", err)
	}
	if len(back.Decode) != 2 || len(back.Prefill) != 0 {
		t.Errorf("import of the partial page: %d decode and %d prefill cells, want the 2 measured", len(back.Decode), len(back.Prefill))
	}
	// Without a plan in the settings there is nothing to show.
	f.Run.Settings = nil
	if page := markdown(t, f); bytes.Contains(page, []byte("Not measured")) {
		t.Errorf("a file without a plan shows cells as not measured:\n%s", page)
	}
}
