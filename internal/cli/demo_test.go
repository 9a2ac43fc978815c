package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/speedmatrix/speedmatrix/report"
	"github.com/speedmatrix/speedmatrix/results"
)

// TestDemoRuns: the demo's runs are the base's n runs, each under its own default-branch commit
// and seed, the last the baseline (base.json, demoBaseSHA), then the head with the slowdown.
func TestDemoRuns(t *testing.T) {
	runs := demoRuns("d", 3, "decode=2")
	if len(runs) != 4 {
		t.Fatalf("%d runs, want 3 of the base and the head", len(runs))
	}
	commits, seeds, paths := map[string]bool{}, map[uint64]bool{}, map[string]bool{}
	for i, r := range runs {
		if i < 3 && (r.side != "base" || r.slowdown != "" || r.commit == "" || commits[r.commit]) {
			t.Errorf("run %d: %+v, want a base run of a commit of its own, not slowed", i, r)
		}
		commits[r.commit], seeds[r.seed], paths[r.path] = true, true, true
	}
	if len(seeds) != 4 || len(paths) != 4 {
		t.Errorf("seeds %v, paths %v: want one each per run", seeds, paths)
	}
	if b := runs[2]; b.commit != demoBaseSHA || b.path != filepath.Join("d", "base.json") {
		t.Errorf("the newest base run is %+v, want the baseline: base.json of %s", b, demoBaseSHA)
	}
	if h := runs[3]; h.side != "head" || h.slowdown != "decode=2" || h.path != filepath.Join("d", "head.json") || h.commit != "" {
		t.Errorf("the head run is %+v", h)
	}
	if p := runs[0].path; p != filepath.Join("d", "history", demoHistorySHA(1)[:7]+".json") {
		t.Errorf("the oldest base run's file is %s, want history/<its short commit>.json", p)
	}
}

// TestDemoHistoryRunsUsage: --history-runs below 1 is a usage error that says what to give.
func TestDemoHistoryRunsUsage(t *testing.T) {
	_, errOut, code := runCLI("demo", "--history-runs", "0", "--dir", t.TempDir())
	if code != ExitUsage || !strings.Contains(errOut, "--history-runs 0: want 1 or more") {
		t.Errorf("exit %d, %q", code, errOut)
	}
}

// TestDemoInputCheckedFirst: a head slow-down, profile or speed the simulator cannot take is a
// usage error before anything is measured (it once came after the base's ten runs): the folder
// stays empty.
func TestDemoInputCheckedFirst(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--head-slowdown", "decode=1.10@ctx"}, `--head-slowdown "decode=1.10@ctx": slowdown rule`},
		{[]string{"--sim-profile", "no-such-profile"}, "--sim-profile:"},
		{[]string{"--sim-speedup", "0"}, "--sim-speedup 0: want a number above 0"},
	} {
		dir := t.TempDir()
		_, errOut, code := runCLI(append([]string{"demo", "--quiet", "--dir", dir}, tc.args...)...)
		if code != ExitUsage || !strings.Contains(errOut, tc.want) {
			t.Errorf("demo %v: exit %d, %q; want %d and %q", tc.args, code, errOut, ExitUsage, tc.want)
		}
		if left, _ := os.ReadDir(dir); len(left) > 0 {
			t.Errorf("demo %v measured before refusing: %s holds %d files", tc.args, dir, len(left))
		}
	}
}

// TestDemoSummarySaysTempDirKept: without --dir the summary says the files are kept in a new
// temporary folder, and how to choose another or remove it; with --dir it says nothing of it.
func TestDemoSummarySaysTempDirKept(t *testing.T) {
	d := demoPages{Comparison: &results.Comparison{Verdict: results.VerdictUnchanged}, Comment: &report.Comment{Title: "t"}, Conclusion: "success"}
	for _, temp := range []bool{true, false} {
		var b strings.Builder
		in := demoSummaryInput{dir: "/tmp/speedmatrix-demo-1", store: "/tmp/speedmatrix-demo-1/store", matrix: "quick", profile: "p", speedup: 20, runs: 10, tempDir: temp}
		if err := demoSummary(&b, d, in); err != nil {
			t.Fatal(err)
		}
		says := strings.Contains(b.String(), "kept in /tmp/speedmatrix-demo-1, a new temporary folder each run") && strings.Contains(b.String(), "--dir DIR") && strings.Contains(b.String(), "rm -r /tmp/speedmatrix-demo-1")
		if says != temp {
			t.Errorf("tempDir %v: the summary says the folder is kept: %v\n%s", temp, says, b.String())
		}
	}
}
