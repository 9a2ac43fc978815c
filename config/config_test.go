package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

var ignorePositions = cmpopts.IgnoreUnexported(Config{})

func f64(f float64) *float64 { return &f }

// TestLoadExamples reads each example of testdata and checks every setting it gives.
func TestLoadExamples(t *testing.T) {
	issue := Default()
	issue.Matrix = "full"
	issue.APIKeyEnv = "VLLM_API_KEY"
	issue.Engine.Name = "vllm"
	issue.Engine.Source = "."
	issue.Engine.Build = Build{Mode: BuildAuto}
	issue.Engine.Serve = &Serve{
		Command: []string{"vllm", "serve", "nvidia/GLM-5.3-Flash-NVFP4", "--port", "${PORT}", "--api-key", "${VLLM_API_KEY}",
			"--max-model-len", "1048576", "--kv-cache-dtype", "fp8"},
		Env:          map[string]string{"VLLM_USE_FLASHINFER_MOE_FP4": "1"},
		ReadyTimeout: 60 * time.Minute,
		StopGrace:    30 * time.Second,
	}

	legacy := Default()
	legacy.Run = Run{
		URL: "http://127.0.0.1:8000", Model: "m", Endpoint: "chat", Matrix: "quick",
		Contexts: List{"8K", "16K"}, Concurrency: List{"1", "8"}, PrefillContexts: List{"none"},
		Duration: 30 * time.Second, MaxTokens: 64, Trials: 2, Warmup: 0, ReadyTimeout: 5 * time.Second,
		DrainTimeout: 10 * time.Second, HealthTimeout: 10 * time.Second, Output: "out.json", Quiet: true,
		LaunchCommand: "vllm serve m --api-key $KEY", Revision: "main",
		Engine: Engine{Name: "vllm", Version: "0.11.0", Commit: "abc123", Quantization: "NVFP4", Backend: "flashinfer",
			Repository: "https://github.com/vllm-project/vllm", Keep: 3},
		Hardware: Hardware{Type: "gpu", GPU: "H200 NVL", GPUCount: 1, VRAMGB: 141, Driver: "570.1", Clocks: "default", OS: "linux"},
		Sim:      Sim{Profile: "reference", Speedup: 5, Seed: 7, Noise: f64(0.02), Slowdown: "decode=1.10@ctx>=64K", Fault: "error=5%"},
		Paired:   Default().Paired,
	}

	custom := Default()
	custom.Engine = Engine{Source: "../vllm", Build: Build{Mode: BuildCommand, Command: "uv pip install -e . && echo built"},
		Keep: 2, CacheDir: "/var/cache/speedmatrix",
		Serve: &Serve{Command: []string{"speedmatrix", "sim", "--listen", "127.0.0.1:${PORT}", "--api-key", "${KEY}"},
			ReadyTimeout: 20 * time.Minute, StopGrace: 30 * time.Second}}
	custom.GPU = GPU{LockClocks: true}
	custom.GitHub = GitHub{CheckName: "speed", Comment: CommentRegression, Label: "benchmark", FailOnRegression: true,
		Undecided: UndecidedNeutral, MergeQueue: MergeQueueRun, NoBaseline: NoBaselineNeutral}
	custom.Compare = Compare{FDR: 0.05, FalseAlarm: 0.05, Thresholds: map[string]float64{"total_tok_per_s": 0.03, "ttft_ms": 0.05}}
	custom.Store.Branch, custom.Store.Dir = "bench-results", "runs"

	for _, tc := range []struct {
		file string
		want Config
	}{
		{"issue10.yaml", issue},
		{"legacy.yaml", legacy},
		{"custom-build.yaml", custom},
	} {
		t.Run(tc.file, func(t *testing.T) {
			got, err := Load(filepath.Join("testdata", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, got, ignorePositions); d != "" {
				t.Errorf("Load (-want +got):\n%s", d)
			}
		})
	}
}

// TestParseErrors checks that a wrong key or type is named by file, line, column and dotted
// path, never by a Go type, and that every error of a file is reported.
func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		name, doc, want string
	}{
		{"nested unknown key", "engine:\n  name: vllm\n  serve:\n    command: [a]\n    comand: [b]\n",
			`speedmatrix.yaml:5:5: engine.serve: unknown key "comand" (known: command, env, port, ready_timeout, stop_grace)`},
		{"top unknown key", "max_tokenz: 5\n",
			`speedmatrix.yaml:1:1: unknown key "max_tokenz" (known: url, api_key_env, model, endpoint, matrix, contexts, concurrency, prefill_contexts, cells, duration, max_tokens, trials, warmup, context_warmup, readiness_timeout, drain_timeout, health_timeout, output, quiet, launch_command, revision, budget, engine, hardware, sim, spec_decode, paired, gpu, github, compare, store, bisect)`},
		{"hardware unknown key", "hardware:\n  gpus: 2\n",
			`speedmatrix.yaml:2:3: hardware: unknown key "gpus" (known: type, gpu, gpu_count, vram_per_gpu_gb, driver, clocks, os)`},
		{"port not a number", "engine:\n  serve:\n    command: [a]\n    port: abc\n",
			`speedmatrix.yaml:4:11: engine.serve.port: want a whole number, got "abc"`},
		{"duration without unit", "duration: 30\n",
			`speedmatrix.yaml:1:11: duration: want a duration like 30s, 60m or 1h30m, got "30"`},
		{"command as a string", "engine:\n  serve:\n    command: vllm serve m\n",
			`speedmatrix.yaml:3:14: engine.serve.command: want a list of arguments like [vllm, serve, MODEL] (no shell splits a string), got "vllm serve m"`},
		{"build list", "engine:\n  build: [a]\n",
			`speedmatrix.yaml:2:10: engine.build: want auto, precompiled, full, docker, none or {command: "..."}, got a list`},
		{"build mapping unknown key", "engine:\n  build: {cmd: make}\n",
			`speedmatrix.yaml:2:11: engine.build: unknown key "cmd" (known: command)`},
		{"engine a string", "engine: vllm\n",
			`speedmatrix.yaml:1:9: engine: want a mapping (key: value), got "vllm"`},
		{"bool", "quiet: yes please\n",
			`speedmatrix.yaml:1:8: quiet: want true or false, got "yes please"`},
		{"env nested", "engine:\n  serve:\n    env: {A: [1]}\n",
			`speedmatrix.yaml:3:14: engine.serve.env.A: want a string, got a list`},
		{"threshold not a number", "compare:\n  thresholds: {ttft_ms: lots}\n",
			`speedmatrix.yaml:2:25: compare.thresholds.ttft_ms: want a number, got "lots"`},
		{"list of mappings", "contexts: [{a: b}]\n",
			`speedmatrix.yaml:1:12: contexts[0]: want a value like 8K, got a mapping`},
		{"empty list item", "contexts: [8K, \"\"]\n",
			`speedmatrix.yaml:1:16: contexts[1]: an empty item`},
		{"duplicate key", "trials: 1\ntrials: 2\n",
			`speedmatrix.yaml:2:1: trials: given twice (first at line 1)`},
		{"not a mapping", "- 1\n- 2\n",
			`speedmatrix.yaml:1:1: want a mapping of settings (key: value), got a list`},
		{"two documents", "trials: 1\n---\ntrials: 2\n",
			`speedmatrix.yaml:2:1: more than one YAML document (---); the configuration is one`},
		{"every error", "trials: x\nwarmup: y\n",
			"speedmatrix.yaml:1:9: trials: want a whole number, got \"x\"\nspeedmatrix.yaml:2:9: warmup: want a whole number, got \"y\""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := Default()
			err := Parse("speedmatrix.yaml", []byte(tc.doc), &c)
			if err == nil {
				t.Fatalf("Parse(%q) = nil, want %s", tc.doc, tc.want)
			}
			if got := err.Error(); got != tc.want {
				t.Errorf("Parse(%q) =\n%s\nwant\n%s", tc.doc, got, tc.want)
			}
			if strings.Contains(err.Error(), "config.") || strings.Contains(err.Error(), "struct") {
				t.Errorf("error names a Go type: %v", err)
			}
			var es Errors
			if !errors.As(err, &es) {
				t.Errorf("error is %T, want Errors", err)
			}
		})
	}
}

// TestParseKeepsDefaults checks that an empty file, a comment-only file and null values leave
// the defaults, and that a byte-order mark is accepted.
func TestParseKeepsDefaults(t *testing.T) {
	for _, doc := range []string{"", "# nothing\n", "duration:\nengine:\n", "\xef\xbb\xbftrials: 1\n"} {
		c := Default()
		if err := Parse("f", []byte(doc), &c); err != nil {
			t.Errorf("Parse(%q): %v", doc, err)
			continue
		}
		if d := cmp.Diff(Default(), c, ignorePositions); d != "" {
			t.Errorf("Parse(%q) changed the defaults (-want +got):\n%s", doc, d)
		}
	}
}

// TestValidate checks that each bad value is named by its path and line.
func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		name, doc string
		want      []string
	}{
		{"good", "matrix: quick\n", nil},
		{"run values", "matrix: huge\nendpoint: embed\nduration: -1s\nmax_tokens: 1\ntrials: 0\nwarmup: -1\ncontexts: [8K, 8Q]\nconcurrency: 1,0\ncells: decode/8K\nurl: localhost:8000\napi_key_env: MY-KEY\n", []string{
			`f:1:9: matrix: matrix "huge" unknown: want full or quick`,
			`f:2:11: endpoint: "embed": want completions or chat`,
			`f:3:11: duration: -1s: must be at least 100ms (30s measures a real server)`,
			`f:4:13: max_tokens: 1: want at least 2`,
			`f:5:9: trials: 0: want at least 1`,
			`f:6:9: warmup: -1: want 0 or more`,
			`f:7:16: contexts[1]: context "8Q" is not a length`,
			`f:8:14: concurrency[1]: "0": want a whole number of at least 1`,
			`f:9:8: cells[0]: cell "decode/8K"`,
			`f:10:6: url: "localhost:8000": want a base URL like http://localhost:8000`,
			`f:11:14: api_key_env: "MY-KEY": want the name of an environment variable (the key itself never goes in the file)`,
		}},
		{"window too short for the client", "duration: 50ms\n", []string{`f:1:11: duration: 50ms: must be at least 100ms (30s measures a real server)`}},
		{"credentials in url", "url: http://u:p@h:1\n", []string{`f:1:6: url: holds credentials`}},
		{"paired mode auto", "paired: {mode: auto}\n", nil},
		{"paired mode unknown", "paired:\n  mode: sometimes\n", []string{`f:2:9: paired.mode: "sometimes": want off, auto or always`}},
		{"engine", "engine:\n  build: fast\n  keep: 0\n  serve:\n    command: [\"${1X}\"]\n    env: {\"A-B\": x, C: \"${D\"}\n    port: 70000\n    ready_timeout: 0s\n    stop_grace: -1s\n", []string{
			`f:2:10: engine.build: "fast": want auto, precompiled, full, docker, none or {command: "..."}`,
			`f:2:10: engine.build: "fast" needs engine.source`,
			`f:3:9: engine.keep: 0: want at least 1`,
			`f:5:15: engine.serve.command[0]: ${1X}: not a variable name`,
			`f:6:18: engine.serve.env.A-B: not a variable name`,
			`f:6:24: engine.serve.env.C: "${D": ${ without a closing }`,
			`f:7:11: engine.serve.port: 70000: want a port from 1 to 65535, or 0 to pick a free one`,
			`f:8:20: engine.serve.ready_timeout: 0s: want a positive duration`,
			`f:9:17: engine.serve.stop_grace: -1s: want 0 or more`,
		}},
		{"serve without command", "engine:\n  serve: {port: 1}\n", []string{`f:2:10: engine.serve.command: want the server's launch command`}},
		{"bot policies", "github: {undecided: maybe, merge_queue: always}\n", []string{
			`f:1:21: github.undecided: "maybe": want failure, neutral or success`,
			`f:1:41: github.merge_queue: "always": want reuse or run`,
		}},
		{"precompiled env of a full build", "engine:\n  source: .\n  build: full\n  precompiled_env: /opt/vllm-wheel\n", []string{`f:4:20: engine.precompiled_env: set, but engine.build is "full"`}},
		{"precompiled env of an auto build", "engine:\n  source: .\n  precompiled_env: /opt/vllm-wheel\n", nil},
		{"build command empty", "engine:\n  source: .\n  build: {command: \" \"}\n", []string{`f:3:20: engine.build.command: want a command`}},
		{"later sections", "github: {comment: sometimes}\ncompare: {fdr: 1.5, false_alarm: -0.1, thresholds: {speed: 0.1, ttft_ms: 2}}\nsim: {speedup: -1, noise: 2}\n", []string{
			`f:1:19: github.comment: "sometimes": want always, regression or never`,
			`f:2:16: compare.fdr: 1.5: want a rate from 0 to below 1`,
			`f:2:34: compare.false_alarm: -0.1: want a rate from 0 to below 1`,
			`f:2:60: compare.thresholds.speed: unknown metric (known: total_tok_per_s, per_request_tok_per_s, ttft_ms, tbt_ms, prompt_tok_per_s, spec_acceptance_length)`,
			`f:2:74: compare.thresholds.ttft_ms: 2: want a fraction from 0 to below 1`,
			`f:3:16: sim.speedup: -1: want a number above 0`,
			`f:3:27: sim.noise: 2: want a coefficient of variation between 0 and 1`,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := Default()
			if err := Parse("f", []byte(tc.doc), &c); err != nil {
				t.Fatal(err)
			}
			err := c.Validate()
			var got []string
			if err != nil {
				got = strings.Split(err.Error(), "\n")
			}
			if len(got) != len(tc.want) {
				t.Fatalf("Validate = %d errors, want %d:\n%v", len(got), len(tc.want), err)
			}
			for i := range got {
				if !strings.HasPrefix(got[i], tc.want[i]) {
					t.Errorf("error %d = %q, want it to start %q", i, got[i], tc.want[i])
				}
			}
		})
	}
}

// TestLoadMissingFile checks that Load says which file it could not read.
func TestLoadMissingFile(t *testing.T) {
	_, err := Load(filepath.Join(t.TempDir(), "nope.yaml"))
	if !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), "nope.yaml") {
		t.Errorf("Load(missing) = %v, want a not-exist error naming the file", err)
	}
}

// TestAliasBomb checks that nested aliases cannot make the reader walk without end.
func TestAliasBomb(t *testing.T) {
	doc := "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
	prev := "a"
	for _, n := range []string{"b", "c", "d", "e", "f", "g", "h"} {
		doc += n + ": &" + n + " [" + strings.Repeat("*"+prev+", ", 9) + "*" + prev + "]\n"
		prev = n
	}
	doc = "engine:\n  serve:\n    env:\n" + indent(doc, "      ")
	c := Default()
	err := Parse("f", []byte(doc), &c)
	if err == nil {
		t.Fatal("Parse of an alias bomb = nil, want an error")
	}
}

func indent(s, by string) string {
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	return by + strings.Join(lines, "\n"+by) + "\n"
}

func TestBisectSection(t *testing.T) {
	c := Default()
	if c.Bisect.Runners != 2 {
		t.Errorf("default bisect.runners %d, want 2 (one GPU job a round)", c.Bisect.Runners)
	}
	if err := Parse("speedmatrix.yaml", []byte("bisect: {auto: true, steps: 6, budget: 2h, runners: 4}\n"), &c); err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil || !c.Bisect.Auto || c.Bisect.Steps != 6 || c.Bisect.Budget != 2*time.Hour || c.Bisect.Runners != 4 {
		t.Errorf("bisect %+v, %v", c.Bisect, err)
	}
	for doc, key := range map[string]string{
		"bisect: {steps: 0}\n":     "bisect.steps",
		"bisect: {budget: -1h}\n":  "bisect.budget",
		"bisect: {runners: 1}\n":   "bisect.runners",
		"bisect: {runners: 258}\n": "bisect.runners",
	} {
		c := Default()
		if err := Parse("speedmatrix.yaml", []byte(doc), &c); err != nil {
			t.Fatal(err)
		}
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), key) {
			t.Errorf("%q: error %v, want one naming %s", doc, err, key)
		}
	}
}
