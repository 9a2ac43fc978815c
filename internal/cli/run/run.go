// Package run is `speedmatrix run`: every flag of a run's settings, over --config's, then
// measure.Run.
package run

import (
	"github.com/speedmatrix/speedmatrix/internal/cli/cmdutil"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/speedmatrix/speedmatrix/bench"
	"github.com/speedmatrix/speedmatrix/measure"
)

// NewCmd builds `speedmatrix run`.
func NewCmd(env *cmdutil.Env) *cobra.Command {
	o := measure.DefaultSettings()
	var configPath string
	var mf cmdutil.MatrixFlags
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
				if err := cmdutil.ReadRunConfig(configPath, &final); err != nil {
					return cmdutil.Usagef("--config: %v", err)
				}
			}
			overrideFromFlags(cmd.Flags(), &final, &o)
			mf.Apply(cmd.Flags(), &final)
			return measure.Run(cmd.Context(), final, env.MeasureDeps())
		},
	}
	f := cmd.Flags()
	f.StringVar(&configPath, "config", "", "read the settings from this YAML file; flags given on the command line override it")
	f.StringVar(&o.URL, "url", "", "base URL of the OpenAI-compatible server, e.g. http://localhost:8000")
	f.StringVar(&o.APIKeyEnv, "api-key-env", "", "name of the environment variable that holds the server's API key (the key itself is never a flag)")
	f.StringVar(&o.Model, "model", "", "served model to measure (default: the first of /v1/models)")
	mf.Add(f) // the flags that shape the matrix, which plan takes too
	f.StringVar(&o.Endpoint, "endpoint", o.Endpoint, "API to stream from: completions (/v1/completions) or chat (/v1/chat/completions)")
	f.IntVar(&o.Warmup, "warmup", o.Warmup, "hidden warm-up requests before the first cell")
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
	addAdaptiveFlags(f, &o) // flags.go, as the next two
	addShardFlags(f, &o)
	addPairedFlags(f, &o.Paired)
	return cmd
}

// overrideFromFlags copies into final every flag given on the command line.
func overrideFromFlags(fs *pflag.FlagSet, final, o *measure.Settings) {
	set := cmdutil.IfChanged(fs)
	set("url", func() { final.URL = o.URL })
	set("api-key-env", func() { final.APIKeyEnv = o.APIKeyEnv })
	set("model", func() { final.Model = o.Model })
	set("endpoint", func() { final.Endpoint = o.Endpoint })
	set("warmup", func() { final.Warmup = o.Warmup })
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
