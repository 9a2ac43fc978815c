package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "ghfake:", err)
		os.Exit(1)
	}
}

// run parses the flags, serves until ctx ends and returns why it stopped.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("ghfake", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", "127.0.0.1:0", "loopback address to listen on")
	addrFile := fs.String("addr-file", "", "file to write the address listened on to (for a caller that asked for port 0)")
	gitRoot := fs.String("git", "", "directory of bare repositories OWNER/NAME.git served over git's smart HTTP (none when empty)")
	releases := fs.String("releases", "", "directory OWNER/NAME/TAG/FILE of files attached to releases, served at /OWNER/NAME/releases/download/TAG/FILE (none when empty)")
	setupFile := fs.String("setup", "", "JSON Setup applied before serving")
	if err := fs.Parse(args); err != nil {
		return err
	}
	host, _, err := net.SplitHostPort(*listen)
	if err != nil {
		return fmt.Errorf("-listen %q: %w (give HOST:PORT, e.g. 127.0.0.1:0)", *listen, err)
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("-listen %q: not a loopback address: the fake must not be reachable from other machines", *listen)
	}
	f := newFake(*gitRoot, *releases)
	if *setupFile != "" {
		b, err := os.ReadFile(*setupFile)
		if err != nil {
			return fmt.Errorf("read the setup: %w", err)
		}
		if _, err := f.apply(b); err != nil {
			return fmt.Errorf("setup %s: %w", *setupFile, err)
		}
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	addr := ln.Addr().String()
	if *addrFile != "" {
		// Written whole, then renamed: a caller polling for the file never reads half an address.
		tmp := *addrFile + ".tmp"
		if err := os.WriteFile(tmp, []byte(addr+"\n"), 0o644); err != nil {
			return fmt.Errorf("write the address: %w", err)
		}
		if err := os.Rename(tmp, *addrFile); err != nil {
			return fmt.Errorf("write the address: %w", err)
		}
	}
	fmt.Fprintf(stdout, "listening on %s\n", addr)
	log := slog.New(slog.NewTextHandler(stderr, nil))
	srv := &http.Server{Handler: f, ReadHeaderTimeout: 10 * time.Second, ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shut); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("shut down: %w", err)
	}
	return nil
}
