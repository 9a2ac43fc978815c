package action

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/speedmatrix/speedmatrix/adaptive"
	"github.com/speedmatrix/speedmatrix/compare"
	"github.com/speedmatrix/speedmatrix/config"
	"github.com/speedmatrix/speedmatrix/measure"
	"github.com/speedmatrix/speedmatrix/results"
)

// budgeted is the comparison of a job with a GPU budget (speedmatrix.yaml budget): the first
// look, the reruns the budget buys (package adaptive), each measured by measure.Rerun with the
// cells and trials to run and written next to the results (OUTPUT.rerunN.json, copied to the
// artifact directory), and the second look on the pooled trials. The head's results and the
// comparison record the GPU time and what deciding the undecided cells would cost. A baseline
// of another setup is reported as compareWithHistory does.
func (j *job) budgeted(ctx context.Context, cfg config.Config, out outcome, base *results.File, hist []*results.File, warnings, cells []string) (outcome, error) {
	in, err := j.compareInput(out.Head, base, hist, cells)
	if err != nil {
		return out, err
	}
	var spent results.GPUTime
	if g := out.Head.Run.GPUTime; g != nil {
		spent = *g
	} else if b := out.Head.Run.Budget; b != nil {
		spent.MeasureSeconds = b.WallSeconds
	}
	// Each rerun is a measurement of its own: where the job starts the server, it builds
	// (from the cache) and starts it again.
	overhead := time.Duration((spent.BuildSeconds + spent.LoadSeconds) * float64(time.Second))
	res, err := measure.Rerun(ctx, measure.Settings{Config: cfg}, adaptive.Job{
		Compare: in, Thresholds: measure.Thresholds(j.cfg), Budget: out.Head.WallTime(cfg.Budget), GPU: spent, Overhead: overhead,
		Log: j.log,
	}, j.d.Measure, func(path string) {
		if cerr := copyFile(path, filepath.Join(j.in.ArtifactDir, filepath.Base(path))); cerr != nil {
			j.log.Warn("copying a rerun's results to the artifact directory", "err", cerr)
		}
	})
	var mm *compare.MismatchError
	if errors.As(err, &mm) {
		return j.compareWithHistory(out, base, hist, warnings, cells)
	}
	if err != nil {
		return out, fmt.Errorf("compare: %w", err)
	}
	out.Head.Run.GPUTime = &res.GPU
	if err := results.WriteFile(out.ResultsPath, out.Head); err != nil {
		return out, fmt.Errorf("write the results with their GPU time: %w", err)
	}
	if err := copyFile(out.ResultsPath, filepath.Join(j.in.ArtifactDir, artifactResults)); err != nil {
		return out, err
	}
	c := res.Final
	c.Warnings = append(c.Warnings, warnings...)
	if w := j.firstPassOver(cfg, out.Head, spent); w != "" {
		c.Warnings = append(c.Warnings, w)
	}
	out.Comparison = c
	out.ComparisonPath = filepath.Join(j.in.ArtifactDir, artifactComparison)
	if err := results.WriteComparisonFile(out.ComparisonPath, c); err != nil {
		return out, fmt.Errorf("write the comparison: %w", err)
	}
	return out, nil
}

// firstPassOver says, when the first pass (its build, model load and measurement) spent the
// whole budget, that nothing was left for confirmations and reruns, with the plan's estimate of
// the first pass (what `speedmatrix validate` states before any GPU time is spent) and what to
// change; "" when it left some. Times are in the budget's (the GPU's; a simulator's profile's).
func (j *job) firstPassOver(cfg config.Config, head *results.File, spent results.GPUTime) string {
	budget := time.Duration(cfg.Budget)
	used := time.Duration((spent.BuildSeconds + spent.LoadSeconds + spent.MeasureSeconds) * head.TimeScale() * float64(time.Second))
	if budget <= 0 || used < budget {
		return ""
	}
	est := ""
	c := cfg
	c.Budget = 0
	if _, d, err := j.priceCells(c); err == nil && d > 0 {
		est = fmt.Sprintf(" (the plan expected %.1f min of measurement)", d.Minutes())
	}
	return fmt.Sprintf("The first pass (build, model load and measurement) took %s%s of the %s budget: nothing was left to confirm or rerun undecided cells. `speedmatrix validate` states the first pass against the budget: raise budget, or measure fewer cells.",
		seconds(used.Seconds()), est, seconds(budget.Seconds()))
}
