package results_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/speedmatrix/speedmatrix/results"
)

// realRun is a results file measured by `speedmatrix run` on the built-in simulator: decode at
// 8K and 32K × 1 and 8, two trials per cell, prefill at 8K.
const realRun = "testdata/measured-2trials.json"

func readRealRun(t *testing.T) *results.File {
	t.Helper()
	f, err := results.ReadFile(realRun)
	if err != nil {
		t.Fatalf("a file speedmatrix run wrote does not validate: %v", err)
	}
	return f
}

// TestValidateSummaryEdits edits a cell's summary in the JSON of a valid file, as a user or a
// broken tool would, and checks that Decode rejects every contradiction with the trials and
// every implausible value, naming the cell and the field.
func TestValidateSummaryEdits(t *testing.T) {
	good, err := results.Encode(measured())
	if err != nil {
		t.Fatal(err)
	}
	// The first occurrence is the cell's summary; its trial's copy follows.
	const summary = `"total_tok_per_s": 301.5`
	tests := []struct {
		name, with, want string
	}{
		{"zero", `"total_tok_per_s": 0`, "decode cell 8K×2 (decode[0]): total_tok_per_s is 0 but its trial gives 301.5"},
		{"too high", `"total_tok_per_s": 99999`, "decode cell 8K×2 (decode[0]): total_tok_per_s is 99999 but its trial gives 301.5"},
		{"absurd", `"total_tok_per_s": 1e308`, "decode cell 8K×2 (decode[0]): total_tok_per_s is 1e+308 tok/s, above the plausible maximum 1e+07 tok/s"},
		{"rounded to a tenth", `"total_tok_per_s": 301.46`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := strings.Replace(string(good), summary, tt.with, 1)
			_, err := results.Decode([]byte(data))
			if tt.want == "" {
				if err != nil {
					t.Errorf("a summary within rounding of its trial was rejected: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want an error saying %q", err, tt.want)
			}
			if strings.Contains(err.Error(), strings.Repeat("0", 20)) {
				t.Errorf("the error prints a huge number in full: %v", err)
			}
		})
	}
}

// TestValidateAgreement mutates valid files so that summaries, trials and raw samples disagree,
// or a value is implausible, and checks each is rejected with the field and cell named.
func TestValidateAgreement(t *testing.T) {
	tests := []struct {
		name   string
		real   bool // mutate the real two-trial run instead of measured()
		mutate func(f *results.File)
		want   string
	}{
		{"trial rate not its bins", false, func(f *results.File) {
			f.Decode[0].TotalTokPerS, f.Decode[0].Trials[0].TotalTokPerS = f64(6849), f64(6849)
		}, "decode cell 8K×2 (decode[0]) trial 1: total_tok_per_s is 6849 but bin_output_tokens ÷ window_seconds gives 301.5"},
		{"trial tokens not its bins", false, func(f *results.File) {
			f.Decode[0].Trials[0].BinOutputTokens = []int{300, 400}
		}, "trial 1: output_tokens is 603 but the sum of bin_output_tokens gives 700"},
		{"trial tbt not its requests", false, func(f *results.File) {
			f.Decode[0].TBTMs, f.Decode[0].Trials[0].TBTMs = f64(9), f64(9)
		}, "trial 1: tbt_ms is 9 but the median of its requests gives 6.56"},
		{"per-request summary not its trial", false, func(f *results.File) { f.Decode[0].PerRequestTokPerS = f64(15.2) },
			"decode cell 8K×2 (decode[0]): per_request_tok_per_s is 15.2 but its trial gives 152.45"},
		{"valid window without a token", false, func(f *results.File) {
			c := &f.Decode[0]
			c.Trials[0].BinOutputTokens = []int{0, 0}
			c.OutputTokens, c.Trials[0].OutputTokens = intp(0), intp(0)
			c.TotalTokPerS, c.Trials[0].TotalTokPerS = f64(0), f64(0)
		}, "decode cell 8K×2 (decode[0]) trial 1: no output token in the window, yet the cell's status is valid"},
		{"latency over a day", false, func(f *results.File) {
			c := &f.Decode[0]
			c.TTFTMs, c.Trials[0].TTFTMs, c.Trials[0].Requests[0].TTFTMs = f64(1e9), f64(1e9), f64(1e9)
		}, "decode cell 8K×2 (decode[0]): ttft_ms is 1e+09 ms, above the plausible maximum 8.64e+07 ms"},
		{"prefill summary not its trial", false, func(f *results.File) { f.Prefill[0].TTFTMs = f64(0) },
			"prefill cell 8K (prefill[0]): ttft_ms is 0 but its trial gives 671.2"},
		{"prefill trial rate not tokens per second", false, func(f *results.File) {
			f.Prefill[0].PromptTokPerS, f.Prefill[0].Trials[0].PromptTokPerS = f64(99999), 99999
		}, "prefill cell 8K (prefill[0]) trial 1: prompt_tok_per_s is 99999 but prompt_tokens ÷ ttft_ms gives 12205"},
		{"prefill over the bound", false, func(f *results.File) { f.Prefill[0].Trials[0].PromptTokPerS = 1e308 },
			"prefill cell 8K (prefill[0]) trial 1: prompt_tok_per_s is 1e+308 tok/s, above the plausible maximum 1e+07 tok/s"},
		{"two trials: total", true, func(f *results.File) { *f.Decode[0].TotalTokPerS *= 2 },
			"decode cell 8K×1 (decode[0]): total_tok_per_s is"},
		{"two trials: ttft", true, func(f *results.File) { *f.Decode[1].TTFTMs += 100 },
			"decode cell 8K×8 (decode[1]): ttft_ms is"},
		{"two trials: tokens", true, func(f *results.File) { *f.Decode[2].OutputTokens++ },
			"decode cell 32K×1 (decode[2]): output_tokens is"},
		{"two trials: seconds", true, func(f *results.File) { *f.Decode[3].MeasuredSeconds = 2 },
			"decode cell 32K×8 (decode[3]): measured_seconds is 2 but the sum of window_seconds over its trials gives 4"},
		{"two trials: prefill median", true, func(f *results.File) { *f.Prefill[0].PromptTokPerS /= 2 },
			"prefill cell 8K (prefill[0]): prompt_tok_per_s is"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := measured()
			if tt.real {
				f = readRealRun(t)
			}
			if err := results.Validate(f); err != nil {
				t.Fatalf("the unmutated file is invalid: %v", err)
			}
			tt.mutate(f)
			err := results.Validate(f)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want an error saying %q", err, tt.want)
			}
		})
	}
}

// TestValidateRealRunRoundTrips checks that a file speedmatrix run wrote is accepted as it is
// (the agreement checks recompute exactly what the runner derived) and writes back unchanged.
func TestValidateRealRunRoundTrips(t *testing.T) {
	f := readRealRun(t)
	data, err := results.Encode(f)
	if err != nil {
		t.Fatal(err)
	}
	orig, err := os.ReadFile(realRun)
	if err != nil {
		t.Fatal(err)
	}
	if string(data) != string(orig) {
		t.Error("the real run does not write back byte for byte")
	}
}

// TestSchemaBoundsImplausibleValues checks that the JSON Schema rejects the implausible values
// Validate rejects: a rate above 10^7 tok/s and a latency above a day.
func TestSchemaBoundsImplausibleValues(t *testing.T) {
	sch := compileSchema(t)
	good, err := results.Encode(measured())
	if err != nil {
		t.Fatal(err)
	}
	for _, edit := range [][2]string{
		{`"total_tok_per_s": 301.5`, `"total_tok_per_s": 1e308`},
		{`"ttft_ms": 671.2`, `"ttft_ms": 1e9`},
		{`"prompt_tok_per_s": 12210.5`, `"prompt_tok_per_s": 2e7`},
	} {
		var doc any
		if err := json.Unmarshal([]byte(strings.Replace(string(good), edit[0], edit[1], 1)), &doc); err != nil {
			t.Fatal(err)
		}
		if err := sch.Validate(doc); err == nil {
			t.Errorf("the schema accepts %s", edit[1])
		}
	}
}
