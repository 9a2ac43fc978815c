package measure

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/speedmatrix/speedmatrix/bench"
	"github.com/speedmatrix/speedmatrix/merge"
	"github.com/speedmatrix/speedmatrix/results"
	"github.com/speedmatrix/speedmatrix/sim"
)

// BaseOutputPath returns the base's results file of a paired run: paired.base_output, else the
// head's with ".base" before its extension (results.json → results.base.json).
func BaseOutputPath(o Settings) string {
	if o.Paired.BaseOutput != "" {
		return o.Paired.BaseOutput
	}
	ext := filepath.Ext(o.Output)
	return strings.TrimSuffix(o.Output, ext) + ".base" + ext
}

// pairedSide is one side of a paired run: the server measured in its blocks, and what is
// recorded about it.
type pairedSide struct {
	name   string // "base" or "head"
	url    string
	out    string
	finish func(*results.File)
	// engine, when set, is served for each block of this side and stopped after it, or, with
	// paired.keep_serving, started once and kept up (live) until the run ends.
	engine *pairedEngine
	live   *liveEngine
	blocks []*results.File
	nums   []int // each block's place in the order served (1-based)
	// gpu is this side's GPU time: its engine's build, its starts, its blocks' wall time.
	gpu results.GPUTime
}

// liveEngine is a side's engine kept up for the whole paired run (paired.keep_serving).
type liveEngine struct {
	url    string
	o      session
	finish func(*results.File)
	stop   func() error
}

// serveBlock returns the server of this side's next block: its engine started for the block
// (stop stops it after the block), or, with keep, the engine started at the side's first block
// and kept up (stop is nil; stopKept stops it when the run ends). A start counts towards the
// side's load time.
func (s *pairedSide) serveBlock(ctx context.Context, env *Deps, keep bool) (url string, o session, finish func(*results.File), stop func() error, err error) {
	if s.live != nil {
		return s.live.url, s.live.o, s.live.finish, nil, nil
	}
	start := time.Now()
	url, o, finish, stop, err = s.engine.serve(ctx, env)
	s.gpu.LoadSeconds += time.Since(start).Seconds()
	if err != nil || !keep {
		return url, o, finish, stop, err
	}
	s.live = &liveEngine{url: url, o: o, finish: finish, stop: stop}
	return url, o, finish, nil, nil
}

// stopKept stops the engines kept up by paired.keep_serving, base first.
func stopKept(sides ...*pairedSide) error {
	var errs []error
	for _, s := range sides {
		if s.live == nil {
			continue
		}
		if err := s.live.stop(); err != nil {
			errs = append(errs, fmt.Errorf("stop the %s's engine: %w", s.name, err))
		}
		s.live = nil
	}
	return errors.Join(errs...)
}

// runPaired is `speedmatrix run --paired`: it measures the base's server and the head's
// alternately, block by block in the order of paired.scheme (ABBA: A B B A A B …, A the base),
// each block the matrix (or the cells) with one trial, and writes one results file per side
// after every block: each cell's trials carry their block and pair, and the run its Pairing, so
// that compare can use the pairs' log-ratios, in which a drift of the machine cancels. Only one
// side is measured at a time. The servers are --base-url and --url, or, with neither, two
// built-in simulators with the same settings (the sim section: an A/A run, for trying the
// method; a --sim-slowdown drift such as all=+5%/min shows what pairing is for).
func runPaired(ctx context.Context, env *Deps, o session) (err error) {
	p := o.Paired
	if p.Blocks < 2 {
		return settingsf("--blocks %d: want at least 2 blocks per side (pairs to estimate the noise from)", p.Blocks)
	}
	order, err := bench.PairOrder(p.Scheme, p.Blocks)
	if err != nil {
		return settingsf("--paired-scheme: %v", err)
	}
	if o.Trials != 1 {
		return settingsf("--trials %d with --paired: each block measures every cell once; ask for more blocks (--blocks) instead", o.Trials)
	}
	base := &pairedSide{name: "base", url: p.BaseURL, out: BaseOutputPath(o.Settings)}
	head := &pairedSide{name: "head", url: o.URL, out: o.Output}
	if base.out == head.out {
		return settingsf("--base-output %s is the head's results file too: name another", base.out)
	}
	switch {
	case base.url == "" && head.url == "" && o.Engine.Serve != nil:
		// Two builds of the engine, served one at a time (run_paired_engine.go).
		if p.BaseSource == "" {
			return settingsf("--paired with engine.serve needs paired.base_source (--base-source): a checkout of the base commit, built and served like engine.source")
		}
		// The head's checkout must be the commit its results will record (the base's worktree
		// is made by the action at the base commit; paired.base_source is the user's).
		spec, serr := EngineBuildSpec(o.Settings) // serr: err is runPaired's result, which restore sets
		if serr != nil {
			return serr
		}
		if perr := checkPinnedSource(ctx, o, spec); perr != nil {
			return perr
		}
		for _, s := range []*pairedSide{base, head} {
			src := o.Engine.Source
			if s == base {
				src = p.BaseSource
			}
			start := time.Now()
			if s.engine, err = buildPairedEngine(ctx, env, o, src, s.out+".server.log"); err != nil {
				return err
			}
			s.gpu.BuildSeconds = time.Since(start).Seconds()
		}
		if o.GPU.LockClocks {
			lock, restore, lerr := lockClocks(ctx, env) // runengine_clocks.go
			if lerr != nil {
				return lerr
			}
			defer restore(&err) // runPaired's error: a failed restore fails the run
			base.engine.lock, head.engine.lock = lock, lock
		}
	case base.url == "" && head.url == "":
		stop, err := startPairedSims(ctx, env, &o, base, head)
		if err != nil {
			return err
		}
		defer stop()
	case base.url == "" || head.url == "":
		return settingsf("--paired needs both --base-url (the base's server) and --url (the head's), or neither for two built-in simulators")
	default:
		for _, s := range []*pairedSide{base, head} {
			if strings.Contains(s.url, "@") {
				return settingsf("--url and --base-url must not hold credentials; put the key in a variable and name it with --api-key-env")
			}
			if err := checkURL(s.url); err != nil {
				return err
			}
			so := o
			so.URL = s.url
			s.finish = chainFinish(simulatorAtURL(ctx, env, &so), localHardware(ctx, s.url))
		}
	}
	key, err := apiKey(env, o) // runner.go
	if err != nil {
		return err
	}
	for _, s := range []*pairedSide{base, head} {
		if err := prepareOutput(s.out, env.Log); err != nil {
			return err
		}
	}
	if p.KeepServing && base.engine != nil {
		// Both engines up before the first block, so that a start that fails wastes no block;
		// stopped when the run ends, however it ends (a server that exited while it was
		// measured fails the run).
		defer func() { err = errors.Join(err, stopKept(base, head)) }()
		for _, s := range []*pairedSide{base, head} {
			if _, _, _, _, err := s.serveBlock(ctx, env, true); err != nil {
				return fmt.Errorf("paired run: start the %s's engine (paired.keep_serving): %w", s.name, err)
			}
		}
		env.Log.Info("paired run: both engines kept up for the whole run", "base", base.live.url, "head", head.live.url)
	}
	pairID := newRunID(env.now())
	env.Log.Info("paired run", "id", pairID, "order", order, "base", base.url, "head", head.url, "blocks_per_side", p.Blocks)
	write := func(s *pairedSide) error {
		if len(s.blocks) == 0 {
			return nil
		}
		f, err := merge.Blocks(s.blocks, s.nums)
		if err != nil {
			return err
		}
		f.Run.ID = pairID + "-" + s.name
		f.Run.Pairing = &results.Pairing{ID: pairID, Scheme: p.Scheme, Blocks: p.Blocks, Side: s.name, Order: order}
		g := s.gpu
		g.Sum()
		f.Run.GPUTime = &g
		if len(s.blocks) < p.Blocks {
			f.Run.Partial = true
			if f.Run.PartialReason == "" {
				f.Run.PartialReason = fmt.Sprintf("%d of %d blocks measured", len(s.blocks), p.Blocks)
			}
		}
		return results.WriteOutputFile(s.out, f)
	}
	for i := range len(order) {
		s := head
		if order[i] == 'A' {
			s = base
		}
		runID := fmt.Sprintf("%s-%s%d", pairID, s.name, len(s.blocks)+1)
		env.Log.Info("paired block", "block", i+1, "of", len(order), "side", s.name)
		url, so, finish := s.url, o, s.finish
		var stop func() error
		if s.engine != nil {
			var err error
			url, so, finish, stop, err = s.serveBlock(ctx, env, p.KeepServing)
			if err != nil {
				return fmt.Errorf("paired block %d of %d (%s): %w; the blocks measured so far are in %s and %s", i+1, len(order), s.name, err, base.out, head.out)
			}
			if key == "" && so.APIKeyEnv != "" {
				key = env.Getenv(so.APIKeyEnv)
			}
		}
		f, runErr := measureBlock(ctx, env, so, url, key, runID, bench.OrderSeedOf(pairID))
		if stop != nil {
			runErr = errors.Join(runErr, stop())
		}
		if f != nil {
			if f.Run.Budget != nil {
				s.gpu.MeasureSeconds += f.Run.Budget.WallSeconds
			}
			if finish != nil {
				finish(f)
			}
			s.blocks = append(s.blocks, f)
			s.nums = append(s.nums, i+1)
		}
		if err := write(s); err != nil {
			return errors.Join(runErr, fmt.Errorf("write the %s's results %s: %w", s.name, s.out, err))
		}
		if runErr != nil {
			return fmt.Errorf("paired block %d of %d (%s): %w; the blocks measured so far are in %s and %s, marked partial", i+1, len(order), s.name, runErr, base.out, head.out)
		}
	}
	env.Log.Info("paired run complete", "base", base.out, "head", head.out, "compare", fmt.Sprintf("speedmatrix compare %s %s", base.out, head.out))
	return nil
}

// measureBlock measures one block of a paired run: the matrix once at baseURL, with its own run
// id (so that its prompts are new to the server's prefix cache, as in a run of its own), in the
// measuring order of orderSeed, the paired run's (every block in one order, so that a cell sits
// at the same place in each and a drift cancels between a pair's blocks).
func measureBlock(ctx context.Context, env *Deps, o session, baseURL, key, runID string, orderSeed uint64) (*results.File, error) {
	cfg, r, closeRunner, err := newRunner(env, o, baseURL, key, runID) // runner.go
	if err != nil {
		return nil, err
	}
	defer closeRunner()
	cfg.OrderSeed = orderSeed
	return r.Run(ctx, cfg)
}

// startPairedSims starts the two built-in simulators of a paired run without URLs, both with
// the sim section's settings (the same engine on both sides), and points the sides at them. It
// adjusts o as runSimulated does (windows in model time, the launch command, the engine name).
func startPairedSims(ctx context.Context, env *Deps, o *session, base, head *pairedSide) (stop func(), err error) {
	ss, err := newSimSetup(o) // runsim_setup.go
	if err != nil {
		return nil, err
	}
	var srvs []*sim.Server
	stop = func() {
		for _, s := range srvs {
			s.Close()
		}
	}
	// Both start now, so a drift rule (which grows with the time since a simulator started)
	// runs on one clock for both sides.
	for i := range 2 {
		scfg := ss.config(env.Log)
		if h := ss.headSlowdown; i == 1 && h != "" {
			// The head's (srvs[1]): what its change does.
			scfg.Slowdown = strings.Trim(scfg.Slowdown+","+h, ",")
		}
		if scfg.Listener, err = env.listener(); err != nil {
			stop()
			return nil, fmt.Errorf("start the built-in simulators: %w", err)
		}
		s, err := sim.Start(ctx, scfg)
		if err != nil {
			stop()
			return nil, settingsf("%v", err)
		}
		srvs = append(srvs, s)
	}
	base.url, head.url = srvs[0].URL(), srvs[1].URL()
	ss.describe(o)
	finish := ss.finish()
	base.finish, head.finish = finish, finish
	env.Log.Info("paired run without URLs: measuring two built-in simulators with the same settings", "base", base.url, "head", head.url, "profile", ss.cfg.Profile.Name, "speedup", ss.cfg.Speedup, "slowdown", ss.cfg.Slowdown, "head_slowdown", ss.headSlowdown)
	return stop, nil
}
