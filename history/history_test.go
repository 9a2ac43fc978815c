package history

import (
	"bytes"
	"encoding/xml"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"gonum.org/v1/plot/vg"

	"github.com/speedmatrix/speedmatrix/compare/changepoint"
	"github.com/speedmatrix/speedmatrix/history/internal/historytest"
	"github.com/speedmatrix/speedmatrix/results"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// TestAnalyzeFindsRowSlowdown slows the decode row 8K by 2δ from the 16th of 30 runs and checks
// that every quiet cell of the row (concurrency ≥ 8, run-to-run CV ≤ 1 %) shows one total tok/s
// regression within two runs of it, and that no quiet cell of another row shows any.
func TestAnalyzeFindsRowSlowdown(t *testing.T) {
	const n, at = 30, 15
	h, err := Analyze(historytest.Synthetic(t, n, at, "8K"), DefaultOptions())
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
	h, err := Analyze(historytest.Synthetic(t, 30, 0, ""), DefaultOptions())
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

// TestNewSeries checks the points: values, gaps for a missing value, a cell not measured and a
// cell absent, and the simulator's time scale.
func TestNewSeries(t *testing.T) {
	files := historytest.Small()
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
	if rate.Points[4].Commit != historytest.Commit(4) || !rate.Points[4].Date.Equal(historytest.Start.Add(4*time.Hour)) || rate.Points[4].RunID != "r4" {
		t.Errorf("point 4 = %+v; want commit, date and run id of run 4", rate.Points[4])
	}
}

// TestOrder checks that files are ordered by run start, undated ones first, ties kept.
func TestOrder(t *testing.T) {
	mk := func(id string, start time.Time) *results.File {
		return &results.File{Run: results.Run{ID: id, Start: start}}
	}
	fs := []*results.File{mk("c", historytest.Start.Add(2*time.Hour)), mk("a", historytest.Start), mk("none1", time.Time{}), mk("b", historytest.Start.Add(time.Hour)), mk("b2", historytest.Start.Add(time.Hour)), mk("none2", time.Time{})}
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
	h, err := Analyze(historytest.Small(), DefaultOptions())
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
	h, err := Analyze(historytest.Small(), DefaultOptions())
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
	h, err := Analyze(historytest.Small(), DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	s := h.Find(results.CellID{Phase: results.PhaseDecode, ContextLabel: "8K", Concurrency: 32}, results.MetricTotalTokPerS)
	svg, err := s.SVG(8*vg.Inch, 3*vg.Inch)
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
	for _, want := range []string{"decode/8K/32 · Total tok/s", "#C62828", "stroke-dasharray", historytest.Commit(6)[:7]} {
		if !bytes.Contains(svg, []byte(want)) {
			t.Errorf("chart lacks %q", want)
		}
	}
	empty := &Series{Cell: s.Cell, Metric: s.Metric, Points: []Point{{Status: results.StatusOverCapacity}}}
	if _, err := empty.SVG(8*vg.Inch, 3*vg.Inch); err != nil {
		t.Errorf("chart of a series without values: %v", err)
	}
}

// TestMixedSetupsWarn checks the warning for files of different setups.
func TestMixedSetupsWarn(t *testing.T) {
	files := historytest.Small()
	files[4].Hardware.GPU = "A100"
	h, err := Analyze(files, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Warnings) != 1 || !strings.Contains(h.Warnings[0], "A100") {
		t.Errorf("warnings %q; want one naming the A100 run", h.Warnings)
	}
}
