package action

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// gitT runs git in dir (the test's environment names the author) and returns its trimmed output.
func gitT(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// TestGitWorktree: the base of a paired run is checked out from the measuring job's checkout,
// a shallow clone of the head that lacks the base commit: GitWorktree fetches the commit from
// origin, checks it out beside the workspace, and removes it again.
func TestGitWorktree(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	t.Setenv("GIT_CONFIG_GLOBAL", "/dev/null")
	t.Setenv("GIT_CONFIG_SYSTEM", "/dev/null")
	t.Setenv("GIT_AUTHOR_NAME", "t")
	t.Setenv("GIT_AUTHOR_EMAIL", "t@example.com")
	t.Setenv("GIT_COMMITTER_NAME", "t")
	t.Setenv("GIT_COMMITTER_EMAIL", "t@example.com")
	root := t.TempDir()
	origin := filepath.Join(root, "origin")
	gitT(t, root, "init", "-q", "-b", "main", origin)
	write := func(s string) {
		if err := os.WriteFile(filepath.Join(origin, "kernel.txt"), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		gitT(t, origin, "add", "kernel.txt")
		gitT(t, origin, "commit", "-q", "-m", s)
	}
	write("base")
	base := gitT(t, origin, "rev-parse", "HEAD")
	write("head")
	work := filepath.Join(root, "work")
	gitT(t, root, "clone", "-q", "--depth=1", "file://"+origin, work)
	if err := exec.Command("git", "-C", work, "cat-file", "-e", base+"^{commit}").Run(); err == nil {
		t.Fatal("the shallow clone holds the base commit: the test does not test the fetch")
	}
	dir := filepath.Join(root, "speedmatrix-base")
	remove, err := GitWorktree(context.Background(), work, base, dir)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "kernel.txt"))
	if err != nil || string(b) != "base" {
		t.Fatalf("the base checkout holds %q (%v), want the base commit's file", b, err)
	}
	if got := gitT(t, dir, "rev-parse", "HEAD"); got != base {
		t.Errorf("checked out %s, want %s", got, base)
	}
	if b, _ := os.ReadFile(filepath.Join(work, "kernel.txt")); string(b) != "head" {
		t.Errorf("the workspace changed: %q", b)
	}
	if err := remove(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the base checkout is left: %v", err)
	}
	// A commit origin does not have is an error that names it.
	if _, err := GitWorktree(context.Background(), work, strings.Repeat("0", 40), dir); err == nil || !strings.Contains(err.Error(), "lacks the commit") {
		t.Errorf("a missing commit: %v", err)
	}
}
