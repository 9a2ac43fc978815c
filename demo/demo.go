package demo

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/speedmatrix/speedmatrix/bench"
	"github.com/speedmatrix/speedmatrix/compare"
	"github.com/speedmatrix/speedmatrix/ghbot"
	"github.com/speedmatrix/speedmatrix/internal/usage"
	"github.com/speedmatrix/speedmatrix/measure"
	"github.com/speedmatrix/speedmatrix/results"
	"github.com/speedmatrix/speedmatrix/sim"
	"github.com/speedmatrix/speedmatrix/sim/inject"
	"github.com/speedmatrix/speedmatrix/sim/profile"
	"github.com/speedmatrix/speedmatrix/store"
)

// DefaultSlowdown is the regression the demo injects into its head by default: each decode step
// takes 1.3× as long wherever 8 or more sequences run at once (a step-time factor, as the
// simulator's --slowdown is: decode tok/s there falls by 1 − 1/1.3, about 23 %), so that the
// quick matrix's cells at concurrency 8 and 32 regress and those at concurrency 1 do not.
const DefaultSlowdown = "decode=1.3@batch>=8"

// BaseSHA is the made-up default-branch commit the demo stores its baseline under.
const BaseSHA = "ba5eba1100000000000000000000000000000000"

// DefaultHistoryRuns is how many separate runs of the base the demo stores by default (the
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
const DefaultHistoryRuns = store.DefaultMinHistory

// Parallel is how many of the demo's runs measure at once. A quick matrix on the simulator
// is about 12 s of wall time and 1.5 CPU-seconds; on a loaded 2-core machine, 11 runs at once
// spread a decode cell's throughput across the base's runs to a CV of up to 3.3 %, against
// 0.5–2 % with 6 at once, so the default demo measures in two waves of about 12 s each (about
// 25 s in all).
const Parallel = 6

// Options are the settings of a demo (the flags of `speedmatrix demo`).
type Options struct {
	// Dir is the folder the demo writes into ("": a new temporary folder).
	Dir          string
	Matrix       string
	HeadSlowdown string
	HistoryRuns  int
	Profile      string
	Speedup      float64
	// AdaptSpeedup lowers Speedup on a machine too busy for it (the speedup was not asked for).
	AdaptSpeedup bool
	Quiet        bool
}

// Result is what a demo measured, stored and rendered.
type Result struct {
	Pages
	// Dir is the folder written; Summary what the terminal summary says besides the pages.
	Dir     string
	Summary SummaryInput
}

// Job is one separate run of the simulator the demo measures: a server of its own, started
// and stopped for it, as each push to the default branch and each pull request is measured.
type Job struct {
	Side     string // "base" or "head"
	Commit   string // the made-up commit it stands for
	Path     string // its results file
	Seed     uint64
	Slowdown string
}

// Jobs returns the runs the demo measures: the base n times (the oldest first, the last the
// baseline, commit BaseSHA, written to base.json; the earlier ones to history/), then the
// head (head.json). Each has its own seed: separate runs draw separate noise.
func Jobs(dir string, n int, slowdown string) []Job {
	var runs []Job
	for i := 1; i <= n; i++ {
		r := Job{Side: "base", Commit: HistorySHA(i), Seed: uint64(i)}
		r.Path = filepath.Join(dir, "history", ghbot.ShortSHA(r.Commit)+".json")
		if i == n {
			r.Commit, r.Path = BaseSHA, filepath.Join(dir, "base.json")
		}
		runs = append(runs, r)
	}
	return append(runs, Job{Side: "head", Path: filepath.Join(dir, "head.json"), Seed: uint64(n + 1), Slowdown: slowdown})
}

// HistorySHA is the made-up default-branch commit of the demo's i-th base run (1 the oldest).
func HistorySHA(i int) string { return fmt.Sprintf("ea71e%02d%033d", i, 0) }

// measureAll measures every run on its own simulator, Parallel at a time, in order: a
// simulator's work is mostly waiting, so that the 11 runs of the default demo take about as long
// as two one after the other. Only the head shows progress (bars of runs at once would mix).
func measureAll(ctx context.Context, deps measure.Deps, o Options, runs []Job) error {
	for _, r := range runs {
		if err := os.MkdirAll(filepath.Dir(r.Path), 0o755); err != nil {
			return err
		}
	}
	// A run the machine starved ends the others: the demo measures them all again slower.
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	errs := make([]error, len(runs))
	var wg sync.WaitGroup
	slots := make(chan struct{}, Parallel)
	for i, r := range runs {
		ro := measure.DefaultSettings()
		ro.Matrix = o.Matrix
		ro.Quiet = o.Quiet || r.Side != "head"
		ro.Output = r.Path
		ro.Sim.Profile, ro.Sim.Speedup, ro.Sim.Seed, ro.Sim.Slowdown = o.Profile, o.Speedup, r.Seed, r.Slowdown
		select { // in order: the head, last, is measured beside the newest base runs
		case slots <- struct{}{}:
		case <-ctx.Done():
			wg.Wait()
			if err := context.Cause(ctx); errors.Is(err, bench.ErrHostStarved) {
				return err
			}
			return ctx.Err()
		}
		deps.Log.Info("demo: measuring the "+o.Matrix+" matrix on the simulator", "side", r.Side, "commit", ghbot.ShortSHA(r.Commit), "slowdown", r.Slowdown)
		wg.Go(func() {
			defer func() { <-slots }()
			if err := measure.Run(ctx, ro, deps); err != nil {
				errs[i] = fmt.Errorf("measure the %s (%s): %w", r.Side, filepath.Base(r.Path), err)
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

// speedupFloor is the lowest speedup the demo lowers its simulator to on its own: below it
// the demo would take minutes, and a machine that cannot keep even this speed is told so.
const speedupFloor = 5

// probe is how long the demo measures the machine's lateness before it picks its speedup.
const probe = time.Second

// window returns the demo's decode window at speedup: the default window's model time,
// as run gives it the in-process simulator.
func window(speedup float64) time.Duration {
	return measure.SimWindow(results.DefaultWindow, speedup)
}

// measureFed measures the demo's runs (measureAll) at o.Speedup; when the machine could
// not keep up with the simulator (bench.ErrHostStarved: the client or the simulator was kept
// off the CPU so long that a window would measure the machine's load, not the engine) and
// adapt is set (--sim-speedup not given), it measures every run again, base and head alike, at
// a quarter of the speedup, down to speedupFloor, and says so: lowered is what the
// summary tells ("" when the speedup stayed). A machine that cannot keep the floor ends the
// demo with the error, which names the setting to try.
func measureFed(ctx context.Context, deps measure.Deps, o *Options, runs []Job, adapt bool) (lowered string, err error) {
	first := o.Speedup
	if adapt {
		// A second of this machine's lateness before measuring: a machine already too busy
		// for the default speedup's windows starts lower, rather than after a failed try.
		late := bench.MeasureLag(ctx, probe)
		for o.Speedup/4 >= speedupFloor {
			why := bench.KeepsUp(window(o.Speedup), late)
			if why == "" {
				break
			}
			deps.Log.Warn("demo: this machine is busy; measuring at a lower speedup", "speedup", o.Speedup, "now", o.Speedup/4, "why", why)
			o.Speedup /= 4
			lowered = fmt.Sprintf("lowered from %g×: this machine, busy with other work, would not keep the simulator and the client on time at %g× (%s while idle)", first, first, why)
		}
	}
	for {
		err = measureAll(ctx, deps, *o, runs)
		if err == nil || !errors.Is(err, bench.ErrHostStarved) || !adapt || o.Speedup/4 < speedupFloor {
			return lowered, err
		}
		next := o.Speedup / 4
		deps.Log.Warn("demo: this machine could not keep up with the simulator; measuring every run again, the base and the head, at a lower speedup",
			"speedup", o.Speedup, "now", next, "why", firstLine(err.Error()))
		o.Speedup = next
		why := firstLine(err.Error())
		if se := (*bench.StarvedError)(nil); errors.As(err, &se) {
			why = se.What + ": " + se.Why
		}
		lowered = fmt.Sprintf("lowered from %g×: this machine, busy with other work, could not keep the simulator and the client on time at %g× (%s)", first, first, why)
	}
}

// Run measures the base o.HistoryRuns times and the head on the simulator, stores the base's
// runs under default-branch commits (the newest the baseline, all of them its history), compares
// the head with the stored baseline and history as the bot does, and writes the comparison, the
// comment and the check into the folder (o.Dir, else a new temporary one). A setting the
// simulator cannot take is a *usage.Error, found before anything is measured.
func Run(ctx context.Context, o Options, deps measure.Deps) (*Result, error) {
	// The head's slow-down is checked before the base is measured: a mistake costs nothing.
	if _, err := inject.ParseSlowdown(o.HeadSlowdown); err != nil {
		return nil, usage.Errorf("--head-slowdown %q: %v", o.HeadSlowdown, err)
	}
	if _, err := profile.Load(o.Profile, nil); err != nil {
		return nil, usage.Errorf("--sim-profile: %v", err)
	}
	if err := sim.CheckSpeedup(o.Speedup); err != nil {
		return nil, usage.Errorf("--sim-speedup %v", err)
	}
	dir := o.Dir
	if dir == "" {
		d, err := os.MkdirTemp("", "speedmatrix-demo-")
		if err != nil {
			return nil, err
		}
		dir = d
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	runs := Jobs(dir, o.HistoryRuns, o.HeadSlowdown)
	lowered, err := measureFed(ctx, deps, &o, runs, o.AdaptSpeedup)
	if err != nil {
		return nil, err
	}
	// The base's runs go through the store, as the bot's pushes do: each stored under its
	// default-branch commit, the oldest first; the baseline is found again by the head's config
	// id, and the history read as the bot reads it (store.History).
	st := store.NewDir(filepath.Join(dir, "store"))
	for _, r := range runs[:len(runs)-1] {
		f, err := results.ReadFile(r.Path)
		if err != nil {
			return nil, err
		}
		if _, err := st.Put(ctx, store.Entry{Commit: r.Commit, Kind: store.KindDefault}, f); err != nil {
			return nil, fmt.Errorf("store the base run of %s: %w", ghbot.ShortSHA(r.Commit), err)
		}
	}
	head, err := results.ReadFile(runs[len(runs)-1].Path)
	if err != nil {
		return nil, err
	}
	stored, entry, err := st.Get(ctx, BaseSHA, store.ConfigID(head))
	if err != nil {
		return nil, fmt.Errorf("find the baseline in the store: %w", err)
	}
	hist, _, note, skipped, err := store.History(ctx, st, entry.ConfigID, store.HistoryOptions{Max: o.HistoryRuns, Min: compare.DefaultThresholds().MinHistory})
	if err != nil {
		return nil, fmt.Errorf("read the history from the store: %w", err)
	}
	if len(skipped) > 0 {
		return nil, fmt.Errorf("read the history from the store: %w", errors.Join(skipped...))
	}
	deps.Log.Info("demo: baseline stored and found again", "store", st.Root(), "commit", ghbot.ShortSHA(BaseSHA), "config_id", entry.ConfigID)
	deps.Log.Info("demo: " + note)
	d, err := Render(stored, head, hist, filepath.Join(dir, "base.json"), filepath.Join(dir, "head.json"))
	if err != nil {
		return nil, err
	}
	files := []struct{ name, data string }{{"comment.md", d.Comment.Body}, {"check.md", d.Check}}
	if err := results.WriteComparisonFile(filepath.Join(dir, "comparison.json"), d.Comparison); err != nil {
		return nil, err
	}
	for _, f := range files {
		if err := results.WriteFileAtomic(filepath.Join(dir, f.name), []byte(f.data)); err != nil {
			return nil, err
		}
	}
	return &Result{Pages: d, Dir: dir, Summary: SummaryInput{Lowered: lowered, Dir: dir, Store: st.Root(), Slowdown: o.HeadSlowdown, Matrix: o.Matrix,
		Profile: o.Profile, Speedup: head.TimeScale(), Runs: o.HistoryRuns, TempDir: o.Dir == ""}}, nil
}

// firstLine returns s up to its first newline.
func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
