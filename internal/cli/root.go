package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"regexp"
	"runtime/pprof"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/speedmatrix/speedmatrix/engine"
	actioncmd "github.com/speedmatrix/speedmatrix/internal/cli/action"
	baselinecmd "github.com/speedmatrix/speedmatrix/internal/cli/baseline"
	bisectcmd "github.com/speedmatrix/speedmatrix/internal/cli/bisect"
	calibratecmd "github.com/speedmatrix/speedmatrix/internal/cli/calibrate"
	"github.com/speedmatrix/speedmatrix/internal/cli/cmdutil"
	comparecmd "github.com/speedmatrix/speedmatrix/internal/cli/compare"
	democmd "github.com/speedmatrix/speedmatrix/internal/cli/demo"
	enginecmd "github.com/speedmatrix/speedmatrix/internal/cli/engine"
	historycmd "github.com/speedmatrix/speedmatrix/internal/cli/history"
	"github.com/speedmatrix/speedmatrix/internal/cli/importcmd"
	mergecmd "github.com/speedmatrix/speedmatrix/internal/cli/merge"
	plancmd "github.com/speedmatrix/speedmatrix/internal/cli/plan"
	reportcmd "github.com/speedmatrix/speedmatrix/internal/cli/report"
	runcmd "github.com/speedmatrix/speedmatrix/internal/cli/run"
	selftestcmd "github.com/speedmatrix/speedmatrix/internal/cli/selftest"
	simcmd "github.com/speedmatrix/speedmatrix/internal/cli/sim"
	storecmd "github.com/speedmatrix/speedmatrix/internal/cli/store"
	validatecmd "github.com/speedmatrix/speedmatrix/internal/cli/validate"
	versioncmd "github.com/speedmatrix/speedmatrix/internal/cli/version"
	"github.com/speedmatrix/speedmatrix/internal/textout"
	"github.com/speedmatrix/speedmatrix/measure"
	"github.com/speedmatrix/speedmatrix/results"
)

// Exit codes of the speedmatrix command (cmdutil's, which the commands return errors for).
const (
	ExitOK         = cmdutil.ExitOK
	ExitError      = cmdutil.ExitError
	ExitUsage      = cmdutil.ExitUsage
	ExitRegression = cmdutil.ExitRegression
	ExitUndecided  = cmdutil.ExitUndecided
)

// Env is what every command may use of the outside world (cmdutil.Env).
type Env = cmdutil.Env

// UsageError is a mistake in the command line, or in what it names; it exits with ExitUsage, as
// a *measure.SettingsError does.
type UsageError = cmdutil.UsageError

// ErrRegression and ErrUndecided are the comparison's exit statuses 3 and 4 (cmdutil's): the
// report has been written, so main prints nothing more.
var ErrRegression, ErrUndecided = cmdutil.ErrRegression, cmdutil.ErrUndecided

// Version returns the version of this build (cmdutil.Version).
func Version() string { return cmdutil.Version() }

// InterruptedError is the error of a command that a signal stopped (Ctrl-C sends SIGINT): it
// exits with 128 + the signal's number (130 for SIGINT, 143 for SIGTERM), as shells report a
// process a signal ended, so that a script tells it apart from an error.
type InterruptedError struct {
	Signal syscall.Signal
	Err    error // what the command returned when it stopped; nil or context.Canceled says nothing more
}

func (e *InterruptedError) Error() string {
	s := "interrupted (" + signalName(e.Signal) + ")"
	if e.Err != nil && e.Err.Error() != context.Canceled.Error() { // a bare cancellation says nothing more
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *InterruptedError) Unwrap() error { return e.Err }

// signalName does return a signal's name as kill -l writes it (SIGINT).
func signalName(s syscall.Signal) string {
	switch s {
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGHUP:
		return "SIGHUP"
	}
	return fmt.Sprintf("signal %d", int(s))
}

// Interrupted returns the error a command's context is cancelled with when signal s arrives
// (context.WithCancelCause); WithInterrupt finds it again.
func Interrupted(s syscall.Signal) error { return &InterruptedError{Signal: s} }

// WithInterrupt returns err as an InterruptedError when ctx was cancelled by Interrupted, else
// err unchanged.
func WithInterrupt(ctx context.Context, err error) error {
	var ie *InterruptedError
	if !errors.As(context.Cause(ctx), &ie) {
		return err
	}
	return &InterruptedError{Signal: ie.Signal, Err: err}
}

// ExitCode maps an error returned by Run to the process exit code.
func ExitCode(err error) int {
	var ue *UsageError
	var se *measure.SettingsError
	var ie *InterruptedError
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &ie):
		return 128 + int(ie.Signal)
	case errors.Is(err, ErrRegression):
		return ExitRegression
	case errors.Is(err, ErrUndecided):
		return ExitUndecided
	case errors.As(err, &ue), errors.As(err, &se):
		return ExitUsage
	}
	return ExitError
}

// Quiet reports whether err has been reported already and needs no message from main.
func Quiet(err error) bool { return errors.Is(err, ErrRegression) || errors.Is(err, ErrUndecided) }

// Run parses args (without the program name) and runs the chosen subcommand.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	if len(args) > 0 && args[0] == engine.ReaperArg {
		engine.Reap(args[1:]) // the leader of an engine's process group (measure.EngineReaper); never returns
	}
	return RunEnv(ctx, &Env{Stdout: stdout, Stderr: stderr, Getenv: getenv}, args)
}

// RunEnv is Run with the outside world env (Stdout, Stderr and Getenv set; Log is set from
// --log-level).
func RunEnv(ctx context.Context, env *Env, args []string) error {
	stdout, stderr := env.Stdout, env.Stderr
	root := newRootCmd(env)
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	cmd, err := root.ExecuteContextC(ctx)
	if err != nil && isFlagError(err) {
		// The error first, with what to type instead; the usage is --help's, not a mistake's.
		hint := suggestFlag(cmd, err)
		if !strings.Contains(err.Error(), "flag") && !strings.Contains(err.Error(), "unknown command") {
			hint = "; usage: " + cmd.UseLine() // a wrong number of arguments
		}
		return &UsageError{Err: fmt.Errorf("%w%s (%s --help lists the flags)", err, hint, cmd.CommandPath())}
	}
	return err
}

// unknownFlagRE finds the flag cobra could not place in its error message.
var unknownFlagRE = regexp.MustCompile(`unknown flag: --([A-Za-z0-9-]+)`)

// suggestFlag does return "; did you mean --NAME?" when err is an unknown flag of cmd that is
// close to one of cmd's visible flags (a typo: at most a third of its letters wrong, or a
// prefix), else "".
func suggestFlag(cmd *cobra.Command, err error) string {
	m := unknownFlagRE.FindStringSubmatch(err.Error())
	if m == nil {
		return ""
	}
	typed := m[1]
	best, bestD := "", len(typed)/3+1
	visit := func(f *pflag.Flag) {
		if f.Hidden || f.Deprecated != "" {
			return
		}
		d := textout.EditDistance(typed, f.Name)
		if strings.HasPrefix(f.Name, typed) && len(typed) >= 3 {
			d = min(d, 1)
		}
		if d < bestD {
			best, bestD = f.Name, d
		}
	}
	cmd.Flags().VisitAll(visit)
	cmd.InheritedFlags().VisitAll(visit)
	if best == "" {
		return ""
	}
	return "; did you mean --" + best + "?"
}

// isFlagError reports whether cobra failed on the command line itself.
func isFlagError(err error) bool {
	var ue *UsageError
	var se *measure.SettingsError
	if errors.As(err, &ue) || errors.As(err, &se) {
		return false
	}
	msg := err.Error()
	for _, p := range []string{"unknown flag", "unknown shorthand flag", "flag needs an argument", "invalid argument", "unknown command", "accepts ", "requires at least", "requires at most", "bad flag syntax", "required flag"} {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}

// newRootCmd builds the command tree.
func newRootCmd(env *Env) *cobra.Command {
	var logLevel, cpuProfile string
	var stopProfile func()
	root := &cobra.Command{
		Use:   "speedmatrix",
		Short: "Measure, compare and report the speed matrix of LLM inference engines",
		Long: `speedmatrix guards the speed of LLM inference engines. It measures the speed test
matrix (prefill at several context lengths; sustained decode at contexts × concurrency levels)
of an OpenAI-compatible server, compares it statistically with a baseline, and renders the
matrix with regression verdicts.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			var lvl slog.Level
			if err := lvl.UnmarshalText([]byte(logLevel)); err != nil {
				return cmdutil.Usagef("--log-level %q: want debug, info, warn or error", logLevel)
			}
			env.Log = slog.New(slog.NewTextHandler(env.Stderr, &slog.HandlerOptions{Level: lvl}))
			if cpuProfile != "" {
				stop, err := startCPUProfile(cpuProfile)
				if err != nil {
					return cmdutil.Usagef("--cpuprofile: %v", err)
				}
				stopProfile = stop
			}
			return nil
		},
		PersistentPostRun: func(*cobra.Command, []string) {
			if stopProfile != nil {
				stopProfile()
			}
		},
	}
	root.PersistentFlags().StringVar(&logLevel, "log-level", "info", "log level on stderr: debug, info, warn or error")
	root.PersistentFlags().StringVar(&cpuProfile, "cpuprofile", "", "write a CPU profile of this process to the file (go tool pprof reads it)")
	_ = root.PersistentFlags().MarkHidden("cpuprofile")
	root.CompletionOptions.DisableDefaultCmd = true
	root.AddCommand(
		versioncmd.NewCmd(env),
		importcmd.NewCmd(env),
		reportcmd.NewCmd(env),
		democmd.NewCmd(env),
		comparecmd.NewCmd(env),
		calibratecmd.NewCmd(env),
		simcmd.NewCmd(env),
		runcmd.NewCmd(env),
		selftestcmd.NewCmd(env),
		enginecmd.NewCmd(env),
		historycmd.NewCmd(env),
		baselinecmd.NewCmd(env),
		storecmd.NewCmd(env),
		actioncmd.NewCmd(env),
		plancmd.NewCmd(env),
		mergecmd.NewCmd(env),
		validatecmd.NewCmd(env),
		bisectcmd.NewCmd(env),
	)
	return root
}

// startCPUProfile starts profiling this process's CPU into path; the returned function stops it
// and closes the file.
func startCPUProfile(path string) (func(), error) {
	f, err := results.OpenOutput(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		_ = f.Close()
	}, nil
}
