package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/speedmatrix/speedmatrix/internal/cli"
)

func main() {
	os.Exit(mainExit())
}

// mainExit runs the CLI with the process's arguments and environment and returns the exit code;
// SIGINT (Ctrl-C) and SIGTERM cancel the command, which then exits 130 or 143.
func mainExit() int {
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	go func() {
		if s, ok := (<-sigs).(syscall.Signal); ok {
			cancel(cli.Interrupted(s))
		}
	}()
	return exit(ctx, os.Stderr, func(ctx context.Context) error {
		return run(ctx, os.Args[1:], os.Stdout, os.Stderr, os.Getenv)
	})
}

// exit runs the command, says on stderr what stopped it (an error, or the signal that
// cancelled ctx: "interrupted (SIGINT)") and returns the exit code.
func exit(ctx context.Context, stderr io.Writer, command func(context.Context) error) int {
	err := cli.WithInterrupt(ctx, command(ctx))
	if err != nil && !cli.Quiet(err) {
		fmt.Fprintln(stderr, "speedmatrix:", err)
	}
	return cli.ExitCode(err)
}

// run is the whole program: main only wires it to the process.
func run(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	return cli.Run(ctx, args, stdout, stderr, getenv)
}
