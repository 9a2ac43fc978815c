package engine

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// TailLines is how many of the last log lines an error carries.
const TailLines = 30

// ProcessError is a build or server process that failed: it exited with a non-zero code, was
// killed, or exited before it was ready. Tail holds the last lines of its log.
type ProcessError struct {
	What     string   // "build" or "server"
	ExitCode int      // -1 when killed by a signal or never started
	Signal   string   // the signal that ended it, if any
	Log      string   // path of the full log
	Tail     []string // its last lines (at most TailLines)
	Reason   string   // what went wrong in words, e.g. "exited during load"
	// Hint says what may have made it fail, e.g. the allow-listed environment (EnvHint).
	Hint string
}

func (e *ProcessError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s", e.What, e.Reason)
	switch {
	case e.Signal != "":
		fmt.Fprintf(&b, " (killed by %s)", e.Signal)
	case e.ExitCode >= 0:
		fmt.Fprintf(&b, " (exit code %d)", e.ExitCode)
	}
	if e.Hint != "" {
		fmt.Fprintf(&b, "; %s", e.Hint)
	}
	if e.Log != "" {
		fmt.Fprintf(&b, "; full log: %s", e.Log)
	}
	if len(e.Tail) > 0 {
		fmt.Fprintf(&b, "; last %d log lines:\n%s", len(e.Tail), strings.Join(e.Tail, "\n"))
	}
	return b.String()
}

// exitStatus returns the exit code and signal name of a finished process.
func exitStatus(ps *os.ProcessState) (int, string) {
	if ps == nil {
		return -1, ""
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return -1, ws.Signal().String()
	}
	return ps.ExitCode(), ""
}

// tailFile returns the last n lines of the file at path (reading at most its last 256 KiB).
func tailFile(path string, n int) []string {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	const max = 256 << 10
	if st, err := f.Stat(); err == nil && st.Size() > max {
		if _, err := f.Seek(st.Size()-max, io.SeekStart); err != nil {
			return nil
		}
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return nil
	}
	// Trailing blank lines are not the last line of a log (a traceback or a shell's error
	// often ends in one): the last line shown is the last with something on it.
	data = bytes.TrimRight(data, "\r\n\t ")
	if len(data) == 0 {
		return nil
	}
	lines := strings.Split(string(data), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, "\r")
	}
	return lines
}

// group is a started process that leads its own process group, so that everything it starts
// (vLLM's engine cores, a build's compilers) can be signalled and awaited together.
type group struct {
	cmd  *exec.Cmd
	pgid int
	done chan struct{} // closed once the leader has been reaped
	err  error         // cmd.Wait's result, valid after done
}

// startGroup starts cmd as the leader of a new process group. With a reaper (the argv of a
// program that hands ReaperArg to Reap, e.g. speedmatrix itself), the leader is the reaper
// running cmd, so that the whole group is killed when this process dies, however it dies;
// without one the leader is cmd itself, killed by the kernel when this process dies, but what
// it started is left to the stop.
//
// With a sandbox (sandbox.go), which needs the reaper, the reaper starts in the sandbox's
// namespaces as their init and runs cmd inside; its exit ends every process left there.
func startGroup(cmd *exec.Cmd, reaper []string, sb *Sandbox) (*group, error) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	sig := syscall.SIGKILL
	var base string
	if sb != nil {
		if len(reaper) == 0 {
			return nil, &SandboxError{Err: errors.New("no reaper program to make it with (os.Executable failed)")}
		}
		var err error
		if base, err = os.MkdirTemp("", "speedmatrix-sandbox-*"); err != nil {
			return nil, fmt.Errorf("sandbox: %w", err)
		}
		if filepath.IsAbs(cmd.Path) {
			cmd.Args[0] = cmd.Path // looked up here: the sandbox shows it, read-only
		}
		sb = sb.withCommand(cmd.Args, cmd.Dir, cmd.Env)
		sb.UID, sb.GID, sb.Base = os.Getuid(), os.Getgid(), base
		sandboxAttr(cmd.SysProcAttr)
	}
	if len(reaper) > 0 {
		orig := cmd.Args
		args := append(append([]string(nil), reaper[1:]...), ReaperArg)
		if sb != nil {
			sa, err := sandboxArgs(sb)
			if err != nil {
				os.Remove(base)
				return nil, err
			}
			args = append(args, sa...)
		}
		rc := exec.Command(reaper[0], append(append(args, "--"), orig...)...)
		cmd.Path, cmd.Args, cmd.Err = rc.Path, rc.Args, rc.Err
		sig = reaperSignal
	}
	if err := startWithDeathSignal(cmd, sig); err != nil { // reaper.go
		if sb != nil {
			os.Remove(base)
			return nil, sandboxStartError(err)
		}
		return nil, err
	}
	g := &group{cmd: cmd, pgid: cmd.Process.Pid, done: make(chan struct{})}
	if base != "" {
		go func() { <-g.done; os.Remove(base) }() // the tmpfs on it was the sandbox's only
	}
	go func() {
		g.err = cmd.Wait()
		close(g.done)
	}()
	return g, nil
}

// exited reports whether the leader has exited.
func (g *group) exited() bool {
	select {
	case <-g.done:
		return true
	default:
		return false
	}
}

// signal sends sig to every process of the group.
func (g *group) signal(sig syscall.Signal) {
	_ = syscall.Kill(-g.pgid, sig)
}

// stop ends the group: SIGTERM to all of it, SIGKILL to what is left after grace, then it
// waits (bounded) until the leader is reaped and no process of the group is left. It reports
// whether SIGKILL was needed.
func (g *group) stop(grace time.Duration) (killed bool) {
	if !groupGone(g.pgid) || !g.exited() {
		g.signal(syscall.SIGTERM)
		if !g.waitGone(grace) {
			killed = true
			g.signal(syscall.SIGKILL)
			g.waitGone(10 * time.Second)
		}
	}
	return killed
}

// waitGone waits up to d for the leader to be reaped and the group to be empty.
func (g *group) waitGone(d time.Duration) bool {
	deadline := time.Now().Add(d)
	for {
		if g.exited() && groupGone(g.pgid) {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		select {
		case <-g.done:
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// groupGone reports whether no live process is left in process group pgid. Zombies waiting
// for init to reap them count as gone; kill(-pgid, 0) is the last word when /proc is absent.
func groupGone(pgid int) bool {
	err := syscall.Kill(-pgid, 0)
	if errors.Is(err, syscall.ESRCH) {
		return true
	}
	ents, rerr := os.ReadDir("/proc")
	if rerr != nil {
		return false
	}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		pg, state, ok := procStat(pid)
		if ok && pg == pgid && state != 'Z' && state != 'X' {
			return false
		}
	}
	return true
}

// procStat reads the process group and state of pid from /proc/PID/stat.
func procStat(pid int) (pgid int, state byte, ok bool) {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, 0, false
	}
	// pid (comm) state ppid pgrp ...; comm may hold spaces and parentheses.
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return 0, 0, false
	}
	f := strings.Fields(string(data[i+1:]))
	if len(f) < 3 {
		return 0, 0, false
	}
	pg, err := strconv.Atoi(f[2])
	if err != nil {
		return 0, 0, false
	}
	return pg, f[0][0], true
}
