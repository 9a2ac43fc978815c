// Package sim is `speedmatrix sim` and its fit and profiles: their flags, then package sim and
// sim/profile.
package sim

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/speedmatrix/speedmatrix/internal/cli/cmdutil"

	"github.com/spf13/cobra"

	"github.com/speedmatrix/speedmatrix/results"
	"github.com/speedmatrix/speedmatrix/sim"
	"github.com/speedmatrix/speedmatrix/sim/profile"
	"github.com/speedmatrix/speedmatrix/sim/vmatrix"
)

// NewCmd builds `speedmatrix sim` and its subcommands.
func NewCmd(env *cmdutil.Env) *cobra.Command {
	var (
		listen, prof, slowdown, fault string
		apiKey, specConfig            string
		seed                          uint64
		noise, speedup                float64
	)
	cmd := &cobra.Command{
		Use:   "sim",
		Short: "Serve the built-in simulated vLLM-like inference server",
		Long: `sim serves an OpenAI-compatible inference server that behaves like vLLM wherever a
benchmark can observe it (SSE streams with usage, /metrics with vLLM's names, /tokenize,
/detokenize, /v1/models with max_model_len, /health, /version), with the speed of a
performance profile. It models a vLLM engine: continuous batching with max_num_seqs, a paged
KV cache with prefix caching, chunked prefill, preemption and speculative decoding.

Injection, repeatable under --seed:
  --noise 0.1                        run-to-run and step-level noise (step time and
                                     speculative acceptance)
  --speculative-config JSON          vLLM's; rejection_sample_method synthetic with
                                     synthetic_acceptance_length L pins acceptance at L
  --slowdown decode=1.10@ctx>=64K    slower work: phase=factor[@cond&cond], phase prefill,
                                     decode or all; cond ctx or batch with >=, <=, >, <, ==;
                                     factor +5%/min (or /s, /h) is a drift: 5 % slower per
                                     minute of wall-clock time since start
  --fault error=5%,cut=100@0.1       error=RATE (HTTP 500), cut=N[@RATE] (streams end after N
                                     tokens), crash=DUR (connections refused), dead=DUR (/health
                                     503, requests 500), hang=DUR (streams stall),
                                     slow-health=DUR, starve=RATE (loses that share of model
                                     time, as a starved machine does, and reports it);
                                     durations are wall-clock since start

--api-key KEY (or VLLM_API_KEY in the environment when the flag is absent, as vLLM reads it)
requires "Authorization: Bearer KEY" on every route but /health, /version and /metrics, which
vLLM also leaves open; other requests get 401 {"error": "Unauthorized"}. The key is never
logged.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			p, err := profile.Load(prof, nil)
			if err != nil {
				return cmdutil.Usagef("--profile: %v", err)
			}
			if cmd.Flags().Changed("speedup") {
				env.Log.Warn("--speedup is deprecated: use --sim-speedup, the name run and demo use")
			}
			if err := sim.CheckSpeedup(speedup); err != nil { // a speedup given: 0 is no default here
				return cmdutil.Usagef("--sim-speedup %v", err)
			}
			if noise > 1 {
				return cmdutil.Usagef("--noise %g: want a coefficient of variation between 0 and 1", noise)
			}
			if !cmd.Flags().Changed("noise") {
				noise = -1
			}
			if !cmd.Flags().Changed("api-key") {
				apiKey = env.Getenv("VLLM_API_KEY")
			}
			// Ctrl-C cancels cmd.Context() (main turns it into exit 130): a signal handler
			// of sim's own would race main's and could stop the simulator as a success.
			err = sim.Serve(cmd.Context(), sim.Config{
				Profile: p, Addr: listen, Seed: seed, NoiseCV: noise, SpeculativeConfig: specConfig,
				Slowdown: slowdown, Fault: fault, Speedup: speedup, APIKey: apiKey, Log: env.Log,
			}, env.Stdout)
			if err != nil && (strings.Contains(err.Error(), "slowdown") || strings.Contains(err.Error(), "fault") || strings.Contains(err.Error(), "--speculative-config")) && !errors.Is(err, sim.ErrCrashed) {
				return cmdutil.Usagef("%v", err)
			}
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&listen, "listen", "127.0.0.1:8000", "address to serve on (host:port; port 0 picks a free one)")
	f.StringVar(&prof, "profile", profile.Default, "performance profile: a built-in name ("+strings.Join(profile.Names(), ", ")+") or a YAML file")
	f.Uint64Var(&seed, "seed", 0, "seed of the noise, speculative acceptance, generated text and fault choices")
	f.Float64Var(&noise, "noise", 0, "coefficient of variation of injected noise (default: the profile's)")
	f.StringVar(&slowdown, "slowdown", "", "slow-down rules, e.g. decode=1.10@ctx>=64K,prefill=1.2")
	f.StringVar(&fault, "fault", "", "faults to inject, e.g. error=5%,cut=100@0.1,crash=60s")
	f.Float64Var(&speedup, "sim-speedup", sim.DefaultSpeedup, "run the model this many times faster than the profile (1: its real speed), as run and demo do; /version says it, so that speedmatrix run --url records it and reports show the profile's time")
	f.Float64Var(&speedup, "speedup", sim.DefaultSpeedup, "the old name of --sim-speedup")
	_ = f.MarkHidden("speedup") // RunE says it is deprecated, on stderr (pflag's notice goes to stdout, where the URL is)
	f.StringVar(&specConfig, "speculative-config", "", `vLLM's speculative config JSON; {"rejection_sample_method":"synthetic","synthetic_acceptance_length":L} pins acceptance at L tokens per draft step (no acceptance noise), other keys are ignored (the profile drafts)`)
	f.StringVar(&apiKey, "api-key", "", "require this key as \"Authorization: Bearer KEY\" as vLLM's --api-key does (default: $VLLM_API_KEY)")
	cmd.AddCommand(newSimFitCmd(env), newSimProfilesCmd(env))
	return cmd
}

// newSimFitCmd builds `speedmatrix sim fit`.
func newSimFitCmd(env *cmdutil.Env) *cobra.Command {
	var (
		name, out string
		o         = profile.DefaultFitOptions()
		check     bool
	)
	cmd := &cobra.Command{
		Use:   "fit REPORT|RESULTS.json",
		Short: "Fit a simulator profile to a measured results file or an llm-inference-bench report",
		Long: `fit derives a simulator profile from a speed matrix: a speedmatrix results file (.json)
or an llm-inference-bench "Speed test matrix" report (page text or markdown). It writes the
profile as YAML to stdout (or --out) and, with --check (the default), measures the fitted
profile on the same matrix in virtual time and prints the simulated cells next to the
measured ones on stderr. It says on stderr (and in the profile's fit.notes) what it derived
and what the input did not determine and it had to assume: a KV cache or max_num_seqs that
no cell bounds from above, an unknown block size or frontend time, noisy cells it smoothed.
The method is described in sim/PROFILES.md.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			f, err := results.ReadOrImport(args[0])
			if err != nil {
				return err
			}
			o.Name = name
			p, err := profile.Fit(f, o)
			if err != nil {
				return err
			}
			data, err := p.Marshal()
			if err != nil {
				return err
			}
			if out != "" {
				if err := results.WriteOutput(out, data); err != nil {
					return err
				}
			} else if _, err := env.Stdout.Write(data); err != nil {
				return err
			}
			if p.Fit != nil && len(p.Fit.Notes) > 0 {
				fmt.Fprintln(env.Stderr, "What the fit derived and assumed (also the profile's fit.notes):")
				for _, n := range p.Fit.Notes {
					fmt.Fprintln(env.Stderr, "  - "+n)
				}
			}
			if !check {
				return nil
			}
			cfg, err := p.EngineConfig(1, 0)
			if err != nil {
				return err
			}
			opts := vmatrix.OptionsFor(f, p.MaxModelLen)
			got, err := vmatrix.Run(cfg, opts)
			if err != nil {
				return fmt.Errorf("checking the fitted profile: %w", err)
			}
			fmt.Fprintln(env.Stderr, "The fitted profile measured in virtual time against the input:")
			return vmatrix.WriteTable(env.Stderr, vmatrix.Compare(profile.AtModelSpeed(f), got)) // the input in the profile's time, as the fit read it
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&name, "name", "fitted", "name of the profile")
	fl.StringVarP(&out, "out", "o", "", "write the profile to this file instead of stdout")
	fl.IntVar(&o.BlockSize, "block-size", o.BlockSize, "KV cache block size when the input does not say (vLLM's default 16; 64 for MLA models)")
	fl.Float64Var(&o.MeanTokensPerStep, "tokens-per-step", o.MeanTokensPerStep, "mean tokens per decode step with speculative decoding when the input has no acceptance telemetry")
	fl.Float64Var(&o.NoiseCV, "noise", 0, "default noise CV to write into the profile")
	fl.BoolVar(&check, "check", true, "measure the fitted profile on the input's matrix and print the comparison on stderr")
	return cmd
}

// newSimProfilesCmd builds `speedmatrix sim profiles`.
func newSimProfilesCmd(env *cmdutil.Env) *cobra.Command {
	return &cobra.Command{
		Use:   "profiles [NAME]",
		Short: "List the built-in simulator profiles, or print one as YAML",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				for _, n := range profile.Names() {
					p, err := profile.Load(n, nil)
					if err != nil {
						return err
					}
					fmt.Fprintf(env.Stdout, "%s\t%s\n", n, p.Description)
				}
				return nil
			}
			p, err := profile.Load(args[0], func(string) ([]byte, error) { return nil, os.ErrNotExist })
			if err != nil {
				return cmdutil.Usagef("%v", err)
			}
			data, err := p.Marshal()
			if err != nil {
				return err
			}
			_, err = env.Stdout.Write(data)
			return err
		},
	}
}
