package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/speedmatrix/speedmatrix/engine"
)

// gitInit makes a real repository with two commits in a new directory, checked out at the
// first, and returns it with both commit ids.
func gitInit(t *testing.T) (dir, first, second string) {
	t.Helper()
	dir = t.TempDir()
	git := func(args ...string) string {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t",
			"GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git("init", "--quiet", "--initial-branch=main")
	for i, name := range []string{"a", "b"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(name), 0o644); err != nil {
			t.Fatal(err)
		}
		git("add", "-A")
		git("commit", "--quiet", "-m", name)
		if i == 0 {
			first = git("rev-parse", "HEAD")
		}
	}
	second = git("rev-parse", "HEAD")
	git("checkout", "--quiet", "--detach", first)
	return dir, first, second
}

// pinnedEngineCase is an engine case whose engine.source is src and whose server touches
// marker when it is started (then exits).
func pinnedEngineCase(t *testing.T, src string) (engineCase, string) {
	t.Helper()
	marker := filepath.Join(t.TempDir(), "served")
	c := newEngineCase(t, engineMatrix, []string{"bash", "-c", `touch "$0"; exit 1`, marker}, "")
	data, _ := os.ReadFile(c.config)
	if err := os.WriteFile(c.config, []byte(strings.Replace(string(data), "engine:\n", fmt.Sprintf("engine:\n  source: %q\n", src), 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	return c, marker
}

// TestRunEngineRefusesUnpinnedCheckout: a run pinned to a commit (--engine-commit, the action's
// sha) whose engine.source is checked out at another commit is refused before anything is
// built or served; at the pinned commit it goes on to serve.
func TestRunEngineRefusesUnpinnedCheckout(t *testing.T) {
	src, first, second := gitInit(t)
	c, marker := pinnedEngineCase(t, src)
	run := func(pin string) error {
		var out, errOut strings.Builder
		env := map[string]string{"KEY": engineKey}
		return Run(context.Background(), []string{"run", "--config", c.config, "-o", c.out, "--engine-commit", pin},
			&lockedWriter{w: &out}, &lockedWriter{w: &errOut}, func(k string) string { return env[k] })
	}
	err := run(second)
	if !errors.Is(err, engine.ErrNotPinned) || ExitCode(err) != ExitUsage || !strings.Contains(err.Error(), first) || !strings.Contains(err.Error(), second) {
		t.Fatalf("run pinned to %s at %s = %v (exit %d); want a usage error naming both commits", second, first, err, ExitCode(err))
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the server was started for a checkout at the wrong commit")
	}
	if err := run(first); errors.Is(err, engine.ErrNotPinned) {
		t.Fatalf("run at the pinned commit refused: %v", err)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Error("at the pinned commit the server was not started")
	}
}

// TestRunPairedRefusesUnpinnedHead: a paired run with engine.serve checks the head's checkout
// against the pinned commit too, before it builds either side.
func TestRunPairedRefusesUnpinnedHead(t *testing.T) {
	src, first, second := gitInit(t)
	c, marker := pinnedEngineCase(t, src)
	var out, errOut strings.Builder
	env := map[string]string{"KEY": engineKey}
	err := Run(context.Background(), []string{"run", "--config", c.config, "-o", c.out, "--engine-commit", second, "--paired", "--base-source", src},
		&lockedWriter{w: &out}, &lockedWriter{w: &errOut}, func(k string) string { return env[k] })
	if !errors.Is(err, engine.ErrNotPinned) || !strings.Contains(err.Error(), first) {
		t.Fatalf("paired run pinned to %s at %s = %v; want the pin refused", second, first, err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("a server was started for a checkout at the wrong commit")
	}
}
