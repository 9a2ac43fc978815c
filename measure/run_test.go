package measure

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestResolveEngineCommit: run records a revision as the full commit id the engine's clone
// resolves it to (compare --store and store put then place the run), a full id as given in lower
// case, and what the clone does not know as given, with a warning.
func TestResolveEngineCommit(t *testing.T) {
	repo, ids := gitChain(t, 5)
	var logs strings.Builder
	env := &Deps{Log: slog.New(slog.NewTextHandler(&logs, nil))}
	for _, tc := range []struct{ in, want string }{
		{"main~1", ids[3]},
		{"HEAD", ids[4]},
		{ids[0][:9], ids[0]},
		{strings.ToUpper(ids[2]), ids[2]},
		{"no-such-branch", "no-such-branch"},
		{"", ""},
	} {
		if got := resolveEngineCommit(context.Background(), env, tc.in, repo); got != tc.want {
			t.Errorf("resolveEngineCommit(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if !strings.Contains(logs.String(), "recorded as given") {
		t.Errorf("no warning for the revision the clone does not know:\n%s", logs.String())
	}
}

// gitChain makes a git repository whose main holds n commits, c0 first, and returns the folder
// and the ids.
func gitChain(t *testing.T, n int) (string, []string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir := t.TempDir()
	git := func(args ...string) string {
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
	git("init", "-q", "-b", "main")
	tree := git("hash-object", "-t", "tree", "-w", "--stdin")
	var ids []string
	for i := range n {
		args := []string{"commit-tree", tree, "-m", fmt.Sprint("c", i)}
		if i > 0 {
			args = append(args, "-p", ids[i-1])
		}
		ids = append(ids, git(args...))
	}
	git("update-ref", "refs/heads/main", ids[n-1])
	git("symbolic-ref", "HEAD", "refs/heads/main")
	return dir, ids
}
