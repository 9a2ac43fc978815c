package run

import (
	"strings"

	"github.com/spf13/pflag"

	"github.com/speedmatrix/speedmatrix/config"
	"github.com/speedmatrix/speedmatrix/internal/cli/cmdutil"
	"github.com/speedmatrix/speedmatrix/measure"
	"github.com/speedmatrix/speedmatrix/sim"
	"github.com/speedmatrix/speedmatrix/sim/profile"
)

// addSimRunFlags declares the --sim-* flags of `speedmatrix run`.
func addSimRunFlags(f *pflag.FlagSet, o *config.Sim) {
	f.StringVar(&o.Profile, "sim-profile", profile.Default, "without --url: the built-in simulator's profile, a built-in name ("+strings.Join(profile.Names(), ", ")+") or a YAML file")
	f.Float64Var(&o.Speedup, "sim-speedup", sim.DefaultSpeedup, "without --url: run the simulator this many times faster than its profile; the results file records it and keeps the numbers as measured, reports show them in the profile's time, and --duration and --readiness-timeout left at their defaults shrink by it (30 s of model time per window)")
	f.Uint64Var(&o.Seed, "sim-seed", 0, "without --url: the simulator's seed (noise, acceptance draws, faults)")
	o.Noise = new(float64)
	f.Float64Var(o.Noise, "sim-noise", 0, "without --url: the simulator's noise CV (default: the profile's)")
	f.StringVar(&o.Slowdown, "sim-slowdown", "", "without --url: slow-down rules for the simulator, e.g. decode=1.10@ctx>=64K (see speedmatrix sim --help)")
	f.StringVar(&o.Fault, "sim-fault", "", "without --url: faults for the simulator to inject, e.g. error=5%,crash=60s (see speedmatrix sim --help)")
}

// overrideSimRunFlags copies the --sim-* flags given on the command line into final.
func overrideSimRunFlags(fs *pflag.FlagSet, final, o *config.Sim) {
	set := cmdutil.IfChanged(fs)
	set("sim-profile", func() { final.Profile = o.Profile })
	set("sim-speedup", func() { final.Speedup = o.Speedup })
	set("sim-seed", func() { final.Seed = o.Seed })
	set("sim-noise", func() { v := *o.Noise; final.Noise = &v })
	set("sim-slowdown", func() { final.Slowdown = o.Slowdown })
	set("sim-fault", func() { final.Fault = o.Fault })
}

// addAdaptiveFlags declares the flags of the budgeted adaptive run.
func addAdaptiveFlags(f *pflag.FlagSet, o *measure.Settings) {
	f.DurationVar(&o.Budget, "budget", 0, "GPU wall time for the whole job (build, load, first pass, reruns), e.g. 45m; with --baseline, the cells the comparison leaves inconclusive are measured again within it")
	f.StringVar(&o.Baseline, "baseline", "", "the base's results file(s), comma-separated: compare with them after the first pass and, within --budget, measure again what is inconclusive, then decide at the second look; a regression exits 3, as compare")
	f.StringVar(&o.History, "history", "", "with --baseline: folder of earlier results of the base (*.json) whose spread is each cell's noise, as compare --history")
	f.StringVar(&o.CompareOut, "compare-out", "", "with --baseline: write the comparison file (speedmatrix/comparison/v1 JSON) to this path")
}

// overrideAdaptiveFlags copies the adaptive flags given on the command line into final.
func overrideAdaptiveFlags(fs *pflag.FlagSet, final, o *measure.Settings) {
	if fs.Changed("budget") {
		final.Budget = o.Budget
	}
	final.Baseline, final.History, final.CompareOut = o.Baseline, o.History, o.CompareOut
}

// addShardFlags declares run's --shard and --plan.
func addShardFlags(f *pflag.FlagSet, o *measure.Settings) {
	f.StringVar(&o.ShardSpec, "shard", "", "measure only shard `K/N`, e.g. 2/4: shard K of the N that speedmatrix plan --shards N prints for the same settings (whole context rows; speedmatrix merge joins the shards)")
	f.StringVar(&o.PlanID, "plan", "", "with --shard: refuse to measure unless the plan's id is this one (the plan field of speedmatrix plan's job matrix), so that a runner with other settings or another speedmatrix fails before it measures")
}

// overrideShardFlags copies --shard and --plan into final when given.
func overrideShardFlags(fs *pflag.FlagSet, final, o *measure.Settings) {
	if fs.Changed("shard") {
		final.ShardSpec = o.ShardSpec
	}
	if fs.Changed("plan") {
		final.PlanID = o.PlanID
	}
}

// addPairedFlags declares the flags of a paired run (config section paired).
func addPairedFlags(f *pflag.FlagSet, p *config.Paired) {
	f.BoolVar(&p.Enabled, "paired", false, "paired A/B: measure the base (--base-url) and the head (--url) alternately in blocks on one machine, so that drift cancels; writes the head's results to -o and the base's to --base-output (without either URL: two built-in simulators)")
	f.IntVar(&p.Blocks, "blocks", 4, "with --paired: blocks per side, each the whole matrix (or --cells) once")
	f.StringVar(&p.Scheme, "paired-scheme", config.PairedABBA, "with --paired: ABBA, or sequential (every base block, then every head block: what two separate runs do; compare does not pair it)")
	f.StringVar(&p.BaseURL, "base-url", "", "with --paired: base URL of the base's server")
	f.StringVar(&p.BaseOutput, "base-output", "", "with --paired: the base's results file (default: -o with .base before its extension)")
	f.StringVar(&p.BaseSource, "base-source", "", "with --paired and engine.serve: a checkout of the base commit, built and served like engine.source (one engine on the GPU at a time)")
	f.BoolVar(&p.AllowSameEngine, "allow-same-engine", false, "with --paired and engine.serve: measure although engine.build is none and the serve command names no file of the checkouts (both commits then serve the same installed engine)")
	f.BoolVar(&p.KeepServing, "keep-serving", false, "with --paired and engine.serve: start each side's engine once and keep both up for the whole run, measured one at a time (where both fit the machine), instead of restarting each for every block")
}

// overridePairedFlags copies the paired flags given on the command line into final.
func overridePairedFlags(fs *pflag.FlagSet, final, o *config.Paired) {
	set := cmdutil.IfChanged(fs)
	set("paired", func() { final.Enabled = o.Enabled })
	set("blocks", func() { final.Blocks = o.Blocks })
	set("paired-scheme", func() { final.Scheme = o.Scheme })
	set("base-url", func() { final.BaseURL = o.BaseURL })
	set("base-output", func() { final.BaseOutput = o.BaseOutput })
	set("base-source", func() { final.BaseSource = o.BaseSource })
	set("keep-serving", func() { final.KeepServing = o.KeepServing })
	set("allow-same-engine", func() { final.AllowSameEngine = o.AllowSameEngine })
}
