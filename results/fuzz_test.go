package results_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/speedmatrix/speedmatrix/results"
)

// FuzzImport feeds the importer arbitrary text. It must never panic, and whatever it accepts
// must be a valid results file whose rendered page imports back to the same file.
func FuzzImport(f *testing.F) {
	ref := readRef(f)
	f.Add(ref)
	f.Add(handMarkdown)
	f.Add(strings.ReplaceAll(ref, "\n", "\r\n"))
	f.Add("Speed test matrix\nAll measurements\n| Phase | Context | Requests at once | Status | Total tok/s |\n|---|---|---|---|---|\n| Prefill | 8K | 1 | Valid | 12.2K |\n")
	f.Fuzz(func(t *testing.T, text string) {
		got, err := results.Import(strings.NewReader(text), "fuzz")
		if err != nil {
			return
		}
		if _, err := results.Encode(got); err != nil {
			t.Fatalf("import accepted a file that does not encode: %v", err)
		}
		again, err := results.Import(strings.NewReader(render(t, got)), "fuzz")
		if err != nil {
			t.Fatalf("the rendered page of an accepted report does not import: %v", err)
		}
		if diff := cmp.Diff(got, again); diff != "" {
			t.Fatalf("render → import changed the file:\n%s", diff)
		}
	})
}

// FuzzDecode feeds the results reader arbitrary bytes. It must never panic, and whatever it
// accepts must write back byte-stably.
func FuzzDecode(f *testing.F) {
	sharded := measured()
	sharded.Run.Shard = &results.Shard{Index: 2, Count: 4, Plan: "a6744badb16c", Contexts: []string{"16K", "512K"}}
	for _, file := range []*results.File{measured(), mustImportF(f, readRef(f)), sharded} {
		b, err := results.Encode(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"schema":"speedmatrix/results/v1"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := results.Decode(data)
		if err != nil {
			return
		}
		b1, err := results.Encode(got)
		if err != nil {
			t.Fatalf("decode accepted a file that does not encode: %v", err)
		}
		again, err := results.Decode(b1)
		if err != nil {
			t.Fatalf("what was written does not read: %v", err)
		}
		b2, _ := results.Encode(again)
		if !bytes.Equal(b1, b2) {
			t.Fatal("write → read → write is not byte-stable")
		}
	})
}

func mustImportF(f *testing.F, text string) *results.File {
	got, err := results.Import(strings.NewReader(text), "seed")
	if err != nil {
		f.Fatal(err)
	}
	return got
}
