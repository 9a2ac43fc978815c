// Command speedmatrix measures, compares and reports the speed matrix of LLM inference engines.
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

// mainExit runs the CLI with the process's arguments and environment and returns the exit code.
func mainExit() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr, os.Getenv)
	if err != nil && !cli.Quiet(err) {
		fmt.Fprintln(os.Stderr, "speedmatrix:", err)
	}
	return cli.ExitCode(err)
}

// run is the whole program: main only wires it to the process.
func run(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	return cli.Run(ctx, args, stdout, stderr, getenv)
}
