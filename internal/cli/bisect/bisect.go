// Package bisect is `speedmatrix bisect`: its flags, then package bisect's search over
// bisect/paired's steps (or, with --calibrate, bisect/errrate's table).
package bisect

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/speedmatrix/speedmatrix/internal/cli/cmdutil"

	"github.com/spf13/cobra"

	"github.com/speedmatrix/speedmatrix/bisect"
	"github.com/speedmatrix/speedmatrix/bisect/errrate"
	"github.com/speedmatrix/speedmatrix/bisect/paired"
	"github.com/speedmatrix/speedmatrix/calibrate"
	"github.com/speedmatrix/speedmatrix/config"
	"github.com/speedmatrix/speedmatrix/ghbot"
	"github.com/speedmatrix/speedmatrix/measure"
	"github.com/speedmatrix/speedmatrix/results"
)

// bisectOptions are the flags of `speedmatrix bisect`.
type bisectOptions struct {
	good, bad, cells, comparison string
	source, configPath, work     string
	output                       string
	runners, steps, blocks       int
	gpuBudget                    time.Duration
	plain                        bool
	allowSameEngine              bool
	// --calibrate: the error-rate table.
	calibrate  bool
	bisections int
	model      string
	format     string
	seed       uint64
}

// NewCmd builds `speedmatrix bisect`.
func NewCmd(env *cmdutil.Env) *cobra.Command {
	var o bisectOptions
	cmd := &cobra.Command{
		Use:   "bisect --good REV --bad REV (--cells LIST | --comparison FILE) --config speedmatrix.yaml",
		Short: "Find the commit of the default branch that slowed the named cells (k-ary bisection, paired steps)",
		Long: `Bisect finds the first commit along the first-parent line good..bad of the engine's clone
(--source) that slowed the named cells: --cells, or the cells a comparison file found
regressed (--comparison). Each step builds the engine at the commits it measures and serves
each of them paired with the good commit (run --paired: ABBA blocks on one machine, --blocks a
side, the engine section of --config), measures only the named cells, and decides the commit
with the comparison's own rules: bad (a regression), good (the comparison passes and the
cells' mean change is shown better than -δ), undecided (measured again once, pooled with the
first at the second look), or skipped when it does not build or serve (then a neighbour is
measured, and the culprit may end as a range). With --runners N, N-1 commits are measured
at once (k-ary bisection); a round is one step. The first round measures the bad commit too,
for the range's whole change: when the culprit explains clearly less of it, a second
regression is reported and bisected after it. stdout says what was found, with each step's
evidence and the GPU time spent; --output writes it as JSON.

The budget is --steps rounds and --gpu-budget of measurement; a spent budget ends with the
narrowest range.

--calibrate prints the culprit error table of docs/bisect.md instead: many bisections of a
synthetic step model (the calibrated noise of speedmatrix calibrate, compare against the good
commit's stored run and history) at 5/10/20 % slowdowns over 4, 16 and 64 commits, against
plain one-point-per-step bisection without reruns.

Exit status: 0 a culprit was named for every regression found, 4 the result is a range, a
second regression remains or the bad commit did not measure slower, 1 error, 2 usage.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.calibrate {
				return bisectCalibrate(cmd.Context(), env, o)
			}
			return runBisect(cmd.Context(), env, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.good, "good", "", "the last good commit (any revision the engine's clone resolves)")
	f.StringVar(&o.bad, "bad", "", "the first bad commit")
	f.StringVar(&o.cells, "cells", "", "the cells to measure, e.g. decode/1K/8,decode/1K/16")
	f.StringVar(&o.comparison, "comparison", "", "take the cells from this comparison file: those it found regressed")
	f.StringVar(&o.source, "source", ".", "the engine's git clone")
	f.StringVar(&o.configPath, "config", "", "the speedmatrix.yaml whose engine section builds and serves a commit (default: SOURCE/speedmatrix.yaml)")
	f.StringVar(&o.work, "work", "", "directory for the commits' checkouts and results files (default: a new temporary directory)")
	f.StringVarP(&o.output, "output", "o", "", "write the result as JSON to this file")
	f.IntVar(&o.runners, "runners", 2, "runners: N-1 commits are measured at once")
	f.IntVar(&o.steps, "steps", 12, "the budget's rounds (a rerun counts; 0: no bound)")
	f.DurationVar(&o.gpuBudget, "gpu-budget", 0, "the budget's measurement time, every runner's together (0: no bound)")
	f.IntVar(&o.blocks, "blocks", 4, "paired blocks a side in each step")
	f.BoolVar(&o.allowSameEngine, "allow-same-engine", false, "bisect although engine.build is none and the serve command names no file of the checkout (every commit then serves the same installed engine)")
	f.BoolVar(&o.plain, "plain", false, "plain bisection: every verdict but bad is good, no reruns (what git bisect run on compare's exit status does)")
	f.BoolVar(&o.calibrate, "calibrate", false, "print the culprit error table of a synthetic step model instead")
	f.IntVar(&o.bisections, "bisections", 200, "with --calibrate: bisections per row")
	f.StringVar(&o.model, "model", string(calibrate.WorldGaussian), "with --calibrate: the noise model (speedmatrix calibrate --world's)")
	f.StringVar(&o.format, "format", "markdown", "with --calibrate: markdown or json")
	f.Uint64Var(&o.seed, "seed", 1, "with --calibrate: the seed")
	return cmd
}

// bisectCalibrate prints the culprit error table.
func bisectCalibrate(ctx context.Context, env *cmdutil.Env, o bisectOptions) error {
	models, err := calibrate.ParseWorldModels(o.model)
	if err != nil || len(models) != 1 {
		return cmdutil.Usagef("--model %q: want one of %v", o.model, calibrate.WorldModels())
	}
	if o.format != "markdown" && o.format != "json" {
		return cmdutil.Usagef("--format %q: want markdown or json", o.format)
	}
	if o.bisections < 1 {
		return cmdutil.Usagef("--bisections %d: want at least 1", o.bisections)
	}
	s := errrate.DefaultSettings()
	s.Bisections, s.Model, s.Seed, s.Budget.Steps = o.bisections, models[0], o.seed, o.steps
	env.Log.Info("bisect error rate: synthetic bisections", "rows", len(s.Slowdowns)*len(s.Ranges)*len(s.Procedures), "per_row", s.Bisections, "model", s.Model)
	rep, err := errrate.Run(ctx, s)
	if err != nil {
		return err
	}
	if o.format == "json" {
		return rep.WriteJSON(env.Stdout)
	}
	return rep.WriteMarkdown(env.Stdout)
}

// runBisect is `speedmatrix bisect` on the engine's clone.
func runBisect(ctx context.Context, env *cmdutil.Env, o bisectOptions) error {
	switch {
	case o.good == "" || o.bad == "":
		return cmdutil.Usagef("give --good and --bad: the last good and the first bad commit of the default branch")
	case (o.cells == "") == (o.comparison == ""):
		return cmdutil.Usagef("give the cells to measure: --cells LIST or --comparison FILE (its regressed cells), one of them")
	case o.runners < 2:
		return cmdutil.Usagef("--runners %d: want at least 2", o.runners)
	case o.blocks < 2:
		return cmdutil.Usagef("--blocks %d: want at least 2 paired blocks a side", o.blocks)
	case o.steps < 0 || o.gpuBudget < 0:
		return cmdutil.Usagef("--steps and --gpu-budget must not be negative")
	}
	cells, err := bisectCells(o)
	if err != nil {
		return err
	}
	if o.configPath == "" {
		o.configPath = filepath.Join(o.source, "speedmatrix.yaml")
	}
	base := measure.DefaultSettings()
	if err := cmdutil.ReadRunConfig(o.configPath, &base); err != nil {
		return cmdutil.Usagef("--config %v", err)
	}
	if base.Engine.Serve == nil {
		return cmdutil.Usagef("--config %s: bisect builds and serves each commit: give the config an engine section with serve", o.configPath)
	}
	spec, err := measure.EngineBuildSpec(base)
	if err != nil {
		return err
	}
	base.Paired.AllowSameEngine = base.Paired.AllowSameEngine || o.allowSameEngine
	if err := measure.CheckEnginesCanDiffer(base, spec.Mode, o.source); err != nil { // run_paired_engine.go
		return err
	}
	base.Paired.AllowSameEngine = true // checked once, on the clone: a commit without the file fails to serve, and is skipped
	g := paired.Git(o.source)
	good, bad, commits, err := g.Range(ctx, o.good, o.bad)
	if err != nil {
		return err
	}
	if o.work == "" {
		if o.work, err = os.MkdirTemp("", "speedmatrix-bisect-"); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(o.work, 0o755); err != nil {
		return err
	}
	ps := paired.New(env.MeasureDeps(), g, o.work, o.blocks, base, cells)
	defer ps.Cleanup(context.WithoutCancel(ctx))
	env.Log.Info("bisect", "good", ghbot.ShortSHA(good), "bad", ghbot.ShortSHA(bad), "commits", len(commits), "cells", strings.Join(cells, ","), "runners", o.runners)
	res, err := bisect.Run(ctx, bisect.Config{Good: good, Commits: commits, Cells: cells, Runners: o.runners, Plain: o.plain,
		Budget: bisect.Budget{Steps: o.steps, GPUTime: o.gpuBudget}}, ps.Step)
	if err != nil {
		return err
	}
	if o.output != "" {
		data, err := json.MarshalIndent(res, "", "  ")
		if err != nil {
			return err
		}
		if err := results.WriteOutput(o.output, append(data, '\n')); err != nil {
			return err
		}
	}
	if err := res.WriteText(env.Stdout); err != nil {
		return err
	}
	if !res.Named() {
		return cmdutil.ErrUndecided
	}
	return nil
}

// bisectCells returns the cells of --cells, or the regressed cells of --comparison.
func bisectCells(o bisectOptions) ([]string, error) {
	var out []string
	if o.cells != "" {
		ids, err := results.ParseCells(config.SplitList(o.cells))
		if err != nil {
			return nil, cmdutil.Usagef("--cells: %v", err)
		}
		for _, id := range ids {
			out = append(out, id.String())
		}
		return out, nil
	}
	c, err := results.ReadComparisonFile(o.comparison)
	if err != nil {
		return nil, cmdutil.Usagef("--comparison: %v", err)
	}
	if out = bisect.RegressedCells(c); len(out) == 0 {
		return nil, cmdutil.Usagef("--comparison %s found no regression: nothing to bisect (give --cells to bisect other cells)", o.comparison)
	}
	return out, nil
}
