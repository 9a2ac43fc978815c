package cli

import (
	"encoding/xml"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/speedmatrix/speedmatrix/calibrate"
	"github.com/speedmatrix/speedmatrix/results"
)

// historyDir writes n synthetic runs, one a day, with decode row 8K 6 % slower (2δ) from run
// slowAt on, and returns the folder and the commits in run order. File names run backwards, so
// that only the run start gives the right order.
func historyDir(t *testing.T, n, slowAt int) (string, []string) {
	t.Helper()
	dir := t.TempDir()
	m := calibrate.NewMatrix(21, 1)
	r := rand.New(rand.NewPCG(21, 2))
	start := time.Date(2025, 4, 1, 9, 0, 0, 0, time.UTC)
	var commits []string
	for i := range n {
		var slow *calibrate.Slowdown
		if i >= slowAt {
			slow = &calibrate.Slowdown{ContextLabel: "8K", RateFactor: 0.94, TTFTFactor: 1.06}
		}
		f := m.Run(r, fmt.Sprintf("run-%02d", i), slow)
		f.Engine.Commit = fmt.Sprintf("%02dc0ffee%032x", i, i)
		f.Run.Start = start.Add(time.Duration(i) * 24 * time.Hour)
		commits = append(commits, f.Engine.Commit)
		if err := results.WriteFile(filepath.Join(dir, fmt.Sprintf("%03d.json", n-i)), f); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "notes.json"), []byte(`{"not": "results"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, commits
}

// TestHistoryCell checks `history --cell`: the series in run-start order and the regression at
// the first slowed commit, and the chart --svg writes.
func TestHistoryCell(t *testing.T) {
	dir, commits := historyDir(t, 20, 10)
	svg := filepath.Join(t.TempDir(), "c.svg")
	out, errOut, code := runCLI("history", "--dir", dir, "--cell", "decode/8K/32", "--svg", svg)
	if code != ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	lines := strings.Split(out, "\n")
	if len(lines) < 23 || !strings.HasPrefix(lines[3], commits[0][:7]) || !strings.HasPrefix(lines[22], commits[19][:7]) {
		t.Errorf("series not in run order (first %s, last %s):\n%s", commits[0][:7], commits[19][:7], out)
	}
	want := "regression at " + commits[10][:7]
	if !strings.Contains(out, want) || !strings.Contains(out, "decode/8K/32 · Total tok/s") {
		t.Errorf("output lacks %q:\n%s", want, out)
	}
	if !strings.Contains(errOut, "notes.json") {
		t.Errorf("stderr does not warn about notes.json:\n%s", errOut)
	}
	data, err := os.ReadFile(svg)
	if err != nil {
		t.Fatal(err)
	}
	var root struct{ XMLName xml.Name }
	if err := xml.Unmarshal(data, &root); err != nil || root.XMLName.Local != "svg" {
		t.Errorf("--svg wrote no SVG (%v, root %q)", err, root.XMLName.Local)
	}
	ttft, _, code := runCLI("history", "--dir", dir, "--cell", "8K/32", "--metric", "ttft")
	if code != ExitOK || !strings.Contains(ttft, "TTFT (lower is better)") {
		t.Errorf("--metric ttft: exit %d\n%s", code, ttft)
	}
}

// TestHistorySummaryAndHTML checks `history` without --cell (every change point, the slowed
// row's quiet cells among them) and --html (the page and one chart per measured cell).
func TestHistorySummaryAndHTML(t *testing.T) {
	dir, commits := historyDir(t, 20, 10)
	page := filepath.Join(t.TempDir(), "site")
	out, errOut, code := runCLI("history", "--dir", dir, "--html", page)
	if code != ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	for _, c := range []string{"decode/8K/32", "decode/8K/64", "decode/8K/128"} {
		want := strings.Join([]string{c, "Total", "tok/s", "regression", "at", commits[10][:7]}, " ")
		found := false
		for line := range strings.Lines(out) {
			found = found || strings.HasPrefix(strings.Join(strings.Fields(line), " "), want)
		}
		if !found {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	index, err := os.ReadFile(filepath.Join(page, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	charts, _ := filepath.Glob(filepath.Join(page, "charts", "*.svg"))
	if len(charts) < 40 {
		t.Errorf("%d charts; want one per measured cell (52)", len(charts))
	}
	for _, c := range charts {
		if !strings.Contains(string(index), `src="charts/`+filepath.Base(c)+`"`) {
			t.Errorf("index.html does not show %s", filepath.Base(c))
		}
	}
}

// TestHistoryUsage checks the mistakes that exit with the usage code.
func TestHistoryUsage(t *testing.T) {
	dir, _ := historyDir(t, 4, 10)
	empty := t.TempDir()
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"history"}, "give the results to read"},
		{[]string{"history", "--dir", dir, "--store", empty}, "not both"},
		{[]string{"history", "--dir", dir, "--git", empty}, "--git and --ref read a store"},
		{[]string{"history", "--store", filepath.Join(empty, "nope")}, "no such directory"},
		{[]string{"history", "--dir", empty}, "holds no results file"},
		{[]string{"history", "--dir", filepath.Join(empty, "nope")}, "--dir"},
		{[]string{"history", "--dir", dir, "--cell", "decode/8K"}, "--cell"},
		{[]string{"history", "--dir", dir, "--cell", "decode/8K/32", "--metric", "speed"}, "total_tok_per_s"},
		{[]string{"history", "--dir", dir, "--cell", "prefill/8K", "--metric", "tbt"}, "no such metric"},
		{[]string{"history", "--dir", dir, "--svg", "x.svg"}, "need --cell"},
		{[]string{"history", "--dir", dir, "--cell", "decode/3K/7"}, "no results file holds"},
		{[]string{"history", "--dir", dir, "--alpha", "0.001"}, "permutations"},
		{[]string{"history", "--dir", dir, "--threshold", "speed=3"}, "--threshold"},
	}
	for _, tt := range tests {
		out, errOut, code := runCLI(tt.args...)
		if code != ExitUsage || !strings.Contains(errOut, tt.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q\n%s", tt.args, code, errOut, ExitUsage, tt.want, out)
		}
	}
}
