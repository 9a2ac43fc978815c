package cli

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/speedmatrix/speedmatrix/calibrate"
	"github.com/speedmatrix/speedmatrix/results"
)

// compareHistoryRuns is how many earlier base runs compareFiles writes to DIR/base-history: enough
// for compare to measure each cell's run-to-run noise (store.DefaultMinHistory), so that a
// slowdown is decided on measured noise, not on the prior alone.
const compareHistoryRuns = 10

// compareFiles writes a base and a head results file (the head's 16K row slowed by slow, none
// when 1), and compareHistoryRuns earlier runs of the base to DIR/base-history, and returns DIR and
// the two files' paths.
func compareFiles(t *testing.T, slow float64, headModel string) (string, string, string) {
	t.Helper()
	dir := t.TempDir()
	m := calibrate.NewMatrix(31, 1)
	r := rand.New(rand.NewPCG(31, 1))
	base := m.Run(r, "base", nil)
	var s *calibrate.Slowdown
	if slow != 1 {
		s = &calibrate.Slowdown{ContextLabel: "16K", RateFactor: slow, TTFTFactor: 1 / slow}
	}
	head := m.Run(r, "head", s)
	if headModel != "" {
		head.Run.ServedModel = headModel
	}
	if err := os.MkdirAll(filepath.Join(dir, "base-history"), 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range compareHistoryRuns {
		f := m.Run(r, fmt.Sprintf("history-%d", i), nil)
		if err := results.WriteFile(filepath.Join(dir, "base-history", fmt.Sprintf("%02d.json", i)), f); err != nil {
			t.Fatal(err)
		}
	}
	bp, hp := filepath.Join(dir, "base.json"), filepath.Join(dir, "head.json")
	if err := results.WriteFile(bp, base); err != nil {
		t.Fatal(err)
	}
	if err := results.WriteFile(hp, head); err != nil {
		t.Fatal(err)
	}
	return dir, bp, hp
}

func runCLI(args ...string) (string, string, int) {
	var out, errOut bytes.Buffer
	err := Run(context.Background(), args, &out, &errOut, func(string) string { return "" })
	if err != nil && !Quiet(err) {
		errOut.WriteString(err.Error())
	}
	return out.String(), errOut.String(), ExitCode(err)
}

// TestCompareExitStatus: a 15 % slowdown of a row, against the base's measured run-to-run
// noise (--history), exits 3 and says so in every format; A/A and a δ above the slowdown exit 0.
func TestCompareExitStatus(t *testing.T) {
	dir, bp, hp := compareFiles(t, 0.85, "")
	hist := filepath.Join(dir, "base-history")
	out, _, code := runCLI("compare", "--history", hist, bp, hp, "-o", filepath.Join(dir, "c.json"))
	if code != ExitRegression {
		t.Fatalf("a 15 %% slowdown exits %d, want %d\n%s", code, ExitRegression, out)
	}
	if !strings.Contains(out, "Verdict: REGRESSION") {
		t.Errorf("text output lacks the verdict:\n%s", out)
	}
	c, err := results.ReadComparisonFile(filepath.Join(dir, "c.json"))
	if err != nil || c.Verdict != results.VerdictRegression {
		t.Fatalf("-o file: %v, %+v", err, c)
	}
	if c.Settings.HistoryFiles != compareHistoryRuns {
		t.Errorf("the comparison took %d history files, want %d", c.Settings.HistoryFiles, compareHistoryRuns)
	}
	// The same files compared with themselves: no regression, exit 0; json is the comparison.
	out, _, code = runCLI("compare", "--history", hist, "--format", "json", bp, bp)
	if code != ExitOK {
		t.Fatalf("A/A exits %d", code)
	}
	if c, err := results.DecodeComparison([]byte(out)); err != nil || c.Verdict == results.VerdictRegression {
		t.Errorf("json output: %v %v", err, c)
	}
	out, _, code = runCLI("compare", "--history", hist, "--format", "markdown", bp, hp)
	if code != ExitRegression || !strings.HasPrefix(out, "## ❌ speedmatrix: regression") {
		t.Errorf("markdown: exit %d\n%s", code, out)
	}
	// A larger δ for throughput and latency hides a 15 % slowdown: no regression.
	out, _, code = runCLI("compare", "--history", hist, "--threshold", "throughput=25", "--threshold", "latency=25", bp, hp)
	if code != ExitOK {
		t.Errorf("δ 25 %%: exit %d\n%s", code, out)
	}
}

func TestCompareBadInput(t *testing.T) {
	dir, bp, hp := compareFiles(t, 1, "other/model")
	_, errOut, code := runCLI("compare", bp, hp)
	if code != ExitError || !strings.Contains(errOut, "--force") || !strings.Contains(errOut, "other/model") {
		t.Errorf("different models: exit %d, %q", code, errOut)
	}
	out, _, code := runCLI("compare", "--force", bp, hp)
	if code == ExitError || !strings.Contains(out, "Warnings:") || !strings.Contains(out, "--force") {
		t.Errorf("--force: exit %d, want the comparison with a warning\n%s", code, out)
	}
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"schema": "speedmatrix/results/v1", "decode": [`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, errOut, code = runCLI("compare", bp, bad)
	if code != ExitError || !strings.Contains(errOut, "bad.json") || !strings.Contains(errOut, "truncated") {
		t.Errorf("malformed file: exit %d, %q", code, errOut)
	}
	for _, args := range [][]string{
		{"compare", bp},
		{"compare", "--threshold", "speed=3", bp, bp},
		{"compare", "--threshold", "ttft=0", bp, bp},
		{"compare", "--fdr", "1.5", bp, bp},
		{"compare", "--format", "pdf", bp, bp},
		{"compare", "--look", "3", bp, bp},
		{"compare", "--cells", "decode/8K/x", bp, bp},
	} {
		if _, _, code := runCLI(args...); code != ExitUsage {
			t.Errorf("%v: exit %d, want %d", args, code, ExitUsage)
		}
	}
}

func TestCompareHistoryAndLook2(t *testing.T) {
	dir, bp, hp := compareFiles(t, 1, "")
	hist := filepath.Join(dir, "history")
	if err := os.Mkdir(hist, 0o755); err != nil {
		t.Fatal(err)
	}
	m := calibrate.NewMatrix(31, 1)
	r := rand.New(rand.NewPCG(99, 1))
	for i := range 4 {
		if err := results.WriteFile(filepath.Join(hist, "run"+string(rune('a'+i))+".json"), m.Run(r, "h"+string(rune('a'+i)), nil)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(hist, "broken.json"), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runCLI("compare", "--history", hist, bp, hp)
	if code == ExitError {
		t.Fatalf("history: exit %d\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(out, "history: ") || !strings.Contains(out, "history file skipped") {
		t.Errorf("history output lacks the noise source or the skipped file:\n%s", out)
	}
	// Second look: pooled files, limited cells.
	out, _, code = runCLI("compare", "--look", "2", "--cells", "decode/8K/16,decode/8K/1", bp+","+filepath.Join(hist, "runa.json"), hp+","+filepath.Join(hist, "runb.json"))
	if code == ExitError || !strings.Contains(out, "look 2 of 2") || !strings.Contains(out, "trials: ") {
		t.Errorf("second look: exit %d\n%s", code, out)
	}
}

func TestCalibrateCommand(t *testing.T) {
	out, _, code := runCLI("calibrate", "--aa", "4", "--ab", "8", "--compare", "look=1")
	if code != ExitOK || !strings.Contains(out, "A/A with any regression verdict") || !strings.Contains(out, "row 1019K") {
		t.Errorf("calibrate: exit %d\n%s", code, out)
	}
	if _, _, code := runCLI("calibrate", "--aa", "0", "--ab", "0"); code != ExitUsage {
		t.Errorf("no comparisons: exit %d", code)
	}
}
