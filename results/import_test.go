package results_test

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/speedmatrix/speedmatrix/report"
	"github.com/speedmatrix/speedmatrix/results"
)

const refReport = "../testdata/reference/glm-5.3-flash-nvfp4-h200nvl-x2.txt"

func readRef(t testing.TB) string {
	t.Helper()
	b, err := os.ReadFile(refReport)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func mustImport(t *testing.T, text string) *results.File {
	t.Helper()
	f, err := results.Import(strings.NewReader(text), "test")
	if err != nil {
		t.Fatalf("import: %v", err)
	}
	return f
}

func render(t testing.TB, f *results.File) string {
	t.Helper()
	var b bytes.Buffer
	if err := report.NewPage(f).Markdown(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestImportReference(t *testing.T) {
	f := mustImport(t, readRef(t))
	if len(f.Prefill) != 9 || len(f.Decode) != 64 {
		t.Fatalf("got %d prefill and %d decode cells, want 9 and 64", len(f.Prefill), len(f.Decode))
	}
	wantHW := results.Hardware{Type: "Discrete GPU", GPU: "H200 NVL", GPUCount: 2, VRAMPerGPUGB: 141, OS: "linux"}
	if diff := cmp.Diff(wantHW, f.Hardware); diff != "" {
		t.Errorf("hardware (-want +got):\n%s", diff)
	}
	wantEngine := results.Engine{Name: "vllm", Version: "0.1.dev1+g3b5189828", Commit: "3b518982806c", Quantization: "NVFP4",
		Backend: "cuda", Repository: "github.com/vllm-project/vllm", Build: "cuda-13.2"}
	if diff := cmp.Diff(wantEngine, f.Engine); diff != "" {
		t.Errorf("engine (-want +got):\n%s", diff)
	}
	r := f.Run
	if r.Source != results.SourceImported || r.ServedModel != "nvidia/GLM-5.3-Flash-NVFP4" || r.Revision != "main" ||
		r.Tool != (results.Tool{Name: "llm-inference-bench", Version: "v0.6.2"}) || r.DecodeTest != results.DecodeFixedDuration ||
		r.PrefillMode != results.PrefillDecodeWarmup || r.SecondsPerMeasurement != 30 || r.MaxOutputTokens != 4096 {
		t.Errorf("run section imported wrong: %+v", r)
	}
	if !strings.HasPrefix(r.LaunchCommand, "env VLLM_USE_V2_MODEL_RUNNER=1") || !strings.HasSuffix(r.LaunchCommand, `"kv_cache_dtype":"auto"}'`) ||
		!strings.Contains(r.LaunchCommand, "--api-key <redacted>") {
		t.Errorf("launch command imported wrong (the page glues \"Prefill\" to it): %q", r.LaunchCommand)
	}
	p := f.Prefill[7]
	if p.ContextLabel != "1019K" || p.Context != 1019*1024 || *p.PromptTokPerS != 9819 || *p.TTFTMs != 104385 || !p.SummaryOnly {
		t.Errorf("prefill 1019K: %+v", p)
	}
	if *f.Prefill[0].PromptTokPerS != 12200 {
		t.Errorf("12.2K imported as %v, want exactly 12200", *f.Prefill[0].PromptTokPerS)
	}
	byID := map[string]results.DecodeCell{}
	for _, c := range f.Decode {
		byID[c.ID().String()] = c
	}
	q := byID["decode/64K/32"]
	if q.Status != results.StatusQueued || *q.TotalTokPerS != 251.3 || *q.PerRequestTokPerS != 22 || *q.TTFTMs != 9370 ||
		*q.TBTMs != 45.4 || *q.AvgActiveRequests != 23.8 || *q.CompletedRequests != 0 || *q.OutputTokens != 7476 || *q.MeasuredSeconds != 29.8 {
		t.Errorf("decode/64K/32 imported wrong: %+v", q.DecodeMetrics)
	}
	if oc := byID["decode/32K/128"]; oc.Status != results.StatusOverCapacity || oc.TotalTokPerS != nil {
		t.Errorf("decode/32K/128: %+v", oc)
	}
	var queued, over int
	for _, c := range f.Decode {
		switch c.Status {
		case results.StatusQueued:
			queued++
		case results.StatusOverCapacity:
			over++
		}
	}
	if queued != 9 || over != 21 {
		t.Errorf("got %d queued and %d over-capacity cells, want 9 and 21", queued, over)
	}
}

func TestImportCRLFAndSpacing(t *testing.T) {
	ref := readRef(t)
	want := mustImport(t, ref)
	var b strings.Builder
	for _, l := range strings.Split(ref, "\n") {
		b.WriteString("  " + l + "   \r\n")
	}
	got := mustImport(t, "\ufeff"+b.String())
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("CRLF, indented report imports differently:\n%s", diff)
	}
}

// handMarkdown is a report written in another markdown style, with another model, other
// contexts and concurrency levels, and statuses the reference lacks.
const handMarkdown = `## **Speed test matrix**
Llama-3-8B on L40S 48GB

### Hardware
| Field | Value |
|---|---|
| Type | Discrete GPU |
| GPU | L40S |
| GPU count | 1 |
| VRAM | 48 GB |
| Driver | 570.86 |
| OS | linux |

### Engine
- **Engine:** sglang
- **Version:** 0.4.1
- **Quantization:** FP8
- **Runtime:** python 3.12

### Run
- Served model: meta/Llama-3-8B
- Benchmark tool: llm-inference-bench v0.7.0
- Decode test: Fixed requests
- Time per measurement: 20 s
- Max output: 1,024 tokens

### Launch command
` + "```" + `
python -m sglang.launch_server --model meta/Llama-3-8B
` + "```" + `

### Prefill
prompt tok/s by context length

| Context | Prompt tok/s | TTFT |
|---|---|---|
| 2K | 31.5K | 65 ms |
| 4K | Error | — |

### Sustained decode
| Context | 1 | 3 |
|---|---|---|
| 2K | 88.2 · 40 ms TTFT | 201.0 · Requests queued · 75 ms TTFT |
| 4K | Skipped | Over capacity |

### All measurements
| Phase | Context | Requests at once | Status | Total tok/s | Per request tok/s | TTFT | Time between tokens | Average active requests | Completed requests | Output tokens | Measured for |
|---|---|---|---|---|---|---|---|---|---|---|---|
| Prefill | 2K | 1 | Valid | 31.5K | — | 65 ms | — | — | 1 | — | — |
| Prefill | 4K | 1 | Error: HTTP 500 from /v1/completions \| retry failed | — | — | — | — | — | — | — | — |
| Sustained decode | 2K | 1 | Valid | 88.2 | 89.0 | 40 ms | 11.2 ms | 1.0 | 2 | 1,764 | 20.0 s |
| Sustained decode | 2K | 3 | Requests queued | 201.0 | 70.1 | 75 ms | 14.3 ms | 2.8 | 5 | 4,020 | 20.0 s |
| Sustained decode | 4K | 1 | Skipped | — | — | — | — | — | — | — | — |
| Sustained decode | 4K | 3 | Over capacity | — | — | — | — | — | — | — | — |
`

func TestImportOtherMarkdown(t *testing.T) {
	f := mustImport(t, handMarkdown)
	if f.Hardware.GPU != "L40S" || f.Hardware.GPUCount != 1 || f.Hardware.VRAMPerGPUGB != 48 || f.Hardware.Driver != "570.86" {
		t.Errorf("hardware: %+v", f.Hardware)
	}
	if f.Engine.Name != "sglang" || f.Engine.Quantization != "FP8" || len(f.Engine.Extra) != 1 || f.Engine.Extra[0] != (results.KV{Key: "Runtime", Value: "python 3.12"}) {
		t.Errorf("engine: %+v", f.Engine)
	}
	if f.Run.DecodeTest != "Fixed requests" || f.Run.SecondsPerMeasurement != 20 || f.Run.MaxOutputTokens != 1024 || f.Run.Tool.Version != "v0.7.0" {
		t.Errorf("run: %+v", f.Run)
	}
	if f.Run.LaunchCommand != "python -m sglang.launch_server --model meta/Llama-3-8B" {
		t.Errorf("launch command: %q", f.Run.LaunchCommand)
	}
	if got := f.Prefill[1]; got.Status != results.StatusError || got.Error != "HTTP 500 from /v1/completions | retry failed" {
		t.Errorf("prefill 4K: %+v", got)
	}
	if len(f.Decode) != 4 || f.Decode[1].Concurrency != 3 || *f.Decode[1].AvgActiveRequests != 2.8 || f.Decode[2].Status != results.StatusSkipped {
		t.Errorf("decode: %+v", f.Decode)
	}
	// Rendering and importing again keeps every number and fact.
	again := mustImport(t, render(t, f))
	if diff := cmp.Diff(f, again); diff != "" {
		t.Errorf("render → import lost something:\n%s", diff)
	}
}

func TestImportErrors(t *testing.T) {
	ref := readRef(t)
	lineOf := func(sub string) int {
		i := strings.Index(ref, sub)
		if i < 0 {
			t.Fatalf("reference lacks %q", sub)
		}
		return strings.Count(ref[:i], "\n") + 1
	}
	tests := []struct {
		name     string
		text     string
		wantLine int
		wantMsg  string
	}{
		{"empty", "", 0, "empty report"},
		{"not a report", "hello\nworld\n", 1, `expected the title "Speed test matrix"`},
		{"short row", strings.Replace(ref, "| Prefill | 16K | 1 | Valid | 13.2K | — | 1,232 ms | — | — | 1 | — | — |", "| Prefill | 16K | 1 | Valid | 13.2K | — | 1,232 ms | — | — | 1 | — |", 1),
			lineOf("| Prefill | 16K |"), "this row has 11 cells, the table's header has 12"},
		{"bad number", strings.Replace(ref, "| 8K | 2 | Valid | 247.4 |", "| 8K | 2 | Valid | 247.4X |", 1),
			lineOf("| 8K | 2 | Valid | 247.4 |"), `column "Total tok/s": "247.4X" is not a number`},
		{"bad status", strings.Replace(ref, "| 16K | 1 | Valid | 158.1 |", "| 16K | 1 | Splendid | 158.1 |", 1),
			lineOf("| 16K | 1 | Valid | 158.1 |"), `status "Splendid": expected Valid, Requests queued`},
		{"bad context", strings.Replace(ref, "| Sustained decode | 32K | 1 |", "| Sustained decode | 32.5K | 1 |", 1),
			lineOf("| Sustained decode | 32K | 1 |"), `context "32.5K"`},
		{"unknown column", strings.Replace(ref, "| Measured for |", "| Joules |", 1),
			lineOf("| Phase | Context |"), `unknown column "Joules"`},
		{"prefill list disagrees", strings.Replace(ref, "16K context13.2K1,232 ms TTFT", "16K context13.3K1,232 ms TTFT", 1),
			lineOf("16K context13.2K"), "the prefill list says"},
		{"matrix disagrees", strings.Replace(ref, "| 158.1601 ms TTFT |", "| 158.2601 ms TTFT |", 1),
			lineOf("| 16K | 158.1601"), "the decode matrix says \"158.2601 ms TTFT\" at 16K×1"},
		{"matrix extra column", strings.Replace(ref, "| 64 | 128 |\n|---|---|---|---|---|---|---|---|---|", "| 64 | 128 | 256 |\n|---|---|---|---|---|---|---|---|---|---|", 1),
			lineOf("| Context | 1 | 2 |") + 2, "this row has 9 cells, the table's header has 10"},
		{"no table", ref[:strings.Index(ref, "All measurements")], 0, `no "All measurements" section`},
		{"numbers on over capacity", strings.Replace(ref, "| 32K | 128 | Over capacity | — |", "| 32K | 128 | Over capacity | 5.0 |", 1),
			0, "decode cell 32K×128 (decode[23]): status over_capacity carries total_tok_per_s"},
		{"key without value", strings.Replace(ref, "- OS\n- linux\n", "- OS\n", 1),
			lineOf("- OS"), `"OS" has no value after it`},
		{"bad vram", strings.Replace(ref, "- 282 GB (2 × 141 GB)", "- lots", 1),
			lineOf("- 282 GB"), `VRAM "lots"`},
		{"run without all measurements rows", strings.Split(ref, "|---|---|---|---|---|---|---|---|---|---|---|---|")[0] + "|---|---|---|---|---|---|---|---|---|---|---|---|\n",
			lineOf("| Phase | Context |"), "the All measurements table has no rows"},
		{"two runs", ref + "\nAll measurements\n", strings.Count(ref, "\n") + 2, `a second "All measurements" section`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := results.Import(strings.NewReader(tt.text), "test")
			if err == nil {
				t.Fatal("import succeeded, want an error")
			}
			if !strings.Contains(err.Error(), tt.wantMsg) {
				t.Errorf("error %q does not say %q", err, tt.wantMsg)
			}
			var ie *results.ImportError
			if tt.wantLine > 0 {
				if !errors.As(err, &ie) || ie.Line != tt.wantLine {
					t.Errorf("error %q: want it at line %d", err, tt.wantLine)
				}
			}
		})
	}
}
