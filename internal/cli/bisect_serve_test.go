package cli

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// serveRepo makes a scratch engine repository of commits C0…C(n-1) whose ./serve.sh serves
// `speedmatrix sim` (the test binary) with the slowdown read from the file slowdown of the
// tree: commits from slowFrom on slow decode at 8+ requests by 10 %. It returns the clone and
// the commits' ids.
func serveRepo(t *testing.T, n, slowFrom int) (string, []string) {
	t.Helper()
	dir := t.TempDir()
	git := func(i int, args ...string) string {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		d := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Minute).Format(time.RFC3339)
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t",
			"GIT_COMMITTER_EMAIL=t@example.com", "GIT_AUTHOR_DATE="+d, "GIT_COMMITTER_DATE="+d, "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git(0, "init", "--quiet", "--initial-branch=main")
	serve := fmt.Sprintf(`#!/bin/sh
# The engine: its speed is the tree's (the file slowdown).
exec %q -test.run='^TestEngineServeHelper$' -- sim --listen "127.0.0.1:$1" --sim-speedup 10 --seed 7 --slowdown="$(cat slowdown)"
`, os.Args[0])
	if err := os.WriteFile(filepath.Join(dir, "serve.sh"), []byte(serve), 0o755); err != nil {
		t.Fatal(err)
	}
	var commits []string
	for i := range n {
		slow := ""
		if i >= slowFrom {
			slow = "decode=1.111@batch>=8"
		}
		if err := os.WriteFile(filepath.Join(dir, "slowdown"), []byte(slow+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "history"), []byte(fmt.Sprintf("C%d\n", i)), 0o644); err != nil {
			t.Fatal(err)
		}
		git(i, "add", "-A")
		git(i, "commit", "--quiet", "-m", fmt.Sprintf("C%d", i))
		commits = append(commits, git(i, "rev-parse", "HEAD"))
	}
	return dir, commits
}

// serveRepoConfig is the scratch repository's speedmatrix.yaml: the engine is its ./serve.sh,
// with no build: only the tree each commit is served from sets its speed.
const serveRepoConfig = `duration: 1s
warmup: 0
readiness_timeout: 10s
quiet: true
engine:
  name: scratch
  build: none
  serve:
    command: [./serve.sh, "${PORT}"]
    env: {SPEEDMATRIX_ENGINE_HELPER: "1"}
    port: 0
    ready_timeout: 60s
    stop_grace: 5s
`

// TestBisectServesEachCommitsTree is the acceptance of issue 35's item 3: in a scratch engine
// repository of 17 commits whose ./serve.sh reads its speed from a file of the tree, commit 11
// slowing decode by 10 % at 8+ requests, bisect --good C0 --bad C16 names C11: every step
// serves the commit it measures from that commit's checkout (before, every step served the
// caller's directory and no regression was reproduced).
func TestBisectServesEachCommitsTree(t *testing.T) {
	if testing.Short() {
		t.Skip("serves the simulator for every step of a bisection (minutes)")
	}
	// The simulator's speed is wall-clock speed: on a machine loaded beyond twice its cores
	// (other tests' processes) the measurement measures the load, and 10 % is lost in it.
	if data, err := os.ReadFile("/proc/loadavg"); err == nil && os.Getenv("CI") != "true" {
		var load float64
		if _, err := fmt.Sscan(string(data), &load); err == nil && load > float64(2*runtime.NumCPU()) {
			t.Skipf("load average %.0f on %d CPUs: the simulator's wall-clock speed would be the load's", load, runtime.NumCPU())
		}
	}
	src, commits := serveRepo(t, 17, 11)
	cfg := filepath.Join(t.TempDir(), "speedmatrix.yaml")
	if err := os.WriteFile(cfg, []byte(serveRepoConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	// The caller's directory holds a fast engine of its own: serving there would measure it.
	caller := t.TempDir()
	for _, f := range []string{"serve.sh", "slowdown"} {
		data, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatal(err)
		}
		if f == "slowdown" {
			data = []byte("\n") // the good speed
		}
		if err := os.WriteFile(filepath.Join(caller, f), data, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(caller)
	var stdout, stderr strings.Builder
	err := Run(context.Background(), []string{"bisect", "--source", src, "--config", cfg, "--work", t.TempDir(),
		"--good", commits[0], "--bad", commits[16], "--cells", "decode/8K/8,decode/32K/32", "--blocks", "6"},
		&lockedWriter{w: &stdout}, &lockedWriter{w: &stderr}, os.Getenv)
	if err != nil {
		t.Fatalf("bisect: %v (exit %d)\nstdout:\n%s\nstderr:\n%s", err, ExitCode(err), stdout.String(), lastLines(stderr.String(), 40))
	}
	if want := "culprit is " + commits[11][:7]; !strings.Contains(stdout.String(), want) {
		t.Errorf("bisect does not name C11 (%s):\n%s", want, stdout.String())
	}
	t.Logf("bisect:\n%s", stdout.String())
}

// TestBisectRefusesSameEngine: with engine.build none and a serve command that names no file
// of the checkout, bisect refuses (every commit would serve the same installed engine), unless
// --allow-same-engine.
func TestBisectRefusesSameEngine(t *testing.T) {
	src, commits := serveRepo(t, 3, 99)
	cfg := filepath.Join(t.TempDir(), "speedmatrix.yaml")
	same := strings.Replace(serveRepoConfig, `[./serve.sh, "${PORT}"]`, fmt.Sprintf(`[%q, "-test.run=^TestEngineServeHelper$", "--", sim, --listen, "127.0.0.1:${PORT}"]`, os.Args[0]), 1)
	if err := os.WriteFile(cfg, []byte(same), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr strings.Builder
	err := Run(context.Background(), []string{"bisect", "--source", src, "--config", cfg, "--work", t.TempDir(),
		"--good", commits[0], "--bad", commits[2], "--cells", "decode/8K/8"},
		&lockedWriter{w: &stdout}, &lockedWriter{w: &stderr}, os.Getenv)
	if ExitCode(err) != ExitUsage || !strings.Contains(fmt.Sprint(err), "--allow-same-engine") {
		t.Fatalf("bisect of one installed engine = %v (exit %d), want a usage error naming --allow-same-engine", err, ExitCode(err))
	}
}
