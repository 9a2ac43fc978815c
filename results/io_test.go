package results_test

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/speedmatrix/speedmatrix/results"
)

func f64(v float64) *float64 { return &v }
func intp(v int) *int        { return &v }

// measured returns a small measured results file with raw samples in every cell.
func measured() *results.File {
	start := time.Date(2026, 11, 29, 14, 0, 0, 123456789, time.UTC)
	trial := results.DecodeTrial{
		Start: start.Add(time.Minute),
		DecodeMetrics: results.DecodeMetrics{
			TotalTokPerS: f64(301.5), PerRequestTokPerS: f64(152.45), TTFTMs: f64(45.5), TBTMs: f64(6.56),
			AvgActiveRequests: f64(2), CompletedRequests: intp(1), OutputTokens: intp(603), MeasuredSeconds: f64(2),
		},
		BinSeconds: 1, WindowSeconds: 2, BinOutputTokens: []int{300, 303},
		Requests: []results.RequestSample{
			{TTFTMs: f64(45.5), TBTMs: f64(6.5), OutputTokens: 300, Chunks: 100, ClientQueueMs: 0.02, Completed: true},
			{TBTMs: f64(6.62), OutputTokens: 303, Chunks: 101},
		},
		RunningSamples: []float64{2, 2}, WaitingSamples: []float64{0, 0},
	}
	return &results.File{
		Schema:   results.SchemaV1,
		Hardware: results.Hardware{GPU: "simulated", GPUCount: 1},
		Engine:   results.Engine{Name: "speedmatrix-sim", Version: "test"},
		Run: results.Run{
			ID: "r1", Source: results.SourceMeasured, ServedModel: "sim/model", Tool: results.Tool{Name: "speedmatrix", Version: "(devel)"},
			DecodeTest: results.DecodeFixedDuration, PrefillMode: results.PrefillDecodeWarmup, SecondsPerMeasurement: 2, MaxOutputTokens: 4096,
			Start: start, End: start.Add(5 * time.Minute),
			Settings: &results.Settings{URL: "http://127.0.0.1:8000", Endpoint: "completions", Matrix: "quick", Contexts: []string{"8K"}, Concurrency: []int{2}, Trials: 1},
		},
		Server: &results.Server{MaxModelLen: 1048576, KVCacheTokens: 3000000, Tokenizer: "server", Metrics: "vllm"},
		Prefill: []results.PrefillCell{{
			Context: 8192, ContextLabel: "8K", Status: results.StatusValid, PromptTokPerS: f64(12210.5), TTFTMs: f64(671.2),
			PromptTokens: intp(8192), CompletedRequests: intp(1),
			Trials: []results.PrefillTrial{{TTFTMs: 671.2, PromptTokens: 8192, PromptTokPerS: 12210.5}},
		}},
		Decode: []results.DecodeCell{
			{Context: 8192, ContextLabel: "8K", Concurrency: 2, Status: results.StatusValid, DecodeMetrics: trial.DecodeMetrics, Trials: []results.DecodeTrial{trial}},
			{Context: 8192, ContextLabel: "8K", Concurrency: 4, Status: results.StatusError, Error: "stream cut after 12 tokens (truncated body)"},
		},
	}
}

func TestEncodeIsByteStable(t *testing.T) {
	for name, f := range map[string]*results.File{"measured": measured(), "imported": mustImport(t, readRef(t))} {
		b1, err := results.Encode(f)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		f2, err := results.Decode(b1)
		if err != nil {
			t.Fatalf("%s: reading what was written: %v", name, err)
		}
		if diff := cmp.Diff(f, f2); diff != "" {
			t.Errorf("%s: read differs from written:\n%s", name, diff)
		}
		b2, err := results.Encode(f2)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(b1, b2) {
			t.Errorf("%s: write → read → write is not byte-stable", name)
		}
	}
}

func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "results.json")
	if err := results.WriteFile(path, measured()); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(path)
	bad := measured()
	bad.Decode[0].TotalTokPerS = f64(math.NaN())
	if err := results.WriteFile(path, bad); err == nil {
		t.Fatal("writing a NaN succeeded")
	}
	after, _ := os.ReadFile(path)
	if !bytes.Equal(before, after) {
		t.Error("a failed write changed the file")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("temporary files left behind: %v", entries)
	}
	if _, err := results.ReadFile(path); err != nil {
		t.Errorf("reading back: %v", err)
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(f *results.File)
		want   string
	}{
		{"unknown schema", func(f *results.File) { f.Schema = "speedmatrix/results/v9" }, `schema: unknown version "speedmatrix/results/v9"`},
		{"no schema", func(f *results.File) { f.Schema = "" }, "schema: missing"},
		{"NaN", func(f *results.File) { f.Decode[0].TTFTMs = f64(math.NaN()) }, "decode cell 8K×2 (decode[0]): ttft_ms is NaN"},
		{"negative", func(f *results.File) { f.Prefill[0].TTFTMs = f64(-1) }, "prefill cell 8K (prefill[0]): ttft_ms is negative"},
		{"duplicate", func(f *results.File) { f.Decode[1].Concurrency = 2 }, "decode cell 8K×2 (decode[1]): duplicate of decode[0]"},
		{"valid without numbers", func(f *results.File) { f.Decode[0].TotalTokPerS = nil }, "status valid without total_tok_per_s"},
		{"queued without numbers", func(f *results.File) { f.Decode[0].Status = results.StatusQueued; f.Decode[0].OutputTokens = nil }, "status queued without output_tokens"},
		{"error without reason", func(f *results.File) { f.Decode[1].Error = "" }, "status error without its reason"},
		{"error with throughput", func(f *results.File) { f.Decode[1].TotalTokPerS = f64(3) }, "status error carries total_tok_per_s"},
		{"over capacity with numbers", func(f *results.File) {
			f.Decode[1].Status = results.StatusOverCapacity
			f.Decode[1].MeasuredSeconds = f64(30)
		}, "status over_capacity carries measured_seconds"},
		{"unknown status", func(f *results.File) { f.Prefill[0].Status = "great" }, `status "great" unknown`},
		{"label mismatch", func(f *results.File) { f.Decode[0].ContextLabel = "16K" }, `context_label "16K" does not match context 8192 (want "8K")`},
		{"zero concurrency", func(f *results.File) { f.Decode[0].Concurrency = 0 }, "concurrency must be at least 1"},
		{"bins", func(f *results.File) { f.Decode[0].Trials[0].BinOutputTokens = []int{1} }, "1 bin_output_tokens for a 2 s window of 1 s bins (want 2)"},
		{"summary with trials", func(f *results.File) { f.Decode[0].SummaryOnly = true }, "summary_only but carries 1 trials"},
		{"request sample", func(f *results.File) { f.Decode[0].Trials[0].Requests[1].TBTMs = f64(math.Inf(1)) }, "trial 1 request 2: tbt_ms is +Inf"},
		{"source", func(f *results.File) { f.Run.Source = "guessed" }, `run.source: "guessed"`},
		{"end before start", func(f *results.File) { f.Run.End = f.Run.Start.Add(-time.Hour) }, "run: end"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := measured()
			if err := results.Validate(f); err != nil {
				t.Fatalf("the unmutated file is invalid: %v", err)
			}
			tt.mutate(f)
			err := results.Validate(f)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want an error saying %q", err, tt.want)
			}
			if !results.IsValidation(err) {
				t.Errorf("%v is not a *ValidationError", err)
			}
		})
	}
}

func TestDecodeErrors(t *testing.T) {
	good, err := results.Encode(measured())
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		data string
		want string
	}{
		{"empty", "", "empty input"},
		{"truncated", string(good[:len(good)/2]), "truncated"},
		{"syntax", strings.Replace(string(good), `"hardware": {`, `"hardware": {,`, 1), "line 3: not valid JSON"},
		{"unknown field", strings.Replace(string(good), `"gpu_count"`, `"gpus"`, 1), `unknown field "gpus"`},
		{"wrong type", strings.Replace(string(good), `"gpu_count": 1`, `"gpu_count": "one"`, 1), "field hardware.gpu_count: got a JSON string, want int"},
		{"trailing", string(good) + "{}", "data after the results document"},
		{"a report", readRef(t), "speedmatrix import"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := results.Decode([]byte(tt.data))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want an error saying %q", err, tt.want)
			}
		})
	}
}

func TestCellID(t *testing.T) {
	for _, s := range []string{"prefill/8K", "decode/1019K/32", "decode/512/1"} {
		id, err := results.ParseCellID(s)
		if err != nil || id.String() != s {
			t.Errorf("ParseCellID(%q) = %v, %v", s, id, err)
		}
	}
	if id, err := results.ParseCellID("8K/32"); err != nil || id.String() != "decode/8K/32" {
		t.Errorf("short form: %v %v", id, err)
	}
	for _, s := range []string{"", "decode/8K", "decode/8K/0", "prefill/8Q", "x/8K/1", "decode/8K/1/2"} {
		if _, err := results.ParseCellID(s); err == nil {
			t.Errorf("ParseCellID(%q) succeeded", s)
		}
	}
	for tokens, want := range map[int]string{8192: "8K", 1044416: "1019K", 1048576: "1024K", 512: "512", 1500: "1K"} {
		if got := results.ContextLabel(tokens); got != want {
			t.Errorf("ContextLabel(%d) = %q, want %q", tokens, got, want)
		}
	}
}

func TestParseNumbers(t *testing.T) {
	for in, want := range map[string]float64{"12.2K": 12200, "12K": 12000, "9,819.0": 9819, "153.9": 153.9, "1.25M": 1250000, "0": 0} {
		if got, err := results.ParseNumber(in); err != nil || got != want {
			t.Errorf("ParseNumber(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "K", "-3", "1e5", "12.2X", "1.2345K", "NaN", "Inf"} {
		if _, err := results.ParseNumber(in); err == nil {
			t.Errorf("ParseNumber(%q) succeeded", in)
		}
	}
	for in, want := range map[string]float64{"1,645 ms": 1645, "6.1 ms": 6.1, "1.5 s": 1500, "250 µs": 0.25} {
		if got, err := results.ParseMillis(in); err != nil || math.Abs(got-want) > 1e-9 {
			t.Errorf("ParseMillis(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
}

// TestSchemaDocumentsEveryField checks that the JSON Schema file accepts a file in which every
// field is set (it forbids unknown properties, so a field missing from the schema fails) and the
// imported reference.
func TestSchemaDocumentsEveryField(t *testing.T) {
	sch := compileSchema(t)
	full := measured()
	full.Hardware.Driver, full.Hardware.Clocks, full.Hardware.Type, full.Hardware.OS = "570", "1980 MHz", "Discrete GPU", "linux"
	full.Hardware.VRAMPerGPUGB = 141
	full.Hardware.Extra = []results.KV{{Key: "k", Value: "v"}}
	full.Engine = results.Engine{Name: "vllm", Version: "v", Commit: "c", Quantization: "q", Backend: "b", Repository: "r", Build: "b", Extra: full.Hardware.Extra}
	full.Run.Revision, full.Run.LaunchCommand, full.Run.Partial, full.Run.PartialReason, full.Run.ImportedFrom = "main", "vllm serve", true, "ctrl-c", "x"
	full.Run.Extra = full.Hardware.Extra
	full.Run.Settings.PrefillContexts, full.Run.Settings.DurationSeconds, full.Run.Settings.MaxTokens, full.Run.Settings.Cells, full.Run.Settings.Seed =
		[]string{"8K"}, 2, 4096, []string{"decode/8K/2"}, 7
	full.Run.Settings.Simulator = &results.SimulatorSettings{Profile: "p", Speedup: 10, Noise: 0.01, Slowdown: "decode=1.1", Fault: "none", Seed: 1}
	full.Server = &results.Server{MaxModelLen: 1, KVCacheTokens: 1, BlockSize: 1, NumGPUBlocks: 1, MaxNumSeqs: 1, Version: "v", Tokenizer: "server", Metrics: "vllm"}
	full.Prefill[0].Trials[0].ClientQueueMs = 0.1
	full.Notes = []string{"note"}
	m := &full.Decode[0].DecodeMetrics
	m.InterChunkMs, m.ClientQueueMs = f64(1), f64(0.1)
	m.Telemetry = &results.Telemetry{MaxRunning: f64(2), MaxWaiting: f64(0), MaxKVCacheUsage: f64(0.5), Preemptions: f64(0),
		PrefixCacheHitPct: f64(99), SpecAcceptancePct: f64(60), SpecAcceptanceLength: f64(3.1), Source: "server"}
	full.Decode[0].Trials[0].DecodeMetrics = *m
	for name, f := range map[string]*results.File{"every field": full, "reference": mustImport(t, readRef(t))} {
		data, err := results.Encode(f)
		if err != nil {
			t.Fatal(err)
		}
		var doc any
		if err := json.Unmarshal(data, &doc); err != nil {
			t.Fatal(err)
		}
		if err := sch.Validate(doc); err != nil {
			t.Errorf("%s: the schema rejects a file speedmatrix writes: %v", name, err)
		}
	}
	var doc any
	json.Unmarshal([]byte(`{"schema":"speedmatrix/results/v1","hardware":{},"engine":{},"run":{"source":"measured","tool":{"name":"x"}},"prefill":[],"decode":[],"extra_field":1}`), &doc)
	if err := sch.Validate(doc); err == nil {
		t.Error("the schema accepts an unknown field")
	}
}
