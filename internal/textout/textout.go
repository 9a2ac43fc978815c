// Package textout holds what the plain-text renderers (report, history) write with: a writer
// that keeps the first error, so that a renderer checks once at the end instead of after every
// line, and counted nouns ("1 cell", "3 cells"). It is a leaf: it imports nothing of this
// module, and it does no I/O of its own.
package textout

import (
	"io"
	"strconv"
)

// ErrWriter is an io.Writer that keeps the first error of W: after it, writes are dropped and
// report success, so that a renderer can write on and return Err once.
type ErrWriter struct {
	W   io.Writer
	Err error
}

// Write writes p to W unless an earlier write failed.
func (e *ErrWriter) Write(p []byte) (int, error) {
	if e.Err != nil {
		return len(p), nil
	}
	n, err := e.W.Write(p)
	e.Err = err
	return n, err
}

// Plural returns "1 one" when n is 1, else "n many".
func Plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}
