package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/speedmatrix/speedmatrix/bench"
	"github.com/speedmatrix/speedmatrix/bench/benchtest"
	"github.com/speedmatrix/speedmatrix/results"
)

// fakeServer starts a scripted OpenAI-compatible server for `run`.
func fakeServer(t *testing.T, cfg benchtest.Config) *benchtest.Server {
	t.Helper()
	if cfg.MaxModelLen == 0 {
		cfg.MaxModelLen = 1 << 20
	}
	if cfg.TBT == 0 {
		cfg.TTFT, cfg.TBT, cfg.ChunkTokens = 20*time.Millisecond, 5*time.Millisecond, 2
	}
	srv := benchtest.New(cfg)
	t.Cleanup(srv.Close)
	return srv
}

// runCLI runs speedmatrix with args and the environment env.
func runBench(t *testing.T, env map[string]string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err = Run(context.Background(), args, &out, &errOut, func(k string) string { return env[k] })
	return out.String(), errOut.String(), err
}

// smallRun are the flags of a run that takes about two seconds.
func smallRun(url, out string) []string {
	return []string{"run", "--url", url, "--contexts", "1K", "--concurrency", "1,2", "--duration", "400ms",
		"--max-tokens", "101", "--warmup", "1", "-o", out}
}

func TestRunWritesValidResults(t *testing.T) {
	srv := fakeServer(t, benchtest.Config{APIKey: "s3cret-key-value"})
	out := filepath.Join(t.TempDir(), "results.json")
	args := append(smallRun(srv.URL, out), "--api-key-env", "BENCH_KEY",
		"--launch-command", "vllm serve m --api-key s3cret-key-value --port 8000",
		"--engine", "vllm", "--gpu", "H200 NVL", "--gpu-count", "2", "--log-level", "debug")
	_, stderr, err := runBench(t, map[string]string{"BENCH_KEY": "s3cret-key-value"}, args...)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, stderr)
	}
	f, err := results.ReadFile(out) // validates
	if err != nil {
		t.Fatal(err)
	}
	if f.Run.Source != results.SourceMeasured || f.Run.Partial || f.Run.ServedModel != "fake-model" {
		t.Errorf("run %+v", f.Run)
	}
	want := &results.Settings{URL: srv.URL, Endpoint: "completions", Matrix: "custom", Contexts: []string{"1K"},
		Concurrency: []int{1, 2}, PrefillContexts: []string{"1K"}, DurationSeconds: 0.4, MaxTokens: 101, Trials: 1,
		ReadinessTimeoutSeconds: 60, DrainTimeoutSeconds: 120, WarmupRequests: 1, ContextWarmup: true,
		Order: results.OrderShuffled, Remeasures: bench.DefaultRemeasures}
	if f.Run.Settings != nil {
		if f.Run.Settings.OrderSeed == 0 {
			t.Error("a shuffled order without its seed")
		}
		want.OrderSeed = f.Run.Settings.OrderSeed // drawn from the run's ID
	}
	if diff := cmp.Diff(want, f.Run.Settings); diff != "" {
		t.Errorf("settings (-want +got):\n%s", diff)
	}
	if len(f.Prefill) != 1 || len(f.Decode) != 2 {
		t.Fatalf("%d prefill and %d decode cells, want 1 and 2", len(f.Prefill), len(f.Decode))
	}
	for _, c := range f.Decode {
		if !c.Status.Measured() || len(c.Trials) != 1 {
			t.Errorf("cell %s×%d: %s %q", c.ContextLabel, c.Concurrency, c.Status, c.Error)
		}
	}
	if *f.Prefill[0].PromptTokens != 1024 || f.Server.Tokenizer != "server" {
		t.Errorf("prefill prompt tokens %d with tokenizer %q, want 1024 by the server's", *f.Prefill[0].PromptTokens, f.Server.Tokenizer)
	}
	if f.Run.LaunchCommand != "vllm serve m --api-key <redacted> --port 8000" || f.Engine.Name != "vllm" || f.Hardware.GPUCount != 2 {
		t.Errorf("provenance: %q %+v %+v", f.Run.LaunchCommand, f.Engine, f.Hardware)
	}
	data, _ := os.ReadFile(out)
	if strings.Contains(string(data), "s3cret") || strings.Contains(stderr, "s3cret") {
		t.Errorf("the API key leaked into the results file or the log")
	}
}

func TestRunUsageErrors(t *testing.T) {
	dir := t.TempDir()
	badYAML := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(badYAML, []byte("url: http://x\nmax_tokenz: 12\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		args []string
		env  map[string]string
		want string
	}{
		{[]string{"run", "--sim-profile", "no-such-profile"}, nil, "--sim-profile"},
		{[]string{"run", "--sim-fault", "boom=1"}, nil, `unknown fault "boom"`},
		{[]string{"run", "--url", "http://x", "--matrix", "huge"}, nil, `matrix "huge" unknown`},
		{[]string{"run", "--url", "http://x", "--contexts", "8Q"}, nil, `--contexts: context "8Q"`},
		{[]string{"run", "--url", "http://x", "--concurrency", "0"}, nil, "--concurrency"},
		{[]string{"run", "--url", "http://x", "--cells", "decode/8K"}, nil, "--cells"},
		{[]string{"run", "--url", "http://x", "--endpoint", "responses"}, nil, `endpoint "responses"`},
		{[]string{"run", "--url", "http://x", "--api-key-env", "NOPE"}, nil, "--api-key-env NOPE: the variable is not set"},
		{[]string{"run", "--url", "http://u:p@x"}, nil, "must not hold credentials"},
		{[]string{"run", "--config", badYAML}, nil, "max_tokenz"},
	}
	for _, c := range cases {
		_, _, err := runBench(t, c.env, c.args...)
		if ExitCode(err) != ExitUsage || !strings.Contains(err.Error(), c.want) {
			t.Errorf("speedmatrix %v: exit %d, %v; want usage error with %q", c.args, ExitCode(err), err, c.want)
		}
	}
}

// TestRunConfigErrorsNamePaths checks that a bad --config file is a usage error naming the
// file, line, column and dotted path of each bad setting, never a Go type (issue 8 item 10).
func TestRunConfigErrorsNamePaths(t *testing.T) {
	dir := t.TempDir()
	cases := []struct{ doc, want string }{
		{"engine:\n  name: vllm\n  nmae: x\n", `bad.yaml:3:3: engine: unknown key "nmae" (known: name, version, commit, quantization, backend, repository, source, build, serve, keep, cache_dir, precompiled_env, sandbox)`},
		{"hardware:\n  gpu_count: two\n", `bad.yaml:2:14: hardware.gpu_count: want a whole number, got "two"`},
		{"engine:\n  serve:\n    command: [a]\n    comand: [b]\n", `bad.yaml:4:5: engine.serve: unknown key "comand" (known: command, env, port, ready_timeout, stop_grace)`},
		{"trials: 0\nmatrix: huge\n", "bad.yaml:1:9: trials: 0: want at least 1\nbad.yaml:2:9: matrix: matrix \"huge\" unknown"},
	}
	for _, c := range cases {
		path := filepath.Join(dir, "bad.yaml")
		if err := os.WriteFile(path, []byte(c.doc), 0o644); err != nil {
			t.Fatal(err)
		}
		_, _, err := runBench(t, nil, "run", "--config", path)
		if ExitCode(err) != ExitUsage {
			t.Errorf("--config %q: exit %d (%v), want a usage error", c.doc, ExitCode(err), err)
			continue
		}
		msg := strings.ReplaceAll(err.Error(), path, "bad.yaml")
		if !strings.Contains(msg, c.want) {
			t.Errorf("--config %q:\n%s\nwant it to hold\n%s", c.doc, msg, c.want)
		}
		if strings.Contains(msg, "struct") || strings.Contains(msg, "cli.") || strings.Contains(msg, "config.") {
			t.Errorf("--config %q: the error names a Go type: %s", c.doc, msg)
		}
	}
}

// TestRunConfigFile checks that a YAML file sets what the flags set, and that flags win.
func TestRunConfigFile(t *testing.T) {
	srv := fakeServer(t, benchtest.Config{})
	dir := t.TempDir()
	out := filepath.Join(dir, "r.json")
	cfg := filepath.Join(dir, "bench.yaml")
	yaml := "url: " + srv.URL + "\ncontexts: [1K]\nconcurrency: \"1,4\"\nprefill_contexts: none\nduration: 300ms\n" +
		"max_tokens: 101\nwarmup: 0\noutput: " + out + "\nquiet: true\nengine:\n  name: vllm\n  commit: abc123\nhardware:\n  gpu: H100\n"
	if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, err := runBench(t, nil, "run", "--config", cfg, "--concurrency", "2")
	if err != nil {
		t.Fatalf("run: %v\n%s", err, stderr)
	}
	f, err := results.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if got := f.Run.Settings.Concurrency; !cmp.Equal(got, []int{2}) {
		t.Errorf("concurrency %v: the flag must override the file's [1 4]", got)
	}
	if len(f.Prefill) != 0 || f.Engine.Commit != "abc123" || f.Hardware.GPU != "H100" || f.Run.Settings.DurationSeconds != 0.3 {
		t.Errorf("file settings not applied: %d prefill cells, %+v, %+v", len(f.Prefill), f.Engine, f.Hardware)
	}
	if strings.Contains(stderr, "[1/") {
		t.Errorf("quiet: true in the file still printed progress:\n%s", stderr)
	}
}

// TestRunProgressInActions checks the GitHub Actions progress: one line per finished cell,
// inside ::group:: blocks.
func TestRunProgressInActions(t *testing.T) {
	srv := fakeServer(t, benchtest.Config{})
	out := filepath.Join(t.TempDir(), "r.json")
	// In matrix order, so that the lines come in a known order.
	_, stderr, err := runBench(t, map[string]string{"GITHUB_ACTIONS": "true"}, append(smallRun(srv.URL, out), "--order", "matrix")...)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, stderr)
	}
	var lines []string
	for _, l := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(l, "::") || strings.HasPrefix(l, "[") {
			lines = append(lines, l)
		}
	}
	want := []string{"::group::context 1K", "[1/3] prefill/1K", "[2/3] decode/1K/1", "[3/3] decode/1K/2", "::endgroup::"}
	if len(lines) != len(want) {
		t.Fatalf("progress lines %q, want %d", lines, len(want))
	}
	for i := range want {
		if !strings.HasPrefix(lines[i], want[i]) {
			t.Errorf("line %d %q, want it to start with %q", i, lines[i], want[i])
		}
	}
}

// runServerDies runs 1K and 2K at concurrency 1 against a server that dies 100 ms into the
// first 2K decode request, and returns the results path and the run's error.
func runServerDies(t *testing.T) (string, error) {
	t.Helper()
	var srv *benchtest.Server
	var once atomic.Bool
	srv = fakeServer(t, benchtest.Config{Fault: func(_, promptTokens, maxTokens int) benchtest.Fault {
		if promptTokens == 2048 && maxTokens > 1 && once.CompareAndSwap(false, true) {
			go func() { time.Sleep(100 * time.Millisecond); srv.Kill() }()
		}
		return benchtest.FaultNone
	}})
	out := filepath.Join(t.TempDir(), "r.json")
	args := []string{"run", "--url", srv.URL, "--contexts", "1K,2K", "--concurrency", "1", "--duration", "400ms",
		"--max-tokens", "1001", "--warmup", "0", "-o", out, "--quiet", "--order", "matrix"}
	_, _, err := runBench(t, nil, args...)
	return out, err
}

// TestRunServerDies checks that a dead server ends the run with exit 1 and a partial results
// file holding the cells measured before.
func TestRunServerDies(t *testing.T) {
	out, err := runServerDies(t)
	if ExitCode(err) != ExitError || !strings.Contains(err.Error(), "stopped answering") || !strings.Contains(err.Error(), "marked partial") {
		t.Fatalf("exit %d, %v; want exit 1 saying the server stopped and the results are partial", ExitCode(err), err)
	}
	f, rerr := results.ReadFile(out)
	if rerr != nil {
		t.Fatal(rerr)
	}
	if !f.Run.Partial || len(f.Decode) == 0 || f.Decode[0].Status != results.StatusValid {
		t.Errorf("partial %v with cells %+v, want partial with 1K×1 valid", f.Run.Partial, f.Decode)
	}
}
