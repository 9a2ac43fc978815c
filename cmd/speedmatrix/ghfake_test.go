package main

// The script commands of the end-to-end bot scenarios (testdata/script/bot_*.txtar): a fake
// GitHub (ghbot/ghtest) that keeps state, served by the test process on 127.0.0.1:0 while the
// script's `speedmatrix action` runs as a child process against it, and the event payloads of
// testdata/github-events with the fields a scenario needs set.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/speedmatrix/speedmatrix/ghbot"
	"github.com/speedmatrix/speedmatrix/ghbot/ghtest"
)

// The fake repository of the scenarios: Codertocat/Hello-World (default branch master), as in
// the payloads, with PR #2 (head ghHead on base ghBase, the payloads' commits) and the commit
// graph ghRoot → ghOld1 → ghOld2 → ghBase → ghHead (two earlier default-branch commits, whose
// results can be the baseline's history). Codertocat may write; ghReader may only read.
const (
	ghRepo   = "Codertocat/Hello-World"
	ghToken  = "ghs_scripttesttoken"
	ghRoot   = "0000000000000000000000000000000000c0ffee"
	ghOld1   = "0000000000000000000000000000000000001d01"
	ghOld2   = "0000000000000000000000000000000000001d02"
	ghBase   = "f95f852bd8fca8fcc58a9a2d6c842781e32a215e"
	ghHead   = "ec26c3e57ca3a959ca5aad62de7213c562f8c821"
	ghReader = "octo-reader"
	ghPR     = 2
)

// ghfakeKey is the key of a script's fake GitHub in its testscript values.
type ghfakeKey struct{}

// scriptTB is the testing.TB ghtest.New asks for, its cleanups run when the script ends.
type scriptTB struct {
	testing.TB
	ts *testscript.TestScript
}

func (s scriptTB) Cleanup(f func()) { s.ts.Defer(f) }
func (s scriptTB) Helper()          {}
func (s scriptTB) Fatal(args ...any) {
	s.ts.Fatalf("%s", fmt.Sprint(args...))
}
func (s scriptTB) Fatalf(format string, args ...any) { s.ts.Fatalf(format, args...) }

// ghfakeHolder holds a script's fake GitHub once `ghfake start` made it.
type ghfakeHolder struct{ srv *ghtest.Server }

// setupGHFake gives each script a place for its fake GitHub.
func setupGHFake(env *testscript.Env) {
	env.Values[ghfakeKey{}] = &ghfakeHolder{}
}

func ghfakeOf(ts *testscript.TestScript) *ghfakeHolder {
	return ts.Value(ghfakeKey{}).(*ghfakeHolder)
}

// cmdGHFake is the script command `ghfake SUBCOMMAND ARGS...`:
//
//	ghfake start              start the fake GitHub and set the workflow's environment
//	ghfake push-pr SHA        push commit SHA (a child of the PR's head) to PR #2
//	ghfake say USER BODY      USER comments BODY on PR #2: the comment and its issue_comment event
//	ghfake check SHA          print the one check run on SHA (fails unless there is exactly one)
//	ghfake idle               fail if any check run is queued or in_progress
//	ghfake comments           print the number of the bot's marked comments on PR #2, then each
//	ghfake replies            print the bot's other comments on PR #2
//	ghfake reactions          print each reaction: CONTENT on comment ID by USER
//	ghfake branch NAME        print the paths of the files on branch NAME, one a line
func cmdGHFake(outer testing.TB) func(ts *testscript.TestScript, neg bool, args []string) {
	return func(ts *testscript.TestScript, neg bool, args []string) {
		if neg || len(args) == 0 {
			ts.Fatalf("usage: ghfake start|push-pr|say|check|idle|comments|replies|branch ...")
		}
		h := ghfakeOf(ts)
		if args[0] != "start" && h.srv == nil {
			ts.Fatalf("ghfake %s: run ghfake start first", args[0])
		}
		want := func(n int, usage string) {
			if len(args) != n+1 {
				ts.Fatalf("usage: ghfake %s %s", args[0], usage)
			}
		}
		switch args[0] {
		case "start":
			want(0, "")
			h.srv = startGHFake(ts, outer)
		case "push-pr":
			want(1, "SHA")
			pushPR(ts, h.srv, args[1])
		case "master":
			// The default branch's tip moves to SHA (a push to it).
			want(1, "SHA")
			h.srv.SetRef(ghRepo, "heads/master", args[1])
		case "say":
			want(2, "USER BODY")
			say(ts, h.srv, args[1], args[2])
		case "check":
			want(1, "SHA")
			printCheck(ts, h.srv, args[1])
		case "idle":
			want(0, "")
			for _, c := range h.srv.State().CheckRuns {
				if c.Status != "completed" {
					ts.Fatalf("check run %d on %s is %s", c.ID, c.HeadSHA, c.Status)
				}
			}
		case "comments":
			want(0, "")
			cs := botComments(h.srv.State(), true)
			fmt.Fprintf(ts.Stdout(), "%d marked comments\n", len(cs))
			for _, c := range cs {
				fmt.Fprintf(ts.Stdout(), "-- comment %d --\n%s\n", c.ID, c.Body)
			}
		case "replies":
			want(0, "")
			for _, c := range botComments(h.srv.State(), false) {
				fmt.Fprintf(ts.Stdout(), "-- reply %d --\n%s\n", c.ID, c.Body)
			}
		case "reactions":
			want(0, "")
			for _, r := range h.srv.State().Reactions {
				fmt.Fprintf(ts.Stdout(), "%s on comment %d by %s\n", r.Content, r.CommentID, r.User)
			}
		case "branch":
			want(1, "NAME")
			var paths []string
			for p := range h.srv.Files(ghRepo, "heads/"+args[1]) {
				paths = append(paths, p)
			}
			sort.Strings(paths)
			for _, p := range paths {
				fmt.Fprintln(ts.Stdout(), p)
			}
		default:
			ts.Fatalf("ghfake: unknown subcommand %q", args[0])
		}
	}
}

// startGHFake starts the fake and sets what a workflow step of the action sees.
func startGHFake(ts *testscript.TestScript, outer testing.TB) *ghtest.Server {
	srv := ghtest.New(scriptTB{TB: outer, ts: ts}, ghtest.Enterprise())
	srv.AddToken(ghToken, ghtest.ActionsLogin)
	srv.AddRepo(ghtest.Repo{Owner: "Codertocat", Name: "Hello-World", DefaultBranch: "master", PushedAt: time.Now().Add(-time.Hour).Truncate(time.Second)})
	day := time.Date(2019, 5, 15, 0, 0, 0, 0, time.UTC)
	srv.AddCommit(ghRepo, ghtest.GitCommit{SHA: ghRoot, Message: "root", Date: day}, nil)
	srv.AddCommit(ghRepo, ghtest.GitCommit{SHA: ghOld1, Message: "old 1", Parents: []string{ghRoot}, Date: day.Add(20 * time.Minute)}, nil)
	srv.AddCommit(ghRepo, ghtest.GitCommit{SHA: ghOld2, Message: "old 2", Parents: []string{ghOld1}, Date: day.Add(40 * time.Minute)}, nil)
	srv.AddCommit(ghRepo, ghtest.GitCommit{SHA: ghBase, Message: "base", Parents: []string{ghOld2}, Date: day.Add(time.Hour)}, nil)
	srv.AddCommit(ghRepo, ghtest.GitCommit{SHA: ghHead, Message: "head", Parents: []string{ghBase}, Date: day.Add(2 * time.Hour)}, nil)
	srv.SetRef(ghRepo, "heads/master", ghBase)
	srv.AddPull(ghtest.Pull{Repo: ghRepo, Number: ghPR, Author: "Codertocat", HeadSHA: ghHead, HeadRef: "changes", BaseSHA: ghBase, BaseRef: "master"})
	srv.SetPermission(ghRepo, "Codertocat", "write")
	srv.SetPermission(ghRepo, ghReader, "read")
	work := ts.Getenv("WORK")
	for k, v := range map[string]string{
		"GITHUB_ACTIONS":      "true",
		"GITHUB_API_URL":      srv.URL,
		"GITHUB_SERVER_URL":   "https://github.com",
		"GITHUB_REPOSITORY":   ghRepo,
		"GITHUB_RUN_ID":       "4242",
		"GITHUB_OUTPUT":       filepath.Join(work, "github_output"),
		"GITHUB_STEP_SUMMARY": filepath.Join(work, "step_summary"),
		"INPUT_TOKEN":         ghToken,
		"INPUT_MODE":          "full",
		"INPUT_CONFIG":        filepath.Join(work, "speedmatrix.yaml"),
		"INPUT_ARTIFACT-DIR":  filepath.Join(work, "artifact"),
		"INPUT_BASELINE-DIR":  filepath.Join(work, "baselines"),
		"ROOT_SHA":            ghRoot,
		"OLD1_SHA":            ghOld1,
		"OLD2_SHA":            ghOld2,
		"BASE_SHA":            ghBase,
		"HEAD_SHA":            ghHead,
		"READER":              ghReader,
	} {
		ts.Setenv(k, v)
	}
	return srv
}

// pushPR pushes sha, a new child of PR #2's head, to the PR.
func pushPR(ts *testscript.TestScript, srv *ghtest.Server, sha string) {
	var parent string
	for _, p := range []string{ts.Getenv("PR_HEAD"), ghHead} {
		if p != "" {
			parent = p
			break
		}
	}
	srv.AddCommit(ghRepo, ghtest.GitCommit{SHA: sha, Message: "push " + sha[:7], Parents: []string{parent}, Date: time.Now()}, nil)
	srv.MovePullHead(ghRepo, ghPR, sha)
	ts.Setenv("PR_HEAD", sha)
}

// say seeds user's comment body on PR #2, written after the last push, and makes it the event.
func say(ts *testscript.TestScript, srv *ghtest.Server, user, body string) {
	created := time.Now().Add(2 * time.Second).Truncate(time.Second)
	id := srv.PutComment(ghtest.Comment{Repo: ghRepo, Issue: ghPR, User: user, Body: body, CreatedAt: created})
	writeEvent(ts, "issue_comment", "issue_comment/created.on-pull-request.DERIVED.json", map[string]any{
		"comment.body": body, "comment.id": id, "comment.user.login": user,
		"comment.created_at": created.Format(time.RFC3339), "comment.updated_at": created.Format(time.RFC3339),
		"comment.author_association": map[bool]string{true: "OWNER", false: "NONE"}[user == "Codertocat"],
		"issue.number":               ghPR,
	})
}

// botComments returns the bot's comments on PR #2 with the comment's marker (marked) or without.
func botComments(st ghtest.State, marked bool) []ghtest.Comment {
	var out []ghtest.Comment
	for _, c := range st.CommentsOn(ghRepo, ghPR) {
		if c.User == ghtest.ActionsLogin && strings.Contains(c.Body, "<!-- speedmatrix:comment check=") == marked {
			out = append(out, c)
		}
	}
	return out
}

// printCheck prints the one check run on sha.
func printCheck(ts *testscript.TestScript, srv *ghtest.Server, sha string) {
	cs := srv.State().ChecksOn(ghRepo, sha)
	if len(cs) != 1 {
		ts.Fatalf("%d check runs on %s, want 1", len(cs), sha)
	}
	c := cs[0]
	fmt.Fprintf(ts.Stdout(), "name: %s\nstatus: %s\nconclusion: %s\ntitle: %s\n-- summary --\n%s\n-- text --\n%s\n",
		c.Name, c.Status, c.Conclusion, c.Title, c.Summary, c.Text)
}

// cmdEvent is the script command `event NAME FILE [PATH=VALUE...]`: it writes the payload
// FILE of testdata/github-events with the dotted PATHs set (a VALUE that parses as JSON is
// that value, else a string; a commit id is a string) to $WORK/event.json, and sets GITHUB_EVENT_NAME,
// GITHUB_EVENT_PATH and GITHUB_SHA (the push's after, the pull request's head) for the next
// `speedmatrix action`.
func cmdEvent(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: event NAME FILE [PATH=VALUE...]")
	}
	set := map[string]any{}
	for _, a := range args[2:] {
		k, v, ok := strings.Cut(a, "=")
		if !ok {
			ts.Fatalf("event: %q is not PATH=VALUE", a)
		}
		var j any
		if ghbot.ValidSHA(v) {
			set[k] = v // a commit id, even one of digits only
		} else if err := json.Unmarshal([]byte(v), &j); err == nil {
			set[k] = j
		} else {
			set[k] = v
		}
	}
	writeEvent(ts, args[0], args[1], set)
}

func writeEvent(ts *testscript.TestScript, name, file string, set map[string]any) {
	b, err := os.ReadFile(filepath.Join(ts.Getenv("REPO_TESTDATA"), "github-events", file))
	ts.Check(err)
	b = ghtest.DerivePayload(scriptTB{ts: ts}, b, set)
	var p struct {
		After       string `json:"after"`
		PullRequest struct {
			Head struct {
				SHA string `json:"sha"`
			} `json:"head"`
		} `json:"pull_request"`
	}
	ts.Check(json.Unmarshal(b, &p))
	sha := "0123456789abcdef0123456789abcdef01234567" // a workflow run's merge commit
	if p.After != "" {
		sha = p.After
	} else if p.PullRequest.Head.SHA != "" {
		sha = p.PullRequest.Head.SHA
	}
	path := filepath.Join(ts.Getenv("WORK"), "event.json")
	ts.Check(os.WriteFile(path, b, 0o644))
	ts.Setenv("GITHUB_EVENT_NAME", name)
	ts.Setenv("GITHUB_EVENT_PATH", path)
	ts.Setenv("GITHUB_SHA", sha)
}
