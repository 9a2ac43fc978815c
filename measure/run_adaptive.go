package measure

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/speedmatrix/speedmatrix/adaptive"
	"github.com/speedmatrix/speedmatrix/compare"
	"github.com/speedmatrix/speedmatrix/config"
	"github.com/speedmatrix/speedmatrix/report"
	"github.com/speedmatrix/speedmatrix/results"
)

// Check refuses adaptive flags that cannot work, before anything is measured.
func (o Settings) Check() error {
	if err := config.CheckBudget(o.Budget); err != nil {
		return settingsf("--budget %v", err)
	}
	if o.Baseline == "" && (o.History != "" || o.CompareOut != "") {
		return settingsf("--history and --compare-out need --baseline: the base's results file to compare with")
	}
	return nil
}

// recordGPUTime records in f the GPU time of the job so far: build and load (engine.serve),
// and the first pass's wall time; reruns and the budget already recorded are kept.
func recordGPUTime(f *results.File, o session) {
	g := f.Run.GPUTime
	if g == nil {
		g = &results.GPUTime{BudgetSeconds: o.Budget.Seconds()}
		f.Run.GPUTime = g
	}
	g.BuildSeconds, g.LoadSeconds = o.build.Seconds(), o.load.Seconds()
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
func measureAdaptive(ctx context.Context, env *Deps, o session, baseURL string, finish func(*results.File), f *results.File, write func(*results.File) error) error {
	base, err := ReadSide(o.Baseline)
	if err != nil {
		return fmt.Errorf("--baseline: %w", err)
	}
	in := compare.Input{Base: base, Head: []*results.File{f}, BasePath: o.Baseline, HeadPath: o.Output}
	if len(o.Cells) > 0 {
		if in.Cells, err = results.ParseCells(o.Cells); err != nil {
			return settingsf("--cells: %v", err)
		}
	}
	if o.History != "" {
		var warnings []string
		if in.History, warnings, err = ReadHistory(o.History); err != nil {
			return err
		}
		for _, w := range warnings {
			env.Log.Warn(w)
		}
	}
	recordGPUTime(f, o)
	out, err := rerunWithin(ctx, o, adaptive.Job{
		Compare: in, Thresholds: Thresholds(o.Config), Budget: o.Budget,
		GPU: *f.Run.GPUTime, Log: env.Log,
	}, func(ctx context.Context, r session) error {
		return measureURL(ctx, env, r, baseURL, finish) // the server of the first pass
	}, nil)
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
	if o.CompareOut != "" {
		if err := results.WriteComparisonOutput(o.CompareOut, c); err != nil {
			return fmt.Errorf("writing --compare-out %s: %w", o.CompareOut, err)
		}
	}
	env.Log.Info("compared with the baseline", "verdict", c.Verdict, "look", c.Settings.Look, "reruns", out.GPU.Reruns,
		"gpu_time", report.GPUTimeLine(&out.GPU), "undecided", len(out.GPU.Undecided), "comparison", o.CompareOut)
	if c.Verdict == results.VerdictRegression {
		return ErrRegression
	}
	return nil
}

// Rerun is the rerun-within-budget loop of the action's budget (run --baseline goes through
// the same, rerunWithin): package adaptive decides what to measure again within job.Budget, and
// each rerun is a run (Run) of the settings s with the cells and trials it names, no budget and
// no baseline, written next to s.Output as OUTPUT.rerunN.json; after, when set, is given each
// rerun's results path once read. Rerun sets job.Measure.
func Rerun(ctx context.Context, s Settings, job adaptive.Job, d Deps, after func(path string)) (adaptive.Outcome, error) {
	return rerunWithin(ctx, session{Settings: s, version: d.Version}, job, func(ctx context.Context, r session) error {
		return runCommand(ctx, &d, r)
	}, after)
}

// rerunWithin is the one rerun-within-budget loop: adaptive.Run on job, each rerun the session
// o with the cells and trials adaptive asks for, no budget and no baseline, written to
// OUTPUT.rerunN.json and measured by measureOne; after, when set, is given each rerun's path.
func rerunWithin(ctx context.Context, o session, job adaptive.Job, measureOne func(context.Context, session) error, after func(path string)) (adaptive.Outcome, error) {
	n := 0
	job.Measure = func(ctx context.Context, cells []string, trials int) (*results.File, error) {
		n++
		r := o
		r.Cells, r.Trials, r.Budget = config.List(cells), trials, 0
		r.Baseline, r.History, r.CompareOut, r.build, r.load = "", "", "", 0, 0
		r.Output = strings.TrimSuffix(o.Output, ".json") + fmt.Sprintf(".rerun%d.json", n)
		err := measureOne(ctx, r)
		rf, rerr := results.ReadFile(r.Output)
		if rerr != nil {
			return nil, errors.Join(err, fmt.Errorf("read the rerun's results: %w", rerr))
		}
		if after != nil {
			after(r.Output)
		}
		return rf, err
	}
	return adaptive.Run(ctx, job)
}

// Thresholds returns compare's thresholds under the configuration c: the defaults with its
// compare.fdr, compare.false_alarm, compare.thresholds and store.min_history applied where set.
// The CLI's compare and the action take theirs from here too.
func Thresholds(c config.Config) compare.Thresholds {
	return compare.Overrides{FDR: c.Compare.FDR, FalseAlarm: c.Compare.FalseAlarm, Delta: c.Compare.Thresholds, MinHistory: c.Store.MinHistory}.Thresholds()
}
