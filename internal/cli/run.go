package cli

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"go.yaml.in/yaml/v3"

	"github.com/speedmatrix/speedmatrix/bench"
	"github.com/speedmatrix/speedmatrix/bench/server"
	"github.com/speedmatrix/speedmatrix/bench/stream"
	"github.com/speedmatrix/speedmatrix/bench/telemetry"
	"github.com/speedmatrix/speedmatrix/results"
)

// runOptions are the settings of `speedmatrix run`, from flags or a YAML file (same names,
// with underscores in YAML).
type runOptions struct {
	URL             string        `yaml:"url"`
	APIKeyEnv       string        `yaml:"api_key_env"`
	Model           string        `yaml:"model"`
	Endpoint        string        `yaml:"endpoint"`
	Matrix          string        `yaml:"matrix"`
	Contexts        listValue     `yaml:"contexts"`
	Concurrency     listValue     `yaml:"concurrency"`
	PrefillContexts listValue     `yaml:"prefill_contexts"`
	Cells           listValue     `yaml:"cells"`
	Duration        time.Duration `yaml:"duration"`
	MaxTokens       int           `yaml:"max_tokens"`
	Trials          int           `yaml:"trials"`
	Warmup          int           `yaml:"warmup"`
	ReadyTimeout    time.Duration `yaml:"readiness_timeout"`
	DrainTimeout    time.Duration `yaml:"drain_timeout"`
	Output          string        `yaml:"output"`
	Quiet           bool          `yaml:"quiet"`
	LaunchCommand   string        `yaml:"launch_command"`
	Revision        string        `yaml:"revision"`
	Engine          struct {
		Name         string `yaml:"name"`
		Version      string `yaml:"version"`
		Commit       string `yaml:"commit"`
		Quantization string `yaml:"quantization"`
		Backend      string `yaml:"backend"`
		Repository   string `yaml:"repository"`
		Build        string `yaml:"build"`
	} `yaml:"engine"`
	Hardware struct {
		Type     string  `yaml:"type"`
		GPU      string  `yaml:"gpu"`
		GPUCount int     `yaml:"gpu_count"`
		VRAMGB   float64 `yaml:"vram_per_gpu_gb"`
		Driver   string  `yaml:"driver"`
		Clocks   string  `yaml:"clocks"`
		OS       string  `yaml:"os"`
	} `yaml:"hardware"`
	// Sim configures the built-in simulator measured when there is no URL (runsim.go).
	Sim simRunOptions `yaml:"sim"`
}

// listValue is a list given as "a,b,c" (a flag, or a YAML string) or as a YAML sequence.
type listValue []string

// UnmarshalYAML reads a sequence or a comma-separated string.
func (l *listValue) UnmarshalYAML(n *yaml.Node) error {
	switch n.Kind {
	case yaml.ScalarNode:
		*l = splitList(n.Value)
		return nil
	case yaml.SequenceNode:
		var out []string
		for _, c := range n.Content {
			if c.Kind != yaml.ScalarNode {
				return fmt.Errorf("line %d: want a list of values", c.Line)
			}
			out = append(out, strings.TrimSpace(c.Value))
		}
		*l = out
		return nil
	}
	return fmt.Errorf("line %d: want a list like [8K, 16K] or \"8K,16K\"", n.Line)
}

// splitList splits "a, b,c" into its non-empty items.
func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// defaultRunOptions returns the defaults of `speedmatrix run`.
func defaultRunOptions() runOptions {
	return runOptions{
		Endpoint:     bench.EndpointCompletions,
		Matrix:       bench.MatrixFull,
		Duration:     30 * time.Second,
		MaxTokens:    4096,
		Trials:       1,
		Warmup:       2,
		ReadyTimeout: bench.DefaultTimeouts().Readiness,
		DrainTimeout: bench.DefaultTimeouts().Drain,
		Output:       "results.json",
	}
}

// readRunConfig reads a YAML settings file strictly: an unknown key is an error naming it.
func readRunConfig(path string, o *runOptions) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(o); err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("%s: %w (the keys are the flag names with underscores, e.g. max_tokens)", path, err)
	}
	return nil
}

// newRunCmd builds `speedmatrix run`.
func newRunCmd(env *Env) *cobra.Command {
	o := defaultRunOptions()
	var configPath string
	var contexts, concurrency, prefill, cells string
	cmd := &cobra.Command{
		Use:   "run [--url URL] [flags]",
		Short: "Measure the speed matrix of an OpenAI-compatible server and write a results file",
		Long: `run measures the speed test matrix of a live OpenAI-compatible server (vLLM first) as
the README's "What the numbers mean" defines it, and writes everything it did to a results file.

For each context it sends one scout request (max_tokens 1) whose time to first token is the
prefill measurement and which warms the prefix cache; then, for each concurrency C, C streams
are kept in flight for --duration once the server runs all C (readiness), and only the tokens
that arrive inside that window count. Contexts are trimmed to fit max_model_len (1024K becomes
1019K on a 1M server); cells whose C·(context + max_tokens) exceeds the KV cache are marked
over capacity without a request. A failed stream marks its cell error and the run goes on; a
dead server or Ctrl-C ends the run with the cells measured so far written and marked partial.

Matrices: full is the reference matrix (decode at 8K…1024K × 1…128, prefill at the same
contexts and at 1024K untrimmed); quick is a smoke matrix (decode at 8K and 32K × 1, 8, 32;
prefill at 8K and 32K). --contexts, --concurrency and --prefill-contexts replace the matrix's
lists; --cells measures only the cells named (e.g. those compare found inconclusive).

Without --url, run starts the built-in simulator in-process on a loopback port
and measures it over HTTP like any server: --sim-profile (default the profile fitted to the
reference report), --sim-speedup (default 10; rates scale by it), --sim-seed, --sim-noise,
--sim-slowdown and --sim-fault (see speedmatrix sim --help).

The API key is read from the environment variable named by --api-key-env, never from a flag,
and is never printed or written. --config reads the same settings from YAML (keys are the flag
names with underscores: max_tokens, prefill_contexts, engine: {name, version, ...},
hardware: {gpu, gpu_count, vram_per_gpu_gb, ...}); flags given on the command line win.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			final := defaultRunOptions()
			if configPath != "" {
				if err := readRunConfig(configPath, &final); err != nil {
					return usagef("--config %v", err)
				}
			}
			overrideFromFlags(cmd.Flags(), &final, &o, contexts, concurrency, prefill, cells)
			return runCommand(cmd.Context(), env, final)
		},
	}
	f := cmd.Flags()
	f.StringVar(&configPath, "config", "", "read the settings from this YAML file; flags given on the command line override it")
	f.StringVar(&o.URL, "url", "", "base URL of the OpenAI-compatible server, e.g. http://localhost:8000")
	f.StringVar(&o.APIKeyEnv, "api-key-env", "", "name of the environment variable that holds the server's API key (the key itself is never a flag)")
	f.StringVar(&o.Model, "model", "", "served model to measure (default: the first of /v1/models)")
	f.StringVar(&o.Endpoint, "endpoint", o.Endpoint, "API to stream from: completions (/v1/completions) or chat (/v1/chat/completions)")
	f.StringVar(&o.Matrix, "matrix", o.Matrix, "matrix to measure: full (the reference matrix) or quick (a small smoke matrix)")
	f.StringVar(&contexts, "contexts", "", "decode contexts, e.g. 8K,32K,1024K (replaces the matrix's)")
	f.StringVar(&concurrency, "concurrency", "", "concurrency levels, e.g. 1,8,32 (replaces the matrix's)")
	f.StringVar(&prefill, "prefill-contexts", "", "prefill contexts measured at full length, e.g. 8K,16K,1019K, or none (default: the decode contexts' scouts)")
	f.StringVar(&cells, "cells", "", "measure only these cells, e.g. decode/8K/32,prefill/16K (replaces the matrix)")
	f.DurationVar(&o.Duration, "duration", o.Duration, "length of each decode measurement window")
	f.IntVar(&o.MaxTokens, "max-tokens", o.MaxTokens, "max_tokens of every decode request")
	f.IntVar(&o.Trials, "trials", o.Trials, "measure each cell this many times (each trial kept separately)")
	f.IntVar(&o.Warmup, "warmup", o.Warmup, "hidden warm-up requests before the first cell")
	f.DurationVar(&o.ReadyTimeout, "readiness-timeout", o.ReadyTimeout, "how long a window waits for the server to run all C requests before the cell is marked queued and measured anyway")
	f.DurationVar(&o.DrainTimeout, "drain-timeout", o.DrainTimeout, "how long to wait between cells for the server to finish every request")
	f.StringVarP(&o.Output, "output", "o", o.Output, "results file to write (written after every cell, so an interrupted run keeps what it measured)")
	f.BoolVar(&o.Quiet, "quiet", false, "show no progress (no bar on a terminal, no per-cell lines)")
	f.StringVar(&o.LaunchCommand, "launch-command", "", "the server's launch command, recorded with secrets (--api-key X, TOKEN=…) replaced by <redacted>")
	f.StringVar(&o.Revision, "revision", "", "model revision, recorded")
	f.StringVar(&o.Engine.Name, "engine", "", "engine name, recorded (e.g. vllm)")
	f.StringVar(&o.Engine.Version, "engine-version", "", "engine version, recorded (default: the server's /version)")
	f.StringVar(&o.Engine.Commit, "engine-commit", "", "engine commit, recorded")
	f.StringVar(&o.Engine.Quantization, "quantization", "", "quantization, recorded (e.g. NVFP4)")
	f.StringVar(&o.Hardware.GPU, "gpu", "", "GPU model, recorded (e.g. H200 NVL)")
	f.IntVar(&o.Hardware.GPUCount, "gpu-count", 0, "number of GPUs, recorded")
	f.Float64Var(&o.Hardware.VRAMGB, "vram-gb", 0, "memory per GPU in GB, recorded")
	f.StringVar(&o.Hardware.Driver, "driver", "", "GPU driver version, recorded")
	addSimRunFlags(f, &o.Sim)
	return cmd
}

// overrideFromFlags copies into final every flag given on the command line.
func overrideFromFlags(fs *pflag.FlagSet, final, o *runOptions, contexts, concurrency, prefill, cells string) {
	set := func(name string, apply func()) {
		if fs.Changed(name) {
			apply()
		}
	}
	set("url", func() { final.URL = o.URL })
	set("api-key-env", func() { final.APIKeyEnv = o.APIKeyEnv })
	set("model", func() { final.Model = o.Model })
	set("endpoint", func() { final.Endpoint = o.Endpoint })
	set("matrix", func() { final.Matrix = o.Matrix })
	set("contexts", func() { final.Contexts = splitList(contexts) })
	set("concurrency", func() { final.Concurrency = splitList(concurrency) })
	set("prefill-contexts", func() { final.PrefillContexts = splitList(prefill) })
	set("cells", func() { final.Cells = splitList(cells) })
	set("duration", func() { final.Duration = o.Duration })
	set("max-tokens", func() { final.MaxTokens = o.MaxTokens })
	set("trials", func() { final.Trials = o.Trials })
	set("warmup", func() { final.Warmup = o.Warmup })
	set("readiness-timeout", func() { final.ReadyTimeout = o.ReadyTimeout })
	set("drain-timeout", func() { final.DrainTimeout = o.DrainTimeout })
	set("output", func() { final.Output = o.Output })
	set("quiet", func() { final.Quiet = o.Quiet })
	set("launch-command", func() { final.LaunchCommand = o.LaunchCommand })
	set("revision", func() { final.Revision = o.Revision })
	set("engine", func() { final.Engine.Name = o.Engine.Name })
	set("engine-version", func() { final.Engine.Version = o.Engine.Version })
	set("engine-commit", func() { final.Engine.Commit = o.Engine.Commit })
	set("quantization", func() { final.Engine.Quantization = o.Engine.Quantization })
	set("gpu", func() { final.Hardware.GPU = o.Hardware.GPU })
	set("gpu-count", func() { final.Hardware.GPUCount = o.Hardware.GPUCount })
	set("vram-gb", func() { final.Hardware.VRAMGB = o.Hardware.VRAMGB })
	set("driver", func() { final.Hardware.Driver = o.Hardware.Driver })
	overrideSimRunFlags(fs, &final.Sim, &o.Sim)
}

// parseContexts reads a list of context lengths; "none" is the empty list.
func parseContexts(what string, items []string) ([]int, error) {
	if len(items) == 1 && strings.EqualFold(items[0], "none") {
		return []int{}, nil
	}
	var out []int
	for _, s := range items {
		n, err := results.ParseContext(s)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		out = append(out, n)
	}
	return out, nil
}

// benchConfig turns the options into the runner's configuration; errors are usage errors.
func benchConfig(o runOptions, baseURL, runID string) (bench.Config, error) {
	cfg := bench.DefaultConfig()
	m, err := bench.MatrixByName(o.Matrix)
	if err != nil {
		return cfg, usagef("--matrix: %v", err)
	}
	cfg.MatrixName = o.Matrix
	if o.Contexts != nil {
		if m.Contexts, err = parseContexts("--contexts", o.Contexts); err != nil {
			return cfg, usagef("%v", err)
		}
	}
	if o.Concurrency != nil {
		m.Concurrency = nil
		for _, s := range o.Concurrency {
			n, err := strconv.Atoi(s)
			if err != nil || n < 1 {
				return cfg, usagef("--concurrency %q: want positive whole numbers, e.g. 1,8,32", s)
			}
			m.Concurrency = append(m.Concurrency, n)
		}
	}
	if o.PrefillContexts != nil {
		if m.PrefillContexts, err = parseContexts("--prefill-contexts", o.PrefillContexts); err != nil {
			return cfg, usagef("%v", err)
		}
		cfg.PrefillFromDecode = false
	}
	if o.Contexts != nil || o.Concurrency != nil || o.PrefillContexts != nil {
		cfg.MatrixName = "custom"
	}
	for _, s := range o.Cells {
		id, err := results.ParseCellID(s)
		if err != nil {
			return cfg, usagef("--cells: %v", err)
		}
		cfg.Cells = append(cfg.Cells, id)
	}
	if len(cfg.Cells) > 0 {
		cfg.MatrixName = "cells"
	}
	cfg.Matrix = m
	cfg.URL = baseURL
	cfg.Model = o.Model
	cfg.Endpoint = o.Endpoint
	cfg.Duration = o.Duration
	cfg.MaxTokens = o.MaxTokens
	cfg.Trials = o.Trials
	cfg.Warmup = o.Warmup
	cfg.Timeouts.Readiness = o.ReadyTimeout
	cfg.Timeouts.Drain = o.DrainTimeout
	cfg.Timeouts = o.Sim.scale(cfg.Timeouts) // model-time sampling against the simulator (runsim.go)
	cfg.RunID = runID
	cfg.LaunchCommand = RedactCommand(o.LaunchCommand)
	cfg.Revision = o.Revision
	cfg.ToolVersion = Version()
	cfg.Engine = results.Engine{Name: o.Engine.Name, Version: o.Engine.Version, Commit: o.Engine.Commit,
		Quantization: o.Engine.Quantization, Backend: o.Engine.Backend, Repository: o.Engine.Repository, Build: o.Engine.Build}
	cfg.Hardware = results.Hardware{Type: o.Hardware.Type, GPU: o.Hardware.GPU, GPUCount: o.Hardware.GPUCount,
		VRAMPerGPUGB: o.Hardware.VRAMGB, Driver: o.Hardware.Driver, Clocks: o.Hardware.Clocks, OS: o.Hardware.OS}
	if err := cfg.Check(); err != nil {
		return cfg, usagef("%v", err)
	}
	return cfg, nil
}

// newRunID returns a run id unique across runs: the time and random bits.
func newRunID(now time.Time) string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return now.UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b[:])
}

// runCommand checks the options and measures the server at o.URL, or the built-in simulator
// when there is none.
func runCommand(ctx context.Context, env *Env, o runOptions) error {
	if o.URL == "" {
		return runSimulated(ctx, env, o)
	}
	return measureURL(ctx, env, o, o.URL, nil)
}

// measureURL measures the server at baseURL with the options o and writes the results file.
// finish, when set, amends the results before they are written (e.g. the simulator's settings).
func measureURL(ctx context.Context, env *Env, o runOptions, baseURL string, finish func(*results.File)) error {
	var key string
	if o.APIKeyEnv != "" {
		key = env.Getenv(o.APIKeyEnv)
		if key == "" {
			return usagef("--api-key-env %s: the variable is not set or empty; export the key in it", o.APIKeyEnv)
		}
	}
	if strings.Contains(baseURL, "@") {
		return usagef("--url must not hold credentials; put the key in a variable and name it with --api-key-env")
	}
	runID := newRunID(time.Now())
	cfg, err := benchConfig(o, baseURL, runID)
	if err != nil {
		return err
	}
	sc := stream.New(baseURL, stream.WithAPIKey(key))
	defer sc.Close()
	info := server.New(baseURL, server.WithAPIKey(key))
	streamer := bench.StreamClient{C: sc}
	r := &bench.Runner{
		Stream:   streamer,
		Server:   bench.ServerClient{C: info},
		Prompts:  bench.NewPrompter(info, streamer, runID, o.Endpoint),
		Metrics:  bench.TelemetryScraper{S: &telemetry.Scraper{URL: telemetry.MetricsURL(baseURL), APIKey: key, Log: env.Log}},
		Progress: pickProgress(env, o.Quiet),
		Log:      env.Log,
	}
	write := func(f *results.File) error {
		if finish != nil {
			finish(f)
		}
		return results.WriteFile(o.Output, f)
	}
	r.Checkpoint = write
	f, runErr := r.Run(ctx, cfg)
	if f == nil {
		return runErr
	}
	if err := write(f); err != nil {
		return fmt.Errorf("write %s: %w", o.Output, err)
	}
	logBudget(env.Log, f) // runprogress.go
	measured, failed := 0, 0
	for _, c := range f.Decode {
		if c.Status.Measured() {
			measured++
		} else if c.Status == results.StatusError {
			failed++
		}
	}
	if runErr != nil {
		return fmt.Errorf("%w; the %d cells measured so far are in %s, marked partial", runErr, measured, o.Output)
	}
	env.Log.Info("run complete", "results", o.Output, "decode_cells_measured", measured, "decode_cells_failed", failed, "prefill_cells", len(f.Prefill))
	return nil
}

// isSecretName reports whether a flag or variable name names a secret: one of its words
// (split at - and _) is key, token, secret, password, passwd or credentials. So --api-key and
// HF_TOKEN are secrets, --max-num-batched-tokens and --tokenizer are not.
func isSecretName(name string) bool {
	words := strings.FieldsFunc(strings.ToLower(name), func(r rune) bool { return r == '-' || r == '_' })
	for _, w := range words {
		switch w {
		case "key", "apikey", "token", "secret", "password", "passwd", "credentials":
			return true
		}
	}
	return false
}

// RedactCommand returns a launch command with secrets replaced by <redacted>: the value of any
// flag whose name holds key, token, secret or password (--api-key X, --hf-token=X) and of any
// such environment assignment (HF_TOKEN=X). Words are rejoined with single spaces.
func RedactCommand(cmd string) string {
	if strings.TrimSpace(cmd) == "" {
		return ""
	}
	words := strings.Fields(cmd)
	for i := 0; i < len(words); i++ {
		w := words[i]
		name, _, hasEq := strings.Cut(w, "=")
		switch {
		case strings.HasPrefix(w, "-") && hasEq && isSecretName(name):
			words[i] = name + "=<redacted>"
		case strings.HasPrefix(w, "-") && isSecretName(name) && i+1 < len(words) && !strings.HasPrefix(words[i+1], "-"):
			words[i+1] = "<redacted>"
			i++
		case !strings.HasPrefix(w, "-") && hasEq && isSecretName(name) && isEnvName(name):
			words[i] = name + "=<redacted>"
		}
	}
	return strings.Join(words, " ")
}

// isEnvName reports whether s looks like an environment variable name.
func isEnvName(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if !(r == '_' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}
