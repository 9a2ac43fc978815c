package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

// The sandbox of an engine's build and server processes (every build mode but docker, whose
// container isolates already). It is made with the kernel's namespaces, through SysProcAttr and
// the reaper (reaper.go), with no helper program to install:
//
//   - the reaper starts in new user, PID, mount and IPC namespaces (CLONE_NEWUSER|CLONE_NEWPID|
//     CLONE_NEWNS|CLONE_NEWIPC); it is the namespace's init (PID 1), so when it exits, once the
//     engine's command has, the kernel kills every process left in it: a daemon that called
//     setsid included. From inside, no process of the runner is visible;
//   - as init it assembles a new root on a tmpfs and pivots into it: the system directories
//     (/usr, /etc, /opt, ...) read-only and nosuid, a fresh /proc of the namespace, /sys
//     read-only, a minimal /dev (null, zero, full, random, urandom, tty, the GPUs' /dev/nvidia*
//     and /dev/dri as present) with a private /dev/shm, private /tmp, /var/tmp and /run, a
//     private empty HOME, the model caches and read caches read-only, and only the engine's
//     checkout and build directory writable. The runner's home, its work and tool directories
//     (RUNNER_TEMP, the job's _temp, RUNNER_TOOL_CACHE), the Go environment, the results and
//     artifact directories and any trusted cache are not mounted, or hidden under an empty
//     tmpfs where they lie inside a shown directory;
//   - it then starts the command in a nested user and mount namespace with no_new_privs: every
//     mount it sees is locked (it can neither unmount what hides a path nor make a read-only
//     mount writable) and it holds no capability over the sandbox's namespaces.
//
// The network namespace is the runner's: the server listens on the loopback where speedmatrix
// measures it, and a build may download.

// SandboxMode is engine.sandbox: how build and server processes are confined.
type SandboxMode string

// Sandbox modes.
const (
	SandboxNamespaces SandboxMode = "namespaces" // the default: the sandbox above
	SandboxNone       SandboxMode = "none"       // no sandbox: the engine runs as the runner's user, beside it
)

// ParseSandboxMode parses engine.sandbox ("" is namespaces).
func ParseSandboxMode(s string) (SandboxMode, error) {
	switch SandboxMode(s) {
	case "", SandboxNamespaces:
		return SandboxNamespaces, nil
	case SandboxNone:
		return SandboxNone, nil
	}
	return "", fmt.Errorf("engine.sandbox %q: want namespaces (the default) or none", s)
}

// Sandbox says what a sandboxed build or server process sees of the machine.
type Sandbox struct {
	// Writable are the paths shown read-write at their own place: the engine's checkout and
	// build directory.
	Writable []string `json:"writable,omitempty"`
	// ReadOnly are the paths shown read-only at their own place: model caches, read caches,
	// the program the command names. A path that does not exist is left out.
	ReadOnly []string `json:"read_only,omitempty"`
	// Hidden are paths under an empty tmpfs wherever they lie inside a shown directory
	// (RUNNER_TEMP, the tool cache, the runner's directory, the Go environment, the results).
	Hidden []string `json:"hidden,omitempty"`
	// Home is the private HOME: an empty tmpfs at that path (the caller's HOME, so that the
	// engine's ~/.cache lands there); empty: none.
	Home string `json:"home,omitempty"`
	// Dir is the working directory inside (default /).
	Dir string `json:"dir,omitempty"`

	// Set when the sandbox is started: the outside user and group, and the empty directory
	// the new root is assembled on.
	UID  int    `json:"uid"`
	GID  int    `json:"gid"`
	Base string `json:"base"`
}

// sandboxSystemDirs are the host's directories shown read-only (those that exist; a symbolic
// link, as /bin -> usr/bin, is copied as a link).
func sandboxSystemDirs() []string {
	return []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt", "/srv", "/nix", "/snap"}
}

// sandboxDevices are the device nodes of the sandbox's /dev, bound from the host's.
func sandboxDevices() []string {
	return []string{"null", "zero", "full", "random", "urandom", "tty"}
}

// SandboxArg, after ReaperArg, passes the reaper the sandbox (JSON) to make before it runs
// the command.
const SandboxArg = "--sandbox"

// Clone returns a copy of sb whose lists may be appended to.
func (sb *Sandbox) Clone() *Sandbox {
	if sb == nil {
		return nil
	}
	c := *sb
	c.Writable = slices.Clone(sb.Writable)
	c.ReadOnly = slices.Clone(sb.ReadOnly)
	c.Hidden = slices.Clone(sb.Hidden)
	return &c
}

// withCommand returns sb showing, read-only, what the command needs besides what sb shows:
//
//   - what it names by an absolute path (the program, a model directory, a file a shell line
//     runs: as an argument or a word of one);
//   - the virtual environment of every such path that is a venv's interpreter or lies in a
//     venv's bin (taskset -c 1 /venv/bin/python, not only /venv/bin/python), with its base
//     interpreter's installation (pyvenv.cfg's home: a venv's python is a link to it);
//   - the base installation of each venv whose bin is on the command's PATH (env) and which
//     the sandbox shows (a build's venv, put first on PATH by Build.ServeSpec): its python
//     links into that installation;
//   - its working directory dir (empty: the caller's, shown read-only, as outside the sandbox:
//     build none without engine.source serves from there).
//
// Nothing named that lies in a Hidden path is shown, nor a path that holds one of the
// sandbox's own private directories (/tmp, /var/tmp, /dev, /proc, /sys, /run): showing /tmp
// would put the machine's /tmp in place of the private one. The one exception is the caller's
// working directory when it is the engine's checkout that the command runs (a git work tree in
// which the command names a file, as `sh serve.sh` in the job's workspace): it is shown
// read-only, and the Hidden paths inside it (the results' directory) stay hidden
// (Sandbox.enter mounts the deeper path last). Otherwise a working directory that is not
// shown is replaced by /.
func (sb *Sandbox) withCommand(argv []string, dir string, env []string) *Sandbox {
	c := sb.Clone()
	hidden := cleanList(sb.Hidden)
	isHidden := func(p string) bool {
		return slices.ContainsFunc(hidden, func(h string) bool { return Within(p, h) })
	}
	// Shown already, or the sandbox's own (never the host's; a path inside /tmp is the host's).
	shown := append(sandboxSystemDirs(), "/proc", "/sys", "/dev", "/run", "/var/run")
	show := func(p string) bool {
		p = filepath.Clean(p)
		if isHidden(p) || holdsPrivate(p) {
			return false
		}
		for _, d := range shown {
			if Within(p, d) {
				return true
			}
		}
		if !slices.Contains(c.ReadOnly, p) {
			c.ReadOnly = append(c.ReadOnly, p)
		}
		return true
	}
	visible := func(p string) bool { // shown by the caller: the build's directory, a model cache
		return slices.ContainsFunc(append(cleanList(sb.Writable), cleanList(sb.ReadOnly)...), func(v string) bool { return Within(p, v) })
	}
	showVenv := func(venv string) {
		if !visible(venv) && !show(venv) {
			return
		}
		if base := venvBase(venv); base != "" {
			show(base)
		}
	}
	for _, w := range commandWords(argv) {
		if !filepath.IsAbs(w) || w == "/" {
			continue
		}
		if _, err := os.Stat(w); err != nil {
			continue
		}
		show(w)
		for _, venv := range []string{filepath.Dir(filepath.Dir(w)), w} { // an interpreter or program of a venv's bin; the venv itself
			if isVenv(venv) {
				showVenv(venv)
			}
		}
	}
	// A venv on PATH that the caller shows (a build's, first on PATH): its python links to
	// its base.
	for _, e := range filepath.SplitList(envMap(env)["PATH"]) {
		if venv := filepath.Dir(filepath.Clean(e)); filepath.IsAbs(e) && isVenv(venv) && visible(venv) {
			showVenv(venv)
		}
	}
	if dir == "" {
		if wd, err := os.Getwd(); err == nil {
			switch {
			case show(wd):
				dir = wd
			case isHidden(wd) && !holdsPrivate(wd) && isCheckout(wd) && ServeUsesTree(argv, wd):
				// The engine's checkout, in the job's workspace (which is hidden): shown
				// read-only, the Hidden paths inside it still hidden.
				c.ReadOnly = append(c.ReadOnly, wd)
				dir = wd
			}
		}
	}
	if dir != "" {
		if abs, err := filepath.Abs(dir); err == nil {
			c.Dir = abs
		}
	}
	return c
}

// sandboxPrivateDirs are the sandbox's own directories: never the host's, and never covered
// by a path of the host shown at or above them.
func sandboxPrivateDirs() []string {
	return []string{"/proc", "/sys", "/dev", "/run", "/var/run", "/tmp", "/var/tmp"}
}

// holdsPrivate reports whether p is one of the sandbox's private directories or holds one
// (/var holds /var/tmp): shown, the host's would replace the sandbox's.
func holdsPrivate(p string) bool {
	return slices.ContainsFunc(sandboxPrivateDirs(), func(d string) bool { return Within(d, p) })
}

// isVenv reports whether dir is a Python virtual environment (it has a pyvenv.cfg).
func isVenv(dir string) bool {
	st, err := os.Stat(filepath.Join(dir, "pyvenv.cfg"))
	return err == nil && st.Mode().IsRegular()
}

// venvBase returns the installation of the base interpreter of the virtual environment venv:
// the parent of pyvenv.cfg's home (the base python's bin), or "" when it names none.
func venvBase(venv string) string {
	data, err := os.ReadFile(filepath.Join(venv, "pyvenv.cfg"))
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(data), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok && strings.TrimSpace(k) == "home" {
			if home := filepath.Clean(strings.TrimSpace(v)); filepath.IsAbs(home) && home != "/" {
				return filepath.Dir(home)
			}
		}
	}
	return ""
}

// isCheckout reports whether dir is the top of a git work tree (.git, a directory or, in a
// worktree, a file).
func isCheckout(dir string) bool {
	_, err := os.Lstat(filepath.Join(dir, ".git"))
	return err == nil
}

// sandboxAttr sets cmd's SysProcAttr to start the reaper in the sandbox's namespaces.
func sandboxAttr(attr *syscall.SysProcAttr) {
	attr.Cloneflags |= syscall.CLONE_NEWUSER | syscall.CLONE_NEWPID | syscall.CLONE_NEWNS | syscall.CLONE_NEWIPC
	attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}}
	attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}}
	attr.GidMappingsEnableSetgroups = false
}

// SandboxError is a sandbox the machine could not make: measuring untrusted code is refused.
type SandboxError struct{ Err error }

func (e *SandboxError) Error() string {
	return fmt.Sprintf("engine sandbox: cannot make user, PID and mount namespaces (%v): the engine's code would run as the runner's user beside its other jobs, so it is not run. "+
		"Allow unprivileged user namespaces on the runner: sysctl user.max_user_namespaces above 0; on Debian before 11 kernel.unprivileged_userns_clone=1; "+
		"on Ubuntu 23.10 and later (AppArmor) kernel.apparmor_restrict_unprivileged_userns=0, or an AppArmor profile granting userns to the speedmatrix binary; "+
		"in a container, run it with --security-opt seccomp=unconfined or a profile allowing unshare. "+
		"Or set engine.sandbox: none to run the engine unconfined (only on a runner that measures nothing but trusted code, or an ephemeral one)", e.Err)
}

func (e *SandboxError) Unwrap() error { return e.Err }

// sandboxStartError says why a sandboxed start failed: the namespaces the kernel refused.
func sandboxStartError(err error) error {
	if errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EACCES) || errors.Is(err, syscall.EUSERS) {
		return &SandboxError{Err: err}
	}
	return err
}

// parseSandboxArgs takes the reaper's sandbox off its arguments: SandboxArg JSON.
func parseSandboxArgs(argv []string) (*Sandbox, []string, error) {
	if len(argv) < 2 || argv[0] != SandboxArg {
		return nil, argv, nil
	}
	var sb Sandbox
	if err := json.Unmarshal([]byte(argv[1]), &sb); err != nil {
		return nil, nil, fmt.Errorf("sandbox: %w", err)
	}
	return &sb, argv[2:], nil
}

// sandboxArgs returns the reaper's arguments passing sb.
func sandboxArgs(sb *Sandbox) ([]string, error) {
	data, err := json.Marshal(sb)
	if err != nil {
		return nil, err
	}
	return []string{SandboxArg, string(data)}, nil
}

// cleanList returns the absolute, cleaned, existing paths of ps, without duplicates.
func cleanList(ps []string) []string {
	var out []string
	for _, p := range ps {
		if p == "" {
			continue
		}
		abs, err := filepath.Abs(p)
		if err != nil || abs == "/" {
			continue
		}
		if !slices.Contains(out, abs) {
			out = append(out, abs)
		}
	}
	return out
}

// Within reports whether the clean path p is dir or lies inside it.
func Within(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, strings.TrimSuffix(dir, "/")+"/")
}

// SandboxCheck makes a sandbox once, with the reaper running `true` inside, and returns a
// *SandboxError saying why and what to set when the machine cannot make one.
func SandboxCheck(ctx context.Context, reaper []string) error {
	path, err := exec.LookPath("true")
	if err != nil {
		return &SandboxError{Err: err}
	}
	cmd := exec.Command(path)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	g, err := startGroup(cmd, reaper, &Sandbox{})
	if err != nil {
		var se *SandboxError
		if errors.As(err, &se) {
			return err
		}
		return &SandboxError{Err: err}
	}
	select {
	case <-g.done:
	case <-ctx.Done():
		g.stop(time.Second)
		return ctx.Err()
	}
	if g.err != nil {
		return &SandboxError{Err: fmt.Errorf("%w: %s", g.err, strings.TrimSpace(out.String()))}
	}
	return nil
}

// ServeUsesTree reports whether a launch command (argv as configured) names a file of the
// checkout dir: a relative path with a slash (./serve.sh, scripts/serve.py) that exists there,
// or the name of a file (not a directory: vllm is the package's) at its top, as an argument or
// a word of a shell line. Without a build (engine.build: none) a command that names
// none serves what is installed, the same at every commit.
func ServeUsesTree(argv []string, dir string) bool {
	if dir == "" {
		return false
	}
	for _, w := range commandWords(argv) {
		if w == "." || w == ".." || strings.HasPrefix(w, "-") || filepath.IsAbs(w) || strings.Contains(w, "$") {
			continue
		}
		if st, err := os.Stat(filepath.Join(dir, w)); err == nil && (strings.Contains(w, "/") || !st.IsDir()) {
			return true
		}
	}
	return false
}

// commandWords returns the words of a command: its arguments, split at blanks, shell
// punctuation, quotes and '=' (the words of a bash -c line, --flag=value's value).
func commandWords(argv []string) []string {
	var words []string
	for _, a := range argv {
		words = append(words, strings.FieldsFunc(a, func(r rune) bool {
			return r == ' ' || r == '\t' || r == '\n' || r == ';' || r == '&' || r == '|' || r == '(' || r == ')' || r == '"' || r == '\'' || r == '=' || r == '<' || r == '>'
		})...)
	}
	return words
}
