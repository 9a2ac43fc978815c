// Package usage holds the error of a mistake in what the user asked for (a flag, an argument, a
// name that resolves to nothing): the command line exits with status 2 on it. Library packages
// that check what a command passes them on the user's behalf (store's commit lookups, demo's
// settings, history's store queries) return it, so that the exit status is decided once, in
// internal/cli's ExitCode, whichever package found the mistake.
//
// It must not import any package of this module: every layer may use it.
package usage

import "fmt"

// Error is a mistake in the command line or in what it names.
type Error struct{ Err error }

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// Errorf returns an *Error with a formatted message (%w wraps, as fmt.Errorf's).
func Errorf(format string, args ...any) error {
	return &Error{Err: fmt.Errorf(format, args...)}
}
