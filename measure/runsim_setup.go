package measure

import (
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/speedmatrix/speedmatrix/bench"
	"github.com/speedmatrix/speedmatrix/config"
	"github.com/speedmatrix/speedmatrix/results"
	"github.com/speedmatrix/speedmatrix/sim"
	"github.com/speedmatrix/speedmatrix/sim/inject"
	"github.com/speedmatrix/speedmatrix/sim/profile"
)

// simSetup is the built-in simulator a run without a URL starts (runSimulated, and both sides
// of a paired run): the sim section with its defaults filled in, and the profile it loaded.
type simSetup struct {
	so    config.Sim
	noise float64 // the noise CV asked for; -1 for the profile's
	p     *profile.Profile
}

// newSimSetup checks the sim section and loads its profile (errors are settings errors), and
// adapts o to a run against the simulator: windows and the readiness wait left at their defaults
// last the same model time as on a real server, and the client samples in model time.
func newSimSetup(o *session) (simSetup, error) {
	s := simSetup{so: o.Sim, noise: -1}
	if s.so.Profile == "" {
		s.so.Profile = profile.Default
	}
	speedup, err := sim.Speedup(s.so.Speedup)
	if err != nil {
		return s, settingsf("--sim-speedup %v", err)
	}
	s.so.Speedup = speedup
	if n := s.so.Noise; n != nil {
		if *n < 0 || *n > 1 {
			return s, settingsf("--sim-noise %g: want a coefficient of variation between 0 and 1", *n)
		}
		s.noise = *n
	}
	if h := s.so.HeadSlowdown; h != "" {
		if _, err := inject.ParseSlowdown(h); err != nil {
			return s, settingsf("sim.head_slowdown: %v", err)
		}
	}
	if s.p, err = profile.Load(s.so.Profile, nil); err != nil {
		return s, settingsf("--sim-profile: %v", err)
	}
	o.simTime(s.so.Speedup)
	return s, nil
}

// simTime adapts o to a built-in simulator that runs speedup times faster than its profile, in
// process or at --url alike, so that both measure with the same windows and compare accepts
// the pair: the window and the readiness wait left at their defaults last the same model time
// as on a real server, and the client samples in model time (scaleSim).
func (o *session) simTime(speedup float64) {
	if !(speedup > 0) {
		return
	}
	def := defaultSession()
	if o.Duration == def.Duration {
		o.Duration = max(time.Duration(float64(o.Duration)/speedup), bench.MinDuration)
	}
	if o.ReadyTimeout == def.ReadyTimeout {
		o.ReadyTimeout = max(time.Duration(float64(o.ReadyTimeout)/speedup), time.Second)
	}
	o.timeScale = speedup
}

// config returns the simulator's configuration.
func (s simSetup) config(log *slog.Logger) sim.Config {
	return sim.Config{Profile: s.p, Seed: s.so.Seed, NoiseCV: s.noise, Slowdown: s.so.Slowdown, Fault: s.so.Fault, Speedup: s.so.Speedup, Log: log}
}

// describe records in o what is measured, where the options leave it open: the launch command
// (the `speedmatrix sim` that runs the same simulator) and the engine's name.
func (s simSetup) describe(o *session) {
	cmd := []string{"speedmatrix", "sim", "--profile", s.so.Profile, "--sim-speedup", strconv.FormatFloat(s.so.Speedup, 'g', -1, 64), "--seed", strconv.FormatUint(s.so.Seed, 10)}
	if s.noise >= 0 {
		cmd = append(cmd, "--noise", strconv.FormatFloat(s.noise, 'g', -1, 64))
	}
	if s.so.Slowdown != "" {
		cmd = append(cmd, "--slowdown", s.so.Slowdown)
	}
	if s.so.Fault != "" {
		cmd = append(cmd, "--fault", s.so.Fault)
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
	settings := &results.SimulatorSettings{Profile: s.p.Name, Speedup: s.so.Speedup, Slowdown: s.so.Slowdown, Fault: s.so.Fault, Seed: int64(s.so.Seed), Noise: s.p.Noise.CV}
	if s.noise >= 0 {
		settings.Noise = s.noise
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
	return ss.p.Name, ss.so.Speedup, nil
}
