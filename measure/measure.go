package measure

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"time"

	"github.com/speedmatrix/speedmatrix/bench"
	"github.com/speedmatrix/speedmatrix/config"
	"github.com/speedmatrix/speedmatrix/results"
	"github.com/speedmatrix/speedmatrix/sim"
)

// Settings are the settings of one run, as `speedmatrix run` and the action give them: the
// configuration file's (config.Config, whose keys are the flag names with underscores) and
// those only a flag sets.
type Settings struct {
	config.Config
	// Baseline is the base's results files, comma-separated (--baseline): compare with them
	// after the first pass and measure again, within the budget, what is inconclusive
	// (run_adaptive.go). History is a folder of earlier base results for the noise (as compare
	// --history); CompareOut where the comparison goes.
	Baseline, History, CompareOut string
	// ShardSpec is --shard K/N, PlanID --plan: measure only that shard of the plan (run_shard.go).
	ShardSpec, PlanID string
	// Order is --order (bench.Config.Order; "" the default, shuffled); Remeasures is
	// --remeasures (bench.Config.Remeasures), nil for the default.
	Order      string
	Remeasures *int
}

// DefaultSettings returns the defaults of `speedmatrix run`.
func DefaultSettings() Settings {
	return Settings{Config: config.Default()}
}

// Deps is what a run uses of the outside world.
type Deps struct {
	// Stderr takes the progress lines (or bar) and the engine build's output.
	Stderr io.Writer
	// Getenv reads the environment: the API key's variable, GITHUB_ACTIONS, engine.serve's
	// ${VAR}s.
	Getenv func(string) string
	Log    *slog.Logger
	// Net is how a run reaches servers and how the built-in simulator listens; nil is the
	// machine's TCP stack. Tests give an in-memory one (internal/memnet).
	Net Network
	// Now is the clock of the run's id (default time.Now).
	Now func() time.Time
	// Version is the version of speedmatrix the results file records.
	Version string
}

// Network listens and dials, as package net does.
type Network interface {
	Listen(network, address string) (net.Listener, error)
	DialContext(ctx context.Context, network, address string) (net.Conn, error)
}

// now returns the time on the run's clock.
func (env *Deps) now() time.Time {
	if env.Now == nil {
		return time.Now()
	}
	return env.Now()
}

// SettingsError is a setting that cannot work, found before anything is measured (or, for the
// built-in simulator, before it starts); the command line maps it to its usage status.
type SettingsError struct{ Err error }

func (e *SettingsError) Error() string { return e.Err.Error() }
func (e *SettingsError) Unwrap() error { return e.Err }

// settingsf returns a SettingsError with a formatted message.
func settingsf(format string, args ...any) error {
	return &SettingsError{Err: fmt.Errorf(format, args...)}
}

// ErrRegression is returned when the comparison with the baseline (Settings.Baseline) found a
// regression; the comparison has been logged and written.
var ErrRegression = errors.New("regression found")

// session is one run in progress: its settings and what the run learns on its way.
type session struct {
	Settings
	// simulator is the built-in simulator when it is the server measured (in process, its
	// configuration; at --url, the speedup its /version said); nil for any other server
	// (simTime, timeScale).
	simulator *sim.Config
	// build and load are the GPU time the job spent before measuring (runengine.go).
	build, load time.Duration
	// shard holds the rows that ShardSpec resolves to (run_shard.go).
	shard *bench.Shard
	// finish, when set, amends a served run's results before each write (spec_decode: pinned
	// records its acceptance pass, runengine_pinned.go).
	finish func(*results.File)
	// serverVersion, when set, is what the server's /version said ("" for none), read before
	// measuring (simulatorAtURL): the runner does not ask again (runner.go).
	serverVersion *string
	// servedArgv is the launch command of the server engine.serve started (runengine_serve.go).
	servedArgv []string
	// version is Deps.Version, recorded in the results file.
	version string
}

// defaultSession returns a session of the default settings.
func defaultSession() session {
	return session{Settings: DefaultSettings()}
}

// Run checks the settings s and measures the server at s.URL, else the server engine.serve
// starts, else the built-in simulator, and writes the results file (s.Output). A setting that
// cannot work is a *SettingsError; a regression found against s.Baseline is ErrRegression.
func Run(ctx context.Context, s Settings, d Deps) error {
	return runCommand(ctx, &d, session{Settings: s, version: d.Version})
}

// Plan returns the plan of the settings s in n shards (bench.PlanShards): what `speedmatrix
// plan --shards n` prints and each run --shard K/N measures a part of. It depends on s as given,
// before the simulator shortens the window, so that plan and every shard agree. A setting that
// cannot work is a *SettingsError.
func Plan(s Settings, n int) (bench.ShardPlan, error) {
	o := session{Settings: s}
	if err := o.Check(); err != nil {
		return bench.ShardPlan{}, err
	}
	return planShards(o, n)
}
