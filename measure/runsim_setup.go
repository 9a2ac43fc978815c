package measure

import (
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/speedmatrix/speedmatrix/results"
	"github.com/speedmatrix/speedmatrix/sim"
	"github.com/speedmatrix/speedmatrix/sim/inject"
	"github.com/speedmatrix/speedmatrix/sim/profile"
)

// simSetup is the built-in simulator a run without a URL starts (runSimulated, and both sides
// of a paired run): the simulator's configuration, its speed and noise defaulted and checked
// by package sim, and what the run records of the sim section besides.
type simSetup struct {
	cfg sim.Config
	// profileArg is the profile as the sim section gives it (a built-in name or a YAML file;
	// profile.Default when left out), for the launch command; headSlowdown the head's extra
	// slowdown of a paired run.
	profileArg, headSlowdown string
}

// newSimSetup checks the sim section and loads its profile (errors are settings errors), and
// adapts o to a run against the simulator: windows and the readiness wait left at their defaults
// last the same model time as on a real server, and the client samples in model time.
func newSimSetup(o *session) (simSetup, error) {
	so := o.Sim
	s := simSetup{profileArg: so.Profile, headSlowdown: so.HeadSlowdown,
		cfg: sim.Config{Seed: so.Seed, NoiseCV: -1, Slowdown: so.Slowdown, Fault: so.Fault}}
	if s.profileArg == "" {
		s.profileArg = profile.Default
	}
	var err error
	if s.cfg.Speedup, err = sim.Speedup(so.Speedup); err != nil {
		return s, settingsf("--sim-speedup %v", err)
	}
	if n := so.Noise; n != nil {
		if *n < 0 || *n > 1 {
			return s, settingsf("--sim-noise %g: want a coefficient of variation between 0 and 1", *n)
		}
		s.cfg.NoiseCV = *n
	}
	if h := s.headSlowdown; h != "" {
		if _, err := inject.ParseSlowdown(h); err != nil {
			return s, settingsf("sim.head_slowdown: %v", err)
		}
	}
	if s.cfg.Profile, err = profile.Load(s.profileArg, nil); err != nil {
		return s, settingsf("--sim-profile: %v", err)
	}
	o.simTime(s.cfg)
	return s, nil
}

// simTime adapts o to the built-in simulator c (in process, or at --url: then c holds only the
// speedup its /version said), which runs c.Speedup times faster than its profile, so that both
// measure with the same windows and compare accepts the pair: the window and the readiness
// wait left at their defaults last the same model time as on a real server, and the client
// samples in model time (scaleSim).
func (o *session) simTime(c sim.Config) {
	if !(c.Speedup > 0) {
		return
	}
	def := defaultSession()
	if o.Duration == def.Duration {
		o.Duration = SimWindow(o.Duration, c.Speedup)
	}
	if o.ReadyTimeout == def.ReadyTimeout {
		o.ReadyTimeout = max(time.Duration(float64(o.ReadyTimeout)/c.Speedup), time.Second)
	}
	o.simulator = &c
}

// SimWindow returns the window that lasts d of model time against the built-in simulator at
// speedup (d ÷ speedup on the wall clock), never shorter than results.MinWindow: what run makes
// of a window left at its default, and the demo of its own.
func SimWindow(d time.Duration, speedup float64) time.Duration {
	return max(time.Duration(float64(d)/speedup), results.MinWindow)
}

// timeScale is the speedup of the built-in simulator the run measures (o.simulator), 0 for any
// other server: the client samples in model time (scaleSim), and the progress lines show its
// numbers in the profile's time, as reports do.
func (o *session) timeScale() float64 {
	if o.simulator == nil {
		return 0
	}
	return o.simulator.Speedup
}

// config returns the simulator's configuration, logging to log.
func (s simSetup) config(log *slog.Logger) sim.Config {
	c := s.cfg
	c.Log = log
	return c
}

// describe records in o what is measured, where the options leave it open: the launch command
// (the `speedmatrix sim` that runs the same simulator) and the engine's name.
func (s simSetup) describe(o *session) {
	cmd := []string{"speedmatrix", "sim", "--profile", s.profileArg, "--sim-speedup", strconv.FormatFloat(s.cfg.Speedup, 'g', -1, 64), "--seed", strconv.FormatUint(s.cfg.Seed, 10)}
	if s.cfg.NoiseCV >= 0 {
		cmd = append(cmd, "--noise", strconv.FormatFloat(s.cfg.NoiseCV, 'g', -1, 64))
	}
	if s.cfg.Slowdown != "" {
		cmd = append(cmd, "--slowdown", s.cfg.Slowdown)
	}
	if s.cfg.Fault != "" {
		cmd = append(cmd, "--fault", s.cfg.Fault)
	}
	if o.LaunchCommand == "" {
		o.LaunchCommand = strings.Join(cmd, " ")
	}
	if o.Engine.Name == "" {
		o.Engine.Name = "speedmatrix-sim"
	}
}

// finish returns the finish of measureURL for an in-process simulator: its settings and note
// (recordSimulator), and the CPU budget marked as the server's too.
func (s simSetup) finish() func(*results.File) {
	c := s.cfg
	settings := &results.SimulatorSettings{Profile: c.Profile.Name, Speedup: c.Speedup, Slowdown: c.Slowdown, Fault: c.Fault, Seed: int64(c.Seed), Noise: c.Profile.Noise.CV}
	if c.NoiseCV >= 0 {
		settings.Noise = c.NoiseCV
	}
	record := recordSimulator(settings)
	return func(f *results.File) {
		record(f)
		if f.Run.Budget != nil {
			f.Run.Budget.CPUIncludesServer = true // the simulator runs in this process
		}
	}
}

// CheckSimulator checks the sim section of s and loads its profile, as a run without a URL
// does before its simulator starts (errors are *SettingsError), and returns the profile's name
// and the speedup the simulator runs at.
func CheckSimulator(s Settings) (name string, speedup float64, err error) {
	o := session{Settings: s}
	ss, err := newSimSetup(&o)
	if err != nil {
		return "", 0, err
	}
	return ss.cfg.Profile.Name, ss.cfg.Speedup, nil
}
