package history

import (
	"bytes"
	"encoding/xml"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/speedmatrix/speedmatrix/calibrate"
	"github.com/speedmatrix/speedmatrix/compare/changepoint"
	"github.com/speedmatrix/speedmatrix/results"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// t0 is the start of the first synthetic run.
var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// commitOf is the synthetic commit of run i: 40 hex digits.
func commitOf(i int) string { return fmt.Sprintf("%07x%033d", 0xa000000+i*0x1111, i) }

// synthetic returns n runs of calibrate's synthetic matrix, one a day, with the decode row slowRow
// slowed by 6 % (2δ: rates × 0.94, TTFT × 1.06) from run slowAt on (no slowdown when slowRow is "").
func synthetic(t testing.TB, n, slowAt int, slowRow string) []*results.File {
	t.Helper()
	m := calibrate.NewMatrix(11, 1)
	r := rand.New(rand.NewPCG(12, 13))
	files := make([]*results.File, n)
	for i := range files {
		var slow *calibrate.Slowdown
		if slowRow != "" && i >= slowAt {
			slow = &calibrate.Slowdown{ContextLabel: slowRow, RateFactor: 0.94, TTFTFactor: 1.06}
		}
		f := m.Run(r, fmt.Sprintf("run-%02d", i), slow)
		f.Engine.Commit = commitOf(i)
		f.Run.Start = t0.Add(time.Duration(i) * 24 * time.Hour)
		if err := results.Validate(f); err != nil {
			t.Fatalf("synthetic run %d: %v", i, err)
		}
		files[i] = f
	}
	return files
}

// TestAnalyzeFindsRowSlowdown slows the decode row 8K by 2δ from the 16th of 30 runs and checks
// that every quiet cell of the row (concurrency ≥ 8, run-to-run CV ≤ 1 %) shows one total tok/s
// regression within two runs of it, and that no quiet cell of another row shows any.
func TestAnalyzeFindsRowSlowdown(t *testing.T) {
	const n, at = 30, 15
	h, err := Analyze(synthetic(t, n, at, "8K"), DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	found, elsewhere := 0, 0
	for _, s := range h.Series {
		quiet := s.Cell.Phase == results.PhaseDecode && s.Cell.Concurrency >= 8 && s.Metric == results.MetricTotalTokPerS && s.Values() > 0
		if !quiet {
			elsewhere += len(s.Shifts)
			continue
		}
		if s.Cell.ContextLabel != "8K" {
			if len(s.Shifts) != 0 {
				t.Errorf("%s %s: %d shifts %+v in a row that did not change", s.Cell, s.Metric, len(s.Shifts), s.Shifts)
			}
			continue
		}
		found++
		if len(s.Shifts) != 1 {
			t.Errorf("%s: %d shifts; want 1 at run %d", s.Cell, len(s.Shifts), at)
			continue
		}
		sh := s.Shifts[0]
		if sh.Index < at-2 || sh.Index > at+2 || sh.Direction != changepoint.Regression {
			t.Errorf("%s: %s at run %d; want a regression at %d ± 2", s.Cell, sh.Direction, sh.Index, at)
		}
		if sh.Commit != s.Points[sh.Index].Commit || sh.Previous != s.Points[sh.Index-1].Commit {
			t.Errorf("%s: shift names commits %s after %s; want the run's own and the one before", s.Cell, sh.Commit, sh.Previous)
		}
	}
	if found < 4 {
		t.Errorf("only %d quiet cells in row 8K; the synthetic matrix changed", found)
	}
	t.Logf("%d quiet cells of row 8K checked; %d shifts in the other %d cell-metrics (noisy cells and the row's other metrics)", found, elsewhere, len(h.Series)-found)
	if len(h.Regressions()) == 0 {
		t.Error("Regressions() is empty")
	}
}

// TestNoFalseShiftsInQuietHistory checks 30 runs without any change: no cell-metric whose
// run-to-run CV is under δ may show a shift, and in all the count is logged.
func TestNoFalseShiftsInQuietHistory(t *testing.T) {
	h, err := Analyze(synthetic(t, 30, 0, ""), DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, s := range h.Series {
		total += len(s.Shifts)
		for _, sh := range s.Shifts {
			t.Logf("%s %s: %s", s.Cell, s.Metric, s.ShiftText(sh))
		}
		if s.Cell.Phase == results.PhaseDecode && s.Cell.Concurrency >= 8 && s.Metric != results.MetricTTFT && len(s.Shifts) > 0 {
			t.Errorf("%s %s: shifts %+v in a history without change", s.Cell, s.Metric, s.Shifts)
		}
	}
	t.Logf("%d shifts over %d cell-metrics of 30 unchanged runs", total, len(h.Series))
	if max := len(h.Series) / 20; total > max {
		t.Errorf("%d shifts in %d unchanged cell-metrics; want at most %d (5 %%)", total, len(h.Series), max)
	}
}

// f64 returns a pointer to v.
func f64(v float64) *float64 { return &v }

// small returns a hand-made history: prefill/8K and decode/8K/32 over 12 runs, decode/8K/32's
// total tok/s falling by 10 % at run 6, its TTFT missing at run 3, the cell over capacity at
// run 9 and absent at run 10.
func small() []*results.File {
	var files []*results.File
	for i := range 12 {
		rate := 1000 + float64(i%3)*5
		if i >= 6 {
			rate *= 0.9
		}
		f := &results.File{
			Schema: results.SchemaV1, Engine: results.Engine{Name: "vllm", Commit: commitOf(i)},
			Hardware: results.Hardware{GPU: "H200", GPUCount: 1},
			Run: results.Run{ID: fmt.Sprintf("r%d", i), Source: results.SourceMeasured, ServedModel: "m", Start: t0.Add(time.Duration(i) * time.Hour),
				Tool: results.Tool{Name: "test"}},
			Prefill: []results.PrefillCell{{Context: 8192, ContextLabel: "8K", Status: results.StatusValid, PromptTokPerS: f64(9000 + float64(i%2)*10), TTFTMs: f64(900)}},
		}
		d := results.DecodeCell{Context: 8192, ContextLabel: "8K", Concurrency: 32, Status: results.StatusValid}
		d.TotalTokPerS, d.TTFTMs = f64(rate), f64(200)
		switch i {
		case 3:
			d.TTFTMs = nil
		case 9:
			d = results.DecodeCell{Context: 8192, ContextLabel: "8K", Concurrency: 32, Status: results.StatusOverCapacity}
		}
		if i != 10 {
			f.Decode = []results.DecodeCell{d}
		}
		files = append(files, f)
	}
	return files
}

// TestNewSeries checks the points: values, gaps for a missing value, a cell not measured and a
// cell absent, and the simulator's time scale.
func TestNewSeries(t *testing.T) {
	files := small()
	files[1].Run.Settings = &results.Settings{Simulator: &results.SimulatorSettings{Profile: "p", Speedup: 10}}
	id := results.CellID{Phase: results.PhaseDecode, ContextLabel: "8K", Concurrency: 32}
	rate := NewSeries(files, id, results.MetricTotalTokPerS)
	ttft := NewSeries(files, id, results.MetricTTFT)
	type pt struct {
		Status results.Status
		Value  *float64
	}
	got := func(s *Series, i int) pt { return pt{s.Points[i].Status, s.Points[i].Value} }
	tests := []struct {
		name string
		got  pt
		want pt
	}{
		{"rate 0", got(rate, 0), pt{results.StatusValid, f64(1000)}},
		{"rate 1 at speedup 10", got(rate, 1), pt{results.StatusValid, f64(100.5)}},
		{"ttft 1 at speedup 10", got(ttft, 1), pt{results.StatusValid, f64(2000)}},
		{"ttft 3 missing", got(ttft, 3), pt{results.StatusValid, nil}},
		{"rate 9 over capacity", got(rate, 9), pt{results.StatusOverCapacity, nil}},
		{"rate 10 absent", got(rate, 10), pt{"", nil}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, tt.got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
	}
	if rate.Points[4].Commit != commitOf(4) || !rate.Points[4].Date.Equal(t0.Add(4*time.Hour)) || rate.Points[4].RunID != "r4" {
		t.Errorf("point 4 = %+v; want commit, date and run id of run 4", rate.Points[4])
	}
}

// TestOrder checks that files are ordered by run start, undated ones first, ties kept.
func TestOrder(t *testing.T) {
	mk := func(id string, start time.Time) *results.File {
		return &results.File{Run: results.Run{ID: id, Start: start}}
	}
	fs := []*results.File{mk("c", t0.Add(2*time.Hour)), mk("a", t0), mk("none1", time.Time{}), mk("b", t0.Add(time.Hour)), mk("b2", t0.Add(time.Hour)), mk("none2", time.Time{})}
	Order(fs)
	var ids []string
	for _, f := range fs {
		ids = append(ids, f.Run.ID)
	}
	if diff := cmp.Diff([]string{"none1", "none2", "a", "b", "b2", "c"}, ids); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
}

// TestParseMetric checks the names and aliases.
func TestParseMetric(t *testing.T) {
	for in, want := range map[string]results.Metric{
		"total_tok_per_s": results.MetricTotalTokPerS, "total": results.MetricTotalTokPerS, "prompt": results.MetricPromptTokPerS,
		"TTFT_MS": results.MetricTTFT, "tbt": results.MetricTBT, " per_request ": results.MetricPerRequestTokPerS,
	} {
		if got, err := ParseMetric(in); err != nil || got != want {
			t.Errorf("ParseMetric(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := ParseMetric("speed"); err == nil || !strings.Contains(err.Error(), "total_tok_per_s") {
		t.Errorf("ParseMetric(speed) error %v; want one listing the names", err)
	}
}

// golden compares got with testdata/name, rewriting it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s differs (-want +got):\n%s", name, diff)
	}
}

// TestWriteText pins the series table and the summary of the small history.
func TestWriteText(t *testing.T) {
	h, err := Analyze(small(), DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	s := h.Find(results.CellID{Phase: results.PhaseDecode, ContextLabel: "8K", Concurrency: 32}, results.MetricTotalTokPerS)
	if s == nil || len(s.Shifts) != 1 || s.Shifts[0].Index != 6 {
		t.Fatalf("decode/8K/32 total tok/s: %+v; want one shift at run 6", s)
	}
	var buf bytes.Buffer
	if err := WriteText(&buf, s); err != nil {
		t.Fatal(err)
	}
	golden(t, "series.golden", buf.Bytes())
	buf.Reset()
	if err := WriteSummary(&buf, h); err != nil {
		t.Fatal(err)
	}
	golden(t, "summary.golden", buf.Bytes())
}

// TestWriteTextError checks that a failing writer's error is returned.
func TestWriteTextError(t *testing.T) {
	h, err := Analyze(small(), DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteText(failWriter{}, h.Series[0]); err == nil {
		t.Error("WriteText to a failing writer: no error")
	}
	if err := WriteSummary(failWriter{}, h); err == nil {
		t.Error("WriteSummary to a failing writer: no error")
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, io.ErrClosedPipe }

// TestSVG checks that a chart is well-formed SVG with a size, the series' points, and a red
// dashed line at the regression.
func TestSVG(t *testing.T) {
	h, err := Analyze(small(), DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	s := h.Find(results.CellID{Phase: results.PhaseDecode, ContextLabel: "8K", Concurrency: 32}, results.MetricTotalTokPerS)
	svg, err := s.SVG(chartW, chartH)
	if err != nil {
		t.Fatal(err)
	}
	var root struct {
		XMLName xml.Name
		Width   string `xml:"width,attr"`
		Height  string `xml:"height,attr"`
	}
	if err := xml.Unmarshal(svg, &root); err != nil {
		t.Fatalf("chart is not XML: %v", err)
	}
	if root.XMLName.Local != "svg" || root.Width == "" || root.Height == "" {
		t.Errorf("root <%s width=%q height=%q>; want an svg with a size", root.XMLName.Local, root.Width, root.Height)
	}
	for _, want := range []string{"decode/8K/32 · Total tok/s", "#C62828", "stroke-dasharray", commitOf(6)[:7]} {
		if !bytes.Contains(svg, []byte(want)) {
			t.Errorf("chart lacks %q", want)
		}
	}
	empty := &Series{Cell: s.Cell, Metric: s.Metric, Points: []Point{{Status: results.StatusOverCapacity}}}
	if _, err := empty.SVG(chartW, chartH); err != nil {
		t.Errorf("chart of a series without values: %v", err)
	}
}

// TestSite checks the page: every chart it links is in the site, every main-metric cell has
// one, the change point and the latest matrix are listed, and text from the results files is
// escaped.
func TestSite(t *testing.T) {
	files := small()
	last := files[len(files)-1]
	last.Run.ServedModel = `<script>alert("model")</script>`
	last.Engine.Commit = `"><img src=x onerror=alert(1)>`
	h, err := Analyze(files, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	site, err := h.Site()
	if err != nil {
		t.Fatal(err)
	}
	index := string(site["index.html"])
	for _, bad := range []string{`<script>`, `<img src=x`, `http://`, `https://`} {
		if strings.Contains(index, bad) {
			t.Errorf("index.html holds %q", bad)
		}
	}
	for _, want := range []string{"&lt;script&gt;", "Latest matrix", "regression", commitOf(6)[:7], "-9.9%", "prefill/8K", `<th class="num">32</th>`} {
		if !strings.Contains(index, want) {
			t.Errorf("index.html lacks %q", want)
		}
	}
	charts := 0
	for name := range site {
		if strings.HasPrefix(name, "charts/") {
			charts++
			if !strings.Contains(index, `src="`+name+`"`) {
				t.Errorf("chart %s is not on the page", name)
			}
		}
	}
	if charts != 2 {
		t.Errorf("%d charts; want 2 (prefill/8K prompt tok/s, decode/8K/32 total tok/s)", charts)
	}
	if got, want := ChartName(h.Series[0]), "charts/prefill-8K-prompt_tok_per_s.svg"; got != want {
		t.Errorf("ChartName = %q; want %q", got, want)
	}
}

// TestMixedSetupsWarn checks the warning for files of different setups.
func TestMixedSetupsWarn(t *testing.T) {
	files := small()
	files[4].Hardware.GPU = "A100"
	h, err := Analyze(files, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Warnings) != 1 || !strings.Contains(h.Warnings[0], "A100") {
		t.Errorf("warnings %q; want one naming the A100 run", h.Warnings)
	}
}
