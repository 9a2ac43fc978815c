package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/speedmatrix/speedmatrix/ghbot/ghtest"
	"github.com/speedmatrix/speedmatrix/store"
)

// splitEnv plays the jobs of the split workflow (example-gpu.yml: decide, measure and report
// for an event; the bisect GPU jobs and bisect-report when decide plans a bisection round) in
// process against the fake GitHub, and plays GitHub's part of a workflow_dispatch: each
// dispatch the report job asks for starts the next workflow run. The real-runner test
// (internal/e2e/actrunner) runs the workflow file itself under act.
type splitEnv struct {
	*storeEnv
	r    *bisectRepo
	runs int
	// seen counts the dispatches already run.
	seen int
	// rounds are the bisection rounds the runs planned: each one's GPU jobs' commits.
	rounds [][]string
	log    strings.Builder
}

// jobAs runs one job of the workflow: the action with vars set over e's (an empty value unsets
// one), restored afterwards.
func (s *splitEnv) jobAs(vars map[string]string) (map[string]string, error) {
	s.t.Helper()
	old := map[string]string{}
	for k, v := range vars {
		old[k] = s.vars[k]
		if v == "" {
			delete(s.vars, k)
		} else {
			s.vars[k] = v
		}
	}
	defer func() {
		for k, v := range old {
			if v == "" {
				delete(s.vars, k)
			} else {
				s.vars[k] = v
			}
		}
	}()
	out, stderr, err := s.run(context.Background())
	fmt.Fprintf(&s.log, "--- %s %s: %v\n%s\n", vars["INPUT_MODE"], vars["INPUT_SHA"], err, stderr)
	return out, err
}

// checkout checks commit sha of the engine's repository out into a folder of its own, as a GPU
// job's actions/checkout does.
func (s *splitEnv) checkout(sha string) string {
	s.t.Helper()
	dir := filepath.Join(s.dir, "checkouts", fmt.Sprintf("%d-%s", s.runs, sha[:7]))
	if out, err := exec.Command("git", "-C", s.r.dir, "worktree", "add", "--quiet", "--detach", dir, sha).CombinedOutput(); err != nil {
		s.t.Fatalf("git worktree add %s: %v\n%s", sha[:7], err, out)
	}
	return dir
}

// workflowRun runs the jobs of one workflow run for the event e holds and returns decide's
// outputs.
func (s *splitEnv) workflowRun() map[string]string {
	s.t.Helper()
	s.runs++
	s.vars["GITHUB_RUN_ID"] = fmt.Sprint(5000 + s.runs)
	s.vars["GITHUB_WORKFLOW_REF"] = actRepo + "/.github/workflows/speedmatrix.yml@refs/heads/master"
	arts := filepath.Join(s.dir, fmt.Sprintf("run-%d", s.runs))
	dec, err := s.jobAs(map[string]string{"INPUT_MODE": "decide", "INPUT_BISECT": s.dispatchInput()})
	if err != nil {
		s.t.Fatalf("decide: %v\n%s", err, s.log.String())
	}
	if dec["run"] == "true" {
		// measure (no token), then report, as for any push or pull request.
		dir := s.checkout(dec["sha"])
		art := filepath.Join(arts, "measure")
		_, merr := s.jobAs(map[string]string{"INPUT_MODE": "measure", "INPUT_TOKEN": "", "INPUT_SHA": dec["sha"], "INPUT_BASE-SHA": dec["base-sha"],
			"INPUT_PR": dec["pr"], "INPUT_CELLS": dec["cells"], "INPUT_CONFIG": filepath.Join(dir, "speedmatrix.yaml"), "INPUT_ARTIFACT-DIR": art})
		result := "success"
		if merr != nil {
			result = "failure"
		}
		if _, err := s.jobAs(map[string]string{"INPUT_MODE": "report", "INPUT_SHA": dec["sha"], "INPUT_BASE-SHA": dec["base-sha"], "INPUT_PR": dec["pr"],
			"INPUT_ARTIFACT-DIR": art, "INPUT_MEASURE-RESULT": result}); err != nil {
			s.t.Fatalf("report: %v\n%s", err, s.log.String())
		}
	}
	if dec["bisect"] == "" {
		return dec
	}
	// The round's GPU jobs, one per entry of the matrix (no token), then bisect-report.
	result := "skipped"
	var round []string
	if m := dec["bisect-matrix"]; m != "" {
		var matrix struct {
			Include []struct {
				Commit, Cells string
				Index         int
			}
		}
		if err := json.Unmarshal([]byte(m), &matrix); err != nil {
			s.t.Fatalf("bisect-matrix %q: %v", m, err)
		}
		result = "success"
		for _, job := range matrix.Include {
			round = append(round, job.Commit)
			dir := s.checkout(job.Commit)
			_, err := s.jobAs(map[string]string{"INPUT_MODE": "measure", "INPUT_TOKEN": "", "INPUT_SHA": job.Commit, "INPUT_CELLS": job.Cells,
				"INPUT_CONFIG": filepath.Join(dir, "speedmatrix.yaml"), "INPUT_ARTIFACT-DIR": filepath.Join(arts, "bisect", fmt.Sprintf("speedmatrix-bisect-%d", job.Index))})
			if err != nil {
				result = "failure"
			}
		}
		s.rounds = append(s.rounds, round)
	}
	if _, err := s.jobAs(map[string]string{"INPUT_MODE": "report", "INPUT_BISECT": dec["bisect"], "INPUT_BISECT-ARTIFACTS": filepath.Join(arts, "bisect", "speedmatrix-bisect-*"),
		"INPUT_MEASURE-RESULT": result, "INPUT_ARTIFACT-DIR": filepath.Join(arts, "report")}); err != nil {
		s.t.Fatalf("bisect-report: %v\n%s", err, s.log.String())
	}
	return dec
}

// dispatchInput is the bisect input of decide: the workflow_dispatch input of a dispatched run.
func (s *splitEnv) dispatchInput() string {
	if s.vars["GITHUB_EVENT_NAME"] != "workflow_dispatch" {
		return ""
	}
	b, err := os.ReadFile(s.vars["GITHUB_EVENT_PATH"])
	if err != nil {
		s.t.Fatal(err)
	}
	var ev struct{ Inputs map[string]string }
	if err := json.Unmarshal(b, &ev); err != nil {
		s.t.Fatal(err)
	}
	return ev.Inputs["bisect"]
}

// followDispatches plays GitHub: every dispatch not run yet starts a workflow run of its own
// (at most limit), until none is left; it returns how many ran.
func (s *splitEnv) followDispatches(limit int) int {
	s.t.Helper()
	n := 0
	for {
		ds := s.srv.State().Dispatches
		if s.seen == len(ds) {
			return n
		}
		d := ds[s.seen]
		s.seen++
		if n++; n > limit {
			s.t.Fatalf("more than %d dispatched runs\n%s", limit, s.log.String())
		}
		if d.Workflow != "speedmatrix.yml" || d.Ref != "master" || d.Login != ghtest.ActionsLogin {
			s.t.Errorf("dispatch %+v: want speedmatrix.yml on master by the workflow's token", d)
		}
		s.event("workflow_dispatch", derived(s.t, "workflow_dispatch/payload.json", map[string]any{
			"ref": "refs/heads/master", "inputs": d.Inputs, "repository.full_name": actRepo, "repository.name": "Hello-World",
			"repository.owner.login": "Codertocat", "repository.default_branch": "master", "sender.login": ghtest.ActionsLogin,
		}))
		s.vars["GITHUB_SHA"] = s.r.sha["c18"]
		s.workflowRun()
	}
}

// newSplitEnv is bisectEnvWith for the split workflow.
func newSplitEnv(t *testing.T, slowFrom map[int]string, skip map[int]bool, level float64, bisectYAML string) *splitEnv {
	e, r := bisectEnvWith(t, slowFrom, skip, level, bisectYAML)
	return &splitEnv{storeEnv: e, r: r}
}

// pushSplit runs the push of c18 through the split workflow, then every round it dispatches.
func (s *splitEnv) pushSplit(limit int) {
	s.t.Helper()
	s.event("push", derived(s.t, "push/with-new-branch.payload.json", map[string]any{"after": s.r.sha["c18"]}))
	s.vars["GITHUB_SHA"] = s.r.sha["c18"]
	s.workflowRun()
	s.followDispatches(limit)
}

// bisectRecords returns the bot's bisection comments on the change-point issue and its number.
func (s *splitEnv) bisectRecords() (int, []string) {
	s.t.Helper()
	issues := changeIssues(s.storeEnv)
	if len(issues) != 1 {
		s.t.Fatalf("%d change-point issues, want 1\n%s", len(issues), s.log.String())
	}
	return issues[0].Number, bisectComments(s.storeEnv, issues[0].Number)
}

// TestSplitBisectNamesCulprit is issue 24's acceptance through the split workflow's jobs: the
// push of c18 reports the change point (16 commits between the last good g and the first bad
// c16) and, with bisect.auto and 4 runners, its report job starts the bisection and dispatches
// its rounds; each round measures up to 3 commits at once (one GPU job each, the shifted cell
// only), and the comment on the issue names c11 after at most ⌈log₂ 16⌉ + 2 rounds; c11's pull
// request gets a comment; each step is stored as a bisection step. A later push does not
// bisect the range again.
func TestSplitBisectNamesCulprit(t *testing.T) {
	s := newSplitEnv(t, map[int]string{11: "decode=1.111@batch>=8"}, nil, 0.9, "bisect: {auto: true, steps: 12, runners: 4}\n")
	s.srv.AddPull(ghtest.Pull{Repo: actRepo, Number: 11, State: "closed", Author: "Codertocat", HeadSHA: strings.Repeat("b", 40), HeadRef: "slow-kernel", BaseRef: "master", MergeCommitSHA: s.r.sha["c11"]})
	s.pushSplit(8)
	n, cs := s.bisectRecords()
	if len(cs) != 1 {
		t.Fatalf("%d bisection comments on the issue, want 1 (its progress, then its result)\n%s", len(cs), s.log.String())
	}
	t.Logf("%d workflow runs, rounds %v; the issue's comment:\n%s", s.runs, s.rounds, cs[0])
	c11 := s.r.sha["c11"][:7]
	if !strings.Contains(cs[0], "culprit is "+c11) {
		t.Errorf("the issue does not name c11 (%s):\n%s\n%s", c11, cs[0], s.log.String())
	}
	if len(s.rounds) == 0 || len(s.rounds) > 6 {
		t.Errorf("%d rounds, want 1 to ⌈log₂ 16⌉ + 2 = 6", len(s.rounds))
	}
	measured := 0
	for i, rd := range s.rounds {
		if len(rd) > 3 {
			t.Errorf("round %d measured %d commits, want at most runners − 1 = 3", i+1, len(rd))
		}
		measured += len(rd)
	}
	if got := len(regexp.MustCompile(`(?m)^\| (\d+) \|`).FindAllString(cs[0], -1)); got != measured {
		t.Errorf("the comment's table has %d rows, want one per measured commit (%d)", got, measured)
	}
	if len(s.rounds) > 0 && (len(s.rounds[0]) != 3 || !slices.Contains(s.rounds[0], s.r.sha["c16"])) {
		t.Errorf("the first round measured %d commits %v: 4 runners measure 3 at once, the bad commit c16 among them (the range's change measured as the steps are)", len(s.rounds[0]), s.rounds[0])
	}
	if pr := bisectComments(s.storeEnv, 11); len(pr) != 1 || !strings.Contains(pr[0], c11) || !strings.Contains(pr[0], fmt.Sprintf("#%d", n)) {
		t.Errorf("the culprit's pull request #11 comments %q, want one naming %s and the issue", pr, c11)
	}
	ctx := context.Background()
	steps, err := s.st.List(ctx, store.Filter{Kind: store.KindBisect})
	if err != nil || len(steps) != measured {
		t.Errorf("%d bisection steps stored (%v), want %d", len(steps), err, measured)
	}
	for _, e := range steps {
		f, err := s.st.Open(ctx, e)
		if err != nil {
			t.Fatal(err)
		}
		if len(f.Decode) != 1 || f.Decode[0].ID().String() != "decode/8K/8" || len(f.Prefill) != 0 {
			t.Errorf("step %s measured %d decode and %d prefill cells, want decode/8K/8 alone", e.Commit[:7], len(f.Decode), len(f.Prefill))
		}
	}
	if defaults, _ := s.st.List(ctx, store.Filter{Kind: store.KindDefault}); len(defaults) != 14 {
		t.Errorf("%d default-branch results, want the 13 stored and the push's", len(defaults))
	}

	// The next push still reports the change point; the range has its bisection.
	before := len(s.srv.State().Dispatches)
	s.event("push", derived(s.t, "push/with-new-branch.payload.json", map[string]any{"after": s.r.sha["c18"]}))
	s.workflowRun()
	if after := len(s.srv.State().Dispatches); after != before {
		t.Errorf("a later push dispatched %d more rounds: the range is bisected already", after-before)
	}
}

// TestSplitBisectTrueStatements: through the split workflow too, a range whose culprit cannot be
// measured (its configuration does not load, so its GPU job leaves no results) ends with the
// range that holds it, saying why; a range with two regressions names both culprits.
func TestSplitBisectTrueStatements(t *testing.T) {
	for _, tt := range []struct {
		name     string
		slowFrom map[int]string
		skip     map[int]bool
		level    float64
		want     func(r *bisectRepo) []string
	}{
		{"unbuildable culprit", map[int]string{11: "decode=1.111@batch>=8"}, map[int]bool{11: true}, 0.9, func(r *bisectRepo) []string {
			return []string{"lies in the 2 commits " + r.sha["c11"][:7] + ".." + r.sha["c12"][:7], r.sha["c11"][:7] + " did not build or serve", "its GPU job left no results"}
		}},
		{"two regressions", map[int]string{5: "decode=1.111@batch>=8", 11: "decode=1.389@batch>=8"}, nil, 0.72, func(r *bisectRepo) []string {
			return []string{"first regression's culprit is " + r.sha["c5"][:7], "second regression's culprit is " + r.sha["c11"][:7]}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := newSplitEnv(t, tt.slowFrom, tt.skip, tt.level, "bisect: {auto: true, steps: 12}\n")
			s.pushSplit(14)
			_, cs := s.bisectRecords()
			if len(cs) != 1 {
				t.Fatalf("%d bisection comments, want 1\n%s", len(cs), s.log.String())
			}
			for _, w := range tt.want(s.r) {
				if !strings.Contains(cs[0], w) {
					t.Errorf("the comment does not say %q:\n%s", w, cs[0])
				}
			}
			for i, rd := range s.rounds {
				if len(rd) != 1 {
					t.Errorf("round %d measured %d commits; 2 runners (the default) measure one", i+1, len(rd))
				}
			}
			if len(s.rounds) > 0 && slices.Contains(s.rounds[0], s.r.sha["c16"]) {
				t.Errorf("the first round measured the bad commit c16: with one job a round its stored results give the range's change")
			}
		})
	}
}

// TestSplitBisectCommand: /bench bisect through the split workflow. A reader's gets a −1
// reaction and no round; a maintainer's bisects the range it names, its first round in the
// comment's own workflow run and the later ones dispatched, and names c11. A dispatched round
// with a bisection id that is not the bot's record, or on another branch, measures nothing.
func TestSplitBisectCommand(t *testing.T) {
	s := newSplitEnv(t, map[int]string{11: "decode=1.111@batch>=8"}, nil, 0.9, "bisect: {auto: false, steps: 12, runners: 3}\n")
	s.event("push", derived(s.t, "push/with-new-branch.payload.json", map[string]any{"after": s.r.sha["c18"]}))
	s.vars["GITHUB_SHA"] = s.r.sha["c18"]
	s.workflowRun()
	n, cs := s.bisectRecords()
	if len(cs) != 0 || len(s.srv.State().Dispatches) != 0 {
		t.Fatalf("bisected without bisect.auto: %q", cs)
	}
	s.srv.SetPermission(actRepo, "reader", "read")
	command := func(user, body string) map[string]string {
		id := int64(492700800 + s.runs)
		s.srv.PutComment(ghtest.Comment{ID: id, Repo: actRepo, Issue: n, User: user, Body: body, CreatedAt: time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)})
		s.event("issue_comment", derived(t, "issue_comment/created.payload.json",
			map[string]any{"comment.body": body, "issue.number": n, "comment.id": id, "comment.user.login": user}))
		return s.workflowRun()
	}

	out := command("reader", "/bench bisect")
	if _, cs := s.bisectRecords(); out["verdict"] != "refused" || out["bisect"] != "" || len(cs) != 0 || len(s.rounds) != 0 {
		t.Errorf("a reader's /bench bisect: verdict %q, bisect %q, %d comments, %d rounds", out["verdict"], out["bisect"], len(cs), len(s.rounds))
	}
	var reacted []string
	for _, r := range s.srv.State().Reactions {
		if r.CommentID == int64(492700800+s.runs-1) {
			reacted = append(reacted, r.Content)
		}
	}
	if strings.Join(reacted, ",") != "-1" {
		t.Errorf("reactions to the reader's command: %v, want -1 alone", reacted)
	}

	named := fmt.Sprintf("/bench bisect %s..%s", s.r.sha["c8"][:7], s.r.sha["c12"][:7])
	out = command("Codertocat", named)
	if out["verdict"] != "bisecting" || out["bisect"] == "" || out["bisect-matrix"] == "" || len(s.rounds) != 1 || len(s.rounds[0]) != 2 {
		t.Fatalf("%s: decide's outputs %v, rounds %v\n%s", named, out, s.rounds, s.log.String())
	}
	s.followDispatches(4)
	_, cs = s.bisectRecords()
	if len(cs) != 1 || !strings.Contains(cs[0], "culprit is "+s.r.sha["c11"][:7]) || !strings.Contains(cs[0], "Bisect** of `"+s.r.sha["c8"][:7]+"`..`"+s.r.sha["c12"][:7]+"`") {
		t.Errorf("%s: comments %q\n%s", named, cs, s.log.String())
	}
	rounds := len(s.rounds)

	// A dispatch by hand with an id that is no record of the bot, on the default branch, and
	// the record's own id on another branch: nothing is measured.
	for _, tc := range []struct{ id, ref string }{{fmt.Sprint(492700800), "refs/heads/master"}, {strings.Split(out["bisect"], "/")[0], "refs/heads/feature"}} {
		s.event("workflow_dispatch", derived(t, "workflow_dispatch/payload.json", map[string]any{
			"ref": tc.ref, "inputs": map[string]string{"bisect": tc.id}, "repository.full_name": actRepo, "repository.name": "Hello-World",
			"repository.owner.login": "Codertocat", "repository.default_branch": "master"}))
		out := s.workflowRun()
		if out["bisect"] != "" || out["bisect-matrix"] != "" || len(s.rounds) != rounds {
			t.Errorf("dispatch of %s on %s: outputs %v, %d rounds (want %d)", tc.id, tc.ref, out, len(s.rounds), rounds)
		}
	}
}
