package cli

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestEngineServeHelper is not a test: it is the served process of TestEngineServeCommand,
// the speedmatrix command run by the test binary (os/exec's helper-process pattern).
func TestEngineServeHelper(t *testing.T) {
	if os.Getenv("SPEEDMATRIX_ENGINE_HELPER") != "1" {
		t.Skip("the served process of TestEngineServeCommand")
	}
	args := os.Args
	for i, a := range args {
		if a == "--" {
			args = args[i+1:]
			break
		}
	}
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	err := Run(ctx, args, os.Stdout, os.Stderr, os.Getenv)
	if err != nil {
		os.Stderr.WriteString(err.Error() + "\n")
	}
	os.Exit(ExitCode(err))
}

// TestEngineServeCommand: engine serve prints the URL once the server is ready, and Ctrl-C
// (the context ending) stops it and returns without an error.
func TestEngineServeCommand(t *testing.T) {
	logDir := t.TempDir()
	serveAndStop(t, logDir, "engine", "serve", "--ready-timeout", "30s", "--stop-grace", "5s",
		"--log-dir", logDir, "--env", "SPEEDMATRIX_TEST_PORT=${PORT}", "--env", "SPEEDMATRIX_ENGINE_HELPER=1", "--",
		os.Args[0], "-test.run=^TestEngineServeHelper$", "--",
		"sim", "--listen", "127.0.0.1:${PORT}", "--sim-speedup", "100")
}

// TestEngineServeConfig: engine serve --config serves the file's engine.serve (command, env,
// ready_timeout) as run would, without the launch command typed again (issue 25, item 11).
func TestEngineServeConfig(t *testing.T) {
	dir := t.TempDir()
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp) // where the server's temporary logs go
	cfg := filepath.Join(dir, "speedmatrix.yaml")
	yaml := "engine:\n  name: speedmatrix-sim\n  build: none\n  serve:\n" +
		"    command: [" + strconv.Quote(os.Args[0]) + `, "-test.run=^TestEngineServeHelper$", "--", sim, --listen, "127.0.0.1:${PORT}", --sim-speedup, "100"]` + "\n" +
		"    env: {SPEEDMATRIX_ENGINE_HELPER: \"1\"}\n    ready_timeout: 30s\n    stop_grace: 5s\n"
	if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	serveAndStop(t, dir, "engine", "serve", "--config", cfg, "--log-dir", dir)
	// A clean stop leaves no temporary log behind (issue 25: every serve left one in /tmp).
	if left, _ := filepath.Glob(filepath.Join(tmp, "speedmatrix-server-*")); len(left) > 0 {
		t.Errorf("after a clean stop, temporary logs are left: %v", left)
	}
}

// serveAndStop runs `speedmatrix args…` (an engine serve whose server is the simulator, its log
// in logDir), reads the URL it prints, checks the server answers, cancels the context as Ctrl-C
// does and checks that the command stopped the server and returned without an error.
func serveAndStop(t *testing.T, logDir string, args ...string) {
	t.Helper()
	pr, pw := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stderr strings.Builder
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, args, pw, &lockedWriter{w: &stderr}, os.Getenv)
		pw.Close()
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatalf("no URL on stdout: %v; stderr:\n%s", err, stderr.String())
	}
	url := strings.TrimSpace(line)
	resp, err := http.Get(url + "/v1/models")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET %s/v1/models: %v %v", url, resp, err)
	}
	resp.Body.Close()
	go io.Copy(io.Discard, pr)
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("engine serve: %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("engine serve still runs 15s after Ctrl-C")
	}
	if _, err := http.Get(url + "/health"); err == nil {
		t.Error("the server still answers after engine serve returned")
	}
	if data, err := os.ReadFile(filepath.Join(logDir, "server.log")); err != nil || !strings.Contains(string(data), "simulator serving") {
		t.Errorf("server log %q, %v", data, err)
	}
}

func TestEngineUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"engine", "serve"},
		{"engine", "serve", "vllm", "serve", "m"},
		{"engine", "build", "--build", "fast"},
		{"engine", "build", "--keep", "0"},
		{"engine", "serve", "--env", "NOEQUALS", "--", "true"},
	} {
		err := Run(context.Background(), args, io.Discard, io.Discard, func(string) string { return "" })
		var ue *UsageError
		if !errors.As(err, &ue) && ExitCode(err) != ExitUsage {
			t.Errorf("speedmatrix %q: %v, want a usage error", args, err)
		}
	}
}

// lockedWriter serialises writes from the command's goroutines.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
