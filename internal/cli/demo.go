package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/speedmatrix/speedmatrix/ghbot"
	"github.com/speedmatrix/speedmatrix/report"
	"github.com/speedmatrix/speedmatrix/results"
	"github.com/speedmatrix/speedmatrix/sim/profile"
	"github.com/speedmatrix/speedmatrix/store"
)

// demoSpeedup is the demo's default simulator speedup: twice that of `speedmatrix run`, so that
// building and running the demo on a fresh 2-core machine takes under two minutes.
const demoSpeedup = 2 * DefaultSimSpeedup

// demoSlowdown is the regression the demo injects into its head by default: decode 30 % slower
// wherever 8 or more sequences run at once, so that the quick matrix's cells at concurrency 8
// and 32 regress and those at concurrency 1 do not.
const demoSlowdown = "decode=1.3@batch>=8"

// demoBaseSHA is the made-up default-branch commit the demo stores its baseline under.
const demoBaseSHA = "ba5eba1100000000000000000000000000000000"

// demoOptions are the settings of `speedmatrix demo`.
type demoOptions struct {
	dir          string
	headSlowdown string
	profile      string
	speedup      float64
	format       string
	quiet        bool
	exitCode     bool
}

// newDemoCmd builds `speedmatrix demo`: the main job end to end on the built-in simulator.
func newDemoCmd(env *Env) *cobra.Command {
	var o demoOptions
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Run the main job on the built-in simulator: store a baseline, measure a slower head, compare, write the PR comment and the check",
		Long: `Demo runs what speedmatrix does for a pull request, on this machine, with no GPU and no
network. It starts the built-in simulator (profile calibrated to vLLM serving GLM-5.3-Flash
on 2× H200) and:

 1. measures the quick matrix for the base and stores it as the baseline of a default-branch
    commit in a local store (DIR/store), as the bot stores a push's results on its data branch;
 2. measures the quick matrix again for the head, with a regression injected on purpose
    (--head-slowdown; default ` + demoSlowdown + `: decode 30 % slower at 8 or more
    sequences at once; --head-slowdown '' makes it an A/A run);
 3. finds the baseline in the store, compares the two statistically, and writes the PR
    comment (DIR/comment.md) and the check run's output (DIR/check.md) the bot would post;
 4. summarises on the terminal: the verdict, the cells that regressed, and the files.

Figures are in the profile's time (the rates of the GPU it simulates), though it runs
--sim-speedup times faster. --format markdown prints the PR comment instead of the summary,
--format text the comparison for a terminal.

The exit status is 0 when the demo ran, whatever the verdict; with --exit-code it is 3 when
the comparison finds a regression, as for "speedmatrix compare".`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.format != "summary" && o.format != "markdown" && o.format != "text" {
				return usagef("--format %q: want summary, markdown or text", o.format)
			}
			return runDemo(cmd, env, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.dir, "dir", "", "folder for base.json, head.json, store/, comparison.json, comment.md and check.md (default: a new temporary folder)")
	f.StringVar(&o.headSlowdown, "head-slowdown", demoSlowdown, "make the head slower (see speedmatrix sim --help); '' for an A/A run")
	f.StringVar(&o.profile, "sim-profile", profile.Default, "the simulator's profile: a built-in name or a YAML file")
	f.Float64Var(&o.speedup, "sim-speedup", demoSpeedup, "run the simulator this many times faster than its profile")
	f.StringVar(&o.format, "format", "summary", "what to print: summary, markdown (the PR comment) or text (the comparison for a terminal)")
	f.BoolVar(&o.quiet, "quiet", false, "show no progress while measuring")
	f.BoolVar(&o.exitCode, "exit-code", false, "exit with status 3 when the comparison finds a regression")
	return cmd
}

// runDemo measures base and head on the simulator, stores the base as the baseline, compares
// the head with the stored baseline and writes and summarises the comment and the check.
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
	// The baseline goes through the store, as the bot's does: stored under a default-branch
	// commit, found again by the head's config id.
	st := store.NewDir(filepath.Join(dir, "store"))
	if _, err := st.Put(ctx, store.Entry{Commit: demoBaseSHA, Kind: store.KindDefault}, base); err != nil {
		return fmt.Errorf("store the baseline: %w", err)
	}
	stored, entry, err := st.Get(ctx, demoBaseSHA, store.ConfigID(head))
	if err != nil {
		return fmt.Errorf("find the baseline in the store: %w", err)
	}
	env.Log.Info("demo: baseline stored and found again", "store", st.Root(), "commit", ghbot.ShortSHA(demoBaseSHA), "config_id", entry.ConfigID)
	d, err := renderDemo(stored, head, paths["base"], paths["head"])
	if err != nil {
		return err
	}
	files := []struct{ name, data string }{{"comment.md", d.Comment.Body}, {"check.md", d.Check}}
	if err := results.WriteComparisonFile(filepath.Join(dir, "comparison.json"), d.Comparison); err != nil {
		return err
	}
	for _, f := range files {
		if err := results.WriteFileAtomic(filepath.Join(dir, f.name), []byte(f.data)); err != nil {
			return err
		}
	}
	switch o.format {
	case "text":
		err = report.ComparisonText(env.Stdout, d.Comparison)
	case "markdown":
		_, err = io.WriteString(env.Stdout, d.Comment.Body)
	default:
		err = demoSummary(env.Stdout, d, demoSummaryInput{dir: dir, store: st.Root(), slowdown: o.headSlowdown, profile: o.profile, speedup: head.TimeScale()})
	}
	if err != nil {
		return err
	}
	env.Log.Info("demo: done", "dir", dir, "verdict", d.Comparison.Verdict, "conclusion", d.Conclusion)
	if o.exitCode && d.Comparison.Verdict == results.VerdictRegression {
		return ErrRegression
	}
	return nil
}
