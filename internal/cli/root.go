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
	"net"
	"os"
	"runtime/pprof"
	"strings"

	"github.com/spf13/cobra"

	"github.com/speedmatrix/speedmatrix/engine"
)

// Exit codes of the speedmatrix command.
const (
	ExitOK         = 0
	ExitError      = 1
	ExitUsage      = 2
	ExitRegression = 3 // compare found a regression
	ExitUndecided  = 4 // compare could not pass the head: incomplete, unproven or not comparable (compare.go)
)

// UsageError is a mistake in the command line; it exits with ExitUsage.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// usagef returns a UsageError with a formatted message.
func usagef(format string, args ...any) error {
	return &UsageError{Err: fmt.Errorf(format, args...)}
}

// ErrRegression is returned when a comparison found a regression; the report has already been
// written, so main prints nothing more.
var ErrRegression = errors.New("regression found")

// ErrUndecided is returned when a comparison cannot pass the head and found no regression
// either (results.ExitUndecided: incomplete, unproven, not comparable); the report has been
// written. Hook for compare.go's exit status.
var ErrUndecided = errors.New("undecided: the comparison cannot pass the head")

// ExitCode maps an error returned by Run to the process exit code.
func ExitCode(err error) int {
	var ue *UsageError
	switch {
	case err == nil:
		return ExitOK
	case errors.Is(err, ErrRegression):
		return ExitRegression
	case errors.Is(err, ErrUndecided):
		return ExitUndecided
	case errors.As(err, &ue):
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
type Network interface {
	Listen(network, address string) (net.Listener, error)
	DialContext(ctx context.Context, network, address string) (net.Conn, error)
}

// Run parses args (without the program name) and runs the chosen subcommand.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	if len(args) > 0 && args[0] == engine.ReaperArg {
		engine.Reap(args[1:]) // the leader of an engine's process group (engineReaper); never returns
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
		fmt.Fprintln(stderr, cmd.UsageString())
		return &UsageError{Err: err}
	}
	return err
}

// isFlagError reports whether cobra failed on the command line itself.
func isFlagError(err error) bool {
	var ue *UsageError
	if errors.As(err, &ue) {
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
		newBisectCmd(env), // bisect.go
	)
	return root
}

// startCPUProfile starts profiling this process's CPU into path; the returned function stops it
// and closes the file.
func startCPUProfile(path string) (func(), error) {
	f, err := os.Create(path)
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
