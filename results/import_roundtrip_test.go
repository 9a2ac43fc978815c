package results_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/speedmatrix/speedmatrix/results"
)

// allTable is the smallest "All measurements" section: one prefill cell.
const allTable = "All measurements\n| Phase | Context | Requests at once | Status | Total tok/s | TTFT |\n|---|---|---|---|---|---|\n| Prefill | 8K | 1 | Valid | 12.2K | 671 ms |\n"

// TestImportRoundTripFacts imports small reports whose facts the rendered page once wrote in a
// form that imported differently (the fuzzer's findings), and checks each fact and that render →
// import gives the same file.
func TestImportRoundTripFacts(t *testing.T) {
	tests := []struct {
		name  string
		text  string
		check func(*results.File) string
	}{
		{"value starting with **", "Hardware\n- Runtime\n- **bold** text\n" + allTable, func(f *results.File) string {
			return cmp.Diff([]results.KV{{Key: "Runtime", Value: "**bold** text"}}, f.Hardware.Extra)
		}},
		{"value starting with _", "Engine\n- Runtime: _private\n" + allTable, func(f *results.File) string {
			return cmp.Diff([]results.KV{{Key: "Runtime", Value: "_private"}}, f.Engine.Extra)
		}},
		{"value that is only *", "Engine\n- Runtime\n- *\n" + allTable, func(f *results.File) string {
			return cmp.Diff([]results.KV{{Key: "Runtime", Value: "*"}}, f.Engine.Extra)
		}},
		{"emphasised key keeps the value's own emphasis", "Engine\n- **Runtime:** **bold**\n" + allTable, func(f *results.File) string {
			return cmp.Diff([]results.KV{{Key: "Runtime", Value: "**bold**"}}, f.Engine.Extra)
		}},
		{"form feed inside a value", "Run\n- sts\n- Time per measurement: 20 X\f\x0fs\n" + allTable, func(f *results.File) string {
			return cmp.Diff([]results.KV{{Key: "sts", Value: "Time per measurement: 20 X \x0fs"}}, f.Run.Extra)
		}},
		{"runs of white space in keys and values", "Hardware\n| My \t key | a  \u00a0 b |\n| GPU | H200\u2028NVL |\n" + allTable, func(f *results.File) string {
			return cmp.Diff([]results.KV{{Key: "My key", Value: "a b"}}, f.Hardware.Extra) + cmp.Diff("H200 NVL", f.Hardware.GPU)
		}},
		{"table header row is no fact", "Hardware\n| Field | Value |\n|---|---|\n| GPU | L40S |\n" + allTable, func(f *results.File) string {
			return cmp.Diff([]results.KV(nil), f.Hardware.Extra) + cmp.Diff("L40S", f.Hardware.GPU)
		}},
		{"error reason with white space", strings.Replace(allTable, "| Valid | 12.2K | 671 ms |", "| Error:  HTTP\f500 \u00a0 boom | — | — |", 1), func(f *results.File) string {
			return cmp.Diff("HTTP 500 boom", f.Prefill[0].Error)
		}},
		{"note with white space", allTable + "Notes\n- a \f  b\n", func(f *results.File) string {
			return cmp.Diff("a b", f.Notes[0])
		}},
		{"fenced launch command ending in Prefill", "Launch command\n```\nrun --mode Prefill\n```\nPrefill\n" +
			"All measurements\n| Phase | Context | Requests at once | Status | Total tok/s | TTFT |\n|---|---|---|---|---|---|\n| Sustained decode | 8K | 1 | Skipped | — | — |\n",
			func(f *results.File) string { return cmp.Diff("run --mode Prefill", f.Run.LaunchCommand) }},
		{"web page command glued to Prefill after a space", "Launch command\nrun --x Prefill\nprompt tok/s by context length8K context12.2K671 ms TTFT\n" + allTable,
			func(f *results.File) string { return cmp.Diff("run --x", f.Run.LaunchCommand) }},
		{"prefill below 1K, whose label the list's table glues to digits", "Prefill\n| Context | Prompt tok/s | TTFT |\n|---|---|---|\n| 512 | 12.2K | 671 ms |\n" +
			strings.Replace(allTable, "| 8K |", "| 512 |", 1), func(f *results.File) string { return cmp.Diff("512", f.Prefill[0].ContextLabel) }},
		{"engine named like a section", "Engine\n- Engine: Notes\n" + allTable, func(f *results.File) string {
			return cmp.Diff("Notes", f.Engine.Name)
		}},
		{"model named like a section", "Run\n- Served model: org/Run\n" + allTable, func(f *results.File) string {
			return cmp.Diff("org/Run", f.Run.ServedModel)
		}},
		{"engine named like a fence", "Engine\n- Engine: ```\n" + allTable, func(f *results.File) string {
			return cmp.Diff("```", f.Engine.Name)
		}},
		{"engine named like the partial marker", "Engine\n- Engine: Partial results: half\n" + allTable, func(f *results.File) string {
			return cmp.Diff("Partial results: half", f.Engine.Name) + cmp.Diff(false, f.Run.Partial)
		}},
		{"numbers in other forms that a page prints alike", strings.Replace(allTable, "| 12.2K | 671 ms |", "| 12,200.0 | 0.671 s |", 1), func(f *results.File) string {
			return cmp.Diff(12200.0, *f.Prefill[0].PromptTokPerS) + cmp.Diff(671.0, *f.Prefill[0].TTFTMs)
		}},
		{"VRAM shared by three GPUs", "Hardware\n- GPU count: 3\n- VRAM: 1 GB\n" + allTable, func(f *results.File) string {
			return cmp.Diff(1.0/3, f.Hardware.VRAMPerGPUGB)
		}},
		{"start with an offset and fractions of a second", "Run\n- Started: 2026-11-29T14:00:00.75+02:00\n" + allTable, func(f *results.File) string {
			return cmp.Diff("2026-11-29T12:00:00Z", f.Run.Start.Format(time.RFC3339Nano))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := mustImport(t, "Speed test matrix\n"+tt.text)
			if diff := tt.check(f); diff != "" {
				t.Errorf("imported wrong (-want +got):\n%s", diff)
			}
			page := render(t, f)
			again, err := results.Import(strings.NewReader(page), "test")
			if err != nil {
				t.Fatalf("the rendered page does not import: %v\n%s", err, page)
			}
			if diff := cmp.Diff(f, again); diff != "" {
				t.Errorf("render → import changed the file:\n%s\npage:\n%s", diff, page)
			}
		})
	}
}

// TestImportRefusesFactsThatCannotRoundTrip checks that a key the page cannot write back as
// "- Key: value" is refused with its line, instead of turning into another fact on the next
// import.
func TestImportRefusesFactsThatCannotRoundTrip(t *testing.T) {
	tests := []struct {
		name     string
		text     string
		wantLine int
		wantMsg  string
	}{
		{"key with a colon", "Hardware\n| Launch: flags | x |\n" + allTable, 3, `key "Launch: flags"`},
		{"key with a slash", "Engine\n- a/b\n- c\n" + allTable, 3, `key "a/b"`},
		{"long key", "Run\n- " + strings.Repeat("k", 41) + "\n- v\n" + allTable, 3, "at most 40"},
		{"extra without a value", "Hardware\n| Runtime | |\n" + allTable, 3, `"Runtime" has no value`},
		{"rate with more digits than a page prints", strings.Replace(allTable, "| 12.2K |", "| 12.25K |", 1), 5, `column "Total tok/s": "12.25K" has more digits than a page prints (12.2K)`},
		{"TTFT with a fraction of a millisecond", strings.Replace(allTable, "| 671 ms |", "| 671.4 ms |", 1), 5, `"671.4 ms" has more digits than a page prints (671 ms)`},
		{"TBT below what a page prints", "All measurements\n| Phase | Context | Requests at once | Status | Total tok/s | Time between tokens |\n|---|---|---|---|---|---|\n| Sustained decode | 8K | 1 | Skipped | — | 250 µs |\n", 5, `"250 µs"`},
		{"VRAM a page cannot print", "Hardware\n- VRAM: 2,000,000,000,000,000 GB\n" + allTable, 3, "VRAM"},
		{"GPU count in VRAM beyond an int", "Hardware\n- VRAM: 2 GB (99999999999999999999 × 1 GB)\n" + allTable, 3, "VRAM"},
		{"not UTF-8", "Hardware\n- GPU: H200\xc0\n" + allTable, 3, "not UTF-8"},
		{"year beyond 9999 in UTC", "Run\n- Started: 9999-12-31T23:00:00-05:00\n" + allTable, 3, "Started"},
		// The fuzzer's first finding: a mangled "Launch command" heading left the command and the
		// prefill list in the Run section as keys and values.
		{"mangled heading", "Run\n- Max output\n- 4,096 tokens\nncuaL\nh command\nenv A=1 \"$HOME/bin/vllm\" serve --x '{\"a\":1}'Prefill\nprompt tok/s\n" + allTable, 7, "key "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := results.Import(strings.NewReader("Speed test matrix\n"+tt.text), "test")
			if err == nil {
				t.Fatal("import succeeded, want an error")
			}
			if !strings.Contains(err.Error(), tt.wantMsg) {
				t.Errorf("error %q does not say %q", err, tt.wantMsg)
			}
			var ie *results.ImportError
			if !errors.As(err, &ie) || ie.Line != tt.wantLine {
				t.Errorf("error %q: want it at line %d", err, tt.wantLine)
			}
		})
	}
}
