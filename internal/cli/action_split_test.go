package cli

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/speedmatrix/speedmatrix/ghbot/ghtest"
)

// pushEnv is an action environment on a push of pushAfter to master, the data branch as the
// store, with extra appended to the configuration.
func pushEnv(t *testing.T, extra string) *actEnv {
	t.Helper()
	e := newActEnv(t)
	day := time.Date(2019, 5, 1, 0, 0, 0, 0, time.UTC)
	root := e.srv.AddCommit(actRepo, ghtest.GitCommit{Message: "root", Date: day}, nil)
	e.srv.AddCommit(actRepo, ghtest.GitCommit{SHA: pushAfter, Message: "pushed", Parents: []string{root}, Date: day.Add(time.Hour)}, nil)
	e.srv.SetRef(actRepo, "heads/master", pushAfter)
	e.writeConfig(actionConfig("") + extra)
	e.event("push", payload(t, "push/with-new-branch.payload.json"))
	return e
}

// dataFiles counts the data branch's files of sha: default-branch results and A/A reruns.
func dataFiles(e *actEnv, sha string) (def, aa int) {
	for p := range e.srv.Files(actRepo, "heads/speedmatrix-data") {
		switch {
		case strings.HasPrefix(p, "results/"+sha+"/"):
			def++
		case strings.HasPrefix(p, "aa/"+sha+"/"):
			aa++
		}
	}
	return def, aa
}

// splitRun runs the three jobs of the split workflow (decide, measure without a token, report)
// on the event set in e, passing the decide job's outputs on as the example workflow does; it
// returns the decide job's outputs and the report job's.
func splitRun(t *testing.T, e *actEnv) (decide, report map[string]string) {
	t.Helper()
	token := e.vars["INPUT_TOKEN"]
	e.vars["INPUT_MODE"] = "decide"
	decide = mustRun(t, e)
	if decide["run"] != "true" {
		t.Fatalf("decide outputs %v", decide)
	}
	delete(e.vars, "INPUT_TOKEN")
	e.vars["INPUT_MODE"], e.vars["INPUT_SHA"], e.vars["INPUT_AA"] = "measure", decide["sha"], decide["aa"]
	if out := mustRun(t, e); out["verdict"] != "baseline" && out["verdict"] != "no_baseline" && out["comparison"] == "" {
		t.Fatalf("measure outputs %v", out)
	}
	e.vars["INPUT_TOKEN"], e.vars["INPUT_MODE"] = token, "report"
	delete(e.vars, "INPUT_AA")
	report = mustRun(t, e)
	return decide, report
}

// TestActionSplitAARerun: in the split workflow the decide job says whether this push is the
// aa_every-th of its config (output aa), the measure job then measures the commit a second
// time (aa.json in the artifact), and the report job stores that run as an A/A rerun beside
// the push's own result. With no A/A due, the push is measured and stored once.
func TestActionSplitAARerun(t *testing.T) {
	for _, tc := range []struct {
		every  int
		wantAA bool
	}{{1, true}, {2, false}} {
		t.Run(fmt.Sprint("aa_every ", tc.every), func(t *testing.T) {
			e := pushEnv(t, fmt.Sprintf("store: {aa_every: %d}\n", tc.every))
			decide, report := splitRun(t, e)
			if decide["aa"] != fmt.Sprint(tc.wantAA) {
				t.Errorf("decide output aa %q, want %v", decide["aa"], tc.wantAA)
			}
			if report["verdict"] != "baseline" {
				t.Errorf("report outputs %v", report)
			}
			if got := fileExistsT(filepath.Join(e.dir, "artifact", "aa.json")); got != tc.wantAA {
				t.Errorf("artifact aa.json exists %v, want %v", got, tc.wantAA)
			}
			def, aa := dataFiles(e, pushAfter)
			if def != 1 || (aa == 1) != tc.wantAA || aa > 1 {
				t.Errorf("data branch holds %d default-branch and %d A/A results of the push, want 1 and %v: %v",
					def, aa, tc.wantAA, slices.Sorted(maps.Keys(e.srv.Files(actRepo, "heads/speedmatrix-data"))))
			}
		})
	}
}

// TestActionSplitAAEveryCount: the decide job counts the pushes of the config already stored:
// with aa_every 2, the first push measures once and the second (the 2nd result) measures twice.
func TestActionSplitAAEveryCount(t *testing.T) {
	e := pushEnv(t, "store: {aa_every: 2}\n")
	if d, _ := splitRun(t, e); d["aa"] != "false" {
		t.Fatalf("first push: aa %q, want false", d["aa"])
	}
	// A second push of another commit.
	second := e.srv.AddCommit(actRepo, ghtest.GitCommit{Message: "second", Parents: []string{pushAfter}, Date: time.Date(2019, 5, 2, 0, 0, 0, 0, time.UTC)}, nil)
	e.srv.SetRef(actRepo, "heads/master", second)
	e.event("push", derived(t, "push/with-new-branch.payload.json", map[string]any{"after": second}))
	os.RemoveAll(filepath.Join(e.dir, "artifact"))
	if d, _ := splitRun(t, e); d["aa"] != "true" {
		t.Fatalf("second push: aa %q, want true", d["aa"])
	}
	if def, aa := dataFiles(e, second); def != 1 || aa != 1 {
		t.Errorf("second push: %d default-branch and %d A/A results stored, want 1 and 1", def, aa)
	}
}

// TestActionReportRefusesForgedBaseline: an artifact of a pull request's run whose meta.json
// claims kind baseline is not stored as a default-branch result (a PR's results are never
// baselines), nor its aa.json as an A/A rerun.
func TestActionReportRefusesForgedBaseline(t *testing.T) {
	e := newActEnv(t)
	e.event("pull_request", payload(t, "pull_request/opened.payload.json"))
	art := filepath.Join(e.dir, "artifact")
	os.MkdirAll(art, 0o755)
	b, err := os.ReadFile(baselineResults(t))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(art, "results.json"), b, 0o644)
	os.WriteFile(filepath.Join(art, "aa.json"), b, 0o644)
	os.WriteFile(filepath.Join(art, "meta.json"), []byte(`{"schema":"speedmatrix/action-artifact/v1","head_sha":"`+prHead+`","kind":"baseline"}`), 0o644)
	e.vars["INPUT_MODE"], e.vars["INPUT_SHA"] = "report", prHead
	_, _, err = e.run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "baseline") {
		t.Errorf("err %v, want a refusal of the kind", err)
	}
	if def, aa := dataFiles(e, prHead); def != 0 || aa != 0 {
		t.Errorf("a PR's artifact stored %d default-branch and %d A/A results", def, aa)
	}
}
