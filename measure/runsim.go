package measure

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/speedmatrix/speedmatrix/bench"
	"github.com/speedmatrix/speedmatrix/bench/server"
	"github.com/speedmatrix/speedmatrix/config"
	"github.com/speedmatrix/speedmatrix/results"
	"github.com/speedmatrix/speedmatrix/sim"
)

// simRunOptions are the settings of the in-process simulator of `speedmatrix run` without
// --url (YAML: sim: {profile, speedup, seed, noise, slowdown, fault}).
type simRunOptions = config.Sim

// scaleSim returns the run's sampling periods in model time when the simulator runs faster than
// its profile: the ~1 s running/waiting samples, the 1 s token bins and the readiness and
// drain polls shrink by the speedup, so a 30 s model window still gets ~30 samples; so do the
// scout's bound, the stall span and the probe request sent after a stall.
func (o session) scaleSim(t bench.Timeouts) bench.Timeouts {
	scale := o.timeScale()
	if scale <= 1 {
		return t
	}
	shrink := func(d, floor time.Duration) time.Duration {
		return max(time.Duration(float64(d)/scale), floor)
	}
	t.Sample = shrink(t.Sample, 20*time.Millisecond)
	t.Bin = shrink(t.Bin, 20*time.Millisecond)
	t.Poll = shrink(t.Poll, 10*time.Millisecond)
	// A short request answers in model time too; a floor keeps a loaded machine from passing
	// for a hung simulator.
	t.Probe = shrink(3*t.Health, 2*time.Second)
	t.Scout = shrink(t.Scout, 30*time.Second)
	t.Stall = shrink(t.Stall, time.Second)
	return t
}

// runSimulated starts the built-in simulator in-process on a loopback port and measures it over
// HTTP like any server, so the client's code path is the one used against vLLM.
func runSimulated(ctx context.Context, env *Deps, o session) error {
	ss, err := newSimSetup(&o) // runsim_setup.go
	if err != nil {
		return err
	}
	// Every option is checked before the simulator starts: an invalid one is a settings error
	// that costs nothing (the URL is a placeholder; measureURL checks again with the real one).
	if _, err := benchConfig(o, "http://127.0.0.1", "check"); err != nil {
		return err
	}
	scfg := ss.config(env.Log)
	if scfg.Listener, err = env.listener(); err != nil {
		return fmt.Errorf("start the built-in simulator: %w", err)
	}
	srv, err := sim.Start(ctx, scfg)
	if err != nil {
		return settingsf("%v", err)
	}
	defer srv.Close()
	ss.describe(&o)
	env.Log.Info("no --url: measuring the built-in simulator", "url", srv.URL(), "profile", ss.cfg.Profile.Name, "speedup", ss.cfg.Speedup, "window", o.Duration)
	return measureURL(ctx, env, o, srv.URL(), ss.finish())
}

// recordSimulator returns the finish of measureURL that records the simulator a run measured:
// its settings (the speedup is the file's time scale) and a note saying that the file's numbers
// are as measured while reports show them in the profile's time.
func recordSimulator(settings *results.SimulatorSettings) func(*results.File) {
	return func(f *results.File) {
		if f.Run.Settings == nil {
			f.Run.Settings = &results.Settings{}
		}
		f.Run.Settings.Simulator = settings
		x := strconv.FormatFloat(settings.Speedup, 'g', -1, 64)
		note := fmt.Sprintf("measured against the built-in simulator (profile %s) at %s× its profile's speed: this file holds the numbers as measured (rates %s× the profile's, times 1/%s); reports show them in the profile's time", settings.Profile, x, x, x)
		for _, n := range f.Notes {
			if n == note {
				return
			}
		}
		f.Notes = append(f.Notes, note)
	}
}

// simulatorAtURL asks the server of `run --url` whether it is the built-in simulator (its
// /version says so, with its speedup). When it is, o measures it as the in-process simulator
// at that speedup (simTime: the same windows, so that compare takes the two as a pair) and the
// returned finish records it; for any other server, or when /version does not answer (the runner
// reports that itself), it returns nil. What /version said (nothing, for a server without one)
// goes to o.serverVersion, so that the runner does not ask again.
func simulatorAtURL(ctx context.Context, env *Deps, o *session) func(*results.File) {
	if strings.Contains(o.URL, "@") {
		return nil // measureURL refuses it
	}
	var opts []server.Option
	if o.APIKeyEnv != "" {
		opts = append(opts, server.WithAPIKey(env.Getenv(o.APIKeyEnv)))
	}
	if env.Net != nil {
		opts = append(opts, server.WithHTTPClient(env.httpClient(10*time.Second)))
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	v, err := server.New(o.URL, opts...).VersionInfo(ctx)
	switch {
	case err == nil:
		o.serverVersion = &v.Version
	case errors.Is(err, server.ErrNotSupported):
		o.serverVersion = new(string)
	}
	if err != nil || v.Simulator == nil {
		return nil
	}
	o.simTime(sim.Config{Speedup: v.Simulator.Speedup}) // runsim_setup.go: the in-process simulator's windows at that speedup
	env.Log.Info("the server is the built-in simulator: progress lines and reports show its numbers in the profile's time; windows and readiness left at their defaults last as long as in process at its speedup", "profile", v.Simulator.Profile, "speedup", v.Simulator.Speedup, "window", o.Duration)
	return recordSimulator(&results.SimulatorSettings{Profile: v.Simulator.Profile, Speedup: v.Simulator.Speedup})
}
