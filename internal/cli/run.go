package cli

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/speedmatrix/speedmatrix/bench"
	"github.com/speedmatrix/speedmatrix/config"
	"github.com/speedmatrix/speedmatrix/internal/redact"
	"github.com/speedmatrix/speedmatrix/internal/textout"
	"github.com/speedmatrix/speedmatrix/results"
	"github.com/speedmatrix/speedmatrix/store"
)

// runOptions are the settings of `speedmatrix run`: the configuration file's (config.Config,
// whose keys are the flag names with underscores) and the state of a run in progress.
type runOptions struct {
	config.Config
	// simSpeedup is set while the in-process simulator runs: the client then samples in model
	// time (runsim.go).
	simSpeedup float64
	// timeScale is the built-in simulator's speedup when it is the server measured (in process,
	// or at --url): the progress lines show its numbers in the profile's time, as reports do.
	timeScale float64
	// adaptive holds --baseline, --history, --compare-out and the build and load times of the
	// job (run_adaptive.go).
	adaptive adaptiveOptions
	// shardSpec is --shard K/N, planID --plan; shard the rows they resolve to (run_shard.go).
	shardSpec, planID string
	shard             *bench.Shard
	// finish, when set, amends a served run's results before each write (spec_decode: pinned
	// records its acceptance pass, runengine_pinned.go).
	finish func(*results.File)
	// serverVersion, when set, is what the server's /version said ("" for none), read before
	// measuring (simulatorAtURL): the runner does not ask again (runner.go).
	serverVersion *string
	// servedArgv is the launch command of the server engine.serve started (runengine_serve.go).
	servedArgv []string
	// order is --order (bench.Config.Order; "" the default, shuffled); remeasures is
	// --remeasures (bench.Config.Remeasures), nil for the default.
	order      string
	remeasures *int
}

// defaultRunOptions returns the defaults of `speedmatrix run`.
func defaultRunOptions() runOptions {
	return runOptions{Config: config.Default()}
}

// readRunConfig reads a speedmatrix.yaml strictly (config.Load): an unknown key or a bad value
// is an error naming its line, column and dotted path.
func readRunConfig(path string, o *runOptions) error {
	c, err := config.Load(path)
	if err != nil {
		return err
	}
	o.Config = c
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
docs/method.md ("What the numbers mean") defines it, and writes everything it did to a results file.

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
reference report), --sim-speedup (default 20, as sim and demo; rates scale by it), --sim-seed, --sim-noise,
--sim-slowdown and --sim-fault (see speedmatrix sim --help).

--paired measures a base (--base-url) and a head (--url) alternately on one machine, in blocks
of the whole matrix (or --cells) once, ABBA order, --blocks per side; it writes the head's results
to -o and the base's to --base-output, every trial marked with its block and pair, and compare
then uses the pairs' head/base ratios, in which a drift of the machine cancels. Without either
URL it measures two built-in simulators with the same --sim-* settings.

The API key is read from the environment variable named by --api-key-env, never from a flag,
and is never printed or written. --config reads the same settings from speedmatrix.yaml (keys
are the flag names with underscores: max_tokens, prefill_contexts, engine: {name, version, ...},
hardware: {gpu, gpu_count, vram_per_gpu_gb, ...}; every key is in
docs/configuration.md); flags given on the command line win. An unknown key or a bad value is an error naming
its line, column and dotted path.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			final := defaultRunOptions()
			if configPath != "" {
				if err := readRunConfig(configPath, &final); err != nil {
					return usagef("--config: %v", err)
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
	o.ContextWarmup = new(bool)
	f.BoolVar(o.ContextWarmup, "context-warmup", true, "send one hidden request of each context's length (its own prompt) before its scout, so that first-request costs stay out of the prefill measurement")
	f.DurationVar(&o.ReadyTimeout, "readiness-timeout", o.ReadyTimeout, "how long a window waits for the server to run all C requests before the cell is marked queued and measured anyway")
	f.DurationVar(&o.DrainTimeout, "drain-timeout", o.DrainTimeout, "how long to wait between cells for the server to finish every request")
	f.DurationVar(&o.HealthTimeout, "health-timeout", o.HealthTimeout, "how long one GET /health may take (tried 3 times) before the server counts as not answering")
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
	f.StringVar(&o.order, "order", "", "measuring order: shuffled (contexts, and each context's decode cells, in a random order drawn per run, so that a drift cannot line up with a row or a column; the default) or matrix (ascending)")
	o.remeasures = new(int)
	f.IntVar(o.remeasures, "remeasures", bench.DefaultRemeasures, "decode windows whose bins show a stall or two levels that the run measures again (at most 2 a cell; 0: none, the window is then decided from its undisturbed bins or kept and marked)")
	addSimRunFlags(f, &o.Sim)
	addAdaptiveFlags(f, &o)      // run_adaptive.go
	addShardFlags(f, &o)         // run_shard.go
	addPairedFlags(f, &o.Paired) // run_paired.go
	return cmd
}

// overrideFromFlags copies into final every flag given on the command line.
func overrideFromFlags(fs *pflag.FlagSet, final, o *runOptions, contexts, concurrency, prefill, cells string) {
	set := ifChanged(fs) // runflags.go
	set("url", func() { final.URL = o.URL })
	set("api-key-env", func() { final.APIKeyEnv = o.APIKeyEnv })
	set("model", func() { final.Model = o.Model })
	set("endpoint", func() { final.Endpoint = o.Endpoint })
	set("matrix", func() { final.Matrix = o.Matrix })
	set("contexts", func() { final.Contexts = config.SplitList(contexts) })
	set("concurrency", func() { final.Concurrency = config.SplitList(concurrency) })
	set("prefill-contexts", func() { final.PrefillContexts = config.SplitList(prefill) })
	set("cells", func() { final.Cells = config.SplitList(cells) })
	set("duration", func() { final.Duration = o.Duration })
	set("max-tokens", func() { final.MaxTokens = o.MaxTokens })
	set("trials", func() { final.Trials = o.Trials })
	set("warmup", func() { final.Warmup = o.Warmup })
	set("context-warmup", func() { v := *o.ContextWarmup; final.ContextWarmup = &v })
	set("readiness-timeout", func() { final.ReadyTimeout = o.ReadyTimeout })
	set("drain-timeout", func() { final.DrainTimeout = o.DrainTimeout })
	set("health-timeout", func() { final.HealthTimeout = o.HealthTimeout })
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
	set("order", func() { final.order = o.order })
	set("remeasures", func() { v := *o.remeasures; final.remeasures = &v })
	overrideSimRunFlags(fs, &final.Sim, &o.Sim)
	overrideAdaptiveFlags(fs, final, o)
	overrideShardFlags(fs, final, o)
	overridePairedFlags(fs, &final.Paired, &o.Paired)
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
	for _, l := range []struct {
		name, hint string
		v          config.List
	}{
		{"contexts", "e.g. 8K,32K, or leave it out for the matrix's", o.Contexts},
		{"concurrency", "e.g. 1,8,32, or leave it out for the matrix's", o.Concurrency},
		{"prefill-contexts", "e.g. 8K,16K, none for no prefill cells, or leave it out for the decode contexts' scouts", o.PrefillContexts},
		{"cells", "e.g. decode/8K/32,prefill/16K, or leave it out for the whole matrix", o.Cells},
	} {
		if l.v != nil && len(l.v) == 0 {
			return cfg, usagef("--%s is empty (or %s: [] in the configuration): give a list, %s", l.name, strings.ReplaceAll(l.name, "-", "_"), l.hint)
		}
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
	if o.ContextWarmup != nil {
		cfg.ContextWarmup = *o.ContextWarmup
	}
	if o.order != "" {
		cfg.Order = o.order
	}
	if o.remeasures != nil {
		cfg.Remeasures = *o.remeasures
	}
	cfg.Timeouts.Readiness = o.ReadyTimeout
	cfg.Timeouts.Drain = o.DrainTimeout
	cfg.Timeouts.Health = o.HealthTimeout
	cfg.Timeouts = o.scaleSim(cfg.Timeouts) // model-time sampling against the simulator (runsim.go)
	cfg.RunID = runID
	cfg.TimeScale = o.timeScale
	cfg.Shard = o.shard
	cfg.LaunchCommand = redact.Command(o.LaunchCommand)
	cfg.Revision = o.Revision
	cfg.ToolVersion = Version()
	cfg.Engine = results.Engine{Name: o.Engine.Name, Version: o.Engine.Version, Commit: o.Engine.Commit,
		Quantization: o.Engine.Quantization, Backend: o.Engine.Backend, Repository: o.Engine.Repository, Build: o.Engine.Build.String()}
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

// runCommand checks the options and measures the server at o.URL, else the server engine.serve
// starts, else the built-in simulator.
func runCommand(ctx context.Context, env *Env, o runOptions) error {
	if err := checkAdaptive(o); err != nil {
		return err
	}
	o.Engine.Commit = resolveEngineCommit(ctx, env, o.Engine.Commit, o.Engine.Source)
	if done, err := shardStep(ctx, env, &o); done || err != nil { // plan, run --shard (run_shard.go)
		return err
	}
	if o.SpecDecode.Pinned() {
		return runEnginePinned(ctx, env, o) // acceptance pass, then the pinned matrix (runengine_pinned.go)
	}
	if o.Paired.Enabled {
		return runPaired(ctx, env, o) // base and head alternately in blocks (run_paired.go)
	}
	if o.URL == "" && o.Engine.Serve != nil {
		return runEngine(ctx, env, o) // build, serve, measure and stop (runengine.go)
	}
	if o.URL == "" {
		return runSimulated(ctx, env, o)
	}
	// A `speedmatrix sim` says its speedup (runsim.go); a server on this machine runs on its GPUs (runengine.go).
	sim := simulatorAtURL(ctx, env, &o)
	return measureURL(ctx, env, o, o.URL, chainFinish(sim, localHardware(ctx, o.URL)))
}

// measureURL measures the server at baseURL with the options o and writes the results file.
// finish, when set, amends the results before they are written (e.g. the simulator's settings).
func measureURL(ctx context.Context, env *Env, o runOptions, baseURL string, finish func(*results.File)) error {
	key, err := apiKey(env, o) // runner.go
	if err != nil {
		return err
	}
	if strings.Contains(baseURL, "@") {
		return usagef("--url must not hold credentials; put the key in a variable and name it with --api-key-env")
	}
	if err := checkURL(baseURL); err != nil {
		return err
	}
	runID := newRunID(time.Now())
	cfg, r, closeRunner, err := newRunner(env, o, baseURL, key, runID) // runner.go
	if err != nil {
		return err
	}
	defer closeRunner()
	if err := prepareOutput(o.Output, env.Log); err != nil {
		return err
	}
	out := &output{path: o.Output, fallback: fallbackPath(runID), log: env.Log}
	write := func(f *results.File) error {
		if finish != nil {
			finish(f)
		}
		recordGPUTime(f, o) // run_adaptive.go
		return out.write(f)
	}
	r.Checkpoint = write
	if st, err := os.Stat(o.Output); err == nil && !st.Mode().IsRegular() {
		// A FIFO or /dev/stdout takes one document, the last: no checkpoints into it.
		r.Checkpoint = func(*results.File) error { return nil }
	}
	f, runErr := r.Run(ctx, cfg)
	if f == nil {
		return runErr
	}
	if err := write(f); err != nil {
		return err
	}
	logBudget(env.Log, f) // runprogress.go
	n := countCells(f)
	where := out.saved
	if out.saved != o.Output {
		where = fmt.Sprintf("%s (could not write %s: %v)", out.saved, o.Output, out.err)
	}
	switch {
	case out.invalid != nil:
		return fmt.Errorf("the results are in %s, but they fail the results file's own check, so compare and the store refuse them: %w; this is a bug of speedmatrix's measurement (please report it with the file): remove or fix the cells named to use the rest", where, errors.Join(runErr, out.invalid))
	case runErr != nil:
		pre, dec := f.Done() // as compare counts a partial head's cells
		return fmt.Errorf("%w; the %s measured so far (%d prefill, %d decode) are in %s, marked partial",
			runErr, textout.Plural(pre+dec, "cell", "cells"), pre, dec, where)
	case n.decode == 0 && n.decodeFailed > 0:
		return fmt.Errorf("every decode cell failed (%d of %d; the first: %s); the results are in %s", n.decodeFailed, len(f.Decode), n.firstError, where)
	case n.prefill+n.decode == 0 && n.prefillFailed > 0:
		return fmt.Errorf("every prefill cell failed (the first: %s); the results are in %s", n.firstError, where)
	case out.saved != o.Output:
		return fmt.Errorf("could not write %s (%v); the results are in %s instead", o.Output, out.err, out.saved)
	}
	env.Log.Info("run complete", "results", out.saved, "decode_cells_measured", n.decode, "decode_cells_failed", n.decodeFailed, "prefill_cells", len(f.Prefill))
	if o.adaptive.baseline != "" {
		return measureAdaptive(ctx, env, o, baseURL, finish, f, write) // run_adaptive.go
	}
	return nil
}

// cellCounts counts the cells of a results file by kind and outcome.
type cellCounts struct {
	prefill, decode             int // measured (valid or queued)
	prefillFailed, decodeFailed int // status error
	firstError                  string
}

// countCells counts the measured and failed cells of f.
func countCells(f *results.File) cellCounts {
	var n cellCounts
	fail := func(id, why string) {
		if n.firstError == "" {
			n.firstError = id + ": " + why
		}
	}
	for _, c := range f.Prefill {
		switch {
		case c.Status.Measured():
			n.prefill++
		case c.Status == results.StatusError:
			n.prefillFailed++
			fail("prefill/"+c.ContextLabel, c.Error)
		}
	}
	for _, c := range f.Decode {
		switch {
		case c.Status.Measured():
			n.decode++
		case c.Status == results.StatusError:
			n.decodeFailed++
			fail(fmt.Sprintf("decode/%s/%d", c.ContextLabel, c.Concurrency), c.Error)
		}
	}
	return n
}

// checkURL returns a usage error unless u is an http or https URL with a host.
func checkURL(u string) error {
	if !strings.Contains(u, "://") {
		return usagef("--url %q has no scheme: add http:// (e.g. --url http://%s)", u, u)
	}
	p, err := url.Parse(u)
	if err != nil {
		return usagef("--url %q: %v; want a URL like http://localhost:8000", u, err)
	}
	if p.Scheme != "http" && p.Scheme != "https" {
		return usagef("--url %q: the scheme must be http or https, e.g. http://localhost:8000", u)
	}
	if p.Host == "" {
		return usagef("--url %q has no host: want a URL like http://localhost:8000", u)
	}
	return nil
}

// prepareOutput checks, before the first request, that the results file can be written at path:
// a missing folder is created; a directory, a path under a file, or a folder that cannot be
// written is a usage error.
func prepareOutput(path string, log *slog.Logger) error {
	if path == "" {
		return usagef("-o is empty: name the results file, e.g. -o results.json")
	}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return usagef("-o %s is a directory: name a file in it, e.g. -o %s", path, filepath.Join(path, "results.json"))
	} else if err == nil && !st.Mode().IsRegular() {
		return nil // /dev/null, a FIFO, /dev/stdout: written into (results.WriteOutput)
	}
	dir := filepath.Dir(path)
	st, err := os.Stat(dir)
	switch {
	case err == nil && !st.IsDir():
		return usagef("-o %s: cannot create the results file: %s is a file, not a folder; choose another path", path, dir)
	case errors.Is(err, fs.ErrNotExist):
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return usagef("-o %s: cannot create the folder %s: %v; choose another path", path, dir, err)
		}
		log.Info("created the folder of the results file", "dir", dir)
	case err != nil:
		return usagef("-o %s: cannot create the results file: %v; choose another path", path, err)
	}
	probe, err := os.CreateTemp(dir, ".speedmatrix-write-check-*")
	if err != nil {
		return usagef("-o %s: cannot write in %s: %v; choose a writable path", path, dir, err)
	}
	probe.Close()
	return os.Remove(probe.Name())
}

// fallbackPath returns where the results go when the output path cannot be written mid-run: the
// temporary folder, named after the run.
func fallbackPath(runID string) string {
	return filepath.Join(os.TempDir(), "speedmatrix-"+runID+".json")
}

// output writes the results file, falling back to another path when the chosen one fails.
type output struct {
	path, fallback string
	log            *slog.Logger
	saved          string // where the last write went
	err            error  // why the last write to path failed
	// invalid is why the last results failed the results file's own check (results.Validate):
	// they are written all the same, so that a measurement is never lost to a bug of ours.
	invalid error
}

// write writes f to the output path, or, when that fails, to the fallback path (saying so once);
// the error is set only when neither could be written. Results that fail the file's own check
// are written unchecked (o.invalid says why): the run says so when it ends.
func (o *output) write(f *results.File) error {
	write := results.WriteOutputFile
	err := write(o.path, f)
	wasInvalid := o.invalid != nil
	o.invalid = nil
	if results.IsValidation(err) {
		if !wasInvalid {
			o.log.Error("the results fail the results file's own check; writing them unchecked so that nothing measured is lost", "output", o.path, "err", err)
		}
		o.invalid, write = err, results.WriteFileUnchecked
		err = write(o.path, f)
	}
	if err == nil {
		if o.saved == o.fallback {
			os.Remove(o.fallback) // the chosen path works again: one copy only
		}
		o.saved, o.err = o.path, nil
		return nil
	}
	if ferr := write(o.fallback, f); ferr != nil {
		return fmt.Errorf("write %s: %w; the fallback %s failed too: %v", o.path, err, o.fallback, ferr)
	}
	if o.saved != o.fallback {
		o.log.Warn("could not write the results file; writing it to the fallback file instead", "output", o.path, "err", err, "fallback", o.fallback)
	}
	o.saved, o.err = o.fallback, err
	return nil
}

// resolveEngineCommit returns the engine commit to record: a full commit id as given (lower
// case); a revision (a branch, HEAD~2, a short id) as the full id the engine's clone resolves it
// to (engine.source, else the current directory), which the results store and compare --store
// need to place the run; what neither is, as given, with a warning.
func resolveEngineCommit(ctx context.Context, env *Env, rev, source string) string {
	rev = strings.TrimSpace(rev)
	if rev == "" {
		return ""
	}
	if id := strings.ToLower(rev); store.IsCommit(id) {
		return id
	}
	sha, err := store.GitCommits{Dir: source}.RevParse(ctx, rev)
	if err != nil {
		env.Log.Warn("the engine commit is recorded as given: it is not a full commit id and the engine's clone cannot resolve it, so the results store and compare --store cannot place the run (give --engine-commit a full id)", "engine_commit", rev)
		return rev
	}
	env.Log.Info("engine commit resolved in the engine's clone", "revision", rev, "commit", sha)
	return sha
}
