package cli

import (
	"path/filepath"
	"strings"
	"testing"
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
