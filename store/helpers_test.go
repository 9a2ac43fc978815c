package store_test

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-github/v66/github"

	"github.com/speedmatrix/speedmatrix/ghbot/ghtest"
	"github.com/speedmatrix/speedmatrix/results"
	"github.com/speedmatrix/speedmatrix/store"
)

// t0 is the time of the first stored result in the tests.
var t0 = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

// runFile returns a fresh copy of testdata/run.json, changed by each mutate.
func runFile(t testing.TB, mutate ...func(*results.File)) *results.File {
	t.Helper()
	f, err := results.ReadFile(filepath.Join("testdata", "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range mutate {
		m(f)
	}
	return f
}

// sha returns a made-up full commit id for a name.
func sha(name string) string {
	h := sha1.Sum([]byte(name))
	return hex.EncodeToString(h[:])
}

// at returns an Entry of a default-branch commit measured at t0 + hours.
func at(commit string, hours int) store.Entry {
	return store.Entry{Commit: commit, Time: t0.Add(time.Duration(hours) * time.Hour)}
}

// fakeGitHub returns the fake API with a token and a repository, and a go-github client for it.
func fakeGitHub(t *testing.T) (*ghtest.Server, *github.Client) {
	t.Helper()
	s := ghtest.New(t)
	s.AddToken("tok", ghtest.ActionsLogin)
	s.AddRepo(ghtest.Repo{Owner: "o", Name: "r", DefaultBranch: "main"})
	return s, github.NewClient(&http.Client{Transport: s.Transport()}).WithAuthToken("tok")
}

// node is a commit of a synthetic graph: its parents, first parent first.
type node struct {
	name    string
	parents []string
}

// graph is a synthetic commit graph and where its branches point.
type graph struct {
	nodes []node // parents before children
	refs  map[string]string
}

// chain returns n commits prefix0 ← prefix1 ← … on top of parent ("" for a root).
func chain(prefix string, n int, parent string) []node {
	var out []node
	for i := range n {
		nd := node{name: fmt.Sprintf("%s%d", prefix, i)}
		if i > 0 {
			nd.parents = []string{fmt.Sprintf("%s%d", prefix, i-1)}
		} else if parent != "" {
			nd.parents = []string{parent}
		}
		out = append(out, nd)
	}
	return out
}

// commitGraph is a graph made real in one Commits implementation; ids maps names to commits.
type commitGraph struct {
	commits store.Commits
	ids     map[string]string
}

// onGitHub seeds the graph in the fake GitHub API and returns GitHubCommits over it.
func onGitHub(t *testing.T, g graph) commitGraph {
	s, gh := fakeGitHub(t)
	ids := map[string]string{}
	for i, n := range g.nodes {
		var parents []string
		for _, p := range n.parents {
			parents = append(parents, ids[p])
		}
		ids[n.name] = s.AddCommit("o/r", ghtest.GitCommit{SHA: sha(n.name), Parents: parents, Message: n.name,
			Date: t0.Add(time.Duration(i) * time.Minute)}, nil)
	}
	for ref, name := range g.refs {
		s.SetRef("o/r", "heads/"+ref, ids[name])
	}
	return commitGraph{commits: store.GitHubCommits{GH: gh, Owner: "o", Repo: "r"}, ids: ids}
}

// onGit builds the graph in a local git repository (git commit-tree) and returns GitCommits.
func onGit(t *testing.T, g graph) commitGraph {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir := t.TempDir()
	env := append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t",
		"GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	git := func(extraEnv []string, args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = dir, append(env, extraEnv...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git(nil, "init", "-q")
	tree := git(nil, "hash-object", "-t", "tree", "-w", "--stdin")
	ids := map[string]string{}
	for i, n := range g.nodes {
		args := []string{"commit-tree", tree, "-m", n.name}
		for _, p := range n.parents {
			args = append(args, "-p", ids[p])
		}
		d := t0.Add(time.Duration(i) * time.Minute).Format(time.RFC3339)
		ids[n.name] = git([]string{"GIT_AUTHOR_DATE=" + d, "GIT_COMMITTER_DATE=" + d}, args...)
	}
	for ref, name := range g.refs {
		git(nil, "update-ref", "refs/heads/"+ref, ids[name])
	}
	return commitGraph{commits: store.GitCommits{Dir: dir}, ids: ids}
}

// ctx returns a context cancelled when the test ends.
func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return c
}

// noSleep is the sleep between retries in tests: none, unless the context is done.
func noSleep(ctx context.Context, _ time.Duration) error { return ctx.Err() }
