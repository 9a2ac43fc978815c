package cli

import (
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/speedmatrix/speedmatrix/bench"
	"github.com/speedmatrix/speedmatrix/config"
	"github.com/speedmatrix/speedmatrix/measure"
)

// readRunConfig reads a speedmatrix.yaml strictly (config.Load): an unknown key or a bad value
// is an error naming its line, column and dotted path.
func readRunConfig(path string, o *measure.Settings) error {
	c, err := config.Load(path)
	if err != nil {
		return err
	}
	o.Config = c
	return nil
}

// newRunCmd builds `speedmatrix run`.
func newRunCmd(env *Env) *cobra.Command {
	o := measure.DefaultSettings()
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
			final := measure.DefaultSettings()
			if configPath != "" {
				if err := readRunConfig(configPath, &final); err != nil {
					return usagef("--config: %v", err)
				}
			}
			overrideFromFlags(cmd.Flags(), &final, &o, contexts, concurrency, prefill, cells)
			if n, ok := cmd.Context().Value(planKey{}).(int); ok {
				return printPlan(env, final, n) // plan.go
			}
			return measure.Run(cmd.Context(), final, env.measureDeps())
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
	f.StringVar(&o.Order, "order", "", "measuring order: shuffled (contexts, and each context's decode cells, in a random order drawn per run, so that a drift cannot line up with a row or a column; the default) or matrix (ascending)")
	o.Remeasures = new(int)
	f.IntVar(o.Remeasures, "remeasures", bench.DefaultRemeasures, "decode windows whose bins show a stall or two levels that the run measures again (at most 2 a cell; 0: none, the window is then decided from its undisturbed bins or kept and marked)")
	addSimRunFlags(f, &o.Sim)
	addAdaptiveFlags(f, &o)      // run_adaptive.go
	addShardFlags(f, &o)         // run_shard.go
	addPairedFlags(f, &o.Paired) // run_paired.go
	return cmd
}

// overrideFromFlags copies into final every flag given on the command line.
func overrideFromFlags(fs *pflag.FlagSet, final, o *measure.Settings, contexts, concurrency, prefill, cells string) {
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
	set("order", func() { final.Order = o.Order })
	set("remeasures", func() { v := *o.Remeasures; final.Remeasures = &v })
	overrideSimRunFlags(fs, &final.Sim, &o.Sim)
	overrideAdaptiveFlags(fs, final, o)
	overrideShardFlags(fs, final, o)
	overridePairedFlags(fs, &final.Paired, &o.Paired)
}
