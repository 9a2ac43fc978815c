package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/speedmatrix/speedmatrix/ghbot"
	"github.com/speedmatrix/speedmatrix/ghbot/ghtest"
	"github.com/speedmatrix/speedmatrix/results"
	"github.com/speedmatrix/speedmatrix/store"
)

// The attacks of issue 20 on the bot's side, each against the stateful fake GitHub: what a
// pull request's measuring job, another workflow's comment or a reader's command can make the
// bot believe or post.

// prMeta is the meta.json a measure job writes for PR pr at prHead.
func prMeta(pr string) string {
	return `{"schema":"speedmatrix/action-artifact/v1","head_sha":"` + prHead + `","base_sha":"` + prBase + `","pr":` + pr + `,"kind":"pull_request"}`
}

// writeArtifact lays out a measure job's artifact directory: meta.json, results.json and any
// other results files by name.
func writeArtifact(t *testing.T, e *actEnv, meta string, files map[string]*results.File) {
	t.Helper()
	art := filepath.Join(e.dir, "artifact")
	if err := os.MkdirAll(art, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(art, "meta.json"), []byte(meta), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, f := range files {
		if err := results.WriteFile(filepath.Join(art, name), f); err != nil {
			t.Fatal(err)
		}
	}
}

// scaled returns the shared baseline results with decode throughputs times k (summaries only).
func scaled(t *testing.T, k float64) *results.File {
	t.Helper()
	f, err := results.ReadFile(baselineResults(t))
	if err != nil {
		t.Fatal(err)
	}
	for i := range f.Decode {
		for _, v := range []*float64{f.Decode[i].TotalTokPerS, f.Decode[i].PerRequestTokPerS} {
			if v != nil {
				*v *= k
			}
		}
		f.Decode[i].Trials, f.Decode[i].SummaryOnly = nil, true
	}
	return f
}

// reportPR sets up the report job of PR #2 at prHead (event pull_request, sha input pinned).
func reportPR(e *actEnv) {
	e.event("pull_request", payload(e.t, "pull_request/opened.payload.json"))
	e.vars["INPUT_MODE"], e.vars["INPUT_SHA"], e.vars["INPUT_PR"] = "report", prHead, "2"
}

// TestActionModeRequired (issue 20, item 18): without a mode input the action refuses, naming
// the modes, before it calls GitHub: full, which runs pull-request code beside the token, is no
// longer what a missing input means.
func TestActionModeRequired(t *testing.T) {
	e := newActEnv(t)
	e.event("pull_request", payload(t, "pull_request/opened.payload.json"))
	delete(e.vars, "INPUT_MODE")
	_, _, err := e.run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "input mode is not set") || !strings.Contains(err.Error(), "decide, measure or report") {
		t.Fatalf("err %v, want a refusal naming the modes", err)
	}
	if calls := e.srv.State().Calls; len(calls) != 0 {
		t.Errorf("a run without a mode called GitHub: %+v", calls)
	}
	// The --mode flag still chooses.
	if _, _, err := e.run(context.Background(), "--mode", "full"); err != nil {
		t.Errorf("--mode full: %v", err)
	}
}

// TestActionReportNeedsSHA (item 9): report mode without the sha input posts nothing, even for
// an artifact whose commit is the pull request's head.
func TestActionReportNeedsSHA(t *testing.T) {
	e := newActEnv(t)
	reportPR(e)
	delete(e.vars, "INPUT_SHA")
	writeArtifact(t, e, prMeta("2"), map[string]*results.File{"results.json": scaled(t, 1)})
	_, _, err := e.run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "the sha input is required") {
		t.Fatalf("err %v, want the sha input required", err)
	}
	if w := writes(e.srv.State()); len(w) != 0 {
		t.Errorf("writes %+v", w)
	}
}

// TestActionReportPRFromInputs (item 10): the artifact's meta.json names PR #5, whose comment of
// ours it would edit; the report posts on the PR of its inputs only, and with no PR input on
// an event without one (workflow_dispatch), on none.
func TestActionReportPRFromInputs(t *testing.T) {
	e := newActEnv(t)
	other := ghbot.Marker("speedmatrix") + "\n<!-- speedmatrix:state {\"v\":1,\"phase\":\"done\",\"head_sha\":\"" + prHead + "\"} -->\nPR 5's results"
	e.srv.AddPull(ghtest.Pull{Repo: actRepo, Number: 5, Author: "Codertocat", HeadSHA: prHead, HeadRef: "other", BaseSHA: prBase, BaseRef: "master"})
	e.srv.AddComment(actRepo, 5, ghtest.ActionsLogin, other)
	reportPR(e)
	writeArtifact(t, e, prMeta("5"), map[string]*results.File{"results.json": scaled(t, 1)})
	mustRun(t, e)
	st := e.srv.State()
	if cs := st.CommentsOn(actRepo, 5); len(cs) != 1 || cs[0].Body != other {
		t.Errorf("PR 5's comments changed: %+v", cs)
	}
	oneComment(t, st) // PR #2's

	e2 := newActEnv(t)
	e2.srv.AddPull(ghtest.Pull{Repo: actRepo, Number: 5, Author: "Codertocat", HeadSHA: runSHA, BaseSHA: prBase, BaseRef: "master"})
	e2.srv.AddComment(actRepo, 5, ghtest.ActionsLogin, other)
	e2.event("workflow_dispatch", payload(t, "workflow_dispatch/payload.json"))
	e2.vars["INPUT_MODE"], e2.vars["INPUT_SHA"] = "report", runSHA
	meta := `{"schema":"speedmatrix/action-artifact/v1","head_sha":"` + runSHA + `","base_sha":"` + prBase + `","pr":5,"kind":"dispatch"}`
	writeArtifact(t, e2, meta, map[string]*results.File{"results.json": scaled(t, 1)})
	mustRun(t, e2)
	st = e2.srv.State()
	for _, c := range st.Comments {
		if c.Body != other {
			t.Errorf("comment %d on #%d written: %q", c.ID, c.Issue, c.Body)
		}
	}
	if len(st.CallsTo("PATCH", "/repos/"+actRepo+"/issues/comments")) != 0 {
		t.Errorf("an issue comment was edited")
	}
}

// TestActionReportIgnoresArtifactBase (item 8): the store holds no baseline, and the measuring
// job left a base.json ten times slower than its head (a forged "improvement"). The report
// compares nothing (no success); with github.no_baseline: failure the check fails.
func TestActionReportIgnoresArtifactBase(t *testing.T) {
	for _, tc := range []struct {
		extra, conclusion string
	}{{"", "neutral"}, {"github: {no_baseline: failure}\n", "failure"}} {
		t.Run(tc.conclusion, func(t *testing.T) {
			e := newStoreEnv(t, 0)
			e.writeConfig(actionConfig("") + "store: {dir: " + filepath.Join(e.dir, "store") + "}\n" + tc.extra)
			reportPR(e.actEnv)
			writeArtifact(t, e.actEnv, prMeta("2"), map[string]*results.File{"results.json": scaled(t, 1), "base.json": scaled(t, 0.1)})
			out := mustRun(t, e.actEnv)
			wantOutputs(t, out, map[string]string{"verdict": "no_baseline", "conclusion": tc.conclusion, "comparison": ""})
			if c := oneCheck(t, e.srv.State(), prHead); c.Conclusion != tc.conclusion {
				t.Errorf("check %s, want %s", c.Conclusion, tc.conclusion)
			}
		})
	}
}

// TestActionReportConfigChanged (item 8): the store holds the default branch's baseline at the
// merge-base, and the pull request's measuring job changed a serve flag (its results have
// another config id). That is no missing baseline (neutral satisfies a required check): the
// check fails and says which config changed and how.
func TestActionReportConfigChanged(t *testing.T) {
	e := newStoreEnv(t, 0)
	e.put(prBase)
	head := scaled(t, 1)
	head.Run.LaunchCommand += " --max-num-seqs 1024"
	if store.ConfigID(head) == store.ConfigID(scaled(t, 1)) {
		t.Fatal("the changed serve flag did not change the config id")
	}
	reportPR(e.actEnv)
	writeArtifact(t, e.actEnv, prMeta("2"), map[string]*results.File{"results.json": head, "base.json": scaled(t, 1)})
	out := mustRun(t, e.actEnv)
	wantOutputs(t, out, map[string]string{"verdict": "config_changed", "conclusion": "failure"})
	c := oneCheck(t, e.srv.State(), prHead)
	if c.Conclusion != "failure" || !strings.Contains(c.Summary, "changed what is measured") || !strings.Contains(c.Summary, "of config "+store.ConfigID(head)[:12]) ||
		!strings.HasPrefix(c.Title, "Blocked: ec26c3e measured another config") {
		t.Errorf("check %s:\n%s", c.Conclusion, c.Summary)
	}
}

// TestActionReportIndexTimeNow (item 17): a PR result whose file says it ended in year 9999 is
// indexed at the report job's clock, so pr_days prunes it; a results file over 16 MiB is
// refused with a failing check, and nothing is stored.
func TestActionReportIndexTimeNow(t *testing.T) {
	e := newStoreEnv(t, 0)
	e.put(prBase)
	head := scaled(t, 1)
	head.Run.End = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)
	reportPR(e.actEnv)
	writeArtifact(t, e.actEnv, prMeta("2"), map[string]*results.File{"results.json": head})
	before := time.Now().Add(-time.Minute)
	mustRun(t, e.actEnv)
	prs, err := e.st.List(context.Background(), store.Filter{Kind: store.KindPR})
	if err != nil || len(prs) != 1 {
		t.Fatalf("PR entries %+v, %v", prs, err)
	}
	if at := prs[0].Time; at.Year() == 9999 || at.Before(before) {
		t.Errorf("PR result indexed at %v, want the report's clock", at)
	}

	big := newStoreEnv(t, 0)
	reportPR(big.actEnv)
	writeArtifact(t, big.actEnv, prMeta("2"), nil)
	// A results file that is valid JSON and over the cap: the notes fill it.
	huge := scaled(t, 1)
	huge.Notes = []string{strings.Repeat("x", 17<<20)}
	if err := results.WriteFile(filepath.Join(big.dir, "artifact", "results.json"), huge); err != nil {
		t.Fatal(err)
	}
	out, _, err := big.run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "over the 16 MiB") {
		t.Fatalf("err %v, want the results file refused", err)
	}
	wantOutputs(t, out, map[string]string{"verdict": "refused", "conclusion": "failure"})
	if c := oneCheck(t, big.srv.State(), prHead); c.Conclusion != "failure" || !strings.Contains(c.Summary, "over the 16 MiB") {
		t.Errorf("check %s %q", c.Conclusion, c.Summary)
	}
	if prs, _ := big.st.List(context.Background(), store.Filter{}); len(prs) != 0 {
		t.Errorf("stored %+v", prs)
	}
}

// TestActionForgedStateNoAcceptance (item 7): with GITHUB_TOKEN any workflow comments as
// github-actions[bot]. A comment that quotes the marker and a state line accepting the head's
// regression (another workflow echoing a pull request's text) is not the bot's: it is left
// alone and the regression fails the check. A comment laid out as the previous version wrote
// it (marker first, then the state line) is found and edited in place — no duplicate — but its
// acceptance is not believed either. A maintainer's real /bench accept still turns the check
// green, and its reason reaches the check's summary without bidirectional controls (item 18).
func TestActionForgedStateNoAcceptance(t *testing.T) {
	accepted := `<!-- speedmatrix:state {"v":1,"phase":"done","head_sha":"` + prHead + `","verdict":"regression","conclusion":"success",` +
		`"accepted":{"by":"Codertocat","at":"2019-05-15T15:30:00Z","sha":"` + prHead + `","reason":"forged"}} -->`
	marker := ghbot.Marker("speedmatrix")
	for _, tc := range []struct {
		name, body string
		comments   int // the bot's comments afterwards, the planted one included
		edited     bool
	}{
		{"quoted by another workflow", "New PR: " + marker + "\n" + accepted + "\n", 2, false},
		{"the previous version's layout", marker + "\n" + accepted + "\n### ☑️ Accepted\n\n<!-- speedmatrix:comment -->\n" + marker + "\n", 1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newHistoryEnv(t, ", slowdown: decode=3") // the regression decided on measured noise
			planted := e.srv.AddComment(actRepo, 2, ghtest.ActionsLogin, tc.body)
			e.event("pull_request", payload(t, "pull_request/opened.payload.json"))
			out := mustRun(t, e)
			wantOutputs(t, out, map[string]string{"verdict": "regression", "conclusion": "failure"})
			wantHistoryNoise(t, filepath.Join(e.dir, "artifact", "comparison.json"), 3)
			st := e.srv.State()
			if c := oneCheck(t, st, prHead); c.Conclusion != "failure" {
				t.Errorf("check %s, want failure", c.Conclusion)
			}
			cms := st.CommentsOn(actRepo, 2)
			if len(cms) != tc.comments {
				t.Fatalf("%d comments, want %d: %+v", len(cms), tc.comments, cms)
			}
			for _, c := range cms {
				switch {
				case c.ID == planted && !tc.edited && c.Body != tc.body:
					t.Errorf("the quoting comment was edited:\n%s", c.Body)
				case c.ID == planted && tc.edited && (c.Body == tc.body || strings.Contains(c.Body, "forged")):
					t.Errorf("the previous version's comment was not rewritten, or kept its acceptance:\n%s", c.Body)
				case c.ID != planted && strings.Contains(c.Body, "forged"):
					t.Errorf("the forged acceptance reached our comment:\n%s", c.Body)
				}
			}
		})
	}

	e := newHistoryEnv(t, ", slowdown: decode=3")
	e.event("pull_request", payload(t, "pull_request/opened.payload.json"))
	wantOutputs(t, mustRun(t, e), map[string]string{"verdict": "regression", "conclusion": "failure"})
	e.benchComment("/bench accept " + prHead[:7] + " known cost \u202etxt.exe\u202c of the fix")
	out := mustRun(t, e)
	wantOutputs(t, out, map[string]string{"verdict": "accepted", "conclusion": "success"})
	c := oneCheck(t, e.srv.State(), prHead)
	if c.Conclusion != "success" || !strings.Contains(c.Summary, "known cost txt.exe of the fix") || strings.ContainsAny(c.Summary+c.Title, "\u202e\u202c") {
		t.Errorf("check %s %q", c.Conclusion, c.Summary)
	}
	if b := oneComment(t, e.srv.State()); strings.ContainsAny(b, "\u202e\u202c") {
		t.Errorf("comment holds bidi controls:\n%s", b)
	}
}
