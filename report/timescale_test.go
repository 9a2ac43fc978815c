package report

import (
	"bytes"
	"encoding/csv"
	"strings"
	"testing"
	"time"

	"github.com/speedmatrix/speedmatrix/results"
)

func fp(v float64) *float64 { return &v }
func ip(v int) *int         { return &v }

// simulatedFile is a small results file as measured against the simulator at 20× speed: the
// profile's ~165 tok/s at 8K×1 measured as 3,294 tok/s, 6 ms between tokens as 0.3 ms.
func simulatedFile() *results.File {
	return &results.File{
		Schema:   results.SchemaV1,
		Hardware: results.Hardware{GPU: "simulated H200", GPUCount: 2},
		Engine:   results.Engine{Name: "speedmatrix-sim"},
		Run: results.Run{
			Source: results.SourceMeasured, ServedModel: "glm", Tool: results.Tool{Name: "speedmatrix"},
			DecodeTest: results.DecodeFixedDuration, SecondsPerMeasurement: 1.5, MaxOutputTokens: 4096,
			Start:    time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
			Settings: &results.Settings{Simulator: &results.SimulatorSettings{Profile: "glm-5.3-flash-nvfp4-h200x2", Speedup: 20}},
		},
		Prefill: []results.PrefillCell{{Context: 8192, ContextLabel: "8K", Status: results.StatusValid,
			PromptTokPerS: fp(244000), TTFTMs: fp(33.55), PromptTokens: ip(8192), CompletedRequests: ip(1)}},
		Decode: []results.DecodeCell{{Context: 8192, ContextLabel: "8K", Concurrency: 1, Status: results.StatusValid,
			DecodeMetrics: results.DecodeMetrics{TotalTokPerS: fp(3294), PerRequestTokPerS: fp(3294), TTFTMs: fp(2.1), TBTMs: fp(0.3036),
				AvgActiveRequests: fp(1), CompletedRequests: ip(1), OutputTokens: ip(4941), MeasuredSeconds: fp(1.5)}}},
		Notes: []string{"measured against the built-in simulator (profile glm-5.3-flash-nvfp4-h200x2) at 20× its speed: rates are 20× and times 1/20 of the profile's", "another note"},
	}
}

// TestPageInProfileTime: a results file measured at 20× shows the profile's numbers (rates ÷ 20,
// times × 20) and says so once; the file's own numbers stay as measured.
func TestPageInProfileTime(t *testing.T) {
	f := simulatedFile()
	md := string(markdown(t, f))
	for _, want := range []string{
		"Simulated at 20× the profile's speed: figures are in the profile's time (rates ÷ 20, times × 20); the results file holds them as measured.",
		"| 8K | 12.2K | 671 ms |", // prefill list
		"| Sustained decode | 8K | 1 | Valid | 164.7 | 164.7 | 42 ms | 6.1 ms | 1.0 | 1 | 4,941 | 30.0 s |",
		"| 8K | 164.7<br>42 ms TTFT |",
		"- Time per measurement: 30 s",
		"- another note",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("page lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "3,294") || strings.Contains(md, "rates are 20×") {
		t.Errorf("page shows the measured numbers or the old note:\n%s", md)
	}
	if *f.Decode[0].TotalTokPerS != 3294 || *f.Prefill[0].TTFTMs != 33.55 || f.Run.SecondsPerMeasurement != 1.5 {
		t.Error("rendering changed the results file")
	}
	// `speedmatrix import` reads the page back, in the profile's time.
	back, err := results.Import(strings.NewReader(md), "page.md")
	if err != nil {
		t.Fatalf("import of the page: %v", err)
	}
	if got := *back.Decode[0].TotalTokPerS; got != 164.7 {
		t.Errorf("imported decode total tok/s %v, want 164.7", got)
	}
	if p := NewPage(f); p.TimeScale == "" {
		t.Error("the page model (JSON) lacks the time-scale line")
	}
	// A real server's page has no such line.
	f.Run.Settings = nil
	if md := string(markdown(t, f)); strings.Contains(md, "Simulated at") || !strings.Contains(md, "3,294.0") {
		t.Errorf("real server's page:\n%s", md)
	}
}

// TestCSVKeepsMeasuredNumbers: the CSV holds the numbers as measured, with the factor in a
// column.
func TestCSVKeepsMeasuredNumbers(t *testing.T) {
	var b bytes.Buffer
	if err := CSV(&b, simulatedFile()); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, c := range rows[0] {
		col[c] = i
	}
	i, ok := col["time_scale"]
	if !ok {
		t.Fatalf("no time_scale column in %q", rows[0])
	}
	for _, r := range rows[1:] {
		if r[i] != "20" {
			t.Errorf("row %q: time_scale %q, want 20", r, r[i])
		}
	}
	if got := rows[2][col["total_tok_per_s"]]; got != "3294" {
		t.Errorf("decode total tok/s %q, want the measured 3294", got)
	}
}

// tbtComparison compares decode/8K/1, whose time between tokens went from base to head ms.
func tbtComparison(scale, base, head float64) *results.Comparison {
	ch := head/base - 1
	return &results.Comparison{
		Schema:  results.ComparisonSchemaV1,
		Base:    results.ComparedRun{Path: "base.json", TimeScale: scale},
		Head:    results.ComparedRun{Path: "head.json", TimeScale: scale},
		Verdict: results.VerdictRegression,
		Settings: results.ComparisonSettings{FDR: 0.05, Look: 1, Level: 0.05, ConfidenceLevel: 0.95,
			Metrics: []results.MetricSettings{{Metric: results.MetricTBT, Delta: 0.03}}},
		Summary: results.ComparisonSummary{Counts: results.VerdictCounts{Regression: 1}, CellCounts: results.VerdictCounts{Regression: 1}, Tests: 1},
		Cells: []results.CellComparison{{Cell: "decode/8K/1", Phase: results.PhaseDecode, ContextLabel: "8K", Context: 8192, Concurrency: 1,
			BaseStatus: results.StatusValid, HeadStatus: results.StatusValid, Verdict: results.VerdictRegression,
			Metrics: []results.MetricComparison{{Metric: results.MetricTBT, Base: fp(base), Head: fp(head),
				Change: &results.Change{Change: ch, Low: ch - 0.01, High: ch + 0.01}, Q: fp(0.001), Delta: 0.03, Verdict: results.VerdictRegression}}}},
	}
}

// TestComparisonShowsSmallTimeChange: a 10 % change of a 0.7 ms time shows in the numbers
// ("0.7 ms → 0.8 ms" hid it, or misstated it).
func TestComparisonShowsSmallTimeChange(t *testing.T) {
	var b bytes.Buffer
	if err := ComparisonText(&b, tbtComparison(0, 0.70, 0.77)); err != nil {
		t.Fatal(err)
	}
	if want := "decode/8K/1 Time between tokens: 0.700 ms → 0.770 ms, +10.0%"; !strings.Contains(b.String(), want) {
		t.Errorf("text lacks %q:\n%s", want, b.String())
	}
	if strings.Contains(b.String(), "Simulated at") {
		t.Errorf("a real server's comparison names a time scale:\n%s", b.String())
	}
}

// TestComparisonInProfileTime: both sides measured at 20× show the profile's times, with the
// factor stated, in the text, the markdown and the PR comment.
func TestComparisonInProfileTime(t *testing.T) {
	c := tbtComparison(20, 0.30, 0.33)
	line := "Simulated at 20× the profile's speed: figures are in the profile's time (rates ÷ 20, times × 20); the results files hold them as measured."
	var text, md, comment bytes.Buffer
	if err := ComparisonText(&text, c); err != nil {
		t.Fatal(err)
	}
	if err := ComparisonMarkdown(&md, c); err != nil {
		t.Fatal(err)
	}
	if err := PRComment(&comment, c, simulatedFile()); err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"text": text.String(), "markdown": md.String()} {
		if !strings.Contains(out, "Time between tokens: 6.00 ms → 6.60 ms") || !strings.Contains(out, line) {
			t.Errorf("%s lacks the profile's times or the factor line:\n%s", name, out)
		}
	}
	// The comment says it in its header line; its detail and the head's page, in the check
	// run's output and the full page, are in the profile's time too.
	if !strings.Contains(comment.String(), "simulated 20× faster; figures in the profile's time") {
		t.Errorf("comment lacks the time base in its header:\n%s", comment.String())
	}
	cm, err := NewComment(c, CommentContext{Head: simulatedFile()})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(cm.Full, "Time between tokens: 6.00 ms → 6.60 ms") || !strings.Contains(cm.Full, "| 8K | 164.7<br>42 ms TTFT |") {
		t.Errorf("the full page is not in the profile's time:\n%s", cm.Full)
	}
	// Sides at different speeds (compared with --force) are each shown in the profile's time.
	c.Head.TimeScale = 10
	text.Reset()
	if err := ComparisonText(&text, c); err != nil {
		t.Fatal(err)
	}
	if want := "Time between tokens: 6.00 ms → 3.30 ms"; !strings.Contains(text.String(), want) || !strings.Contains(text.String(), "base at 20×, head at 10×") {
		t.Errorf("text lacks %q or the two factors:\n%s", want, text.String())
	}
}
