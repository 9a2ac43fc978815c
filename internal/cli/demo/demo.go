// Package demo is `speedmatrix demo`: its flags, then package demo, and the output chosen.
package demo

import (
	"io"
	"strconv"

	"github.com/speedmatrix/speedmatrix/internal/cli/cmdutil"
	"github.com/speedmatrix/speedmatrix/sim"

	"github.com/spf13/cobra"

	"github.com/speedmatrix/speedmatrix/compare"
	"github.com/speedmatrix/speedmatrix/demo"
	"github.com/speedmatrix/speedmatrix/report"
	"github.com/speedmatrix/speedmatrix/sim/profile"
)

// NewCmd builds `speedmatrix demo`: the main job end to end on the built-in simulator.
func NewCmd(env *cmdutil.Env) *cobra.Command {
	var o demo.Options
	var format string
	var exitCode bool
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Run the main job on the built-in simulator: store a baseline with its history, measure a slower head, compare, write the PR comment and the check",
		Long: `Demo runs what speedmatrix does for a pull request, on this machine, with no GPU and no
network. It starts the built-in simulator (profile calibrated to vLLM serving GLM-5.3-Flash
on 2× H200) and:

 1. measures the matrix (--matrix: quick by default) for the base --history-runs times (default ` + strconv.Itoa(demo.DefaultHistoryRuns) + `), each a
    separate run of the simulator (` + strconv.Itoa(demo.Parallel) + ` at a time), and stores them as the results of as many
    default-branch commits in a local store (DIR/store), as the bot stores pushes' results on
    its data branch: the newest is the baseline, all of them its history, from which the
    comparison measures each cell's run-to-run noise (with one run, only a prior bounds it);
 2. measures the same matrix again for the head, with a regression injected on purpose
    (--head-slowdown; default ` + demo.DefaultSlowdown + `: each decode step takes 1.3× as long at
    8 or more sequences at once, so decode tok/s there falls by about 23 %; the factor
    multiplies step time, not throughput; --head-slowdown '' makes it an A/A run);
 3. finds the baseline and its history in the store, compares the head with them
    statistically, and writes the PR comment (DIR/comment.md) and the check run's output
    (DIR/check.md) the bot would post;
 4. summarises on the terminal: the verdict, the cells that regressed, and the files.

Figures are in the profile's time (the rates of the GPU it simulates), though it runs
--sim-speedup times faster. A measurement the machine could not make (the client or the
simulator kept off the CPU by other work long enough to bias a window) is never a verdict:
it is measured again, and without --sim-speedup the demo measures every run at a quarter of
the speed (down to 5×) on a machine too busy for 20×, and says so; a machine too busy even
for that ends the demo with an error that names the setting to try. --format markdown prints the PR comment instead of the summary,
--format text the comparison for a terminal.

The exit status is 0 when the demo ran, whatever the verdict; with --exit-code it is the one
"speedmatrix compare" gives on the demo's files (docs/verdicts.md): 3 when the comparison finds
a regression, 4 when the verdict cannot pass (unproven, incomplete, not comparable).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if format != "summary" && format != "markdown" && format != "text" {
				return cmdutil.Usagef("--format %q: want summary, markdown or text", format)
			}
			if o.Matrix != "quick" && o.Matrix != "full" {
				return cmdutil.Usagef("--matrix %q: want quick or full", o.Matrix)
			}
			if o.HistoryRuns < 1 {
				return cmdutil.Usagef("--history-runs %d: want 1 or more (the baseline's own run counts; compare measures the noise from %d)", o.HistoryRuns, compare.DefaultThresholds().MinHistory)
			}
			o.AdaptSpeedup = !cmd.Flags().Changed("sim-speedup")
			res, err := demo.Run(cmd.Context(), o, env.MeasureDeps())
			if err != nil {
				return err
			}
			switch format {
			case "text":
				err = report.ComparisonText(env.Stdout, res.Comparison)
			case "markdown":
				_, err = io.WriteString(env.Stdout, res.Comment.Body)
			default:
				err = demo.Summary(env.Stdout, res.Pages, res.Summary)
			}
			if err != nil {
				return err
			}
			env.Log.Info("demo: done", "dir", res.Dir, "verdict", res.Comparison.Verdict, "conclusion", res.Conclusion)
			if exitCode {
				return cmdutil.CompareExit(env, res.Comparison) // the verdict table's exit status, as compare's
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Dir, "dir", "", "folder for base.json, history/, head.json, store/, comparison.json, comment.md and check.md (default: a new temporary folder)")
	f.StringVar(&o.Matrix, "matrix", "quick", "matrix to measure: quick (8 cells, about 25 s) or full (the reference matrix, 73 cells, several minutes)")
	f.StringVar(&o.HeadSlowdown, "head-slowdown", demo.DefaultSlowdown, "make the head slower (see speedmatrix sim --help); '' for an A/A run")
	f.IntVar(&o.HistoryRuns, "history-runs", demo.DefaultHistoryRuns, "measure the base this many times, as separate runs of earlier default-branch commits, and store them as the baseline's history (the run-to-run noise)")
	f.StringVar(&o.Profile, "sim-profile", profile.Default, "the simulator's profile: a built-in name or a YAML file")
	f.Float64Var(&o.Speedup, "sim-speedup", sim.DefaultSpeedup, "run the simulator this many times faster than its profile (not given: lowered to 5 on a machine too busy for 20)")
	f.StringVar(&format, "format", "summary", "what to print: summary, markdown (the PR comment) or text (the comparison for a terminal)")
	f.BoolVar(&o.Quiet, "quiet", false, "show no progress while measuring")
	f.BoolVar(&exitCode, "exit-code", false, "exit with compare's status: 3 when the comparison finds a regression, 4 when its verdict cannot pass")
	return cmd
}
