package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/speedmatrix/speedmatrix/compare"
	"github.com/speedmatrix/speedmatrix/report"
	"github.com/speedmatrix/speedmatrix/results"
	"github.com/speedmatrix/speedmatrix/sim/profile"
)

// demoSpeedup is the demo's default simulator speedup: twice that of `speedmatrix run`, so that
// building and running the demo on a fresh 2-core machine takes under two minutes.
const demoSpeedup = 2 * DefaultSimSpeedup

// demoOptions are the settings of `speedmatrix demo`.
type demoOptions struct {
	dir          string
	headSlowdown string
	profile      string
	speedup      float64
	format       string
	quiet        bool
}

// newDemoCmd builds `speedmatrix demo`: the main job end to end on the built-in simulator.
func newDemoCmd(env *Env) *cobra.Command {
	var o demoOptions
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Run the main job on the built-in simulator: measure base and head, compare, render the PR comment",
		Long: `Demo runs what speedmatrix does on a pull request, on this machine, with no GPU and no
network: it starts the built-in simulator (profile calibrated to vLLM serving GLM-5.3-Flash
on 2× H200), measures the quick matrix for the base, measures it again for the head (with
--head-slowdown, the head is made slower on purpose), compares the two statistically and
prints the pull-request comment: the verdicts, the matrix of changes and the head's speed
test matrix.

The results files, the comparison and the comment are kept in --dir. The exit status is 3
when the comparison finds a regression, as for "speedmatrix compare".`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.format != "markdown" && o.format != "text" {
				return usagef("--format %q: want markdown or text", o.format)
			}
			return runDemo(cmd, env, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.dir, "dir", "", "folder for base.json, head.json, comparison.json and comment.md (default: a new temporary folder)")
	f.StringVar(&o.headSlowdown, "head-slowdown", "", "make the head slower, e.g. decode=1.10@ctx>=32K (see speedmatrix sim --help); default: the head is the same engine, an A/A run")
	f.StringVar(&o.profile, "sim-profile", profile.Default, "the simulator's profile: a built-in name or a YAML file")
	f.Float64Var(&o.speedup, "sim-speedup", demoSpeedup, "run the simulator this many times faster than its profile")
	f.StringVar(&o.format, "format", "markdown", "what to print: markdown (the PR comment) or text (the comparison for a terminal)")
	f.BoolVar(&o.quiet, "quiet", false, "show no progress while measuring")
	return cmd
}

// runDemo measures base and head on the simulator, compares them and prints the comment.
func runDemo(cmd *cobra.Command, env *Env, o demoOptions) error {
	ctx := cmd.Context()
	dir := o.dir
	if dir == "" {
		d, err := os.MkdirTemp("", "speedmatrix-demo-")
		if err != nil {
			return err
		}
		dir = d
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	paths := map[string]string{}
	for i, side := range []string{"base", "head"} {
		ro := defaultRunOptions()
		ro.Matrix = "quick"
		ro.Quiet = o.quiet
		ro.Output = filepath.Join(dir, side+".json")
		ro.Sim.Profile, ro.Sim.Speedup, ro.Sim.Seed = o.profile, o.speedup, uint64(i+1)
		if side == "head" {
			ro.Sim.Slowdown = o.headSlowdown
		}
		env.Log.Info("demo: measuring the quick matrix on the simulator", "side", side, "slowdown", ro.Sim.Slowdown)
		if err := runSimulated(ctx, env, ro); err != nil {
			return fmt.Errorf("measure %s: %w", side, err)
		}
		paths[side] = ro.Output
	}
	base, err := results.ReadFile(paths["base"])
	if err != nil {
		return err
	}
	head, err := results.ReadFile(paths["head"])
	if err != nil {
		return err
	}
	c, err := compare.Compare(compare.Input{Base: []*results.File{base}, Head: []*results.File{head},
		BasePath: paths["base"], HeadPath: paths["head"]}, compare.DefaultThresholds())
	if err != nil {
		return err
	}
	if err := results.WriteComparisonFile(filepath.Join(dir, "comparison.json"), c); err != nil {
		return err
	}
	comment, err := report.NewComment(c, report.CommentContext{Base: base, Head: head})
	if err != nil {
		return err
	}
	if err := results.WriteFileAtomic(filepath.Join(dir, "comment.md"), []byte(comment.Body)); err != nil {
		return err
	}
	if o.format == "text" {
		err = report.ComparisonText(env.Stdout, c)
	} else {
		_, err = io.WriteString(env.Stdout, comment.Body)
	}
	if err != nil {
		return err
	}
	env.Log.Info("demo: done", "dir", dir, "verdict", c.Verdict)
	if c.Verdict == results.VerdictRegression {
		return ErrRegression
	}
	return nil
}
