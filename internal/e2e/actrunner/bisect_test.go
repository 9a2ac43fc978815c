//go:build realrunner

package actrunner

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-github/v66/github"

	"github.com/speedmatrix/speedmatrix/ghbot/ghtest"
	"github.com/speedmatrix/speedmatrix/results"
	"github.com/speedmatrix/speedmatrix/store"
)

// The bisection of a default-branch regression through the split workflow, under the real
// runner: the scratch engine repository's main is root, h1…h10, g, c1…c18; from c11 on its
// speedmatrix.yaml (a file in the tree) serves the simulator 10 % slower in decode at 8 or
// more requests. The data branch holds real runs of the quick matrix's cells decode/8K/1 and
// decode/8K/8 (measured by the harness with the same configuration: seedHistory) for h1…h10
// and g at the old speed and for c16 and c17 at the new one, as earlier pushes would have
// stored them (the change-point detector's permutation test needs about ten results before a
// shift of three).
//
//   - bisect-push: the push of c18 (bisect.auto, bisect.runners 2) reports the change point
//     g → c16 on decode/8K/8 and dispatches the first round; GitHub's part, starting a run for
//     each dispatch, is played by the harness: every workflow_dispatch the fake records is run
//     under act until none is left. The issue's bisection comment must name c11 after at most
//     ⌈log₂ 16⌉ + 2 = 6 rounds, each of one bisect job measuring decode/8K/8 alone, every step
//     stored as kind bisect, and c11's pull request commented.
//   - issue-comment: a comment on the issue that is no /bench bisect starts no job (the
//     workflow's if: admits issue comments for /bench bisect alone).
//   - bisect-reader: a reader's /bench bisect on the issue starts no job (the decide job's if:
//     admits OWNER, MEMBER and COLLABORATOR only): no reaction, nothing measured.
//   - bisect-command: a maintainer's /bench bisect c9..c12 bisects that range (its first round
//     in the comment's own run, then dispatched) and names c11 again.
//   - bisect-sharded: after a push of c19 that sets bisect.runners 4, /bench bisect c9..c12
//     through example-gpu-sharded.yml: k-ary rounds, 3 bisect jobs at once (act runs a
//     matrix's jobs side by side), and c11 named.
//
// One GPU job a round but in the last scenario: act runs a round's jobs on the test's two cores
// at once, where GitHub gives each a runner, and three simulators side by side measured good
// commits up to 9 % slow now and then, as slow as the slowed ones (a wrong culprit).
const bisectCells = "[decode/8K/1, decode/8K/8]"

// bisectConfig is the bisection repository's speedmatrix.yaml: engineConfig's simulator at 4×
// its profile's speed (not 10×: a 10 % step must stand out of the measurements of a loaded
// 2-core machine; the simulator's real-time speed falls when its process waits for a CPU, the
// less so the fewer tokens a second it streams: at 10× a round of 3 jobs under a load of 19
// measured good commits 25–55 % slower), two cells of the quick matrix, bisect.auto with
// runners runners, slowed by slowdown.
func bisectConfig(slowdown string, runners int) string {
	cfg := strings.Replace(engineConfig(slowdown, ""), "matrix: quick\n", "matrix: quick\ncells: "+bisectCells+"\n", 1)
	cfg = strings.Replace(cfg, `--sim-speedup, "10"`, `--sim-speedup, "4"`, 1)
	return cfg + fmt.Sprintf("bisect: {auto: true, steps: 12, runners: %d}\n", runners)
}

// bisectRepo makes the scratch repository and returns it with its commits in order.
func (h *harness) bisectRepo(t *testing.T, name, workflow string) (*repo, []string) {
	wf := readFile(t, filepath.Join(h.root, ".github", "workflows", workflow))
	var names []string
	for i := 1; i <= 10; i++ {
		names = append(names, fmt.Sprintf("h%d", i))
	}
	names = append(names, "g")
	for i := 1; i <= 18; i++ {
		names = append(names, fmt.Sprintf("c%d", i))
	}
	steps := []commitStep{{role: "root", files: map[string]string{"speedmatrix.yaml": bisectConfig("", 2), ".github/workflows/" + workflow: wf, "README.md": "engine\n"}}}
	parent := "root"
	for _, n := range names {
		files := map[string]string{"CHANGES.md": "up to " + n + "\n"}
		if n == "c11" {
			files["speedmatrix.yaml"] = bisectConfig("decode=1.111@batch>=8", 2)
		}
		steps = append(steps, commitStep{role: n, parent: parent, files: files})
		parent = n
	}
	steps[len(steps)-1].branch = "main"
	return h.makeRepo(t, name, "", steps), names
}

// seedHistory stores the data branch's history as earlier pushes would have: the results of
// the good commits (h1…h10, g) and of the first bad measured ones (c16, c17). It measures the
// good and the slowed configuration three times each, one run at a time, as the runner would,
// and keeps each cell's least disturbed measurement (the fastest: waiting for a CPU only ever
// slows the simulator): the good runs' for every cell, and for c16 and c17 the slowed runs'
// decode/8K/8, the one cell the slowdown touches. Each commit gets a copy as a run of its own
// (its run id, its cells' throughputs moved by up to ±1.2 %: the spread of the jobs' own runs
// under act, so that the steps measured there are read against a history as noisy as they
// are). It returns the measured levels. On the test's loaded 2-core machine a run now and then
// measures 10–40 % slow (another job took the CPU); seeded from such runs, the history hid the
// change point, widened every step's 95 % interval to ±8 %, read the range's change as two
// regressions, or shifted the unslowed cell's series too (5 of 9 tries failed).
func (h *harness) seedHistory(t *testing.T, r *repo) string {
	dir := filepath.Join(h.scratch, "seed-"+r.name)
	mustMkdir(t, dir)
	var levels []string
	// best measures the configuration (slowed by slowdown) three times and returns a results
	// file whose every decode cell is the fastest of the three.
	best := func(name, slowdown string) *results.File {
		cfg := filepath.Join(dir, name+".yaml")
		writeFile(t, cfg, bisectConfig(slowdown, 2), 0o644)
		var runs []*results.File
		for k := 1; k <= 3; k++ {
			out := filepath.Join(dir, fmt.Sprintf("%s-%d.json", name, k))
			cmd := exec.Command(filepath.Join(h.bin, "speedmatrix"), "run", "--config", cfg, "-o", out)
			cmd.Dir = dir
			cmd.Env = append(filteredEnv(), "PATH="+h.bin+string(os.PathListSeparator)+os.Getenv("PATH"))
			if b, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("measure the seeded history (%s): %v\n%s", name, err, b)
			}
			f, err := results.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			var vs []string
			for _, c := range f.Decode {
				if c.TotalTokPerS != nil {
					vs = append(vs, fmt.Sprintf("%s %.0f", c.ID(), *c.TotalTokPerS))
				}
			}
			levels = append(levels, name+": "+strings.Join(vs, ", "))
			runs = append(runs, f)
		}
		out := runs[0]
		for i := range out.Decode {
			for _, f := range runs[1:] {
				if i < len(f.Decode) && f.Decode[i].ID() == out.Decode[i].ID() && f.Decode[i].TotalTokPerS != nil &&
					(out.Decode[i].TotalTokPerS == nil || *f.Decode[i].TotalTokPerS > *out.Decode[i].TotalTokPerS) {
					out.Decode[i] = f.Decode[i]
				}
			}
		}
		return out
	}
	good, slow := best("good", ""), best("slow", "decode=1.111@batch>=8")
	gh, err := github.NewClient(nil).WithAuthToken(token).WithEnterpriseURLs(h.api, h.api)
	if err != nil {
		t.Fatal(err)
	}
	st := store.NewBranch(gh, owner, r.name)
	at := time.Now().Add(-time.Hour)
	var roles []string
	for i := 1; i <= 10; i++ {
		roles = append(roles, fmt.Sprintf("h%d", i))
	}
	for k, role := range append(roles, "g", "c16", "c17") {
		b, err := results.Encode(good)
		if err != nil {
			t.Fatal(err)
		}
		f, err := results.Decode(b) // a copy
		if err != nil {
			t.Fatal(err)
		}
		for i := range f.Decode {
			if (role == "c16" || role == "c17") && f.Decode[i].ID().String() == "decode/8K/8" {
				for _, c := range slow.Decode {
					if c.ID() == f.Decode[i].ID() {
						f.Decode[i] = c
					}
				}
			}
			jitter := 1 + 0.006*float64((i*7+k*3)%5-2)
			for _, v := range []*float64{f.Decode[i].TotalTokPerS, f.Decode[i].PerRequestTokPerS} {
				if v != nil {
					*v *= jitter
				}
			}
			f.Decode[i].Trials, f.Decode[i].SummaryOnly = nil, true
		}
		f.Run.ID = fmt.Sprintf("%s-%s", f.Run.ID, role)
		f.Engine.Commit = r.sha[role]
		if _, err := st.Put(context.Background(), store.Entry{Commit: r.sha[role], Kind: store.KindDefault, Time: at.Add(time.Duration(k) * time.Minute)}, f); err != nil {
			t.Fatalf("store the seeded history (%s): %v", role, err)
		}
	}
	return strings.Join(levels, "; ")
}

// dispatchEvent is the workflow_dispatch GitHub starts for d on r's main at its tip.
func (h *harness) dispatchEvent(t *testing.T, r *repo, d ghtest.Dispatch, tip string) event {
	inputs := map[string]any{}
	for k, v := range d.Inputs {
		inputs[k] = v
	}
	return event{"workflow_dispatch", h.payload(t, r, "workflow_dispatch/payload.json", map[string]any{
		"ref": "refs/heads/" + d.Ref, "inputs": inputs, "sender.login": d.Login, "workflow": ".github/workflows/" + d.Workflow,
	}), r.sha[tip], true}
}

// issueCommentEvent is user's comment body on issue number (not a pull request), seeded on the
// fake first.
func (h *harness) issueCommentEvent(t *testing.T, r *repo, number int, user, body, mainRole string) event {
	created := time.Now().Add(2 * time.Second).Truncate(time.Second)
	ids := h.setup(t, ghtest.Setup{Comments: []ghtest.Comment{{Repo: r.full, Issue: number, User: user, Body: body, CreatedAt: created, UpdatedAt: created}}})
	h.comment = ids[0]
	assoc := "NONE"
	if user == maintainer {
		assoc = "OWNER"
	}
	return event{"issue_comment", h.payload(t, r, "issue_comment/created.payload.json", map[string]any{
		"comment.body": body, "comment.id": ids[0], "comment.user.login": user, "sender.login": user,
		"comment.created_at": created.Format(time.RFC3339), "comment.updated_at": created.Format(time.RFC3339),
		"comment.author_association": assoc, "issue.number": number, "issue.state": "open",
	}), r.sha[mainRole], true}
}

// bisectRun is what the runs of one bisection did.
type bisectRun struct {
	rounds [][]string // each run's bisect jobs (their names: bisect SHORT)
	runs   int
}

// addCommit commits files on top of parent's role as role, makes it main's tip on the origin
// and in the fake, as a push to main would.
func (h *harness) addCommit(t *testing.T, r *repo, role, parent string, files map[string]string) {
	src := filepath.Join(h.scratch, "src", r.name)
	git := func(args ...string) string {
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = src, gitEnv(len(r.sha)+1)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git("checkout", "-q", "--detach", r.sha[parent])
	for p, c := range files {
		writeFile(t, filepath.Join(src, p), c, 0o644)
	}
	git("add", "-A")
	git("commit", "-q", "-m", role)
	r.sha[role] = git("rev-parse", "HEAD")
	git("push", "-q", "--force", filepath.Join(h.gitRoot, owner, r.name+".git"), "HEAD:refs/heads/main")
	when, _ := time.Parse(time.RFC3339, git("log", "-1", "--format=%cI"))
	h.setup(t, ghtest.Setup{
		Commits: []ghtest.SetupCommit{{Repo: r.full, GitCommit: ghtest.GitCommit{SHA: r.sha[role], Date: when, Parents: []string{r.sha[parent]}, Message: "commit " + r.sha[role][:7]}}},
		Refs:    map[string]ghtest.SetupRef{r.full + " heads/main": {SHA: r.sha[role]}},
	})
}

// dispatchesOf returns the workflow_dispatch events the fake recorded for r.
func (h *harness) dispatchesOf(t *testing.T, r *repo) []ghtest.Dispatch {
	var out []ghtest.Dispatch
	for _, d := range h.state(t).State.Dispatches {
		if d.Repo == r.full {
			out = append(out, d)
		}
	}
	return out
}

// followDispatches plays GitHub's part of a workflow_dispatch: each dispatch the fake recorded
// after seen starts a run of the workflow under act (at most limit), until none is left.
func (h *harness) followDispatches(t *testing.T, r *repo, file, scenario string, seen, limit int, b *bisectRun) {
	for {
		mine := h.dispatchesOf(t, r)
		if seen >= len(mine) {
			return
		}
		d := mine[seen]
		seen++
		if d.Workflow != file || d.Ref != "main" || d.Login != ghtest.ActionsLogin {
			t.Errorf("dispatch %+v: want %s on main by the workflow's token", d, file)
		}
		if b.runs++; b.runs > limit {
			t.Fatalf("more than %d dispatched runs", limit)
		}
		tip := "c18"
		if _, ok := r.sha["c19"]; ok {
			tip = "c19"
		}
		rw := h.runAct(t, r, file, fmt.Sprintf("%s-%d", scenario, b.runs), h.dispatchEvent(t, r, d, tip))
		b.note(rw)
		h.record(t, rw, fmt.Sprintf("round: %d bisect jobs", len(bisectJobs(rw))))
	}
}

// bisectJobs returns the names of a run's bisect jobs.
func bisectJobs(rw row) []string {
	var out []string
	for _, j := range rw.jobs {
		if strings.HasPrefix(j.name, "bisect ") {
			out = append(out, j.name)
		}
	}
	return out
}

func (b *bisectRun) note(rw row) {
	if js := bisectJobs(rw); len(js) > 0 {
		b.rounds = append(b.rounds, js)
	}
}

// bisectComment returns the bot's bisection comments on issue n.
func bisectComments(d ghtest.Dump, r *repo, n int) []string {
	var out []string
	for _, c := range d.State.CommentsOn(r.full, n) {
		if c.User == ghtest.ActionsLogin && strings.HasPrefix(c.Body, "<!-- speedmatrix:bisect -->") {
			out = append(out, c.Body)
		}
	}
	return out
}

// changeIssue returns the number of r's open change-point issue.
func changeIssue(t *testing.T, d ghtest.Dump, r *repo) int {
	t.Helper()
	var ns []int
	for _, i := range d.State.Issues {
		if i.Repo == r.full && i.State == "open" && strings.Contains(i.Body, "<!-- speedmatrix:change-point -->") {
			ns = append(ns, i.Number)
		}
	}
	if len(ns) != 1 {
		t.Fatalf("%d open change-point issues, want 1", len(ns))
	}
	return ns[0]
}

// disturbedBelow is a step's change that the scripted history cannot give: its one slowdown is
// 10 %, and the steps of slowed commits measured 7.5–10.9 % slower undisturbed; a step measured
// slower than its 10 % and δ (3 %) was measured while other jobs held the test machine's CPU
// (the simulator's speed is the wall clock's, and it skips ahead after 250 ms behind it: on the
// loaded 2-core machine a real vLLM's tests beside this one made steps measure 15–69 % slow).
const disturbedBelow = -0.13

var stepChange = regexp.MustCompile(`(?m)^\| \d+ \| [^|]+\| [^|]+\| [^|]+\| ([+-]\d+\.\d) % \(`)

// again reports whether a bisection's first try, which did not end as wanted (ok false), is tried
// once more because its comment shows disturbed steps (disturbedBelow), and logs why.
func again(t *testing.T, try int, ok bool, comment, how string) bool {
	bad := disturbed(comment)
	if ok || try != 1 || len(bad) == 0 {
		return false
	}
	t.Logf("try %d: steps measured %v, slower than the scripted history can be: the machine was busy; %s", try, bad, how)
	return true
}

// disturbed returns the steps of a bisection comment measured slower than disturbedBelow.
func disturbed(comment string) []string {
	var out []string
	for _, m := range stepChange.FindAllStringSubmatch(comment, -1) {
		var v float64
		fmt.Sscanf(m[1], "%g", &v)
		if v/100 < disturbedBelow {
			out = append(out, m[1]+" %")
		}
	}
	return out
}

// pushBisection is one try of the push's bisection: its comment, rounds and the runs' rows.
type pushBisection struct {
	r       *repo
	names   []string
	issue   int
	comment string
	b       *bisectRun
	rw      row
}

// bisectPush makes a scratch repository (name), seeds its history, pushes c18 and follows the
// dispatched rounds; it checks what holds whatever the measurements were (the change point, one
// comment, the rounds' size, each step stored as kind bisect of the shifted cell alone).
func (h *harness) bisectPush(t *testing.T, name, file string) pushBisection {
	r, names := h.bisectRepo(t, name, file)
	h.setup(t, ghtest.Setup{Pulls: []ghtest.Pull{
		{Repo: r.full, Number: 11, State: "closed", Author: maintainer, HeadSHA: strings.Repeat("b", 40), HeadRef: "slow-kernel", BaseRef: "main", MergeCommitSHA: r.sha["c11"]},
		{Repo: r.full, Number: 12, State: "closed", Author: maintainer, HeadSHA: strings.Repeat("c", 40), HeadRef: "docs", BaseRef: "main", MergeCommitSHA: r.sha["c12"]},
	}})
	start := time.Now()
	levels := h.seedHistory(t, r)
	t.Logf("seeded the data branch's history in %s from 6 runs (total tok/s: %s)", time.Since(start).Round(time.Second), levels)
	p := pushBisection{r: r, names: names, b: &bisectRun{}}
	p.rw = h.runAct(t, r, file, "bisect-push", asRelease(h.pushEvent(t, r, "c18", "c17")))
	h.record(t, p.rw, "change point; round 1 dispatched")
	h.followDispatches(t, r, file, "bisect-round", 0, 8, p.b)
	d := h.state(t)
	p.issue = changeIssue(t, d, r)
	cs := bisectComments(d, r, p.issue)
	if len(cs) != 1 {
		t.Fatalf("%d bisection comments on the change-point issue #%d, want 1", len(cs), p.issue)
	}
	p.comment = cs[0]
	t.Logf("%d rounds %v; the issue's bisection comment:\n%s", len(p.b.rounds), p.b.rounds, p.comment)
	measured := 0
	for i, rd := range p.b.rounds {
		if len(rd) != 1 {
			t.Errorf("round %d ran %d bisect jobs, want bisect.runners − 1 = 1", i+1, len(rd))
		}
		measured += len(rd)
	}
	if got := len(regexp.MustCompile(`(?m)^\| (\d+) \|`).FindAllString(p.comment, -1)); got != measured {
		t.Errorf("the comment's table has %d steps, want one per bisect job (%d)", got, measured)
	}
	// Every step on the data branch: kind bisect, of a commit of the range, the shifted cell
	// alone.
	var steps []string
	for path, body := range d.Files[r.full] {
		if !strings.HasPrefix(path, "bisect/") {
			continue
		}
		steps = append(steps, path)
		f, err := results.Decode([]byte(body))
		if err != nil {
			t.Errorf("%s: %v", path, err)
			continue
		}
		commit := strings.Split(path, "/")[1]
		in := slices.ContainsFunc(names[11:27], func(n string) bool { return r.sha[n] == commit }) // c1…c16
		if !in || len(f.Decode) != 1 || f.Decode[0].ID().String() != "decode/8K/8" || len(f.Prefill) != 0 {
			t.Errorf("%s: a step of %s (in c1…c16: %v) with %d decode and %d prefill cells, want decode/8K/8 alone", path, commit[:7], in, len(f.Decode), len(f.Prefill))
		}
	}
	if len(steps) != measured {
		t.Errorf("%d bisection steps on the data branch, want %d: %v", len(steps), measured, steps)
	}
	noneInProgress(t, d, r)
	return p
}

// runBisect is the bisection scenarios of a GPU example (see the top of this file). A
// bisection whose comment shows a disturbed step (disturbedBelow) and does not name c11 is run
// once more on a fresh repository (the push) or posted once more (the commands); a second
// disturbed try fails as any wrong statement does.
func runBisect(t *testing.T, h *harness, file string) {
	var p pushBisection
	t.Run("bisect-push", func(t *testing.T) {
		for try := 1; ; try++ {
			p = h.bisectPush(t, fmt.Sprintf("engine-bisect-%d", try), file)
			c11 := p.r.sha["c11"][:7]
			named := strings.Contains(p.comment, "The regression's culprit is "+c11)
			if again(t, try, named, p.comment, "the scenario runs again") {
				continue
			}
			if !named {
				t.Errorf("the bisection does not name c11 (%s) as the one culprit:\n%s", c11, p.comment)
			}
			if len(p.b.rounds) == 0 || len(p.b.rounds) > 6 {
				t.Errorf("%d rounds, want 1 to ⌈log₂ 16⌉ + 2 = 6", len(p.b.rounds))
			}
			d := h.state(t)
			if pr := prComments(d, p.r, 11); len(pr) != 1 || !strings.Contains(pr[0], c11) || !strings.Contains(pr[0], fmt.Sprintf("#%d", p.issue)) {
				t.Errorf("c11's pull request #11 comments %q, want one naming %s and the issue", pr, c11)
			}
			if pr := prComments(d, p.r, 12); len(pr) != 0 {
				t.Errorf("pull request #12 (not the culprit) got %q", pr)
			}
			steps := 0
			for _, rd := range p.b.rounds {
				steps += len(rd)
			}
			h.record(t, p.rw, fmt.Sprintf("c11 named: %d rounds, %d steps (try %d)", len(p.b.rounds), steps, try))
			return
		}
	})
	if p.issue == 0 {
		return
	}
	r, issue := p.r, p.issue
	c11 := r.sha["c11"][:7]

	t.Run("issue-comment", func(t *testing.T) {
		before := h.state(t)
		rw := h.runAct(t, r, file, "issue-comment", h.issueCommentEvent(t, r, issue, maintainer, "Thanks, looking at /bench results", "c18"))
		d := h.state(t)
		if len(rw.jobs) != 0 || len(d.State.Reactions) != len(before.State.Reactions) || len(d.State.Dispatches) != len(before.State.Dispatches) {
			t.Errorf("a comment on the issue without /bench bisect ran jobs %v, reacted %d times, dispatched %d runs", rw.jobs,
				len(d.State.Reactions)-len(before.State.Reactions), len(d.State.Dispatches)-len(before.State.Dispatches))
		}
		h.record(t, rw, "no job")
	})

	t.Run("bisect-reader", func(t *testing.T) {
		before := h.state(t)
		rw := h.runAct(t, r, file, "bisect-reader", h.issueCommentEvent(t, r, issue, reader, "/bench bisect", "c18"))
		d := h.state(t)
		var got []string
		for _, x := range d.State.Reactions {
			if x.Repo == r.full && x.CommentID == h.comment && x.User == ghtest.ActionsLogin {
				got = append(got, x.Content)
			}
		}
		if len(got) != 0 {
			t.Errorf("the bot's reactions to a reader's /bench bisect: %v, want none (the decide job's if: admits OWNER, MEMBER and COLLABORATOR only)", got)
		}
		if js := bisectJobs(rw); len(js) != 0 || len(d.State.Dispatches) != len(before.State.Dispatches) {
			t.Errorf("a reader's /bench bisect ran %v and dispatched %d rounds", js, len(d.State.Dispatches)-len(before.State.Dispatches))
		}
		if n, m := len(d.State.CommentsOn(r.full, issue)), len(before.State.CommentsOn(r.full, issue)); n != m+1 {
			t.Errorf("the issue holds %d comments after a reader's /bench bisect, want its %d and the command alone (no reply)", n, m)
		}
		h.record(t, rw, "ignored")
	})

	t.Run("bisect-command", func(t *testing.T) {
		seen := len(h.dispatchesOf(t, r))
		body := fmt.Sprintf("/bench bisect %s..%s", r.sha["c9"][:7], r.sha["c12"][:7])
		for try := 1; ; try++ {
			b := &bisectRun{}
			before := len(bisectComments(h.state(t), r, issue))
			rw := h.runAct(t, r, file, "bisect-command", h.issueCommentEvent(t, r, issue, maintainer, body, "c18"))
			b.note(rw)
			h.record(t, rw, fmt.Sprintf("round 1: %d bisect jobs", len(bisectJobs(rw))))
			if len(b.rounds) != 1 {
				t.Fatalf("the command's run ran no bisect job: its first round runs in the comment's own run")
			}
			h.followDispatches(t, r, file, "bisect-command", seen, 4, b)
			seen = len(h.dispatchesOf(t, r))
			cs := bisectComments(h.state(t), r, issue)
			ok := len(cs) == before+1 && strings.Contains(cs[before], "The regression's culprit is "+c11) && strings.Contains(cs[before], "Bisect** of `"+r.sha["c9"][:7]+"`..`"+r.sha["c12"][:7]+"`")
			if len(cs) == before+1 && again(t, try, ok, cs[before], "the command is posted again") {
				continue
			}
			if !ok {
				t.Errorf("%s: bisection comments %q", body, cs[before:])
			}
			return
		}
	})

	// The sharded example's bisect jobs are the same: its /bench bisect and dispatched rounds.
	const sharded = "example-gpu-sharded.yml"
	t.Run("bisect-sharded", func(t *testing.T) {
		h.addCommit(t, r, "c19", "c18", map[string]string{"speedmatrix.yaml": bisectConfig("decode=1.111@batch>=8", 4)})
		seen := len(h.dispatchesOf(t, r))
		body := fmt.Sprintf("/bench bisect %s..%s", r.sha["c9"][:7], r.sha["c12"][:7])
		for try := 1; ; try++ {
			b := &bisectRun{}
			before := len(bisectComments(h.state(t), r, issue))
			rw := h.runAct(t, r, sharded, "bisect-sharded", h.issueCommentEvent(t, r, issue, maintainer, body, "c19"))
			b.note(rw)
			h.record(t, rw, fmt.Sprintf("round 1: %d bisect jobs", len(bisectJobs(rw))))
			h.followDispatches(t, r, sharded, "bisect-sharded", seen, 4, b)
			seen = len(h.dispatchesOf(t, r))
			cs := bisectComments(h.state(t), r, issue)
			ok := len(b.rounds) > 0 && len(b.rounds[0]) == 3 && len(cs) == before+1 && strings.Contains(cs[before], "The regression's culprit is "+c11)
			if len(cs) == before+1 && again(t, try, ok, cs[before], "the command is posted again") {
				continue
			}
			if !ok {
				t.Errorf("%s through %s: %d rounds, bisection comments %q", body, sharded, len(b.rounds), cs[before:])
			}
			return
		}
	})
}

// prComments returns the bot's bisection comments on pull request n.
func prComments(d ghtest.Dump, r *repo, n int) []string { return bisectComments(d, r, n) }

// TestDisturbed: the steps of a bisection comment read back, and only those slower than the
// scripted history can be are disturbed.
func TestDisturbed(t *testing.T) {
	comment := "| Step | Commit | Against | Verdict | Change of the cells (95 % interval) | GPU time |\n|---|---|---|---|---|---|\n" +
		"| 1 | `dc7273f` | `c613898` | bad | -40.8 % (-42.1 to -39.5 %) | 4s |\n" +
		"| 1 | `138868f` | `c613898` | undecided: inconclusive: the named cells' change -7.5 % (95 % interval -15.1 % to +0.8 %) is not shown | -9.3 % (-11.2 to -7.4 %) | 4s |\n" +
		"| 2 | `999c9d7` | `c613898` | good | +1.6 % (-0.5 to +3.8 %) | 5s |\n"
	if got := disturbed(comment); strings.Join(got, ",") != "-40.8 %" {
		t.Errorf("disturbed steps %v, want the -40.8 %% one alone", got)
	}
}
