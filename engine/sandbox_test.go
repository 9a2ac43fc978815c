package engine_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/speedmatrix/speedmatrix/engine"
)

// sandboxOrSkip returns a sandbox hiding hidden, or skips where the machine cannot make
// namespaces (never in CI: CI=true fails instead).
func sandboxOrSkip(t *testing.T, home string, hidden ...string) *engine.Sandbox {
	t.Helper()
	sb := &engine.Sandbox{Home: home, Hidden: hidden}
	if err := engine.SandboxCheck(context.Background(), reaper(t)); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the sandbox is needed in CI: %v", err)
		}
		t.Skipf("no sandbox here: %v", err)
	}
	return sb
}

func reaper(t *testing.T) []string {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return []string{exe}
}

// TestSandboxServe: a server that leaves a setsid daemon behind, in the sandbox: the daemon
// is gone once Stop returns; the server saw a private HOME and /tmp, its own checkout
// writable, none of the hidden directory, the system read-only, and no process of the host.
func TestSandboxServe(t *testing.T) {
	home := t.TempDir()
	secretDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(home, "runner-secret"), []byte("s3cret"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(secretDir, "results.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	checkout := t.TempDir()
	model := filepath.Join(t.TempDir(), "model")
	if err := os.MkdirAll(model, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(model, "config.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	sb := sandboxOrSkip(t, home, secretDir)
	pidFile := filepath.Join(checkout, "daemon.pid")
	report := filepath.Join(checkout, "report")
	argv, env := simCommand(t)
	script := `
: > report
cat "$HOME/runner-secret" >/dev/null 2>&1 && echo "home: visible" >> report
ls ` + secretDir + ` 2>/dev/null | grep -q results && echo "hidden: visible" >> report
touch /usr/sandbox-test 2>/dev/null && echo "usr: writable" >> report
touch $PWD/written || echo "checkout: not writable" >> report
[ "$(ps -e -o pid= 2>/dev/null | wc -l)" -gt 8 ] && echo "host processes: visible" >> report
[ -d /proc/1 ] || echo "no /proc" >> report
m=` + model + `
grep -q '{}' $m/config.json || echo "model: not readable" >> report
touch $m/written 2>/dev/null && echo "model: writable" >> report
setsid sleep 600 </dev/null >/dev/null 2>&1 &
echo $! > daemon.pid
exec "$@"`
	spec := engine.ServeSpec{
		Command: append([]string{"bash", "-c", script, "sandboxed"}, argv...), Env: env, Port: 0,
		Reaper: reaper(t), Sandbox: sb, Dir: checkout,
		ReadyTimeout: 30 * time.Second, StopGrace: 5 * time.Second, GPU: testGPU(t),
		LogPath: filepath.Join(t.TempDir(), "server.log"), RawLogDir: t.TempDir(),
	}
	spec.Sandbox.Writable = []string{checkout}
	spec.Sandbox.ReadOnly = []string{argv[0]} // the served program (speedmatrix sim)
	srv, err := engine.StartServer(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	if s := strings.TrimSpace(string(data)); s != "" {
		t.Errorf("the sandbox leaked:\n%s", s)
	}
	if _, err := os.Stat(filepath.Join(checkout, "written")); err != nil {
		t.Errorf("the checkout was not writable: %v", err)
	}
	if _, err := os.Stat(filepath.Join(model, "written")); err == nil {
		t.Error("the sandbox wrote the model directory")
	}
	if _, err := os.Stat("/usr/sandbox-test"); err == nil {
		os.Remove("/usr/sandbox-test")
		t.Error("the sandbox wrote /usr")
	}
	if pid, _ := os.ReadFile(pidFile); len(strings.TrimSpace(string(pid))) == 0 {
		t.Fatal("the daemon did not start")
	}
	if n := processesMatching(t, "sleep 600"); n > 0 {
		t.Errorf("%d daemon(s) survive the server's stop", n)
	}
}

// TestSandboxBuild: a build command that leaves a setsid daemon: gone when the build returns,
// and the build wrote only its environment's directory.
func TestSandboxBuild(t *testing.T) {
	home := t.TempDir()
	sb := sandboxOrSkip(t, home)
	src := newRepo(t).dir
	cache := t.TempDir()
	b := &engine.Builder{Reaper: reaper(t)}
	bd, err := b.Build(context.Background(), engine.BuildSpec{
		Source: src, Mode: engine.ModeCommand, CacheDir: cache, Sandbox: sb,
		Command: `setsid sleep 601 </dev/null >/dev/null 2>&1 & echo built > "$SPEEDMATRIX_ENV_DIR/out"; touch "$HOME/x"; touch ` + filepath.Join(cache, "escaped") + ` 2>/dev/null; true`,
	})
	if err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(filepath.Join(bd.Dir, "out")); err != nil || strings.TrimSpace(string(data)) != "built" {
		t.Errorf("the build's output in its environment: %q, %v", data, err)
	}
	if _, err := os.Stat(filepath.Join(cache, "escaped")); err == nil {
		t.Error("the build wrote the cache outside its environment")
	}
	if _, err := os.Stat(filepath.Join(home, "x")); err == nil {
		t.Error("the build wrote the real HOME")
	}
	if n := processesMatching(t, "sleep 601"); n > 0 {
		t.Errorf("%d daemon(s) survive the build", n)
	}
}

// processesMatching counts the live processes whose command line contains s.
func processesMatching(t *testing.T, s string) int {
	t.Helper()
	ents, _ := os.ReadDir("/proc")
	n := 0
	for _, e := range ents {
		data, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		stat, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if i := strings.LastIndexByte(string(stat), ')'); i > 0 && len(stat) > i+2 && (stat[i+2] == 'Z' || stat[i+2] == 'X') {
			continue
		}
		if strings.Contains(strings.ReplaceAll(string(data), "\x00", " "), s) {
			n++
		}
	}
	return n
}

func TestServeUsesTree(t *testing.T) {
	dir := t.TempDir()
	for _, p := range []string{"serve.sh", "scripts/serve.py", "vllm/__init__.py"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p), nil, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, tt := range []struct {
		argv []string
		want bool
	}{
		{[]string{"./serve.sh", "${PORT}"}, true},
		{[]string{"bash", "-c", "exec ./serve.sh --port $PORT"}, true},
		{[]string{"python", "scripts/serve.py"}, true},
		{[]string{"bash", "serve.sh"}, true},
		{[]string{"vllm", "serve", "org/model", "--port", "${PORT}"}, false},
		{[]string{"/usr/bin/speedmatrix", "sim", "--listen", "127.0.0.1:${PORT}"}, false},
		{[]string{"./missing.sh"}, false},
	} {
		if got := engine.ServeUsesTree(tt.argv, dir); got != tt.want {
			t.Errorf("ServeUsesTree(%q) = %v, want %v", tt.argv, got, tt.want)
		}
	}
}

// TestSandboxServeCallersDir: a relative launch script with no working directory given (build
// none without engine.source: `command: [./serve.sh]` run from the engine's checkout) runs in
// the caller's directory inside the sandbox, as it does outside. Before, the sandbox started it
// in / and the start failed with "fork/exec ./serve.sh: no such file or directory".
func TestSandboxServeCallersDir(t *testing.T) {
	sb := sandboxOrSkip(t, t.TempDir())
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "serve.sh"), []byte("#!/bin/sh\necho \"cwd: $(pwd)\"\nexit 3\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	_, err := engine.StartServer(context.Background(), engine.ServeSpec{
		Command: []string{"./serve.sh"}, Reaper: reaper(t), Sandbox: sb,
		ReadyTimeout: 20 * time.Second, Poll: 50 * time.Millisecond, GPU: testGPU(t),
		LogPath: filepath.Join(t.TempDir(), "server.log"), RawLogDir: t.TempDir(),
	})
	var pe *engine.ProcessError
	if !errors.As(err, &pe) {
		t.Fatalf("err = %v, want a *ProcessError (the script exits 3)", err)
	}
	if pe.ExitCode != 3 || !strings.Contains(strings.Join(pe.Tail, "\n"), "cwd: "+dir) {
		t.Errorf("the script did not run in %s (exit code %d):\n%v", dir, pe.ExitCode, err)
	}
}
