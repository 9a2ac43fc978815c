// Package cmdutil holds what the commands of internal/cli share: the outside world (Env), the
// exit errors, the store flags and the matrix flags. It must not import a command.
package cmdutil

import (
	"errors"
	"fmt"
	"io"
	"log/slog"

	"github.com/speedmatrix/speedmatrix/config"
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
	ExitUndecided  = 4 // compare could not pass the head: incomplete, unproven or not comparable (CompareExit)
)

// UsageError is a mistake in the command line (or in what it names, found by a library
// package); it exits with ExitUsage, as a *measure.SettingsError does.
type UsageError = usage.Error

// Usagef returns a UsageError with a formatted message.
func Usagef(format string, args ...any) error { return usage.Errorf(format, args...) }

// ErrRegression is returned when a comparison found a regression (compare's, and run
// --baseline's: measure.ErrRegression); the report has already been written, so main prints
// nothing more.
var ErrRegression = measure.ErrRegression

// ErrUndecided is returned when a comparison cannot pass the head and found no regression
// either (results.ExitUndecided: incomplete, unproven, not comparable); the report has been
// written. Hook for compare.go's exit status.
var ErrUndecided = errors.New("undecided: the comparison cannot pass the head")

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

// MeasureDeps returns what a run uses of env (measure.Run).
func (env *Env) MeasureDeps() measure.Deps {
	return measure.Deps{Stderr: env.Stderr, Getenv: env.Getenv, Log: env.Log, Net: env.Net, Version: Version()}
}

// ReadRunConfig reads a speedmatrix.yaml strictly (config.Load): an unknown key or a bad value
// is an error naming its line, column and dotted path.
func ReadRunConfig(path string, o *measure.Settings) error {
	c, err := config.Load(path)
	if err != nil {
		return err
	}
	o.Config = c
	return nil
}

// CompareExit returns the error that gives compare's exit status: the row of results.Outcomes
// for the comparison's verdict (docs/verdicts.md) — nil for 0, ErrRegression for 3, and
// ErrUndecided for 4, saying on stderr what decides it.
func CompareExit(env *Env, c *results.Comparison) error {
	o := results.OutcomeOf(c.Verdict)
	switch o.Exit {
	case results.ExitPass:
		return nil
	case results.ExitRegression:
		return ErrRegression
	}
	env.Log.Warn(fmt.Sprintf("the verdict is %s, which cannot pass: %s (exit status %d; see docs/verdicts.md)", o.Verdict, o.Why, ExitUndecided))
	return ErrUndecided
}
