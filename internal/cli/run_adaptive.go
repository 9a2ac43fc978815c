package cli

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/speedmatrix/speedmatrix/adaptive"
	"github.com/speedmatrix/speedmatrix/compare"
	"github.com/speedmatrix/speedmatrix/config"
	"github.com/speedmatrix/speedmatrix/report"
	"github.com/speedmatrix/speedmatrix/results"
)

// adaptiveOptions are the settings of `speedmatrix run --baseline BASE --budget 45m`: after the
// first pass, compare with the baseline and measure again, within the budget, the cells it
// leaves inconclusive (package adaptive).
type adaptiveOptions struct {
	// baseline is the base's results files, comma-separated; history a folder of earlier base
	// results for the noise (as compare --history); compareOut where the comparison goes.
	baseline, history, compareOut string
	// build and load are the GPU time the job spent before measuring (runengine.go).
	build, load time.Duration
}

// addAdaptiveFlags declares the flags of the budgeted adaptive run.
func addAdaptiveFlags(f *pflag.FlagSet, o *runOptions) {
	f.DurationVar(&o.Budget, "budget", 0, "GPU wall time for the whole job (build, load, first pass, reruns), e.g. 45m; with --baseline, the cells the comparison leaves inconclusive are measured again within it")
	f.StringVar(&o.adaptive.baseline, "baseline", "", "the base's results file(s), comma-separated: compare with them after the first pass and, within --budget, measure again what is inconclusive, then decide at the second look; a regression exits 3, as compare")
	f.StringVar(&o.adaptive.history, "history", "", "with --baseline: folder of earlier results of the base (*.json) whose spread is each cell's noise, as compare --history")
	f.StringVar(&o.adaptive.compareOut, "compare-out", "", "with --baseline: write the comparison file (speedmatrix/comparison/v1 JSON) to this path")
}

// overrideAdaptiveFlags copies the adaptive flags given on the command line into final.
func overrideAdaptiveFlags(fs *pflag.FlagSet, final, o *runOptions) {
	if fs.Changed("budget") {
		final.Budget = o.Budget
	}
	final.adaptive.baseline, final.adaptive.history, final.adaptive.compareOut = o.adaptive.baseline, o.adaptive.history, o.adaptive.compareOut
}

// checkAdaptive refuses adaptive flags that cannot work, before anything is measured.
func checkAdaptive(o runOptions) error {
	a := o.adaptive
	switch {
	case o.Budget < 0:
		return usagef("--budget %v: want a positive duration like 45m, or 0 for none", o.Budget)
	case a.baseline == "" && (a.history != "" || a.compareOut != ""):
		return usagef("--history and --compare-out need --baseline: the base's results file to compare with")
	}
	return nil
}

// recordGPUTime records in f the GPU time of the job so far: build and load (engine.serve),
// and the first pass's wall time; reruns and the budget already recorded are kept.
func recordGPUTime(f *results.File, o runOptions) {
	g := f.Run.GPUTime
	if g == nil {
		g = &results.GPUTime{BudgetSeconds: o.Budget.Seconds()}
		f.Run.GPUTime = g
	}
	g.BuildSeconds, g.LoadSeconds = o.adaptive.build.Seconds(), o.adaptive.load.Seconds()
	if f.Run.Budget != nil {
		g.MeasureSeconds = f.Run.Budget.WallSeconds
	}
	g.Sum()
}

// measureAdaptive is the rest of a run with --baseline once the first pass f is written: it
// compares f with the baseline, measures again within the budget what is inconclusive (each
// rerun a run of --cells with --trials against the same server, written next to the results
// as OUTPUT.rerunN.json), compares the pooled trials at the second look, records the GPU time
// in the results file and writes the comparison (--compare-out). A regression is ErrRegression.
func measureAdaptive(ctx context.Context, env *Env, o runOptions, baseURL string, finish func(*results.File), f *results.File, write func(*results.File) error) error {
	a := o.adaptive
	base, err := readSide(a.baseline)
	if err != nil {
		return fmt.Errorf("--baseline: %w", err)
	}
	in := compare.Input{Base: base, Head: []*results.File{f}, BasePath: a.baseline, HeadPath: o.Output}
	for _, s := range o.Cells {
		if id, err := results.ParseCellID(s); err == nil {
			in.Cells = append(in.Cells, id)
		}
	}
	if a.history != "" {
		var warnings []string
		if in.History, warnings, err = readHistory(a.history); err != nil {
			return err
		}
		for _, w := range warnings {
			env.Log.Warn(w)
		}
	}
	recordGPUTime(f, o)
	n := 0
	measure := func(ctx context.Context, cells []string, trials int) (*results.File, error) {
		n++
		r := o
		r.Cells, r.Trials, r.Budget, r.adaptive = config.List(cells), trials, 0, adaptiveOptions{}
		r.Output = strings.TrimSuffix(o.Output, ".json") + fmt.Sprintf(".rerun%d.json", n)
		err := measureURL(ctx, env, r, baseURL, finish)
		rf, rerr := results.ReadFile(r.Output)
		if rerr != nil {
			return nil, fmt.Errorf("%w (and its results: %v)", err, rerr)
		}
		return rf, err
	}
	out, err := adaptive.Run(ctx, adaptive.Job{
		Compare: in, Thresholds: configThresholds(o.Config), Budget: o.Budget,
		GPU: *f.Run.GPUTime, Measure: measure, Log: env.Log,
	})
	if err != nil {
		return fmt.Errorf("compare with --baseline: %w", err)
	}
	f.Run.GPUTime = &out.GPU
	if err := write(f); err != nil {
		return err
	}
	c := out.Final
	for _, w := range c.Warnings {
		env.Log.Warn("compare: " + w)
	}
	if a.compareOut != "" {
		if err := results.WriteComparisonOutput(a.compareOut, c); err != nil {
			return fmt.Errorf("writing --compare-out %s: %w", a.compareOut, err)
		}
	}
	env.Log.Info("compared with the baseline", "verdict", c.Verdict, "look", c.Settings.Look, "reruns", out.GPU.Reruns,
		"gpu_time", report.GPUTimeLine(&out.GPU), "undecided", len(out.GPU.Undecided), "comparison", a.compareOut)
	if c.Verdict == results.VerdictRegression {
		return ErrRegression
	}
	return nil
}
