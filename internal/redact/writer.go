package redact

import (
	"bytes"
	"io"
	"sync"
)

// LineWriter redacts known secret values from what is written through it, a line at a time,
// before it reaches the writer beneath: a secret split over two writes is still found, as a
// secret never spans a newline. What follows the last newline waits for the next one, or for
// Flush. It is safe for concurrent use.
type LineWriter struct {
	mu     sync.Mutex
	w      io.Writer
	values []string
	buf    []byte
}

// NewLineWriter returns a LineWriter redacting the known values (as Text does) from
// the lines written to w.
func NewLineWriter(w io.Writer, values ...string) *LineWriter {
	return &LineWriter{w: w, values: values}
}

// Write implements io.Writer: it always takes all of p, and returns the first error of w.
func (l *LineWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, p...)
	i := bytes.LastIndexByte(l.buf, '\n')
	if i < 0 {
		return len(p), nil
	}
	out := Text(string(l.buf[:i+1]), l.values...)
	l.buf = append(l.buf[:0], l.buf[i+1:]...)
	if _, err := io.WriteString(l.w, out); err != nil {
		return len(p), err
	}
	return len(p), nil
}

// Flush writes what waits for a newline, redacted.
func (l *LineWriter) Flush() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.buf) == 0 {
		return nil
	}
	out := Text(string(l.buf), l.values...)
	l.buf = l.buf[:0]
	_, err := io.WriteString(l.w, out)
	return err
}
