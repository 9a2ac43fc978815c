package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/speedmatrix/speedmatrix/bench"
	"github.com/speedmatrix/speedmatrix/bench/benchtest"
	"github.com/speedmatrix/speedmatrix/engine"
	"github.com/speedmatrix/speedmatrix/results"
)

// engineKey is the API key of the served runs: it must appear in no output, file or error.
const engineKey = "sk-engine-test-s3cret"

// engineCase is one `run --config` with engine.serve, in its own directory.
type engineCase struct {
	dir, config, out, pidFile string
}

// newEngineCase writes a speedmatrix.yaml whose engine.serve starts command (after a shell
// that records the process group's leader in a file and execs it) and returns the case.
// matrix holds the run's settings as YAML lines. The server runs outside the sandbox
// (engine.sandbox: none): these cases watch its process group from outside, through files in
// their temporary directories, which the sandbox hides (its own tests are
// runengine_sandbox_test.go).
func newEngineCase(t *testing.T, matrix string, command []string, extra string) engineCase {
	t.Helper()
	dir := t.TempDir()
	c := engineCase{dir: dir, config: filepath.Join(dir, "speedmatrix.yaml"), out: filepath.Join(dir, "r.json"), pidFile: filepath.Join(dir, "server.pid")}
	argv := append([]string{"bash", "-c", `read -r _ _ _ _ pg _ < /proc/$$$$/stat; echo "$pg" > "$0"; exec "$@"` /* the process group; $$ is a literal $ to engine.serve */, c.pidFile}, command...)
	var quoted []string
	for _, a := range argv {
		quoted = append(quoted, strconv.Quote(a))
	}
	yaml := matrix + fmt.Sprintf(`
api_key_env: KEY
engine:
  name: speedmatrix-sim
  build: none
  sandbox: none
  serve:
    command: [%s]
    env: {SPEEDMATRIX_ENGINE_HELPER: "1"}
    port: 0
    ready_timeout: 60s
    stop_grace: 5s
`, strings.Join(quoted, ", ")) + extra
	if err := os.WriteFile(c.config, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	return c
}

// simCommand is `speedmatrix sim` with the API key, run by the test binary (TestEngineServeHelper).
func simCommand(args ...string) []string {
	return append([]string{os.Args[0], "-test.run=^TestEngineServeHelper$", "--", "sim", "--listen", "127.0.0.1:${PORT}",
		"--api-key", "${KEY}"}, args...)
}

// run runs speedmatrix run --config on the case with ctx.
func (c engineCase) run(ctx context.Context, t *testing.T) (stdout, stderr string, err error) {
	t.Helper()
	var out, errOut strings.Builder
	env := map[string]string{"KEY": engineKey}
	err = Run(ctx, []string{"run", "--config", c.config, "-o", c.out}, &lockedWriter{w: &out}, &lockedWriter{w: &errOut},
		func(k string) string { return env[k] })
	return out.String(), errOut.String(), err
}

// assertGroupGone fails unless the server's process group has no process left.
func (c engineCase) assertGroupGone(t *testing.T) {
	t.Helper()
	data, err := os.ReadFile(c.pidFile)
	if err != nil {
		t.Fatalf("the server never started: %v", err)
	}
	pgid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(-pgid, 0); !errors.Is(err, syscall.ESRCH) {
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		t.Errorf("process group %d of the server is still there (kill -0: %v)", pgid, err)
	}
}

// assertNoKey fails when the API key is in any of the texts or files.
func assertNoKey(t *testing.T, texts map[string]string, files ...string) {
	t.Helper()
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Errorf("%s: %v", f, err)
		}
		texts[f] = string(data)
	}
	for what, s := range texts {
		if strings.Contains(s, engineKey) {
			t.Errorf("the API key leaked into %s:\n%s", what, s)
		}
	}
}

// engineMatrix is a run of several short decode cells: a few seconds in all.
const engineMatrix = `contexts: [1K, 2K, 3K, 4K, 5K, 6K]
concurrency: [1]
prefill_contexts: none
duration: 400ms
max_tokens: 16
warmup: 0
readiness_timeout: 5s
quiet: true
`

// TestRunEngineServerCrash: the server crashing mid-run ends the run with exit code 1, the
// cells measured so far kept and marked partial, and no process of the server left.
func TestRunEngineServerCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server process and measures it for seconds")
	}
	c := newEngineCase(t, engineMatrix, simCommand("--sim-speedup", "20", "--fault", "crash=3s"), "")
	stdout, stderr, err := c.run(context.Background(), t)
	if err == nil || ExitCode(err) != ExitError {
		t.Fatalf("run = %v (exit %d), want exit 1 for the crash; stderr:\n%s", err, ExitCode(err), stderr)
	}
	if !errors.Is(err, bench.ErrServerDead) || !strings.Contains(err.Error(), "marked partial") {
		t.Errorf("error %q: want the dead server and the partial results named", err)
	}
	f, rerr := results.ReadFile(c.out)
	if rerr != nil {
		t.Fatalf("no results kept: %v", rerr)
	}
	if !f.Run.Partial {
		t.Error("results not marked partial")
	}
	c.assertGroupGone(t)
	assertNoKey(t, map[string]string{"stdout": stdout, "stderr": stderr, "error": err.Error()}, c.out, c.out+".server.log")
}

// TestRunEngineInterrupted: Ctrl-C (the context ending) mid-run stops the server and keeps the
// results measured so far, marked partial.
func TestRunEngineInterrupted(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server process and measures it for seconds")
	}
	c := newEngineCase(t, engineMatrix, simCommand("--sim-speedup", "20"), "")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { // Ctrl-C once the first cell is written
		for ctx.Err() == nil {
			if _, err := os.Stat(c.out); err == nil {
				cancel()
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	stdout, stderr, err := c.run(ctx, t)
	if !errors.Is(err, bench.ErrInterrupted) {
		t.Fatalf("run = %v, want it interrupted; stderr:\n%s", err, stderr)
	}
	f, rerr := results.ReadFile(c.out)
	if rerr != nil {
		t.Fatalf("no results kept: %v", rerr)
	}
	if !f.Run.Partial || len(f.Decode) == 0 || len(f.Decode) == 6 {
		t.Errorf("results: partial %v with %d decode cells, want partial with some of the 6", f.Run.Partial, len(f.Decode))
	}
	c.assertGroupGone(t)
	if !strings.Contains(stderr, "server stopped") || !strings.Contains(stderr, "engine run phases") {
		t.Errorf("stderr lacks the stop or the phases:\n%s", stderr)
	}
	assertNoKey(t, map[string]string{"stdout": stdout, "stderr": stderr, "error": err.Error()}, c.out, c.out+".server.log")
}

// TestRunEngineExitsDuringLoad: a server that exits while loading is a clear error with its
// last log lines, the key redacted from them, from the log file and from every output.
func TestRunEngineExitsDuringLoad(t *testing.T) {
	c := newEngineCase(t, engineMatrix, []string{"bash", "-c",
		`echo "non-default args: {'api_key': ['$2']}"; echo "torch.OutOfMemoryError: CUDA out of memory"; exit 1`,
		"vllm", "--api-key", "${KEY}"}, "")
	stdout, stderr, err := c.run(context.Background(), t)
	if err == nil {
		t.Fatal("run succeeded with a server that exits during load")
	}
	for _, want := range []string{"exited during load (exit code 1)", "torch.OutOfMemoryError: CUDA out of memory", "'api_key': ['<redacted>']", c.out + ".server.log"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	var pe *engine.ProcessError
	if !errors.As(err, &pe) {
		t.Errorf("error %T does not wrap the *engine.ProcessError", err)
	}
	if _, serr := os.Stat(c.out); serr == nil {
		t.Error("a results file was written although nothing was measured")
	}
	c.assertGroupGone(t)
	assertNoKey(t, map[string]string{"stdout": stdout, "stderr": stderr, "error": err.Error()}, c.out+".server.log")
}

// fakeSMI puts the fake nvidia-smi of testdata/engine on PATH with its state in a new
// directory, and returns the file that logs its calls.
func fakeSMI(t *testing.T, noPerm bool) (state, callLog string) {
	t.Helper()
	bin, err := filepath.Abs("testdata/engine/bin")
	if err != nil {
		t.Fatal(err)
	}
	smiDir, _ := filepath.Abs("testdata/engine/smi")
	state = t.TempDir()
	callLog = filepath.Join(state, "calls.log")
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("FAKE_SMI_DIR", smiDir)
	t.Setenv("FAKE_SMI", "h200x2")
	t.Setenv("FAKE_SMI_STATE", state)
	t.Setenv("FAKE_SMI_LOG", callLog)
	if noPerm {
		t.Setenv("FAKE_SMI_NOPERM", "1")
	}
	return state, callLog
}

// TestRunEngineLockClocks: gpu.lock_clocks locks the clocks before the server starts, records
// them and the machine's fingerprint in the results, and restores them afterwards.
func TestRunEngineLockClocks(t *testing.T) {
	state, callLog := fakeSMI(t, false)
	matrix := "contexts: [1K]\nconcurrency: [1]\nprefill_contexts: none\nduration: 300ms\nmax_tokens: 16\nwarmup: 0\nreadiness_timeout: 5s\nquiet: true\n"
	c := newEngineCase(t, matrix, simCommand("--sim-speedup", "20"), "gpu: {lock_clocks: true}\n")
	_, stderr, err := c.run(context.Background(), t)
	if err != nil {
		t.Fatalf("run: %v; stderr:\n%s", err, stderr)
	}
	f, err := results.ReadFile(c.out)
	if err != nil {
		t.Fatal(err)
	}
	want := results.Hardware{GPU: "NVIDIA H200", GPUCount: 2, VRAMPerGPUGB: 150.8, Driver: "570.124.06", CUDA: "12.8",
		Clocks: "locked: SM 1980 MHz, memory 3201 MHz", ClocksLocked: true, PowerLimitW: 700, PersistenceMode: "Enabled"}
	got := f.Hardware
	got.OS, got.CPUModel = "", "" // this machine's
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("hardware (-want +got):\n%s", diff)
	}
	left, _ := filepath.Glob(filepath.Join(state, "l?c-*"))
	if len(left) > 0 {
		t.Errorf("clocks still locked after the run: %v", left)
	}
	calls, _ := os.ReadFile(callLog)
	for _, want := range []string{"-lgc 1980,1980", "-lmc 3201,3201", "-rgc", "-rmc"} {
		if !strings.Contains(string(calls), want) {
			t.Errorf("nvidia-smi was not run with %s; calls:\n%s", want, calls)
		}
	}
	c.assertGroupGone(t)
}

// TestRunEngineLockClocksRefused: without permission to lock the clocks, run refuses with what
// to do, before starting the server.
func TestRunEngineLockClocksRefused(t *testing.T) {
	fakeSMI(t, true)
	c := newEngineCase(t, engineMatrix, simCommand(), "gpu: {lock_clocks: true}\n")
	_, _, err := c.run(context.Background(), t)
	if !errors.Is(err, engine.ErrNotPermitted) || !strings.Contains(err.Error(), "gpu.lock_clocks") || !strings.Contains(err.Error(), "root") {
		t.Fatalf("run = %v, want a refusal naming gpu.lock_clocks and what to do", err)
	}
	if _, serr := os.Stat(c.pidFile); serr == nil {
		t.Error("the server was started although the clocks could not be locked")
	}
}

// TestRunURLRecordsLocalGPUs: run --url on a loopback server records this machine's GPUs when
// the flags do not say them; a flag given wins.
func TestRunURLRecordsLocalGPUs(t *testing.T) {
	fakeSMI(t, false)
	srv := fakeServer(t, benchtest.Config{})
	out := filepath.Join(t.TempDir(), "r.json")
	args := append(smallRun(srv.URL, out), "--gpu", "H200 NVL")
	if _, stderr, err := runBench(t, nil, args...); err != nil {
		t.Fatalf("run: %v\n%s", err, stderr)
	}
	f, err := results.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	h := f.Hardware
	if h.GPU != "H200 NVL" || h.GPUCount != 2 || h.Driver != "570.124.06" || h.PowerLimitW != 700 || h.ClocksLocked {
		t.Errorf("hardware %+v: want the flag's GPU and nvidia-smi's count, driver and power limit", h)
	}
}
