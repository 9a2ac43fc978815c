package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"syscall"
	"testing"

	"github.com/speedmatrix/speedmatrix/internal/cli"
)

// TestInterruptExitCode: a command that Ctrl-C (SIGINT) or SIGTERM stopped exits 130 or 143 and
// says "interrupted (SIGINT)", with what the command had to say, not 1 like an error; the
// simulator, which stops cleanly when its context ends, says so too. Without a signal, the
// codes stay the command's own.
func TestInterruptExitCode(t *testing.T) {
	for _, tc := range []struct {
		sig     syscall.Signal
		cmdErr  error
		code    int
		message string
	}{
		{syscall.SIGINT, context.Canceled, 130, "speedmatrix: interrupted (SIGINT)\n"},
		{syscall.SIGTERM, nil, 143, "speedmatrix: interrupted (SIGTERM)\n"},
		{syscall.SIGINT, fmt.Errorf("run: 3 of 8 cells measured, kept in r.json (partial): %w", context.Canceled), 130,
			"speedmatrix: interrupted (SIGINT): run: 3 of 8 cells measured, kept in r.json (partial): context canceled\n"},
	} {
		ctx, cancel := context.WithCancelCause(context.Background())
		cancel(cli.Interrupted(tc.sig))
		var stderr bytes.Buffer
		code := exit(ctx, &stderr, func(context.Context) error { return tc.cmdErr })
		if code != tc.code || stderr.String() != tc.message {
			t.Errorf("%v, command error %v: exit %d, stderr %q; want %d, %q", tc.sig, tc.cmdErr, code, stderr.String(), tc.code, tc.message)
		}
	}
	// The whole program: the simulator serving until SIGINT cancels it.
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(cli.Interrupted(syscall.SIGINT))
	var stderr bytes.Buffer
	code := exit(ctx, &stderr, func(ctx context.Context) error {
		return run(ctx, []string{"sim", "--listen", "127.0.0.1:0"}, io.Discard, io.Discard, func(string) string { return "" })
	})
	if code != 130 || !strings.Contains(stderr.String(), "interrupted (SIGINT)") {
		t.Errorf("sim stopped by SIGINT: exit %d, stderr %q; want 130 and \"interrupted (SIGINT)\"", code, stderr.String())
	}
	// No signal: an error exits 1, a cancellation without a signal is an error too.
	var quiet bytes.Buffer
	if code := exit(context.Background(), &quiet, func(context.Context) error { return errors.New("boom") }); code != 1 {
		t.Errorf("an error without a signal: exit %d, want 1", code)
	}
}
