package engine_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/speedmatrix/speedmatrix/engine"
	"github.com/speedmatrix/speedmatrix/sim"
	"github.com/speedmatrix/speedmatrix/sim/profile"
)

// TestMain lets the test binary act as `speedmatrix sim` (ENGINE_TEST_EXEC=speedmatrix), so that
// the served process of these tests is the real simulator (sim.Serve, as the command serves it).
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == engine.ReaperArg {
		engine.Reap(os.Args[2:]) // the reaper of TestServeReaper's servers
	}
	if os.Getenv("ENGINE_TEST_EXEC") == "speedmatrix" {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		err := serveSim(ctx, os.Args[1:])
		stop()
		if err != nil {
			fmt.Fprintln(os.Stderr, "speedmatrix:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// serveSim serves the simulator as `speedmatrix sim --listen ADDR --sim-speedup N` does, with
// the default profile.
func serveSim(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("sim", flag.ContinueOnError)
	listen := fs.String("listen", "127.0.0.1:8000", "")
	speedup := fs.Float64("sim-speedup", sim.DefaultSpeedup, "")
	if len(args) == 0 || args[0] != "sim" {
		return fmt.Errorf("want sim, got %q", args)
	}
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	p, err := profile.Load(profile.Default, nil)
	if err != nil {
		return err
	}
	return sim.Serve(ctx, sim.Config{Profile: p, Addr: *listen, Speedup: *speedup, NoiseCV: -1}, os.Stdout)
}

// simCommand returns the command serving `speedmatrix sim` on ${PORT}, and its environment.
func simCommand(t *testing.T) ([]string, map[string]string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return []string{exe, "sim", "--listen", "127.0.0.1:${PORT}", "--sim-speedup", "100"},
		map[string]string{"ENGINE_TEST_EXEC": "speedmatrix"}
}

// testGPU returns a GPU watch on the fake nvidia-smi with an empty list of compute apps.
func testGPU(t *testing.T) engine.GPUWatch {
	t.Helper()
	dir, _ := filepath.Abs("testdata/smi")
	t.Setenv("FAKE_SMI", "h200x2")
	t.Setenv("FAKE_SMI_DIR", dir)
	t.Setenv("FAKE_SMI_STATE", t.TempDir())
	t.Setenv("FAKE_SMI_APPS", filepath.Join(t.TempDir(), "apps"))
	t.Setenv("FAKE_SMI_LOG", "")
	t.Setenv("FAKE_SMI_RELEASE_MS", "0")
	smi, _ := filepath.Abs("testdata/bin/nvidia-smi")
	return engine.GPUWatch{SMI: engine.NvidiaSMI{Path: smi}, ReleaseTimeout: 10 * time.Second, Poll: 50 * time.Millisecond}
}

// assertGone fails unless process group pgid and every pid listed in pidfile are gone:
// kill(-pgid, 0) and kill(pid, 0) answer ESRCH. Init gets up to 5s to reap the orphaned zombies: on the
// development machine it reaps them about 2s late.
func assertGone(t *testing.T, pgid int, pidfile string) {
	t.Helper()
	var pids []int
	if pidfile != "" {
		data, err := os.ReadFile(pidfile)
		if err != nil {
			t.Fatalf("pid file: %v", err)
		}
		for _, f := range strings.Fields(string(data)) {
			p, err := strconv.Atoi(f)
			if err != nil {
				t.Fatalf("pid file holds %q", f)
			}
			pids = append(pids, p)
		}
		if len(pids) == 0 {
			t.Fatal("the pid file is empty: the test did not see the processes it checks")
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		left := []string{}
		if err := syscall.Kill(-pgid, 0); !errors.Is(err, syscall.ESRCH) {
			left = append(left, fmt.Sprintf("group %d (%v)", pgid, err))
		}
		for _, p := range pids {
			if err := syscall.Kill(p, 0); !errors.Is(err, syscall.ESRCH) {
				left = append(left, fmt.Sprintf("pid %d (%v)", p, err))
			}
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("orphans left: %s", strings.Join(left, ", "))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestServeSimLifecycle: the real simulator is started with ${PORT} expanded, becomes ready,
// serves, holds the (fake) GPU, and is stopped with nothing left behind and the GPU free.
func TestServeSimLifecycle(t *testing.T) {
	gpu := testGPU(t)
	t.Setenv("FAKE_SMI_RELEASE_MS", "300") // the driver frees the memory 300ms after the exit
	cmd, env := simCommand(t)
	wrap, _ := filepath.Abs("testdata/serve/gpu_user.sh")
	env["LISTEN_PORT"] = "${PORT}"
	env["FAKE_SMI_APPS"] = "${FAKE_SMI_APPS}"
	logPath := filepath.Join(t.TempDir(), "logs", "server.log")
	ctx := context.Background()
	srv, err := engine.StartServer(ctx, engine.ServeSpec{
		Command: append([]string{wrap}, cmd...), Env: env, LogPath: logPath,
		ReadyTimeout: 20 * time.Second, StopGrace: 5 * time.Second, Poll: 50 * time.Millisecond, GPU: gpu,
	})
	if err != nil {
		t.Fatal(err)
	}
	p, _ := profile.Load(profile.Default, nil)
	if srv.Model() != p.ServedModel {
		t.Errorf("model %q, want %q", srv.Model(), p.ServedModel)
	}
	port := strconv.Itoa(srv.Port())
	if srv.Port() == 0 || srv.URL() != "http://127.0.0.1:"+port || srv.Argv()[4] != "127.0.0.1:"+port {
		t.Errorf("port %d, URL %s, argv %q", srv.Port(), srv.URL(), srv.Argv())
	}
	resp, err := http.Get(srv.URL() + "/health")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("/health: %v %v", resp, err)
	}
	resp.Body.Close()
	prov := srv.Provenance(ctx, &engine.Build{Engine: "vllm", Commit: "abc", Mode: engine.ModeNone})
	if prov.Version != p.EngineVersion || prov.Version == "" || prov.Commit != "abc" || len(prov.Command) != len(cmd)+1 {
		t.Errorf("provenance %+v, want version %q", prov, p.EngineVersion)
	}
	apps, err := engine.ComputeApps(ctx, gpu.SMI)
	if err != nil || len(apps) != 1 {
		t.Fatalf("GPU processes while serving %v %v, want the server", apps, err)
	}
	start := time.Now()
	if err := srv.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 300*time.Millisecond {
		t.Errorf("Stop returned after %v, before the GPU memory was released (300ms)", d)
	}
	if apps, err := engine.ComputeApps(ctx, gpu.SMI); err != nil || len(apps) != 0 {
		t.Errorf("GPU processes after the stop %v %v, want none", apps, err)
	}
	assertGone(t, srv.PGID(), "")
	if srv.Killed() {
		t.Error("the simulator needed SIGKILL")
	}
	if _, err := http.Get(srv.URL() + "/health"); err == nil {
		t.Error("/health still answers after the stop")
	}
	if data, err := os.ReadFile(logPath); err != nil || len(data) == 0 {
		t.Errorf("server log %q: %v", data, err)
	}
	if err := srv.Stop(ctx); err != nil {
		t.Errorf("second Stop: %v", err)
	}
}

// TestServeCrashDuringLoad: a process that exits while loading fails the start at once, with
// its last log lines.
func TestServeCrashDuringLoad(t *testing.T) {
	script, _ := filepath.Abs("testdata/serve/oom.sh")
	start := time.Now()
	_, err := engine.StartServer(context.Background(), engine.ServeSpec{
		Command: []string{script}, LogPath: filepath.Join(t.TempDir(), "server.log"),
		ReadyTimeout: 20 * time.Second, Poll: 50 * time.Millisecond, GPU: testGPU(t),
	})
	var pe *engine.ProcessError
	if !errors.As(err, &pe) {
		t.Fatalf("err = %v, want a *ProcessError", err)
	}
	if pe.ExitCode != 1 || !strings.Contains(err.Error(), "exited during load") ||
		!strings.Contains(err.Error(), "torch.OutOfMemoryError: CUDA out of memory") ||
		!strings.Contains(err.Error(), "Engine core initialization failed") {
		t.Errorf("error:\n%v", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("the crash was reported after %v, not early", d)
	}
}

// TestServeNeverReady: after ReadyTimeout the group is stopped, child processes included.
func TestServeNeverReady(t *testing.T) {
	script, _ := filepath.Abs("testdata/serve/never_ready.sh")
	pidfile := filepath.Join(t.TempDir(), "pids")
	_, err := engine.StartServer(context.Background(), engine.ServeSpec{
		Command: []string{script}, Env: map[string]string{"PIDFILE": pidfile}, ReadyTimeout: 700 * time.Millisecond, StopGrace: 2 * time.Second,
		Poll: 50 * time.Millisecond, GPU: testGPU(t), LogPath: filepath.Join(t.TempDir(), "server.log"),
	})
	var pe *engine.ProcessError
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), "not ready after 700ms") || !strings.Contains(err.Error(), "loading forever") {
		t.Fatalf("err = %v, want not ready with the log lines", err)
	}
	data, _ := os.ReadFile(pidfile)
	pgid, _ := strconv.Atoi(strings.Fields(string(data))[0])
	assertGone(t, pgid, pidfile)
}

// TestServeIgnoresSIGTERM: a group that ignores SIGTERM is killed after the grace.
func TestServeIgnoresSIGTERM(t *testing.T) {
	script, _ := filepath.Abs("testdata/serve/ignore_term.sh")
	pidfile := filepath.Join(t.TempDir(), "pids")
	cmd, env := simCommand(t)
	env["PIDFILE"] = pidfile
	srv, err := engine.StartServer(context.Background(), engine.ServeSpec{
		Command: append([]string{script}, cmd...), Env: env, ReadyTimeout: 20 * time.Second,
		StopGrace: 400 * time.Millisecond, Poll: 50 * time.Millisecond, GPU: testGPU(t),
		LogPath: filepath.Join(t.TempDir(), "server.log"),
	})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := srv.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 400*time.Millisecond || !srv.Killed() {
		t.Errorf("stopped after %v, killed %v; want SIGKILL after the 400ms grace", d, srv.Killed())
	}
	assertGone(t, srv.PGID(), pidfile)
}

// TestServeContextCancelStops: cancelling the context (Ctrl-C) stops a running server, and
// stops a loading one too.
func TestServeContextCancelStops(t *testing.T) {
	gpu := testGPU(t)
	cmd, env := simCommand(t)
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := engine.StartServer(ctx, engine.ServeSpec{Command: cmd, Env: env, ReadyTimeout: 20 * time.Second,
		Poll: 50 * time.Millisecond, GPU: gpu, LogPath: filepath.Join(t.TempDir(), "server.log")})
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	select {
	case <-srv.Exited():
	case <-time.After(10 * time.Second):
		t.Fatal("the server still runs 10s after the context ended")
	}
	if err := srv.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	assertGone(t, srv.PGID(), "")

	// While loading.
	script, _ := filepath.Abs("testdata/serve/never_ready.sh")
	pidfile := filepath.Join(t.TempDir(), "pids")
	ctx, cancel = context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	_, err = engine.StartServer(ctx, engine.ServeSpec{Command: []string{script}, Env: map[string]string{"PIDFILE": pidfile}, ReadyTimeout: 20 * time.Second,
		Poll: 50 * time.Millisecond, GPU: gpu, LogPath: filepath.Join(t.TempDir(), "server.log")})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want the context's", err)
	}
	data, _ := os.ReadFile(pidfile)
	pgid, _ := strconv.Atoi(strings.Fields(string(data))[0])
	assertGone(t, pgid, pidfile)
}

// TestServeRefusesBusyGPU: another compute process on the GPUs refuses the start.
func TestServeRefusesBusyGPU(t *testing.T) {
	gpu := testGPU(t)
	if err := os.WriteFile(os.Getenv("FAKE_SMI_APPS"), []byte(strconv.Itoa(os.Getpid())+", python3, 80000\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(t.TempDir(), "started")
	_, err := engine.StartServer(context.Background(), engine.ServeSpec{
		Command: []string{"touch", marker}, ReadyTimeout: time.Second, GPU: gpu})
	if err == nil || !strings.Contains(err.Error(), "GPUs are busy") || !strings.Contains(err.Error(), fmt.Sprintf("pid %d python3 (80000 MiB)", os.Getpid())) {
		t.Fatalf("err = %v, want the busy GPU named", err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the server was started on a busy GPU")
	}
}

// TestServeWithoutSMI: without nvidia-smi the GPU checks are skipped with a note.
func TestServeWithoutSMI(t *testing.T) {
	cmd, env := simCommand(t)
	srv, err := engine.StartServer(context.Background(), engine.ServeSpec{Command: cmd, Env: env,
		ReadyTimeout: 20 * time.Second, Poll: 50 * time.Millisecond,
		GPU: engine.GPUWatch{SMI: engine.NvidiaSMI{Path: "/no/such/nvidia-smi"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer os.Remove(srv.LogPath())
	if err := srv.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(srv.Notes()) != 1 || !strings.Contains(srv.Notes()[0], "nvidia-smi not found") {
		t.Errorf("notes %q", srv.Notes())
	}
	assertGone(t, srv.PGID(), "")
}

// TestServeUnsetVariable: an unset ${NAME} is an error before anything starts.
func TestServeUnsetVariable(t *testing.T) {
	_, err := engine.StartServer(context.Background(), engine.ServeSpec{
		Command: []string{"true", "--api-key", "${SPEEDMATRIX_TEST_UNSET}"}, GPU: testGPU(t),
		Expand: func(string) (string, bool) { return "", false }})
	if err == nil || !strings.Contains(err.Error(), "${SPEEDMATRIX_TEST_UNSET}: the variable is not set") {
		t.Fatalf("err = %v", err)
	}
}
