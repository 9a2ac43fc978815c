package cli

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/speedmatrix/speedmatrix/ghbot/ghtest"
	"github.com/speedmatrix/speedmatrix/store"
)

// bisectRepo is a scratch engine repository whose speedmatrix.yaml (the built-in simulator) is
// the file in the tree that sets each commit's speed; its commits are also the fake GitHub's.
type bisectRepo struct {
	dir string
	sha map[string]string // by name: h1…h10, g, c1…c18
}

// newBisectRepo makes the history h1…h10 → g → c1 … c18 on master, each commit's config
// slowed from each commit of slowFrom on (decode at 8+ requests, by the factor), registers it
// in e's fake, and makes e's config the repository's.
func newBisectRepo(t *testing.T, e *storeEnv, storeDir string, slowFrom map[int]string, skip map[int]bool, bisectYAML string) *bisectRepo {
	t.Helper()
	r := &bisectRepo{dir: filepath.Join(e.dir, "engine"), sha: map[string]string{}}
	git := func(n int, args ...string) string {
		cmd := exec.Command("git", args...)
		cmd.Dir = r.dir
		d := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC).Add(time.Duration(n) * time.Minute).Format(time.RFC3339)
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t",
			"GIT_COMMITTER_EMAIL=t@example.com", "GIT_AUTHOR_DATE="+d, "GIT_COMMITTER_DATE="+d, "GIT_CONFIG_GLOBAL=/dev/null")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	if err := os.MkdirAll(r.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	git(0, "init", "--quiet", "--initial-branch=master")
	var names []string
	for i := 1; i <= 10; i++ {
		names = append(names, fmt.Sprintf("h%d", i))
	}
	names = append(names, "g")
	for i := 1; i <= 18; i++ {
		names = append(names, fmt.Sprintf("c%d", i))
	}
	slow := ""
	parent := ""
	for n, name := range names {
		var i int
		fmt.Sscanf(name, "c%d", &i)
		if s, ok := slowFrom[i]; ok && name[0] == 'c' {
			slow = s
		}
		extra := ""
		if slow != "" {
			extra = fmt.Sprintf(", slowdown: %q", slow)
		}
		cfg := actionConfig(extra) + "store: {dir: " + storeDir + ", min_history: 3}\n" + bisectYAML
		if skip[i] && name[0] == 'c' {
			cfg = "matrix: nosuch\n" // a commit whose configuration does not load: it cannot be measured
		}
		if err := os.WriteFile(filepath.Join(r.dir, "speedmatrix.yaml"), []byte(cfg), 0o644); err != nil {
			t.Fatal(err)
		}
		git(n, "add", "-A")
		git(n, "commit", "--quiet", "--allow-empty", "-m", name)
		sha := git(n, "rev-parse", "HEAD")
		r.sha[name] = sha
		var parents []string
		if parent != "" {
			parents = []string{parent}
		}
		e.srv.AddCommit(actRepo, ghtest.GitCommit{SHA: sha, Message: name, Parents: parents, Date: time.Date(2026, 11, 1, 12, n, 0, 0, time.UTC)}, nil)
		parent = sha
	}
	// The job's configuration is the checkout's (the workspace), as a workflow's is.
	e.vars["INPUT_CONFIG"] = filepath.Join(r.dir, "speedmatrix.yaml")
	e.srv.SetRef(actRepo, "heads/master", parent)
	return r
}

// bisectEnv stores the history at level 1 through g, and c16 and c17 at level slow, the
// first bad measured results; the push of c18 then reports the change point.
func bisectEnv(t *testing.T, slowFrom map[int]string, skip map[int]bool, level float64) (*storeEnv, *bisectRepo) {
	return bisectEnvAuto(t, slowFrom, skip, level, true)
}

// bisectEnvAuto is bisectEnv with bisect.auto as given.
func bisectEnvAuto(t *testing.T, slowFrom map[int]string, skip map[int]bool, level float64, auto bool) (*storeEnv, *bisectRepo) {
	return bisectEnvWith(t, slowFrom, skip, level, fmt.Sprintf("bisect: {auto: %v, steps: 12}\n", auto))
}

// bisectEnvWith is bisectEnv with the configuration's bisect section bisectYAML.
func bisectEnvWith(t *testing.T, slowFrom map[int]string, skip map[int]bool, level float64, bisectYAML string) (*storeEnv, *bisectRepo) {
	e := newStoreEnv(t, 0)
	e.simTime = true
	r := newBisectRepo(t, e, filepath.Join(e.dir, "store"), slowFrom, skip, bisectYAML)
	for i := 1; i <= 10; i++ {
		e.putScaled(r.sha[fmt.Sprintf("h%d", i)], 1)
	}
	e.putScaled(r.sha["g"], 1)
	e.putScaled(r.sha["c16"], level)
	e.putScaled(r.sha["c17"], level)
	return e, r
}

// pushBisected runs the push of c18 and returns the change-point issue's number and the bot's
// one bisect comment on it.
func pushBisected(t *testing.T, e *storeEnv, r *bisectRepo) (int, string) {
	t.Helper()
	stderr := e.pushOf(r.sha["c18"])
	issues := changeIssues(e)
	if len(issues) != 1 {
		t.Fatalf("%d change-point issues, want 1\n%s", len(issues), stderr)
	}
	cs := bisectComments(e, issues[0].Number)
	if len(cs) != 1 {
		t.Fatalf("%d bisect comments on the issue, want 1\n%s", len(cs), stderr)
	}
	return issues[0].Number, cs[0]
}

// bisectComments returns the bot's bisect comments on issue or PR n.
func bisectComments(e *storeEnv, n int) []string {
	var out []string
	for _, c := range e.srv.State().CommentsOn(actRepo, n) {
		if strings.Contains(c.Body, "<!-- speedmatrix:bisect -->") {
			out = append(out, c.Body)
		}
	}
	return out
}

// TestActionBisectNamesCulprit is the acceptance of issue 24: 16 commits lie between the last
// good (g) and the first bad (c16) measured results, and commit c11 slows decode at 8+
// requests by 10 %. The push that reports the change point bisects the range, measuring only
// the shifted cell, names c11 on the change-point issue after at most ⌈log₂ 16⌉ + 2 steps, and
// comments on c11's pull request; each step is stored as a bisection step, never as history.
func TestActionBisectNamesCulprit(t *testing.T) {
	e, r := bisectEnv(t, map[int]string{11: "decode=1.111@batch>=8"}, nil, 0.9)
	e.srv.AddPull(ghtest.Pull{Repo: actRepo, Number: 11, State: "closed", Author: "Codertocat", HeadSHA: strings.Repeat("b", 40), HeadRef: "slow-kernel", BaseRef: "master", MergeCommitSHA: r.sha["c11"]})
	e.srv.AddPull(ghtest.Pull{Repo: actRepo, Number: 12, State: "closed", Author: "Codertocat", HeadSHA: strings.Repeat("c", 40), HeadRef: "docs", BaseRef: "master", MergeCommitSHA: r.sha["c12"]})
	n, body := pushBisected(t, e, r)
	c11 := r.sha["c11"][:7]
	if !strings.Contains(body, "culprit is "+c11) {
		t.Errorf("the issue does not name c11 (%s) as the culprit:\n%s", c11, body)
	}
	steps := regexp.MustCompile(`(?m)^\| (\d+) \|`).FindAllStringSubmatch(body, -1)
	if len(steps) == 0 || len(steps) > 6 {
		t.Errorf("%d measurement steps, want 1 to ⌈log₂ 16⌉ + 2 = 6:\n%s", len(steps), body)
	}
	if !strings.Contains(body, "on `decode/8K/8`") {
		t.Errorf("the comment does not name the cells measured:\n%s", body)
	}
	if pr := bisectComments(e, 11); len(pr) != 1 || !strings.Contains(pr[0], c11) || !strings.Contains(pr[0], fmt.Sprintf("#%d", n)) {
		t.Errorf("the culprit's pull request #11 comments %q, want one naming %s and the issue", pr, c11)
	}
	if pr := bisectComments(e, 12); len(pr) != 0 {
		t.Errorf("pull request #12 (not the culprit) got %q", pr)
	}
	// Every step is stored as a bisection step of its commit, of the shifted cell only, and the
	// default-branch history is the pushes' alone.
	ctx := context.Background()
	steps2, err := e.st.List(ctx, store.Filter{Kind: store.KindBisect})
	if err != nil || len(steps2) != len(steps) {
		t.Errorf("%d bisection steps stored (%v), want %d", len(steps2), err, len(steps))
	}
	for _, s := range steps2 {
		f, err := e.st.Open(ctx, s)
		if err != nil {
			t.Fatal(err)
		}
		if len(f.Decode) != 1 || f.Decode[0].ID().String() != "decode/8K/8" || len(f.Prefill) != 0 {
			t.Errorf("step %s measured %d decode and %d prefill cells, want decode/8K/8 alone", s.Commit[:7], len(f.Decode), len(f.Prefill))
		}
	}
	if defaults, _ := e.st.List(ctx, store.Filter{Kind: store.KindDefault}); len(defaults) != 14 {
		t.Errorf("%d default-branch results, want the 13 stored and the push's", len(defaults))
	}
}

// TestActionBisectTrueStatements: a range whose culprit cannot be measured (its configuration
// does not load) ends with the range that holds it, saying why; a range with two regressions
// names both culprits (c5, then c11 against c5's level), not one for the whole change.
func TestActionBisectTrueStatements(t *testing.T) {
	for _, tt := range []struct {
		name     string
		slowFrom map[int]string
		skip     map[int]bool
		level    float64
		want     func(r *bisectRepo) []string
	}{
		{"unbuildable culprit", map[int]string{11: "decode=1.111@batch>=8"}, map[int]bool{11: true}, 0.9, func(r *bisectRepo) []string {
			return []string{"lies in the 2 commits " + r.sha["c11"][:7] + ".." + r.sha["c12"][:7], r.sha["c11"][:7] + " did not build or serve"}
		}},
		{"two regressions", map[int]string{5: "decode=1.111@batch>=8", 11: "decode=1.389@batch>=8"}, nil, 0.72, func(r *bisectRepo) []string {
			return []string{"first regression's culprit is " + r.sha["c5"][:7], "second regression's culprit is " + r.sha["c11"][:7]}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e, r := bisectEnv(t, tt.slowFrom, tt.skip, tt.level)
			_, body := pushBisected(t, e, r)
			for _, w := range tt.want(r) {
				if !strings.Contains(body, w) {
					t.Errorf("the comment does not say %q:\n%s", w, body)
				}
			}
		})
	}
}

// bisectCommand posts body as user's comment on issue n and runs the action on it.
func (e *storeEnv) bisectCommand(n int, user, body string) (map[string]string, string) {
	e.t.Helper()
	const id = 492700777
	e.srv.PutComment(ghtest.Comment{ID: id, Repo: actRepo, Issue: n, User: user, Body: body, CreatedAt: time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)})
	e.event("issue_comment", derived(e.t, "issue_comment/created.payload.json",
		map[string]any{"comment.body": body, "issue.number": n, "comment.id": id, "comment.user.login": user}))
	out, stderr, err := e.run(context.Background())
	if err != nil {
		e.t.Fatalf("the comment %q: %v\n%s", body, err, stderr)
	}
	return out, stderr
}

// TestActionBisectCommand: without bisect.auto the push only reports the change point; a
// maintainer's /bench bisect on the issue bisects its range (or the range named) and names c11;
// a reader's command gets a -1 reaction and nothing is measured; on a pull request it is refused.
func TestActionBisectCommand(t *testing.T) {
	e, r := bisectEnvAuto(t, map[int]string{11: "decode=1.111@batch>=8"}, nil, 0.9, false)
	e.srv.SetPermission(actRepo, "reader", "read")
	stderr := e.pushOf(r.sha["c18"])
	issues := changeIssues(e)
	if len(issues) != 1 {
		t.Fatalf("%d change-point issues, want 1\n%s", len(issues), stderr)
	}
	n := issues[0].Number
	if cs := bisectComments(e, n); len(cs) != 0 {
		t.Fatalf("bisected without bisect.auto: %q", cs)
	}
	c11 := r.sha["c11"][:7]

	out, stderr := e.bisectCommand(n, "reader", "/bench bisect")
	if out["verdict"] != "refused" || len(bisectComments(e, n)) != 0 {
		t.Errorf("a reader's /bench bisect: verdict %q, %d bisect comments\n%s", out["verdict"], len(bisectComments(e, n)), stderr)
	}

	out, stderr = e.bisectCommand(n, "Codertocat", "/bench bisect")
	if cs := bisectComments(e, n); out["verdict"] != "bisected" || len(cs) != 1 || !strings.Contains(cs[0], "culprit is "+c11) {
		t.Fatalf("/bench bisect: verdict %q, comments %q, want one naming %s\n%s", out["verdict"], cs, c11, stderr)
	}

	named := fmt.Sprintf("/bench bisect %s..%s", r.sha["c8"][:7], r.sha["c12"][:7])
	out, stderr = e.bisectCommand(n, "Codertocat", named)
	cs := bisectComments(e, n)
	if out["verdict"] != "bisected" || len(cs) != 2 || !strings.Contains(cs[1], "culprit is "+c11) || !strings.Contains(cs[1], "Bisect** of `"+r.sha["c8"][:7]+"`..`"+r.sha["c12"][:7]+"`") {
		t.Errorf("%s: verdict %q, comments %q\n%s", named, out["verdict"], cs, stderr)
	}

	out, _ = e.bisectCommand(n, "Codertocat", fmt.Sprintf("/bench bisect %s..%s", r.sha["c12"][:7], r.sha["c8"][:7]))
	if last := e.srv.State().CommentsOn(actRepo, n); out["verdict"] != "refused" || !strings.Contains(last[len(last)-1].Body, "is not before") {
		t.Errorf("a reversed range: verdict %q, last comment %q", out["verdict"], last[len(last)-1].Body)
	}

	e.benchComment("/bench bisect")
	out, stderr, err := e.run(context.Background())
	if err != nil || out["verdict"] != "refused" {
		t.Errorf("/bench bisect on a pull request: verdict %q, %v\n%s", out["verdict"], err, stderr)
	}
}
