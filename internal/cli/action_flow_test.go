package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/speedmatrix/speedmatrix/ghbot"
	"github.com/speedmatrix/speedmatrix/ghbot/ghtest"
	"github.com/speedmatrix/speedmatrix/results"
	"github.com/speedmatrix/speedmatrix/store"
)

func mustRun(t *testing.T, e *actEnv) map[string]string {
	t.Helper()
	out, stderr, err := e.run(context.Background())
	if err != nil {
		t.Fatalf("action: %v\n%s", err, stderr)
	}
	return out
}

func oneCheck(t *testing.T, st ghtest.State, sha string) ghtest.CheckRun {
	t.Helper()
	cs := checksOn(st, sha)
	if len(cs) != 1 {
		t.Fatalf("%d check runs on %s, want 1", len(cs), sha)
	}
	return cs[0]
}

// newHistoryEnv is an action whose store holds prBase's results as the baseline and 3 earlier
// default-branch results (decode throughputs 0.99, 1.01 and 0.995 times the baseline's), its
// history at store.min_history 3: a pull request's comparison has measured run-to-run noise, so
// that a slowed head blocks on more than the prior. simExtra goes into the sim section.
func newHistoryEnv(t *testing.T, simExtra string) *actEnv {
	t.Helper()
	se := newStoreEnv(t, 2)
	se.put(prBase)
	for i, sha := range append([]string{se.a1}, se.older...) {
		se.putScaled(sha, []float64{0.99, 1.01, 0.995}[i])
	}
	e := se.actEnv
	e.writeConfig(actionConfig(simExtra) + "store: {dir: " + filepath.Join(e.dir, "store") + ", min_history: 3}\n")
	e.simTime = true // the verdict on measured noise is the model's, whatever the load (a loaded machine once made it incomplete)
	return e
}

// wantHistoryNoise fails the test unless the comparison at path took n history files (besides the
// baseline's own results, which the store's history starts with and compare does not count twice) and decided
// every regression of total tok/s on the noise they measured.
func wantHistoryNoise(t *testing.T, path string, n int) {
	t.Helper()
	c, err := results.ReadComparisonFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if c.Settings.HistoryFiles != n {
		t.Errorf("the comparison took %d history files, want %d", c.Settings.HistoryFiles, n)
	}
	for _, cell := range c.Cells {
		for _, m := range cell.Metrics {
			if m.Metric == results.MetricTotalTokPerS && m.Verdict == results.VerdictRegression && (m.Noise == nil || m.Noise.Source != results.NoiseHistory) {
				t.Errorf("%s total tok/s regressed on noise %+v, want the history's", cell.Cell, m.Noise)
			}
		}
	}
}

func oneComment(t *testing.T, st ghtest.State) string {
	t.Helper()
	cs := botComments(st)
	if len(cs) != 1 {
		t.Fatalf("%d bot comments, want 1", len(cs))
	}
	return cs[0].Body
}

// TestActionAcceptFlow: a regression fails the check; /bench accept by a writer records who,
// when, which commit and why in the comment and turns the check success; a rerun at the same
// head keeps the acceptance; a push (new head) voids it. The baseline is the store's, with a
// history of 4 default-branch results (store.min_history 3), so that the slowdown is decided
// on measured run-to-run noise, not on the prior alone.
func TestActionAcceptFlow(t *testing.T) {
	e := newHistoryEnv(t, ", slowdown: decode=3")
	e.event("pull_request", payload(t, "pull_request/opened.payload.json"))
	out := mustRun(t, e)
	wantOutputs(t, out, map[string]string{"verdict": "regression", "conclusion": "failure", "regressions": "1"})
	wantHistoryNoise(t, filepath.Join(e.dir, "artifact", "comparison.json"), 3)
	st := e.srv.State()
	if c := oneCheck(t, st, prHead); c.Conclusion != "failure" || !strings.HasPrefix(c.Title, "Blocked: decode ") || !strings.Contains(c.Title, "8K × 8") {
		t.Fatalf("check %s %q", c.Conclusion, c.Title)
	}
	if b := oneComment(t, st); !strings.Contains(b, `"verdict":"regression"`) || !strings.Contains(b, `"regressions":["decode/8K/8"]`) {
		t.Fatalf("comment state:\n%s", b)
	}

	e.benchComment("/bench accept \"the slowdown buys correctness, see #1 <b>@team</b>\"")
	out = mustRun(t, e)
	wantOutputs(t, out, map[string]string{"verdict": "accepted", "conclusion": "success"})
	st = e.srv.State()
	c := oneCheck(t, st, prHead)
	if c.Conclusion != "success" || c.Title != "Not blocked: regression accepted by Codertocat at ec26c3e" {
		t.Errorf("check after accept: %s %q", c.Conclusion, c.Title)
	}
	b := oneComment(t, st)
	for _, want := range []string{"### 🟢 Not blocked: regression accepted by Codertocat at ec26c3e",
		"> **Accepted** by `Codertocat` on ", " at `ec26c3e`: `the slowdown buys correctness, see #1 <b>@team</b>`",
		`"accepted":{"by":"Codertocat"`, `"sha":"` + prHead, "cell slower"} {
		if !strings.Contains(b, want) {
			t.Errorf("comment after accept lacks %q:\n%s", want, b)
		}
	}
	if len(st.Reactions) != 1 {
		t.Errorf("%d reactions, want the eyes on the command", len(st.Reactions))
	}

	// The same head measured again: still a regression, still accepted.
	e.event("pull_request", payload(t, "pull_request/synchronize.payload.json"))
	out = mustRun(t, e)
	wantOutputs(t, out, map[string]string{"verdict": "accepted", "conclusion": "success", "regressions": "1"})
	st = e.srv.State()
	if c := oneCheck(t, st, prHead); c.Conclusion != "success" || !strings.HasPrefix(c.Title, "Accepted") {
		t.Errorf("check after a rerun at the same head: %s %q", c.Conclusion, c.Title)
	}
	if b := oneComment(t, st); !strings.Contains(b, "> Accepted by [Codertocat]") {
		t.Errorf("the rerun at the same head lost the acceptance:\n%s", b)
	}

	// A push: the new head's regression is not accepted.
	e.srv.AddCommit(actRepo, ghtest.GitCommit{SHA: movedSHA, Message: "moved", Parents: []string{prHead}, Date: time.Date(2019, 5, 6, 0, 0, 0, 0, time.UTC)}, nil)
	e.srv.MovePullHead(actRepo, 2, movedSHA)
	e.event("pull_request", derived(t, "pull_request/synchronize.payload.json", map[string]any{"pull_request.head.sha": movedSHA}))
	out = mustRun(t, e)
	wantOutputs(t, out, map[string]string{"verdict": "regression", "conclusion": "failure"})
	st = e.srv.State()
	if c := oneCheck(t, st, movedSHA); c.Conclusion != "failure" {
		t.Errorf("check on the new head: %s", c.Conclusion)
	}
	wantHistoryNoise(t, filepath.Join(e.dir, "artifact", "comparison.json"), 3)
	if b := oneComment(t, st); strings.Contains(b, "Accepted") {
		t.Errorf("the acceptance survived a push:\n%s", b)
	}
}

// TestActionRerunUndecided: /bench rerun without cells measures the cells the comment's state
// lists as undecided; with cells, the cells named.
func TestActionRerunUndecided(t *testing.T) {
	for _, tc := range []struct{ name, command, cell string }{
		{"undecided from the state", "/bench rerun", "decode/8K/1"},
		{"named", "/bench rerun decode/8K/2", "decode/8K/2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newActEnv(t)
			e.storeBaseline(prBase)
			st := `<!-- speedmatrix:state {"v":1,"phase":"done","head_sha":"` + prHead + `","verdict":"inconclusive","inconclusive":["decode/8K/1"]} -->`
			e.srv.AddComment(actRepo, 2, ghtest.ActionsLogin, ghbot.Marker("speedmatrix")+"\n"+st+"\nold results")
			e.benchComment(tc.command)
			out := mustRun(t, e)
			f, err := results.ReadFile(out["results"])
			if err != nil {
				t.Fatal(err)
			}
			if len(f.Decode) != 1 || f.Decode[0].ID().String() != tc.cell {
				t.Errorf("measured %d decode cells (%v), want only %s", len(f.Decode), f.Decode, tc.cell)
			}
			gst := e.srv.State()
			if b := oneComment(t, gst); !strings.Contains(b, "Cells measured: `"+tc.cell+"`") {
				t.Errorf("comment does not name the rerun cells:\n%s", b)
			}
			if c := oneCheck(t, gst, prHead); c.Status != "completed" {
				t.Errorf("check %s", c.Status)
			}
		})
	}
}

// TestActionRunDiesCompletesCheck: a run whose context ends midway (a cancelled or timed-out
// job) leaves no check in_progress: the deferred completion marks it timed_out, and the comment
// says the run ended.
func TestActionRunDiesCompletesCheck(t *testing.T) {
	e := newActEnv(t)
	e.simTime = false // a bubble's run cannot be cut short from outside; a loaded machine only makes the run longer than the 300 ms
	e.storeBaseline(prBase)
	e.event("pull_request", payload(t, "pull_request/opened.payload.json"))
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	out, _, err := e.run(ctx)
	if err == nil {
		t.Fatal("a run cut short returned no error")
	}
	wantOutputs(t, out, map[string]string{"verdict": "cancelled", "conclusion": "timed_out"})
	st := e.srv.State()
	if c := oneCheck(t, st, prHead); c.Status != "completed" || c.Conclusion != "timed_out" {
		t.Errorf("check %s/%s, want completed/timed_out", c.Status, c.Conclusion)
	}
	if b := oneComment(t, st); !strings.Contains(b, `"phase":"cancelled"`) || !strings.Contains(b, "timed out") {
		t.Errorf("comment:\n%s", b)
	}
}

// TestActionCleanup: the if: always() step completes our check left in_progress as cancelled
// and leaves a workflow job's check of the same name alone.
func TestActionCleanup(t *testing.T) {
	e := newActEnv(t)
	e.event("pull_request", payload(t, "pull_request/opened.payload.json"))
	ours := e.srv.AddCheckRun(ghtest.CheckRun{Repo: actRepo, HeadSHA: prHead, Name: "speedmatrix", Status: "in_progress", ExternalID: "speedmatrix", AppID: ghtest.ActionsAppID})
	job := e.srv.AddCheckRun(ghtest.CheckRun{Repo: actRepo, HeadSHA: prHead, Name: "speedmatrix", Status: "in_progress", AppID: ghtest.ActionsAppID})
	e.srv.AddComment(actRepo, 2, ghtest.ActionsLogin, ghbot.Marker("speedmatrix")+"\n"+
		`<!-- speedmatrix:state {"v":1,"phase":"measuring","head_sha":"`+prHead+`"} -->`+"\nMeasuring…")
	out, stderr, err := e.run(context.Background(), "--cleanup")
	if err != nil {
		t.Fatalf("cleanup: %v\n%s", err, stderr)
	}
	wantOutputs(t, out, map[string]string{"verdict": "cancelled", "conclusion": "cancelled"})
	for _, c := range e.srv.State().CheckRuns {
		switch c.ID {
		case ours:
			if c.Status != "completed" || c.Conclusion != "cancelled" || !strings.Contains(c.Summary, "ended before its results") {
				t.Errorf("our check: %s/%s %q", c.Status, c.Conclusion, c.Summary)
			}
		case job:
			if c.Status != "in_progress" {
				t.Errorf("the job's check was touched: %s", c.Status)
			}
		}
	}
	if b := oneComment(t, e.srv.State()); !strings.Contains(b, `"phase":"cancelled"`) {
		t.Errorf("comment still measuring:\n%s", b)
	}
}

// TestActionMeasureThenReport is the fork-safe split: measure holds no token and calls no API;
// report reads the artifact, checks the commit against the decided one and posts.
func TestActionMeasureThenReport(t *testing.T) {
	// The measure job's runner holds the base's results (baseline-dir); the report job reads
	// its baseline from the store alone, never from the artifact.
	se := newStoreEnv(t, 0)
	se.put(prBase)
	e := se.actEnv
	e.storeBaseline(prBase)
	e.event("pull_request", payload(t, "pull_request/opened.payload.json"))
	token := e.vars["INPUT_TOKEN"]

	e.vars["INPUT_MODE"] = "measure"
	if _, _, err := e.run(context.Background()); err == nil || !strings.Contains(err.Error(), "takes no token") {
		t.Fatalf("measure with a token: %v, want a refusal", err)
	}
	delete(e.vars, "INPUT_TOKEN")
	out := mustRun(t, e)
	if out["verdict"] == "" || out["results"] == "" {
		t.Errorf("measure outputs %v", out)
	}
	if calls := e.srv.State().Calls; len(calls) != 0 {
		t.Fatalf("measure mode called GitHub: %+v", calls)
	}
	for _, f := range []string{"meta.json", "results.json", "base.json", "comparison.json", "comment.md"} {
		if !fileExistsT(filepath.Join(e.dir, "artifact", f)) {
			t.Errorf("artifact lacks %s", f)
		}
	}

	e.vars["INPUT_TOKEN"], e.vars["INPUT_MODE"], e.vars["INPUT_SHA"] = token, "report", movedSHA
	if _, _, err := e.run(context.Background()); err == nil || !strings.Contains(err.Error(), "the artifact is for ec26c3e, but the commit decided on is 89abcde") {
		t.Fatalf("report of another commit's artifact: %v", err)
	}
	if w := writes(e.srv.State()); len(w) != 0 {
		t.Fatalf("a refused report wrote %+v", w)
	}
	e.vars["INPUT_SHA"] = prHead
	rout := mustRun(t, e)
	st := e.srv.State()
	c := oneCheck(t, st, prHead)
	if c.Status != "completed" || c.Conclusion != rout["conclusion"] || rout["verdict"] != out["verdict"] {
		t.Errorf("check %s/%s, report outputs %v, measure outputs %v", c.Status, c.Conclusion, rout, out)
	}
	oneComment(t, st)
}

// TestActionReportNoArtifact: the report step after a measuring job that died completes the
// check as cancelled.
func TestActionReportNoArtifact(t *testing.T) {
	e := newActEnv(t)
	e.event("pull_request", payload(t, "pull_request/opened.payload.json"))
	e.vars["INPUT_MODE"], e.vars["INPUT_SHA"] = "report", prHead
	out := mustRun(t, e)
	wantOutputs(t, out, map[string]string{"verdict": "cancelled", "conclusion": "cancelled"})
	if c := oneCheck(t, e.srv.State(), prHead); c.Conclusion != "cancelled" || !strings.Contains(c.Summary, "The measuring job stopped before it wrote results: see its log in [the workflow run](https://github.com/Codertocat/Hello-World/actions/runs/4242)") {
		t.Errorf("check %s %q", c.Conclusion, c.Summary)
	}
}

// TestActionReportMeasureFailed: a report whose measuring job stopped early or left a damaged
// file says so in words, with the workflow run's link, in the check and the comment; never a
// path of the report runner nor the measuring job's own error text (untrusted).
func TestActionReportMeasureFailed(t *testing.T) {
	for _, tc := range []struct {
		name, result, results, want string
	}{
		{"failed, meta only", "failure", "", "The measuring job failed before it wrote results: see its log in [the workflow run](https://github.com/Codertocat/Hello-World/actions/runs/4242)."},
		{"cancelled, meta only", "cancelled", "", "The measuring job was cancelled before it wrote results: see its log"},
		{"no result input", "", "", "The measuring job stopped before it wrote results: see its log"},
		{"success without results", "success", "", "The measuring job succeeded but its artifact holds no results file"},
		{"damaged results", "failure", `{"schema": "speedmatrix/results/v1", "engine": {"name": "<b>owned</b>"}`, "The measuring job wrote a results file that speedmatrix cannot read as results"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newActEnv(t)
			e.event("pull_request", payload(t, "pull_request/opened.payload.json"))
			art := filepath.Join(e.dir, "artifact")
			if err := os.MkdirAll(art, 0o755); err != nil {
				t.Fatal(err)
			}
			meta := fmt.Sprintf(`{"schema": "speedmatrix/action-artifact/v1", "head_sha": %q, "pr": 2, "kind": "pull_request", "error": "PWNED: the measure job's own words"}`, prHead)
			if err := os.WriteFile(filepath.Join(art, "meta.json"), []byte(meta), 0o644); err != nil {
				t.Fatal(err)
			}
			if tc.results != "" {
				if err := os.WriteFile(filepath.Join(art, "results.json"), []byte(tc.results), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			e.vars["INPUT_MODE"], e.vars["INPUT_SHA"], e.vars["INPUT_MEASURE-RESULT"] = "report", prHead, tc.result
			out := mustRun(t, e)
			wantOutputs(t, out, map[string]string{"verdict": "cancelled", "conclusion": "cancelled"})
			st := e.srv.State()
			c := oneCheck(t, st, prHead)
			body := oneComment(t, st)
			for what, text := range map[string]string{"check": c.Summary, "comment": body} {
				if !strings.Contains(text, tc.want) {
					t.Errorf("%s lacks %q:\n%s", what, tc.want, text)
				}
				for _, bad := range []string{e.dir, "results.json", "no such file", "PWNED", "owned"} {
					if strings.Contains(text, bad) {
						t.Errorf("%s shows %q:\n%s", what, bad, text)
					}
				}
			}
		})
	}
}

// TestActionReportOversized reports a full matrix (the reference report, imported, compared
// with itself, its head padded with 500 notes): the comment is cut to stay within 65,536 characters and the check's fields within
// 65,535 bytes.
func TestActionReportOversized(t *testing.T) {
	e := newActEnv(t)
	e.event("pull_request", payload(t, "pull_request/opened.payload.json"))
	e.vars["INPUT_MODE"], e.vars["INPUT_SHA"] = "report", prHead
	src, err := os.Open("../../testdata/reference/glm-5.3-flash-nvfp4-h200nvl-x2.md")
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	f, err := results.Import(src, "reference.md")
	if err != nil {
		t.Fatal(err)
	}
	art := filepath.Join(e.dir, "artifact")
	os.MkdirAll(art, 0o755)
	if err := results.WriteFile(filepath.Join(art, "base.json"), f); err != nil {
		t.Fatal(err)
	}
	// The head's page grows past every limit with notes (data the measuring job controls).
	for i := range 3000 {
		f.Notes = append(f.Notes, fmt.Sprintf("note %d: %s", i, strings.Repeat("the server logged something long ", 4)))
	}
	if err := results.WriteFile(filepath.Join(art, "results.json"), f); err != nil {
		t.Fatal(err)
	}
	meta := `{"schema":"speedmatrix/action-artifact/v1","head_sha":"` + prHead + `","base_sha":"` + prBase + `","pr":2,"kind":"pull_request"}`
	if err := os.WriteFile(filepath.Join(art, "meta.json"), []byte(meta), 0o644); err != nil {
		t.Fatal(err)
	}
	mustRun(t, e)
	st := e.srv.State()
	body := oneComment(t, st)
	if n := len(utf16.Encode([]rune(body))); n > ghbot.MaxCommentChars {
		t.Errorf("comment of %d UTF-16 units, over %d", n, ghbot.MaxCommentChars)
	}
	if !strings.Contains(body, `"phase":"done"`) {
		t.Errorf("the cut comment lost its state line")
	}
	if !strings.Contains(body, "Left out to keep this comment short") {
		t.Errorf("an oversized comment was not cut with a note")
	}
	c := oneCheck(t, st, prHead)
	if !strings.Contains(c.Text, "Left out to stay within GitHub's size limit") && !strings.Contains(c.Summary+c.Text, "GitHub's size limit") {
		t.Errorf("an oversized check text was not cut with a note")
	}
	for name, s := range map[string]string{"title": c.Title, "summary": c.Summary, "text": c.Text} {
		if len(s) > ghbot.MaxCheckOutputBytes {
			t.Errorf("check %s of %d bytes", name, len(s))
		}
	}
	if len(f.Decode) < 40 {
		t.Errorf("the reference holds %d decode cells; want a full matrix", len(f.Decode))
	}
	t.Logf("full matrix: comment %d characters, check text %d bytes", len([]rune(body)), len(c.Text))
}

// TestActionReportPartialHead: a measuring job whose server died leaves results marked
// partial; the report completes the check cancelled and shows the cells measured, and never
// compares, stores or passes them (before, the partial head was compared and the check failed on
// "queued to error").
func TestActionReportPartialHead(t *testing.T) {
	se := newStoreEnv(t, 0)
	se.put(prBase)
	e := se.actEnv
	e.event("pull_request", payload(t, "pull_request/opened.payload.json"))
	token := e.vars["INPUT_TOKEN"]
	e.vars["INPUT_MODE"] = "measure"
	delete(e.vars, "INPUT_TOKEN")
	mustRun(t, e)
	path := filepath.Join(e.dir, "artifact", "results.json")
	head, err := results.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	head.Run.Partial, head.Run.PartialReason = true, "the server stopped answering"
	head.Decode = head.Decode[:1]
	if err := results.WriteFile(path, head); err != nil {
		t.Fatal(err)
	}
	list := func() int {
		es, err := se.st.List(context.Background(), store.Filter{})
		if err != nil {
			t.Fatal(err)
		}
		return len(es)
	}
	stored := list()
	e.vars["INPUT_TOKEN"], e.vars["INPUT_MODE"], e.vars["INPUT_SHA"], e.vars["INPUT_MEASURE-RESULT"] = token, "report", prHead, "failure"
	out := mustRun(t, e)
	wantOutputs(t, out, map[string]string{"verdict": "cancelled", "conclusion": "cancelled"})
	c := oneCheck(t, e.srv.State(), prHead)
	if !strings.Contains(c.Summary, "The measuring job failed before it measured every cell, so nothing was compared") || !strings.Contains(c.Summary, "1 cell was measured before it stopped") {
		t.Errorf("check summary:\n%s", c.Summary)
	}
	if n := list(); n != stored {
		t.Errorf("the store went from %d to %d results: a partial head was stored", stored, n)
	}
}
