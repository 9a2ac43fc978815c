// Package cli holds the speedmatrix subcommands: flag parsing and wiring of the library packages.
// It holds no measurement, statistics or rendering logic of its own, and it decides exit codes in
// one place (ExitCode).
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
	"github.com/speedmatrix/speedmatrix/internal/usage"
	"github.com/speedmatrix/speedmatrix/measure"
	"github.com/speedmatrix/speedmatrix/results"
)

// Exit codes of the speedmatrix command.
const (
	ExitOK         = 0
	ExitError      = 1
	ExitUsage      = 2
	ExitRegression = 3 // compare found a regression
	ExitUndecided  = 4 // compare could not pass the head: incomplete, unproven or not comparable (compare.go)
)

// UsageError is a mistake in the command line (or in what it names, found by a library
// package); it exits with ExitUsage, as a *measure.SettingsError does.
type UsageError = usage.Error

// usagef returns a UsageError with a formatted message.
func usagef(format string, args ...any) error { return usage.Errorf(format, args...) }

// ErrRegression is returned when a comparison found a regression (compare's, and run
// --baseline's: measure.ErrRegression); the report has already been written, so main prints
// nothing more.
var ErrRegression = measure.ErrRegression

// ErrUndecided is returned when a comparison cannot pass the head and found no regression
// either (results.ExitUndecided: incomplete, unproven, not comparable); the report has been
// written. Hook for compare.go's exit status.
var ErrUndecided = errors.New("undecided: the comparison cannot pass the head")

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

// Env is what every command may use of the outside world.
type Env struct {
	Stdout io.Writer
	Stderr io.Writer
	Getenv func(string) string
	Log    *slog.Logger
	// Net is how the commands reach servers (the GitHub API included) and how the built-in
	// simulator listens; nil is the machine's TCP stack. Tests give an in-memory one
	// (internal/memnet), so that a run under testing/synctest measures in the simulator's own
	// time whatever the machine's load.
	Net Network
}

// Network listens and dials, as package net does.
type Network = measure.Network

// measureDeps returns what a run uses of env (measure.Run).
func (env *Env) measureDeps() measure.Deps {
	return measure.Deps{Stderr: env.Stderr, Getenv: env.Getenv, Log: env.Log, Net: env.Net, Version: Version()}
}

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
		d := editDistance(typed, f.Name)
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

// editDistance does return the Levenshtein distance of a and b (insertions, deletions and
// substitutions of bytes).
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
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
				return usagef("--log-level %q: want debug, info, warn or error", logLevel)
			}
			env.Log = slog.New(slog.NewTextHandler(env.Stderr, &slog.HandlerOptions{Level: lvl}))
			if cpuProfile != "" {
				stop, err := startCPUProfile(cpuProfile)
				if err != nil {
					return usagef("--cpuprofile: %v", err)
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
		newVersionCmd(env),
		newImportCmd(env),
		newReportCmd(env),
		newDemoCmd(env),
		newCompareCmd(env),
		newCalibrateCmd(env),
		newSimCmd(env),
		newRunCmd(env),
		newSelftestCmd(env),
		newEngineCmd(env),
		newHistoryCmd(env),
		newBaselineCmd(env),
		newStoreCmd(env),
		newActionCmd(env),
		newPlanCmd(env),
		newMergeCmd(env),
		newValidateCmd(env),
		newBisectCmd(env), // bisect.go
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
