package cli

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/speedmatrix/speedmatrix/engine"
	"github.com/speedmatrix/speedmatrix/measure"
	"github.com/speedmatrix/speedmatrix/results"
)

// sandboxSecret is what a process started after speedmatrix holds in its environment, as
// ACTIONS_RUNTIME_TOKEN (the token a later step of the job, actions/upload-artifact, holds).
const sandboxSecret = "sandbox-late-secret-4711"

// daemonScript returns a bash line that leaves a detached (setsid) process which, for ever,
// copies every ACTIONS_RUNTIME_TOKEN it finds in any process's environment into stolen and
// overwrites each of targets (results and meta files); tag is in its command line. It creates
// stolen first thing.
func daemonScript(tag, stolen string, targets ...string) string {
	quoted := make([]string, len(targets))
	for i, p := range targets {
		quoted[i] = fmt.Sprintf("%q", p)
	}
	return fmt.Sprintf(`setsid bash -c ': >> "$0"; while :; do grep -a -h -o "ACTIONS_RUNTIME_TOKEN=[a-z0-9-]*" /proc/[0-9]*/environ >> "$0" 2>/dev/null; for t in "$@"; do printf tampered > "$t" 2>/dev/null; done; sleep 0.05; done; : %s' %q %s </dev/null >/dev/null 2>&1 &`, tag, stolen, strings.Join(quoted, " "))
}

// daemonEngine is an engine, the simulator served in the sandbox, whose engine.serve (phase
// serve) or engine.build (phase build) leaves a daemon (daemonScript).
type daemonEngine struct {
	phase, src, cache, tag string
	// yaml is the configuration's api_key_env (KEY, engineKey's variable) and engine section.
	yaml string
}

// newDaemonEngine returns the daemon engine of phase (serve or build) whose daemon overwrites
// targets, with a fresh git checkout as its source whose HEAD is returned too.
func newDaemonEngine(t *testing.T, phase string, targets ...string) (daemonEngine, string) {
	t.Helper()
	src, head, _ := gitInit(t)
	d := daemonEngine{phase: phase, src: src, cache: t.TempDir(), tag: "speedmatrix-sandbox-daemon-" + strings.ReplaceAll(t.Name(), "/", "-") + "-" + strconv.Itoa(os.Getpid())}
	// What the daemon steals lands where the engine may write and the test can read.
	serve := simCommand("--sim-speedup", "20")
	build := "build: none"
	if phase == "serve" {
		serve = append([]string{"bash", "-c", daemonScript(d.tag, filepath.Join(src, "stolen"), targets...) + ` exec "$@"`, "engine"}, serve...)
	} else {
		build = fmt.Sprintf("build: {command: %q}", daemonScript(d.tag, "$SPEEDMATRIX_ENV_DIR/stolen", targets...)+
			// The build waits (a bounded while) for its daemon to start: its end ends the sandbox.
			` for i in $(seq 500); do [ -e "$SPEEDMATRIX_ENV_DIR/stolen" ] && break; sleep 0.01; done; echo built`)
	}
	var quoted []string
	for _, a := range serve {
		quoted = append(quoted, strconv.Quote(a))
	}
	d.yaml = fmt.Sprintf(`api_key_env: KEY
engine:
  name: sandboxed
  source: %q
  cache_dir: %q
  %s
  serve:
    command: [%s]
    env: {SPEEDMATRIX_ENGINE_HELPER: "1"}
    port: 0
    ready_timeout: 60s
    stop_grace: 5s
`, src, d.cache, build, strings.Join(quoted, ", "))
	return d, head
}

// checkGone checks, once speedmatrix has returned, that no process of d's engine is alive,
// that the ACTIONS_RUNTIME_TOKEN of a process started afterwards is not read, and that each
// file of want still holds exactly its bytes (what speedmatrix wrote).
func (d daemonEngine) checkGone(t *testing.T, want map[string][]byte) {
	t.Helper()
	if n := livingWith(d.tag); n > 0 {
		t.Errorf("%d process(es) of the engine outlive speedmatrix", n)
	}
	// A later process, holding a secret: the daemon (if alive) would copy it.
	later := exec.Command("sleep", "3")
	later.Env = append(os.Environ(), "ACTIONS_RUNTIME_TOKEN="+sandboxSecret)
	if err := later.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond)
	_ = later.Process.Kill()
	_ = later.Wait()

	stolen := filepath.Join(d.src, "stolen")
	found := []string{stolen}
	_ = filepath.WalkDir(d.cache, func(p string, de fs.DirEntry, err error) error { // the build's (by trust level)
		if err == nil && de.Name() == "stolen" {
			found = append(found, p)
		}
		return nil
	})
	ran := false
	for _, f := range found {
		data, err := os.ReadFile(f)
		ran = ran || err == nil
		if bytes.Contains(data, []byte(sandboxSecret)) {
			t.Errorf("a later process's secret was read: %s", f)
		}
	}
	if !ran {
		t.Errorf("the daemon never ran: no file named stolen in %s or under %s", d.src, d.cache)
	}
	for p, written := range want {
		after, err := os.ReadFile(p)
		if err != nil || !bytes.Equal(after, written) {
			t.Errorf("%s changed after speedmatrix returned (%d bytes, then %d: %.40q)", filepath.Base(p), len(written), len(after), after)
		}
	}
}

// TestRunEngineSandboxAcceptance: `speedmatrix run` whose engine.serve (then, in a second
// case, whose engine.build) leaves a detached process that reads every process's environment
// and rewrites the results file: once run returns, no process of the engine is alive, a
// secret in the environment of a process started afterwards is not read, and the results file
// is byte for byte what speedmatrix wrote. The engine is the simulator, served in the sandbox.
// TestActionMeasureSandboxAcceptance is the same through the action's measure mode.
func TestRunEngineSandboxAcceptance(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and serves the simulator in the sandbox")
	}
	needSandbox(t)
	for _, phase := range []string{"serve", "build"} {
		t.Run(phase, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "results.json")
			d, _ := newDaemonEngine(t, phase, out)
			cfg := filepath.Join(t.TempDir(), "speedmatrix.yaml")
			if err := os.WriteFile(cfg, []byte(engineMatrix+d.yaml), 0o644); err != nil {
				t.Fatal(err)
			}
			var stdout, stderr strings.Builder
			env := map[string]string{"KEY": engineKey}
			err := Run(context.Background(), []string{"run", "--config", cfg, "-o", out},
				&lockedWriter{w: &stdout}, &lockedWriter{w: &stderr}, func(k string) string { return env[k] })
			if err != nil {
				t.Fatalf("run: %v\n%s", err, stderr.String())
			}
			written, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := results.ReadFile(out); err != nil {
				t.Fatalf("the results as run returned them: %v", err)
			}
			d.checkGone(t, map[string][]byte{out: written})
		})
	}
}

// needSandbox skips t where the machine cannot make the engine's sandbox, and fails it in CI.
func needSandbox(t *testing.T) {
	t.Helper()
	if err := engine.SandboxCheck(context.Background(), measure.EngineReaper()); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the sandbox is needed in CI: %v", err)
		}
		t.Skipf("no sandbox on this machine: %v", err)
	}
}

// livingWith counts the live (not zombie) processes whose command line contains s.
func livingWith(s string) int {
	ents, _ := os.ReadDir("/proc")
	n := 0
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		data, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !strings.Contains(strings.ReplaceAll(string(data), "\x00", " "), s) {
			continue
		}
		stat, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if i := bytes.LastIndexByte(stat, ')'); i > 0 && len(stat) > i+2 && (stat[i+2] == 'Z' || stat[i+2] == 'X') {
			continue
		}
		n++
	}
	return n
}

// TestRunEngineSandboxSIGKILL: speedmatrix SIGKILLed while its sandboxed server (which left a
// setsid daemon) loads leaves no process of the engine: the reaper, the sandbox's init, gets
// its parent-death signal and exits, and the kernel ends the namespace.
func TestRunEngineSandboxSIGKILL(t *testing.T) {
	needSandbox(t)
	src, _, _ := gitInit(t)
	tag := "speedmatrix-sandbox-daemon-kill-" + strconv.Itoa(os.Getpid())
	started := filepath.Join(src, "started")
	cfg := filepath.Join(t.TempDir(), "speedmatrix.yaml")
	yaml := engineMatrix + fmt.Sprintf(`engine:
  name: sandboxed
  source: %q
  build: none
  serve:
    command: [bash, -c, %q]
    port: 0
    ready_timeout: 60s
    stop_grace: 2s
`, src, fmt.Sprintf(`setsid bash -c 'sleep 300; : %s-daemon' </dev/null >/dev/null 2>&1 & echo > %q; exec bash -c 'sleep 300; : %s-server'`, tag, started, tag))
	if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	helper := exec.Command(os.Args[0], "-test.run=^TestEngineServeHelper$", "--", "run", "--config", cfg, "-o", filepath.Join(t.TempDir(), "r.json"))
	helper.Env = append(os.Environ(), "SPEEDMATRIX_ENGINE_HELPER=1")
	helper.Stderr = &lockedWriter{w: &stderr}
	if err := helper.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = helper.Wait(); close(exited) }()
	waitFile(t, started, helper, &stderr)
	for range 500 {
		if livingWith(tag) >= 2 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if n := livingWith(tag); n < 2 {
		t.Fatalf("%d engine processes running, want the server and its daemon\n%s", n, stderr.String())
	}
	if err := helper.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-exited
	n := 0
	for range 2000 { // the kernel's signals are asynchronous: poll, bounded by a count
		if n = livingWith(tag); n == 0 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if n > 0 {
		t.Errorf("%d engine process(es) outlived speedmatrix's SIGKILL", n)
	}
}
