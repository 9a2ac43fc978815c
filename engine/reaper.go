package engine

import (
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"syscall"
)

// ReaperArg, as the first argument of a program built on this package, makes it the reaper
// of an engine's process group (Reap); the program's main must hand such a call to Reap
// before anything else (speedmatrix's cli.Run does, and so do the test binaries' TestMain).
const ReaperArg = "__speedmatrix-engine-reaper"

// reaperSignal is what the kernel sends the reaper when the process that started it dies
// (PR_SET_PDEATHSIG): a signal nobody else sends the group, so that the reaper tells its
// parent's death from a stop.
const reaperSignal = syscall.SIGUSR2

// Reap is the reaper's main and never returns. It runs argv (looked up on its own PATH, the
// engine's) as its child in its own process group, of which it is the leader, and exits as
// the child did (its exit code, or killed by the same signal). When the process that started
// it dies, however it died (SIGKILL included), the kernel sends it reaperSignal and it sends
// SIGKILL to the whole group, itself included: nothing an engine started survives
// speedmatrix. The stop's SIGTERM (sent to the whole group) reaches the child directly; the
// reaper waits for the child, so that the leader lives as long as the engine does.
func Reap(argv []string) {
	parent := os.Getppid()
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, reaperSignal, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT)
	if os.Getppid() != parent || parent == 1 {
		// The parent died before the handler was there: end the group now.
		_ = syscall.Kill(0, syscall.SIGKILL)
		os.Exit(128 + int(syscall.SIGKILL))
	}
	sb, argv, err := parseSandboxArgs(argv) // sandbox.go
	if err != nil {
		fmt.Fprintf(os.Stderr, "speedmatrix engine reaper: %v\n", err)
		os.Exit(126)
	}
	if len(argv) > 0 && argv[0] == "--" {
		argv = argv[1:]
	}
	if len(argv) == 0 {
		fmt.Fprintln(os.Stderr, "speedmatrix engine reaper: no command to run")
		os.Exit(127)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	if sb != nil && os.Getpid() != 1 {
		// Only startGroup starts a sandbox's reaper, as the init of new namespaces: run by
		// hand it would remount the machine's own root.
		fmt.Fprintln(os.Stderr, "speedmatrix engine sandbox: the reaper is not the init of new namespaces; refusing to make a sandbox here")
		os.Exit(126)
	}
	if sb != nil {
		// The init of the sandbox's namespaces: its file system first, then the command in a
		// nested namespace without power over it. Its exit ends every process left inside.
		if err := sb.enter(); err != nil {
			fmt.Fprintf(os.Stderr, "speedmatrix engine sandbox: %v\n", err)
			os.Exit(126)
		}
		if cmd, err = sb.command(argv); err != nil {
			fmt.Fprintf(os.Stderr, "speedmatrix engine sandbox: %v\n", err)
			os.Exit(126)
		}
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "speedmatrix engine reaper: start %s: %v\n", argv[0], err)
		os.Exit(127)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	for {
		select {
		case s := <-sigs:
			if s == reaperSignal {
				_ = syscall.Kill(0, syscall.SIGKILL)
				os.Exit(128 + int(syscall.SIGKILL)) // the init of a sandbox ignores its own SIGKILL
			}
		case <-done:
			code, sig := exitStatus(cmd.ProcessState)
			if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() && sig != "" {
				signal.Reset(ws.Signal())
				_ = syscall.Kill(os.Getpid(), ws.Signal())
				code = 128 + int(ws.Signal())
			}
			os.Exit(code)
		}
	}
}

// startWithDeathSignal starts cmd from a goroutine locked to its OS thread, with Pdeathsig
// set: Linux sends it when the thread that forked the child exits, not the process, so the
// fork must not happen on a thread that a locked goroutine may end; the thread is unlocked,
// and goes back to the runtime's pool, once the child runs. When the process dies, every
// thread goes, and the child gets sig.
func startWithDeathSignal(cmd *exec.Cmd, sig syscall.Signal) error {
	cmd.SysProcAttr.Pdeathsig = sig
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		errc <- cmd.Start()
	}()
	return <-errc
}
