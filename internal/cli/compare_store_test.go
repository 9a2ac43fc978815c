package cli

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-github/v66/github"

	"github.com/speedmatrix/speedmatrix/calibrate"
	"github.com/speedmatrix/speedmatrix/ghbot/ghtest"
	"github.com/speedmatrix/speedmatrix/results"
	"github.com/speedmatrix/speedmatrix/store"
)

// gitIn runs git in dir with a fixed identity and no user configuration.
func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t",
		"GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// prClone is gitChain's repository (main c0 … c7, and "gone" on c4, force-pushed away) with a
// pull request's head commit on c5 (its merge-base with main) and origin/HEAD naming
// origin/main; it returns the folder, main's commits and the PR's head.
func prClone(t *testing.T) (string, []string, string, string) {
	dir, ids, gone := gitChain(t, 8)
	tree := gitIn(t, dir, "hash-object", "-t", "tree", "-w", "--stdin")
	head := gitIn(t, dir, "commit-tree", tree, "-m", "pr", "-p", ids[5])
	gitIn(t, dir, "update-ref", "refs/remotes/origin/main", ids[7])
	gitIn(t, dir, "symbolic-ref", "refs/remotes/origin/HEAD", "refs/remotes/origin/main")
	return dir, ids, gone, head
}

// prRuns returns n synthetic runs of one configuration, the i-th measured i hours in.
func prRuns(n int) []*results.File {
	m := calibrate.NewMatrix(31, 1)
	r := rand.New(rand.NewPCG(31, 5))
	start := time.Date(2025, 4, 1, 9, 0, 0, 0, time.UTC)
	var out []*results.File
	for i := range n {
		f := m.Run(r, fmt.Sprint("run-", i), nil)
		f.Run.Start = start.Add(time.Duration(i) * time.Hour)
		f.Run.End = f.Run.Start.Add(40 * time.Minute)
		out = append(out, f)
	}
	return out
}

// TestCompareHeadWithStoredBaseline: `compare --store DIR HEAD` resolves the head's baseline as
// the bot does: the merge-base of its engine commit and the default branch, or the nearest
// first-parent ancestor with results (not a commit force-pushed away, however recent, nor one
// after the merge-base); it says which and how far back on stderr and in the comparison's
// warnings, takes the history from the store, and prints the store put command that keeps the
// head citing its baseline, which prune then honours.
func TestCompareHeadWithStoredBaseline(t *testing.T) {
	clone, ids, gone, prHeadSHA := prClone(t)
	dir := t.TempDir()
	st := filepath.Join(dir, "st")
	s := store.NewDir(st)
	runs := prRuns(6)
	for i, c := range []string{ids[1], ids[2], ids[3], ids[6], gone} {
		runs[i].Engine.Commit = c
		if _, err := s.Put(context.Background(), store.Entry{Commit: c}, runs[i]); err != nil {
			t.Fatal(err)
		}
	}
	head := runs[5]
	head.Engine.Commit = prHeadSHA[:12] // as a run --engine-commit may record it
	hp := filepath.Join(dir, "head.json")
	if err := results.WriteFile(hp, head); err != nil {
		t.Fatal(err)
	}
	cp := filepath.Join(dir, "c.json")
	out, errOut, code := runCLI("compare", "--store", st, "--git", clone, "-o", cp, hp)
	if code != 0 && code != ExitRegression {
		t.Fatalf("compare --store HEAD: exit %d\n%s\n%s", code, out, errOut)
	}
	describe := fmt.Sprintf("baseline: %s, 2 commits before the merge-base %s", ids[3][:12], ids[5][:12])
	if !strings.Contains(errOut, describe) || !strings.Contains(errOut, "base_branch=origin/main") {
		t.Errorf("stderr does not say %q along origin/main:\n%s", describe, errOut)
	}
	c, err := results.ReadComparisonFile(cp)
	if err != nil {
		t.Fatal(err)
	}
	if c.Base.Commit != ids[3] || !strings.Contains(strings.Join(c.Warnings, "\n"), "The "+describe) {
		t.Errorf("comparison: base commit %s, warnings %q; want %s and the baseline's line", c.Base.Commit, c.Warnings, ids[3][:12])
	}
	// The history is the baseline's and its measured first-parent ancestors' (c3, c2, c1): not
	// c6 (after the merge-base), nor the commit a force push removed.
	// The baseline's own results start the history; compare does not count them twice.
	if c.Settings.HistoryFiles != 2 || !strings.Contains(errOut, "along the first parents of "+ids[3][:12]) {
		t.Errorf("history files %d, want the 2 results along the baseline's first parents besides its own\n%s", c.Settings.HistoryFiles, errOut)
	}
	hint := fmt.Sprintf("speedmatrix store put --store %s --kind pr --pr N --commit %s --base %s %s", st, prHeadSHA, ids[3], hp)
	if !strings.Contains(errOut, hint) {
		t.Fatalf("stderr does not print %q:\n%s", hint, errOut)
	}

	// The printed command, with the PR's number: prune keeps the baseline with the PR's result.
	args := strings.Fields(strings.Replace(hint, "--pr N", "--pr 7", 1))[1:]
	if _, errOut, code := runCLI(args...); code != 0 {
		t.Fatalf("%v: exit %d\n%s", args, code, errOut)
	}
	out, errOut, code = runCLI("store", "prune", "--store", st, "--git", clone, "--keep", "1", "--pr-days", "0")
	if code != 0 {
		t.Fatalf("store prune: exit %d\n%s", code, errOut)
	}
	for _, c := range []string{ids[1], ids[2], gone} {
		if !strings.Contains(out, "removed results/"+c+"/") {
			t.Errorf("prune kept %s's result\n%s", c[:7], out)
		}
	}
	for _, c := range []string{ids[3], ids[6]} {
		if strings.Contains(out, "results/"+c+"/") {
			t.Errorf("prune removed %s's result: the tip's or the kept PR result's baseline\n%s", c[:7], out)
		}
	}
}

// TestCompareHeadNoStoredBaseline: without a baseline on the head's line, compare --store HEAD
// fails and says why and which commit to measure; mistakes are usage errors.
func TestCompareHeadNoStoredBaseline(t *testing.T) {
	clone, ids, gone, prHeadSHA := prClone(t)
	dir := t.TempDir()
	runs := prRuns(3)
	head := runs[2]
	head.Engine.Commit = prHeadSHA
	hp := filepath.Join(dir, "head.json")
	if err := results.WriteFile(hp, head); err != nil {
		t.Fatal(err)
	}
	put := func(st, commit string, f *results.File) {
		t.Helper()
		if _, err := store.NewDir(st).Put(context.Background(), store.Entry{Commit: commit}, f); err != nil {
			t.Fatal(err)
		}
	}
	onlyGone, otherConfig := filepath.Join(dir, "gone"), filepath.Join(dir, "other")
	put(onlyGone, gone, runs[0])
	other := prRuns(1)[0]
	other.Hardware.GPU = "H100"
	put(otherConfig, ids[5], other)
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"only a commit force-pushed away", []string{"--store", onlyGone, "--git", clone, hp}, ExitError, "run `speedmatrix baseline --commit " + ids[5] + "`"},
		{"no result of the config", []string{"--store", otherConfig, "--git", clone, hp}, ExitError, "`speedmatrix baseline --commit " + ids[5] + "` measures it"},
		{"no store", []string{"--git", clone, hp}, ExitUsage, "give --store DIR"},
		{"--git with two files", []string{"--store", onlyGone, "--git", clone, hp, hp}, ExitUsage, "--git and --base-branch find the baseline of HEAD alone"},
		{"no such base branch", []string{"--store", onlyGone, "--git", clone, "--base-branch", "trunk", hp}, ExitUsage, "--base-branch trunk"},
		{"the clone lacks the head's commit", []string{"--store", onlyGone, "--git", t.TempDir(), hp}, ExitUsage, "does not hold the head's engine commit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, errOut, code := runCLI(append([]string{"compare"}, tc.args...)...)
			if code != tc.code || !strings.Contains(errOut, tc.want) {
				t.Errorf("exit %d, want %d saying %q:\n%s", code, tc.code, tc.want, errOut)
			}
			if tc.code == ExitError && !strings.Contains(errOut, "no baseline") {
				t.Errorf("the error does not say there is no baseline:\n%s", errOut)
			}
		})
	}
	noCommit := filepath.Join(dir, "nocommit.json")
	head.Engine.Commit = ""
	if err := results.WriteFile(noCommit, head); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := runCLI("compare", "--store", onlyGone, "--git", clone, noCommit); code != ExitUsage || !strings.Contains(errOut, "names no engine commit") {
		t.Errorf("a head without an engine commit: exit %d\n%s", code, errOut)
	}
}

// TestCompareHeadOnDataBranch: compare --branch HEAD resolves the baseline in the data branch,
// along the local clone's commits.
func TestCompareHeadOnDataBranch(t *testing.T) {
	clone, ids, _, prHeadSHA := prClone(t)
	srv := ghtest.New(t, ghtest.Enterprise())
	srv.AddToken("tok", ghtest.ActionsLogin)
	gh, err := github.NewClient(nil).WithAuthToken("tok").WithEnterpriseURLs(srv.URL, srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	runs := prRuns(2)
	if _, err := store.NewBranch(gh, "o", "r").Put(context.Background(), store.Entry{Commit: ids[5]}, runs[0]); err != nil {
		t.Fatal(err)
	}
	runs[1].Engine.Commit = prHeadSHA
	hp := filepath.Join(t.TempDir(), "head.json")
	if err := results.WriteFile(hp, runs[1]); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"GITHUB_TOKEN": "tok", "GITHUB_API_URL": srv.URL, "GITHUB_REPOSITORY": "o/r"}
	_, errOut, code := runCLIEnv(env, "compare", "--branch", "speedmatrix-data", "--git", clone, hp)
	if code != 0 && code != ExitRegression {
		t.Fatalf("compare --branch HEAD: exit %d\n%s", code, errOut)
	}
	if !strings.Contains(errOut, "baseline: the merge-base "+ids[5][:12]) || !strings.Contains(errOut, "store put --branch speedmatrix-data --kind pr") {
		t.Errorf("stderr:\n%s", errOut)
	}
}
