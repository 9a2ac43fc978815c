package demo

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/speedmatrix/speedmatrix/report"
	"github.com/speedmatrix/speedmatrix/results"
)

// TestDemoRuns: the demo's runs are the base's n runs, each under its own default-branch commit
// and seed, the last the baseline (base.json, BaseSHA), then the head with the slowdown.
func TestDemoRuns(t *testing.T) {
	runs := Jobs("d", 3, "decode=2")
	if len(runs) != 4 {
		t.Fatalf("%d runs, want 3 of the base and the head", len(runs))
	}
	commits, seeds, paths := map[string]bool{}, map[uint64]bool{}, map[string]bool{}
	for i, r := range runs {
		if i < 3 && (r.Side != "base" || r.Slowdown != "" || r.Commit == "" || commits[r.Commit]) {
			t.Errorf("run %d: %+v, want a base run of a commit of its own, not slowed", i, r)
		}
		commits[r.Commit], seeds[r.Seed], paths[r.Path] = true, true, true
	}
	if len(seeds) != 4 || len(paths) != 4 {
		t.Errorf("seeds %v, paths %v: want one each per run", seeds, paths)
	}
	if b := runs[2]; b.Commit != BaseSHA || b.Path != filepath.Join("d", "base.json") {
		t.Errorf("the newest base run is %+v, want the baseline: base.json of %s", b, BaseSHA)
	}
	if h := runs[3]; h.Side != "head" || h.Slowdown != "decode=2" || h.Path != filepath.Join("d", "head.json") || h.Commit != "" {
		t.Errorf("the head run is %+v", h)
	}
	if p := runs[0].Path; p != filepath.Join("d", "history", HistorySHA(1)[:7]+".json") {
		t.Errorf("the oldest base run's file is %s, want history/<its short commit>.json", p)
	}
}

// TestDemoSummarySaysTempDirKept: without --dir the summary says the files are kept in a new
// temporary folder, and how to choose another or remove it; with --dir it says nothing of it.
func TestDemoSummarySaysTempDirKept(t *testing.T) {
	d := Pages{Comparison: &results.Comparison{Verdict: results.VerdictUnchanged}, Comment: &report.Comment{Title: "t"}, Conclusion: "success"}
	for _, temp := range []bool{true, false} {
		var b strings.Builder
		in := SummaryInput{Dir: "/tmp/speedmatrix-demo-1", Store: "/tmp/speedmatrix-demo-1/store", Matrix: "quick", Profile: "p", Speedup: 20, Runs: 10, TempDir: temp}
		if err := Summary(&b, d, in); err != nil {
			t.Fatal(err)
		}
		says := strings.Contains(b.String(), "kept in /tmp/speedmatrix-demo-1, a new temporary folder each run") && strings.Contains(b.String(), "--dir DIR") && strings.Contains(b.String(), "rm -r /tmp/speedmatrix-demo-1")
		if says != temp {
			t.Errorf("tempDir %v: the summary says the folder is kept: %v\n%s", temp, says, b.String())
		}
	}
}
