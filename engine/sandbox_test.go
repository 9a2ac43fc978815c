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

// fakeVenv makes, under dir, a Python installation (base/bin/python3, a shell script standing
// for the interpreter, which reads base/lib/os.txt) and a virtual environment of it
// (venv/bin/python a link to the base's, pyvenv.cfg naming the base's bin, venv/lib/site.txt):
// run through the venv's python, the script prints both files and exits 3.
func fakeVenv(t *testing.T, dir, venv string) {
	t.Helper()
	base := filepath.Join(dir, "base")
	for _, d := range []string{filepath.Join(base, "bin"), filepath.Join(base, "lib"), filepath.Join(venv, "bin"), filepath.Join(venv, "lib")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	script := "#!/bin/sh\ncat " + filepath.Join(base, "lib", "os.txt") + " \"$(dirname \"$0\")/../lib/site.txt\"\nexit 3\n"
	for p, data := range map[string]string{
		filepath.Join(base, "bin", "python3"):  script,
		filepath.Join(base, "lib", "os.txt"):   "base: readable\n",
		filepath.Join(venv, "lib", "site.txt"): "venv: readable\n",
		filepath.Join(venv, "pyvenv.cfg"):      "home = " + filepath.Join(base, "bin") + "\ninclude-system-site-packages = false\n",
	} {
		if err := os.WriteFile(p, []byte(data), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(base, "bin", "python3"), filepath.Join(venv, "bin", "python")); err != nil {
		t.Fatal(err)
	}
}

// startFailing starts spec's server, whose command must exit 3 during the load, and returns
// the last lines of its output.
func startFailing(t *testing.T, spec engine.ServeSpec) string {
	t.Helper()
	spec.Reaper, spec.ReadyTimeout, spec.Poll, spec.GPU = reaper(t), 20*time.Second, 50*time.Millisecond, testGPU(t)
	spec.LogPath, spec.RawLogDir = filepath.Join(t.TempDir(), "server.log"), t.TempDir()
	_, err := engine.StartServer(context.Background(), spec)
	var pe *engine.ProcessError
	if !errors.As(err, &pe) {
		t.Fatalf("err = %v, want a *ProcessError (the command exits 3)", err)
	}
	tail := strings.Join(pe.Tail, "\n")
	if pe.ExitCode != 3 {
		t.Fatalf("the command did not run to its end (exit code %d):\n%s", pe.ExitCode, tail)
	}
	return tail
}

// TestSandboxVenvBehindLauncher: a venv's interpreter that is not the program but a word of the
// command (taskset -c 1 /venv/bin/python, here env) gets its venv and its base installation
// shown, as the program does, where both lie under the private HOME. Before, only a program
// that was the interpreter did: vLLM under taskset failed with "No module named 'vllm'".
func TestSandboxVenvBehindLauncher(t *testing.T) {
	home := t.TempDir()
	sb := sandboxOrSkip(t, home)
	venv := filepath.Join(home, ".cache", "venv")
	fakeVenv(t, filepath.Join(home, ".pyenv"), venv)
	tail := startFailing(t, engine.ServeSpec{Command: []string{"env", filepath.Join(venv, "bin", "python")}, Sandbox: sb})
	for _, want := range []string{"base: readable", "venv: readable"} {
		if !strings.Contains(tail, want) {
			t.Errorf("want %q in the output:\n%s", want, tail)
		}
	}
}

// TestSandboxBuildVenvOnPath: a build's venv, first on the server's PATH (Build.ServeSpec),
// whose python links to a base installation under the private HOME: `env python` runs it in
// the sandbox. Before, the link's target was hidden ("taskset: failed to execute python" in
// the precompiled build of the real-vLLM tier).
func TestSandboxBuildVenvOnPath(t *testing.T) {
	home := t.TempDir()
	cache := t.TempDir()
	sb := sandboxOrSkip(t, home, cache)
	base := filepath.Join(home, ".pyenv")
	fakeVenv(t, base, filepath.Join(t.TempDir(), "unused"))
	b := &engine.Builder{Reaper: reaper(t)}
	bd, err := b.Build(context.Background(), engine.BuildSpec{
		Source: newRepo(t).dir, Mode: engine.ModeCommand, CacheDir: cache, Sandbox: sb, LogDir: t.TempDir(),
		Command: `v="$SPEEDMATRIX_ENV_DIR/venv" && mkdir -p "$v/bin" "$v/lib" && ln -s ` + filepath.Join(base, "base", "bin", "python3") + ` "$v/bin/python" &&
printf 'home = %s\n' ` + filepath.Join(base, "base", "bin") + ` > "$v/pyvenv.cfg" && echo "venv: readable" > "$v/lib/site.txt"`,
	})
	if err != nil {
		t.Fatal(err)
	}
	tail := startFailing(t, bd.ServeSpec(engine.ServeSpec{Command: []string{"env", "python"}, Sandbox: sb}))
	for _, want := range []string{"base: readable", "venv: readable"} {
		if !strings.Contains(tail, want) {
			t.Errorf("want %q in the output:\n%s", want, tail)
		}
	}
}

// TestSandboxWorkspaceCheckout: build none from the job's workspace, which the sandbox hides
// (GITHUB_WORKSPACE, the runner's work directory): the engine's checkout there, whose file the
// command runs (sh serve.sh), is shown read-only, and the results' directory inside it stays
// hidden. Before, the command ran in / ("sh: cannot open serve.sh").
func TestSandboxWorkspaceCheckout(t *testing.T) {
	work := t.TempDir()
	ws := filepath.Join(work, "repo", "repo")
	artifact := filepath.Join(ws, "speedmatrix-artifact")
	for _, d := range []string{filepath.Join(ws, ".git"), artifact} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for p, data := range map[string]string{
		filepath.Join(ws, "serve.sh"):           "cat tree.txt\nls speedmatrix-artifact\ntouch written 2>/dev/null && echo 'checkout: writable'\nexit 3\n",
		filepath.Join(ws, "tree.txt"):           "tree: readable\n",
		filepath.Join(artifact, "results.json"): "{}",
	} {
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sb := sandboxOrSkip(t, t.TempDir(), work, ws, artifact)
	t.Chdir(ws)
	tail := startFailing(t, engine.ServeSpec{Command: []string{"sh", "serve.sh"}, Sandbox: sb})
	if !strings.Contains(tail, "tree: readable") {
		t.Errorf("the checkout's file was not read:\n%s", tail)
	}
	for _, leak := range []string{"results.json", "checkout: writable"} {
		if strings.Contains(tail, leak) {
			t.Errorf("the sandbox leaked %q:\n%s", leak, tail)
		}
	}

	// Not the engine's checkout (no file of it is run): the workspace stays hidden.
	tail = startFailing(t, engine.ServeSpec{Command: []string{"sh", "-c", "ls; exit 3"}, Sandbox: sb})
	if strings.Contains(tail, "serve.sh") {
		t.Errorf("a command that runs no file of the workspace saw it:\n%s", tail)
	}
}

// TestSandboxHiddenInsideShown: a directory the command names that holds hidden paths (the
// runner's work directory with RUNNER_TEMP in it) and the runner's HOME shows neither. Before,
// a hidden path was covered only when it lay inside a system directory, and a named directory
// was shown over the private HOME.
func TestSandboxHiddenInsideShown(t *testing.T) {
	top := t.TempDir()
	temp := filepath.Join(top, "_work", "_temp")
	home := filepath.Join(top, "home")
	for p, data := range map[string]string{
		filepath.Join(temp, "_runner_file_commands", "set_env"): "token",
		filepath.Join(home, ".ssh", "id_ed25519"):               "key",
		filepath.Join(top, "_work", "visible.txt"):              "",
	} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	sb := sandboxOrSkip(t, home, temp)
	for _, named := range []string{top, filepath.Join(top, "_work"), home} {
		tail := startFailing(t, engine.ServeSpec{Command: []string{"sh", "-c", "ls -R " + named + " 2>&1; exit 3"}, Sandbox: sb})
		for _, leak := range []string{"set_env", "id_ed25519", "_runner_file_commands", ".ssh"} {
			if strings.Contains(tail, leak) {
				t.Errorf("naming %s showed %s:\n%s", named, leak, tail)
			}
		}
		if named != home && !strings.Contains(tail, "visible.txt") {
			t.Errorf("naming %s did not show it:\n%s", named, tail)
		}
	}
}

// TestSandboxPrivateTmp: the sandbox's /tmp and /var/tmp are its own whatever the command
// names or where it runs: a command word /tmp or /var, or the working directory /tmp, showed
// the machine's /tmp (another run's files) in their place.
func TestSandboxPrivateTmp(t *testing.T) {
	sb := sandboxOrSkip(t, t.TempDir())
	var check []string // a line that prints what it sees of the markers
	for _, dir := range []string{"/tmp", "/var/tmp"} {
		f, err := os.CreateTemp(dir, "speedmatrix-host-marker-*")
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
		t.Cleanup(func() { os.Remove(f.Name()) })
		// Not named as a word (a file the command names is shown): $d/NAME.
		name := filepath.Base(f.Name())
		check = append(check, "d="+dir+"; [ -e $d/"+name+" ] && echo 'visible: $d/"+name+"'", "[ -e ./"+name+" ] && echo 'visible: ./"+name+"'")
	}
	line := strings.Join(check, "; ") + "; exit 3"
	for _, tt := range []struct {
		name, dir string
		argv      []string
	}{
		{"word /tmp", "", []string{"sh", "-c", ": /tmp /var/tmp; " + line}},
		{"word /var", "", []string{"sh", "-c", ": /var; " + line}},
		{"working directory /tmp", "/tmp", []string{"sh", "-c", line}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if tt.dir != "" {
				t.Chdir(tt.dir)
			}
			if tail := startFailing(t, engine.ServeSpec{Command: tt.argv, Sandbox: sb}); strings.Contains(tail, "visible") {
				t.Errorf("the machine's temporary directories are visible:\n%s", tail)
			}
		})
	}

	// A writable /tmp (engine.source: /tmp) is refused, not shown.
	wsb := sb.Clone()
	wsb.Writable = []string{"/tmp"}
	_, err := engine.StartServer(context.Background(), engine.ServeSpec{
		Command: []string{"true"}, Sandbox: wsb, Reaper: reaper(t), ReadyTimeout: 10 * time.Second, GPU: testGPU(t),
		LogPath: filepath.Join(t.TempDir(), "server.log"), RawLogDir: t.TempDir(),
	})
	if err == nil || !strings.Contains(err.Error(), "private") {
		t.Errorf("a writable /tmp: err = %v, want a refusal naming the private directories", err)
	}
}
