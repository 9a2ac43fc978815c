package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/speedmatrix/speedmatrix/bench"
	"github.com/speedmatrix/speedmatrix/compare"
	"github.com/speedmatrix/speedmatrix/ghbot"
	"github.com/speedmatrix/speedmatrix/measure"
	"github.com/speedmatrix/speedmatrix/report"
	"github.com/speedmatrix/speedmatrix/results"
	"github.com/speedmatrix/speedmatrix/sim"
	"github.com/speedmatrix/speedmatrix/sim/inject"
	"github.com/speedmatrix/speedmatrix/sim/profile"
	"github.com/speedmatrix/speedmatrix/store"
)

// demoSpeedup is the demo's default simulator speedup, the simulator's default: 11 quick
// matrices take about 25 s.
const demoSpeedup = sim.DefaultSpeedup

// demoSlowdown is the regression the demo injects into its head by default: each decode step
// takes 1.3× as long wherever 8 or more sequences run at once (a step-time factor, as the
// simulator's --slowdown is: decode tok/s there falls by 1 − 1/1.3, about 23 %), so that the
// quick matrix's cells at concurrency 8 and 32 regress and those at concurrency 1 do not.
const demoSlowdown = "decode=1.3@batch>=8"

// demoBaseSHA is the made-up default-branch commit the demo stores its baseline under.
const demoBaseSHA = "ba5eba1100000000000000000000000000000000"

// demoHistoryRuns is how many separate runs of the base the demo stores by default (the
// baseline and the runs of earlier default-branch commits): its history, from which compare
// measures each cell's run-to-run noise, as the bot does once the store holds
// store.min_history results. With one run a side nothing measures that noise and only the
// prior bounds it.
//
// 10 is the bot's default store.min_history (store.DefaultMinHistory). Fewer leave compare a
// variance on so few degrees of freedom that it blocks too little. In the simulator's time
// (testing/synctest), 3 runs caught neither the default slowdown nor decode=1.10@ctx>=32K (all
// 8 cells inconclusive); 5 and 10 caught both. In real time on a loaded 2-core machine, with all
// runs at once, 5 runs caught the 10 % one in 1 of 2 tries (only just: q = 0.006 at a level of
// 0.0062) and 10 runs in 1 of 2; 10 runs, 4 or 6 at a time, caught it in each of 3 tries.
const demoHistoryRuns = store.DefaultMinHistory

// demoParallel is how many of the demo's runs measure at once. A quick matrix on the simulator
// is about 12 s of wall time and 1.5 CPU-seconds; on a loaded 2-core machine, 11 runs at once
// spread a decode cell's throughput across the base's runs to a CV of up to 3.3 %, against
// 0.5–2 % with 6 at once, so the default demo measures in two waves of about 12 s each (about
// 25 s in all).
const demoParallel = 6

// demoOptions are the settings of `speedmatrix demo`.
type demoOptions struct {
	dir          string
	matrix       string
	headSlowdown string
	historyRuns  int
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
		Short: "Run the main job on the built-in simulator: store a baseline with its history, measure a slower head, compare, write the PR comment and the check",
		Long: `Demo runs what speedmatrix does for a pull request, on this machine, with no GPU and no
network. It starts the built-in simulator (profile calibrated to vLLM serving GLM-5.3-Flash
on 2× H200) and:

 1. measures the matrix (--matrix: quick by default) for the base --history-runs times (default ` + strconv.Itoa(demoHistoryRuns) + `), each a
    separate run of the simulator (` + strconv.Itoa(demoParallel) + ` at a time), and stores them as the results of as many
    default-branch commits in a local store (DIR/store), as the bot stores pushes' results on
    its data branch: the newest is the baseline, all of them its history, from which the
    comparison measures each cell's run-to-run noise (with one run, only a prior bounds it);
 2. measures the same matrix again for the head, with a regression injected on purpose
    (--head-slowdown; default ` + demoSlowdown + `: each decode step takes 1.3× as long at
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
			if o.format != "summary" && o.format != "markdown" && o.format != "text" {
				return usagef("--format %q: want summary, markdown or text", o.format)
			}
			if o.matrix != "quick" && o.matrix != "full" {
				return usagef("--matrix %q: want quick or full", o.matrix)
			}
			if o.historyRuns < 1 {
				return usagef("--history-runs %d: want 1 or more (the baseline's own run counts; compare measures the noise from %d)", o.historyRuns, compare.DefaultThresholds().MinHistory)
			}
			return runDemo(cmd, env, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.dir, "dir", "", "folder for base.json, history/, head.json, store/, comparison.json, comment.md and check.md (default: a new temporary folder)")
	f.StringVar(&o.matrix, "matrix", "quick", "matrix to measure: quick (8 cells, about 25 s) or full (the reference matrix, 73 cells, several minutes)")
	f.StringVar(&o.headSlowdown, "head-slowdown", demoSlowdown, "make the head slower (see speedmatrix sim --help); '' for an A/A run")
	f.IntVar(&o.historyRuns, "history-runs", demoHistoryRuns, "measure the base this many times, as separate runs of earlier default-branch commits, and store them as the baseline's history (the run-to-run noise)")
	f.StringVar(&o.profile, "sim-profile", profile.Default, "the simulator's profile: a built-in name or a YAML file")
	f.Float64Var(&o.speedup, "sim-speedup", demoSpeedup, "run the simulator this many times faster than its profile (not given: lowered to 5 on a machine too busy for 20)")
	f.StringVar(&o.format, "format", "summary", "what to print: summary, markdown (the PR comment) or text (the comparison for a terminal)")
	f.BoolVar(&o.quiet, "quiet", false, "show no progress while measuring")
	f.BoolVar(&o.exitCode, "exit-code", false, "exit with compare's status: 3 when the comparison finds a regression, 4 when its verdict cannot pass")
	return cmd
}

// demoRun is one separate run of the simulator the demo measures: a server of its own, started
// and stopped for it, as each push to the default branch and each pull request is measured.
type demoRun struct {
	side     string // "base" or "head"
	commit   string // the made-up commit it stands for
	path     string // its results file
	seed     uint64
	slowdown string
}

// demoRuns returns the runs the demo measures: the base n times (the oldest first, the last the
// baseline, commit demoBaseSHA, written to base.json; the earlier ones to history/), then the
// head (head.json). Each has its own seed: separate runs draw separate noise.
func demoRuns(dir string, n int, slowdown string) []demoRun {
	var runs []demoRun
	for i := 1; i <= n; i++ {
		r := demoRun{side: "base", commit: demoHistorySHA(i), seed: uint64(i)}
		r.path = filepath.Join(dir, "history", ghbot.ShortSHA(r.commit)+".json")
		if i == n {
			r.commit, r.path = demoBaseSHA, filepath.Join(dir, "base.json")
		}
		runs = append(runs, r)
	}
	return append(runs, demoRun{side: "head", path: filepath.Join(dir, "head.json"), seed: uint64(n + 1), slowdown: slowdown})
}

// demoHistorySHA is the made-up default-branch commit of the demo's i-th base run (1 the oldest).
func demoHistorySHA(i int) string { return fmt.Sprintf("ea71e%02d%033d", i, 0) }

// demoMeasure measures every run on its own simulator, demoParallel at a time, in order: a
// simulator's work is mostly waiting, so that the 11 runs of the default demo take about as long
// as two one after the other. Only the head shows progress (bars of runs at once would mix).
func demoMeasure(ctx context.Context, env *Env, o demoOptions, runs []demoRun) error {
	for _, r := range runs {
		if err := os.MkdirAll(filepath.Dir(r.path), 0o755); err != nil {
			return err
		}
	}
	// A run the machine starved ends the others: the demo measures them all again slower.
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	errs := make([]error, len(runs))
	var wg sync.WaitGroup
	slots := make(chan struct{}, demoParallel)
	for i, r := range runs {
		ro := measure.DefaultSettings()
		ro.Matrix = o.matrix
		ro.Quiet = o.quiet || r.side != "head"
		ro.Output = r.path
		ro.Sim.Profile, ro.Sim.Speedup, ro.Sim.Seed, ro.Sim.Slowdown = o.profile, o.speedup, r.seed, r.slowdown
		select { // in order: the head, last, is measured beside the newest base runs
		case slots <- struct{}{}:
		case <-ctx.Done():
			wg.Wait()
			if err := context.Cause(ctx); errors.Is(err, bench.ErrHostStarved) {
				return err
			}
			return ctx.Err()
		}
		env.Log.Info("demo: measuring the "+o.matrix+" matrix on the simulator", "side", r.side, "commit", ghbot.ShortSHA(r.commit), "slowdown", r.slowdown)
		wg.Go(func() {
			defer func() { <-slots }()
			if err := measure.Run(ctx, ro, env.measureDeps()); err != nil {
				errs[i] = fmt.Errorf("measure the %s (%s): %w", r.side, filepath.Base(r.path), err)
				if errors.Is(err, bench.ErrHostStarved) {
					cancel(errs[i])
				}
			}
		})
	}
	wg.Wait()
	if err := context.Cause(ctx); errors.Is(err, bench.ErrHostStarved) {
		return err // the others' errors are the interruption it caused
	}
	return errors.Join(errs...)
}

// demoSpeedupFloor is the lowest speedup the demo lowers its simulator to on its own: below it
// the demo would take minutes, and a machine that cannot keep even this speed is told so.
const demoSpeedupFloor = 5

// demoProbe is how long the demo measures the machine's lateness before it picks its speedup.
const demoProbe = time.Second

// demoWindow returns the demo's decode window at speedup: the default window's model time,
// as run gives it the in-process simulator (measure.Settings.simTime).
func demoWindow(speedup float64) time.Duration {
	return max(time.Duration(float64(measure.DefaultSettings().Duration)/speedup), bench.MinDuration)
}

// demoMeasureFed measures the demo's runs (demoMeasure) at o.speedup; when the machine could
// not keep up with the simulator (bench.ErrHostStarved: the client or the simulator was kept
// off the CPU so long that a window would measure the machine's load, not the engine) and
// adapt is set (--sim-speedup not given), it measures every run again, base and head alike, at
// a quarter of the speedup, down to demoSpeedupFloor, and says so: lowered is what the
// summary tells ("" when the speedup stayed). A machine that cannot keep the floor ends the
// demo with the error, which names the setting to try.
func demoMeasureFed(ctx context.Context, env *Env, o *demoOptions, runs []demoRun, adapt bool) (lowered string, err error) {
	first := o.speedup
	if adapt {
		// A second of this machine's lateness before measuring: a machine already too busy
		// for the default speedup's windows starts lower, rather than after a failed try.
		late := bench.MeasureLag(ctx, demoProbe)
		for o.speedup/4 >= demoSpeedupFloor {
			why := bench.KeepsUp(demoWindow(o.speedup), late)
			if why == "" {
				break
			}
			env.Log.Warn("demo: this machine is busy; measuring at a lower speedup", "speedup", o.speedup, "now", o.speedup/4, "why", why)
			o.speedup /= 4
			lowered = fmt.Sprintf("lowered from %g×: this machine, busy with other work, would not keep the simulator and the client on time at %g× (%s while idle)", first, first, why)
		}
	}
	for {
		err = demoMeasure(ctx, env, *o, runs)
		if err == nil || !errors.Is(err, bench.ErrHostStarved) || !adapt || o.speedup/4 < demoSpeedupFloor {
			return lowered, err
		}
		next := o.speedup / 4
		env.Log.Warn("demo: this machine could not keep up with the simulator; measuring every run again, the base and the head, at a lower speedup",
			"speedup", o.speedup, "now", next, "why", firstLine(err.Error()))
		o.speedup = next
		why := firstLine(err.Error())
		if se := (*bench.StarvedError)(nil); errors.As(err, &se) {
			why = se.What + ": " + se.Why
		}
		lowered = fmt.Sprintf("lowered from %g×: this machine, busy with other work, could not keep the simulator and the client on time at %g× (%s)", first, first, why)
	}
}

// runDemo measures the base several times and the head on the simulator, stores the base's
// runs under default-branch commits (the newest the baseline, all of them its history), compares
// the head with the stored baseline and history as the bot does, and writes and summarises the
// comment and the check.
func runDemo(cmd *cobra.Command, env *Env, o demoOptions) error {
	ctx := cmd.Context()
	// The head's slow-down is checked before the base is measured: a mistake costs nothing.
	if _, err := inject.ParseSlowdown(o.headSlowdown); err != nil {
		return usagef("--head-slowdown %q: %v", o.headSlowdown, err)
	}
	if _, err := profile.Load(o.profile, nil); err != nil {
		return usagef("--sim-profile: %v", err)
	}
	if err := sim.CheckSpeedup(o.speedup); err != nil {
		return usagef("--sim-speedup %v", err)
	}
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
	runs := demoRuns(dir, o.historyRuns, o.headSlowdown)
	lowered, err := demoMeasureFed(ctx, env, &o, runs, !cmd.Flags().Changed("sim-speedup"))
	if err != nil {
		return err
	}
	// The base's runs go through the store, as the bot's pushes do: each stored under its
	// default-branch commit, the oldest first; the baseline is found again by the head's config
	// id, and the history read as the bot reads it (store.History).
	st := store.NewDir(filepath.Join(dir, "store"))
	for _, r := range runs[:len(runs)-1] {
		f, err := results.ReadFile(r.path)
		if err != nil {
			return err
		}
		if _, err := st.Put(ctx, store.Entry{Commit: r.commit, Kind: store.KindDefault}, f); err != nil {
			return fmt.Errorf("store the base run of %s: %w", ghbot.ShortSHA(r.commit), err)
		}
	}
	head, err := results.ReadFile(runs[len(runs)-1].path)
	if err != nil {
		return err
	}
	stored, entry, err := st.Get(ctx, demoBaseSHA, store.ConfigID(head))
	if err != nil {
		return fmt.Errorf("find the baseline in the store: %w", err)
	}
	hist, _, note, skipped, err := store.History(ctx, st, entry.ConfigID, store.HistoryOptions{Max: o.historyRuns, Min: compare.DefaultThresholds().MinHistory})
	if err != nil {
		return fmt.Errorf("read the history from the store: %w", err)
	}
	if len(skipped) > 0 {
		return fmt.Errorf("read the history from the store: %w", errors.Join(skipped...))
	}
	env.Log.Info("demo: baseline stored and found again", "store", st.Root(), "commit", ghbot.ShortSHA(demoBaseSHA), "config_id", entry.ConfigID)
	env.Log.Info("demo: " + note)
	d, err := renderDemo(stored, head, hist, filepath.Join(dir, "base.json"), filepath.Join(dir, "head.json"))
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
		err = demoSummary(env.Stdout, d, demoSummaryInput{lowered: lowered, dir: dir, store: st.Root(), slowdown: o.headSlowdown, matrix: o.matrix, profile: o.profile, speedup: head.TimeScale(), runs: o.historyRuns, tempDir: o.dir == ""})
	}
	if err != nil {
		return err
	}
	env.Log.Info("demo: done", "dir", dir, "verdict", d.Comparison.Verdict, "conclusion", d.Conclusion)
	if o.exitCode {
		return compareExit(env, d.Comparison) // compare.go: the verdict table's exit status
	}
	return nil
}
