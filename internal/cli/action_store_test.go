package cli

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/speedmatrix/speedmatrix/ghbot/ghtest"
	"github.com/speedmatrix/speedmatrix/results"
	"github.com/speedmatrix/speedmatrix/store"
)

// storeEnv is an action environment whose configuration names a store directory, with the
// commit graph root → older… → a1 → prBase (master) and prHead on prBase in the fake.
type storeEnv struct {
	*actEnv
	st    *store.Dir
	older []string // first-parent ancestors of a1, nearest first
	a1    string
	puts  int
	aa    bool // putScaled stores A/A reruns
}

func newStoreEnv(t *testing.T, older int) *storeEnv {
	t.Helper()
	e := &storeEnv{actEnv: newActEnv(t)}
	dir := filepath.Join(e.dir, "store")
	e.writeConfig(actionConfig("") + "store: {dir: " + dir + ", min_history: 3}\n")
	e.st = store.NewDir(dir)
	day := time.Date(2019, 5, 1, 0, 0, 0, 0, time.UTC)
	parent := e.srv.AddCommit(actRepo, ghtest.GitCommit{Message: "root", Date: day}, nil)
	var chain []string
	for i := 0; i < older; i++ {
		parent = e.srv.AddCommit(actRepo, ghtest.GitCommit{Message: fmt.Sprint("older ", i), Parents: []string{parent}, Date: day.Add(time.Duration(i+1) * time.Hour)}, nil)
		chain = append([]string{parent}, chain...)
	}
	e.older = chain
	e.a1 = e.srv.AddCommit(actRepo, ghtest.GitCommit{Message: "a1", Parents: []string{parent}, Date: day.Add(100 * time.Hour)}, nil)
	e.srv.AddCommit(actRepo, ghtest.GitCommit{SHA: prBase, Message: "base", Parents: []string{e.a1}, Date: day.Add(101 * time.Hour)}, nil)
	e.srv.AddCommit(actRepo, ghtest.GitCommit{SHA: prHead, Message: "head", Parents: []string{prBase}, Date: day.Add(102 * time.Hour)}, nil)
	e.srv.SetRef(actRepo, "heads/master", prBase)
	return e
}

// put stores the shared baseline results as sha's default-branch result.
func (e *storeEnv) put(sha string) { e.putScaled(sha, 1) }

// putScaled stores the shared baseline results with their decode throughputs times k as sha's
// default-branch result.
func (e *storeEnv) putScaled(sha string, k float64) {
	e.t.Helper()
	e.putScaledAt(sha, k, time.Date(2019, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(e.puts+1)*time.Hour))
}

// putScaledAt is putScaled with the result's time in the store.
func (e *storeEnv) putScaledAt(sha string, k float64, at time.Time) {
	e.t.Helper()
	f, err := results.ReadFile(e.baselineFor())
	if err != nil {
		e.t.Fatal(err)
	}
	scale := func(m *results.DecodeMetrics, k float64) {
		for _, v := range []*float64{m.TotalTokPerS, m.PerRequestTokPerS} {
			if v != nil {
				*v *= k
			}
		}
	}
	// The pull request's baseline is stored as measured; every other commit's result is a run of
	// its own (its own run id, its cells' own noise), as a store of real runs holds.
	own := k != 1 || sha != prBase
	for i := range f.Decode {
		if !own {
			break
		}
		// The trials' samples would not agree with scaled summaries: keep the summary only. Each
		// cell moves by its own ±0.6 % too, as a real run's cells do: compare takes a factor
		// shared by the whole run for the run's (runeffect.go), so a uniform k alone would leave
		// no spread to measure.
		jitter := 1 + 0.003*float64((i*7+e.puts*3)%5-2)
		scale(&f.Decode[i].DecodeMetrics, k*jitter)
		f.Decode[i].Trials, f.Decode[i].SummaryOnly = nil, true
	}
	e.puts++
	if own && !e.aa {
		f.Run.ID = fmt.Sprintf("%s-run%d", f.Run.ID, e.puts) // a run of its own, not the baseline's copy
	}
	kind := store.KindDefault
	if e.aa {
		kind = store.KindAA
		f.Run.ID = fmt.Sprintf("%s-aa%d", f.Run.ID, e.puts) // one run id per stored run
	}
	if _, err := e.st.Put(context.Background(), store.Entry{Commit: sha, Kind: kind, Time: at}, f); err != nil {
		e.t.Fatal(err)
	}
}

// runPR runs the opened pull_request event and returns the comparison and the bot's comment.
func (e *storeEnv) runPR() (map[string]string, *results.Comparison, string) {
	e.t.Helper()
	e.event("pull_request", payload(e.t, "pull_request/opened.payload.json"))
	out, stderr, err := e.run(context.Background())
	if err != nil {
		e.t.Fatalf("run: %v\n%s", err, stderr)
	}
	var body string
	if c := botComments(e.srv.State()); len(c) == 1 {
		body = c[0].Body
	}
	p := filepath.Join(e.dir, "artifact", "comparison.json")
	if !fileExistsT(p) {
		return out, nil, body
	}
	cmp, err := results.ReadComparisonFile(p)
	if err != nil {
		e.t.Fatal(err)
	}
	return out, cmp, body
}

// noiseSources counts the comparison's noise sources.
func noiseSources(c *results.Comparison) map[string]int {
	n := map[string]int{}
	for _, cell := range c.Cells {
		for _, m := range cell.Metrics {
			if m.Noise != nil {
				n[m.Noise.Source]++
			}
		}
	}
	return n
}

// TestActionStoreMergeBase: a PR's baseline is the store's results of its merge-base; the PR's
// own results are stored as kind pr, never a baseline.
func TestActionStoreMergeBase(t *testing.T) {
	e := newStoreEnv(t, 0)
	e.put(prBase)
	out, cmp, body := e.runPR()
	if cmp == nil {
		t.Fatalf("no comparison; outputs %v\n%s", out, body)
	}
	if out["verdict"] == "no_baseline" {
		t.Errorf("verdict %q", out["verdict"])
	}
	for _, w := range cmp.Warnings {
		if strings.Contains(w, "before the merge-base") {
			t.Errorf("warning %q with the merge-base's own results", w)
		}
	}
	prs, err := e.st.List(context.Background(), store.Filter{Kind: store.KindPR})
	if err != nil || len(prs) != 1 || prs[0].Commit != prHead || prs[0].PR != 2 {
		t.Errorf("PR entries %+v, %v; want prHead's as PR 2", prs, err)
	}
}

// TestActionStoreNearestAncestor: a merge-base without results falls back on its nearest
// ancestor that has some, and the comparison and the comment say which and how far back.
func TestActionStoreNearestAncestor(t *testing.T) {
	e := newStoreEnv(t, 0)
	e.put(e.a1)
	out, cmp, body := e.runPR()
	if cmp == nil {
		t.Fatalf("no comparison; outputs %v\n%s", out, body)
	}
	want := "1 commit before the merge"
	found := false
	for _, w := range cmp.Warnings {
		found = found || strings.Contains(w, want) && strings.Contains(w, e.a1[:12])
	}
	if !found {
		t.Errorf("warnings %q lack %q", cmp.Warnings, want)
	}
	if !strings.Contains(body, want) || !strings.Contains(body, e.a1[:12]) {
		t.Errorf("the comment does not say %q:\n%s", want, body)
	}
	// The PR's stored result cites that baseline, so pruning keeps it while it keeps the PR's.
	prs, err := e.st.List(context.Background(), store.Filter{Kind: store.KindPR})
	if err != nil || len(prs) != 1 || prs[0].Base != e.a1 {
		t.Errorf("PR entries %+v, %v; want one citing %s", prs, err, e.a1)
	}
}

// TestActionStoreNoBaseline: no stored results of the config gives a neutral result with the
// store's reason.
func TestActionStoreNoBaseline(t *testing.T) {
	e := newStoreEnv(t, 0)
	out, cmp, body := e.runPR()
	if cmp != nil || out["verdict"] != "no_baseline" {
		t.Fatalf("verdict %q, comparison %v", out["verdict"], cmp != nil)
	}
	if !strings.Contains(body, "No baseline in the store") {
		t.Errorf("the comment lacks the store's reason:\n%s", body)
	}
}

// TestActionStoreHistoryNoise: with min_history default-branch results of the config stored,
// compare takes the noise from them; with fewer, from its prior.
func TestActionStoreHistoryNoise(t *testing.T) {
	for _, n := range []int{1, 3} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			e := newStoreEnv(t, 3)
			e.put(prBase)
			for i, sha := range e.older[:n-1] {
				e.putScaled(sha, 1+0.03*float64(i+1))
			}
			e.put(e.a1)
			_, cmp, body := e.runPR()
			if cmp == nil {
				t.Fatalf("no comparison:\n%s", body)
			}
			src := noiseSources(cmp)
			if got := src[results.NoiseHistory] > 0; got != (n+1 >= 3) {
				t.Errorf("%d results stored: noise sources %v", n+1, src)
			}
		})
	}
}

// TestActionDataBranchPushThenPR: a push to the default branch stores its results on the data
// branch (results/<sha>/<config-id>.json); a PR whose merge-base is that commit then finds
// them there and gets a comparison, and its own results are stored apart under pr/.
func TestActionDataBranchPushThenPR(t *testing.T) {
	e := newActEnv(t)
	day := time.Date(2019, 5, 1, 0, 0, 0, 0, time.UTC)
	root := e.srv.AddCommit(actRepo, ghtest.GitCommit{Message: "root", Date: day}, nil)
	e.srv.AddCommit(actRepo, ghtest.GitCommit{SHA: pushAfter, Message: "pushed", Parents: []string{root}, Date: day.Add(time.Hour)}, nil)
	e.srv.AddCommit(actRepo, ghtest.GitCommit{SHA: prBase, Message: "base", Parents: []string{pushAfter}, Date: day.Add(2 * time.Hour)}, nil)
	e.srv.AddCommit(actRepo, ghtest.GitCommit{SHA: prHead, Message: "head", Parents: []string{pushAfter}, Date: day.Add(3 * time.Hour)}, nil)
	e.srv.SetRef(actRepo, "heads/master", prBase)

	e.event("push", payload(t, "push/with-new-branch.payload.json"))
	if out, stderr, err := e.run(context.Background()); err != nil || out["verdict"] != "baseline" {
		t.Fatalf("push: %v, outputs %v\n%s", err, out, stderr)
	}
	var stored string
	for p := range e.srv.Files(actRepo, "heads/speedmatrix-data") {
		if strings.HasPrefix(p, "results/"+pushAfter+"/") {
			stored = p
		}
	}
	if stored == "" || fileExistsT(filepath.Join(e.dir, "baselines", pushAfter+".json")) {
		t.Fatalf("push: data branch %v; local copy %v", e.srv.Files(actRepo, "heads/speedmatrix-data"), fileExistsT(filepath.Join(e.dir, "baselines", pushAfter+".json")))
	}

	e.event("pull_request", payload(t, "pull_request/opened.payload.json"))
	out, stderr, err := e.run(context.Background())
	if err != nil {
		t.Fatalf("PR: %v\n%s", err, stderr)
	}
	if out["verdict"] == "no_baseline" || out["comparison"] == "" {
		t.Fatalf("PR: outputs %v\n%s", out, stderr)
	}
	prStored := false
	for p := range e.srv.Files(actRepo, "heads/speedmatrix-data") {
		prStored = prStored || strings.HasPrefix(p, "pr/2/"+prHead+"/")
	}
	if !prStored {
		t.Errorf("PR results not stored under pr/2/: %v", e.srv.Files(actRepo, "heads/speedmatrix-data"))
	}
}

// TestActionChangePointIssue: pushes whose results sit a sustained 20 % below the level of
// the earlier default-branch results open one change-point issue with the cells, commits and
// sizes; a second push updates that issue instead of opening another.
func TestActionChangePointIssue(t *testing.T) {
	e := newStoreEnv(t, 0)
	for i := range 14 {
		k := 1.25
		if i >= 10 {
			k = 1
		}
		e.putScaled(seqSHA(i+1), k)
	}
	e.event("push", payload(t, "push/with-new-branch.payload.json"))
	for run := 1; run <= 2; run++ {
		out, stderr, err := e.run(context.Background())
		if err != nil || out["verdict"] != "baseline" {
			t.Fatalf("push %d: %v, outputs %v\n%s", run, err, out, stderr)
		}
		issues := e.srv.Issues(actRepo)
		if len(issues) != 1 {
			t.Fatalf("push %d: %d issues, want 1: %+v\n%s", run, len(issues), issues, stderr)
		}
		is := issues[0]
		if is.Title != "speedmatrix: performance change point" || !slices.Contains(is.Labels, "speedmatrix") ||
			!strings.Contains(is.Body, "<!-- speedmatrix:change-point -->") || !strings.Contains(is.Body, "decode/8K/8") ||
			!strings.Contains(is.Body, "`"+seqSHA(11)[:7]+"` | `"+seqSHA(10)[:7]+"`") || !strings.Contains(is.Body, "%") {
			t.Errorf("push %d: issue %+v", run, is)
		}
	}
	if n := len(e.srv.State().CallsTo("PATCH", "/repos/Codertocat/Hello-World/issues/")); n != 1 {
		t.Errorf("%d issue edits, want 1 (the second push updates the issue)", n)
	}
}

// TestActionNoChangePointNoIssue: pushes at the level of the earlier results open no issue.
func TestActionNoChangePointNoIssue(t *testing.T) {
	e := newStoreEnv(t, 0)
	for i := range 8 {
		e.putScaled(seqSHA(i+1), 1)
	}
	e.event("push", payload(t, "push/with-new-branch.payload.json"))
	if out, stderr, err := e.run(context.Background()); err != nil || out["verdict"] != "baseline" {
		t.Fatalf("push: %v, outputs %v\n%s", err, out, stderr)
	}
	if issues := e.srv.Issues(actRepo); len(issues) != 0 {
		t.Errorf("%d issues, want none: %+v", len(issues), issues)
	}
}

// seqSHA returns a made-up commit id whose first 7 digits are n.
func seqSHA(n int) string { return fmt.Sprintf("%07x%033x", n, 0) }

// TestActionReportModeUsesStore: in the split workflow the measure job (no token) finds no
// baseline; the report job (the token) stores the PR's results apart and compares with the
// store's baseline, the merge-base's nearest ancestor with results, saying how far back.
func TestActionReportModeUsesStore(t *testing.T) {
	e := newStoreEnv(t, 0)
	e.put(e.a1)
	e.event("pull_request", payload(t, "pull_request/opened.payload.json"))
	token := e.vars["INPUT_TOKEN"]
	delete(e.vars, "INPUT_TOKEN")
	e.vars["INPUT_MODE"] = "measure"
	if out := mustRun(t, e.actEnv); out["verdict"] != "no_baseline" {
		t.Fatalf("measure outputs %v", out)
	}
	e.vars["INPUT_TOKEN"], e.vars["INPUT_MODE"], e.vars["INPUT_SHA"] = token, "report", prHead
	out := mustRun(t, e.actEnv)
	if out["verdict"] == "no_baseline" || out["comparison"] == "" {
		t.Fatalf("report outputs %v", out)
	}
	cmp, err := results.ReadComparisonFile(out["comparison"])
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, w := range cmp.Warnings {
		found = found || strings.Contains(w, "1 commit before the merge") && strings.Contains(w, e.a1[:12])
	}
	if !found {
		t.Errorf("warnings %q lack the distance", cmp.Warnings)
	}
	prs, err := e.st.List(context.Background(), store.Filter{Kind: store.KindPR})
	if err != nil || len(prs) != 1 || prs[0].Commit != prHead || prs[0].Base != e.a1 {
		t.Errorf("PR entries %+v, %v; want one of %s citing its baseline %s", prs, err, prHead, e.a1)
	}
}

// TestActionAARerun: with store.aa_every N, the push whose result is the N-th default-branch
// result of its config measures the same commit again and stores that run as an A/A rerun
// (aa/<sha>/…) beside the push's own result; other pushes measure once.
func TestActionAARerun(t *testing.T) {
	for _, tc := range []struct {
		every  int
		wantAA bool
	}{{1, true}, {2, false}} {
		t.Run(fmt.Sprint("aa_every ", tc.every), func(t *testing.T) {
			e := newActEnv(t)
			day := time.Date(2019, 5, 1, 0, 0, 0, 0, time.UTC)
			root := e.srv.AddCommit(actRepo, ghtest.GitCommit{Message: "root", Date: day}, nil)
			e.srv.AddCommit(actRepo, ghtest.GitCommit{SHA: pushAfter, Message: "pushed", Parents: []string{root}, Date: day.Add(time.Hour)}, nil)
			e.srv.SetRef(actRepo, "heads/master", pushAfter)
			e.writeConfig(actionConfig("") + fmt.Sprintf("store: {aa_every: %d}\n", tc.every))
			e.event("push", payload(t, "push/with-new-branch.payload.json"))
			if out, stderr, err := e.run(context.Background()); err != nil || out["verdict"] != "baseline" {
				t.Fatalf("push: %v, outputs %v\n%s", err, out, stderr)
			}
			var def, aa int
			for p := range e.srv.Files(actRepo, "heads/speedmatrix-data") {
				switch {
				case strings.HasPrefix(p, "results/"+pushAfter+"/"):
					def++
				case strings.HasPrefix(p, "aa/"+pushAfter+"/"):
					aa++
				}
			}
			if def != 1 || (aa == 1) != tc.wantAA || aa > 1 {
				t.Errorf("data branch holds %d default-branch and %d A/A results of the push, want 1 and %v: %v",
					def, aa, tc.wantAA, e.srv.Files(actRepo, "heads/speedmatrix-data"))
			}
		})
	}
}

// TestActionStoreMeasuredNoise: A/A reruns of the merge-base in the store whose spread is above
// the prior make the PR's comparison take that measured noise (source "measured"), and the
// comment's statistics explain the letter.
func TestActionStoreMeasuredNoise(t *testing.T) {
	e := newStoreEnv(t, 0)
	e.put(prBase)
	e.aa = true
	e.putScaled(prBase, 1.3)
	e.putScaled(prBase, 0.75)
	_, cmp, body := e.runPR()
	if cmp == nil {
		t.Fatalf("no comparison:\n%s", body)
	}
	if src := noiseSources(cmp); src[results.NoiseMeasured] == 0 {
		t.Errorf("noise sources %v, want some measured", src)
	}
	// The statistics (the noise source of every cell) are in the check run's output.
	if c := oneCheck(t, e.srv.State(), prHead); !strings.Contains(c.Text, "M measured on this machine") {
		t.Errorf("the check run's output does not explain the measured noise")
	}
}

// TestActionStoreHistoryAlongBaseline: a pull request's history noise is its baseline's and the
// baseline's measured first-parent ancestors' results, not the newest measured: a result of a
// commit the default branch does not hold (newest of all) is not part of it, and the log says the
// history follows the commits.
func TestActionStoreHistoryAlongBaseline(t *testing.T) {
	e := newStoreEnv(t, 3)
	e.put(prBase)
	for _, sha := range e.older {
		e.put(sha)
	}
	e.put(e.a1)
	e.putScaled(seqSHA(0x400), 0.7) // not on the default branch, measured last
	_, cmp, body := e.runPR()
	if cmp == nil {
		t.Fatalf("no comparison:\n%s", body)
	}
	// The baseline's own results start the history; compare does not count them twice.
	if cmp.Settings.HistoryFiles != 4 {
		t.Errorf("history files %d, want the 4 results along the baseline's first parents besides its own", cmp.Settings.HistoryFiles)
	}
}
