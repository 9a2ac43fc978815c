package measure

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/speedmatrix/speedmatrix/results"
)

// TestOutputKeepsInvalidResults: results that fail the results file's own check (a rate above
// its plausible maximum) are still written, unchecked, to the output path, and the writer says
// why; a later valid checkpoint clears it. Before, the run measured a whole matrix and then
// wrote nothing, its fallback refused by the same check.
func TestOutputKeepsInvalidResults(t *testing.T) {
	dir := t.TempDir()
	o := &output{path: filepath.Join(dir, "out.json"), fallback: filepath.Join(dir, "fallback.json"), log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	f, err := results.ReadFile(filepath.Join("../docs/example", "base.json"))
	if err != nil {
		t.Fatal(err)
	}
	good := *f.Decode[0].PerRequestTokPerS
	rate := 2.19e7
	f.Decode[0].PerRequestTokPerS = &rate
	if results.Validate(f) == nil {
		t.Fatal("the test's file passes the check; it must fail it")
	}
	if err := o.write(f); err != nil {
		t.Fatalf("write: %v", err)
	}
	if o.invalid == nil || o.saved != o.path {
		t.Fatalf("invalid %v, saved %q; want the check's error and the output path", o.invalid, o.saved)
	}
	data, err := os.ReadFile(o.path)
	if err != nil || len(data) == 0 {
		t.Fatalf("the output path holds nothing: %v", err)
	}
	if _, err := results.Decode(data); !results.IsValidation(err) {
		t.Errorf("reading the kept file: %v, want the check's error (the numbers kept as measured)", err)
	}
	rate = good
	if err := o.write(f); err != nil || o.invalid != nil {
		t.Errorf("a valid checkpoint: err %v, invalid %v; want both nil", err, o.invalid)
	}
}
