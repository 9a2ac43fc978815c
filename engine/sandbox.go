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

// withCommand returns sb showing, read-only, what the command names by an absolute path (the
// program, a model directory, a file a shell line runs: as an argument or a word of one), the
// virtual environment of a program that is a venv's interpreter (with its base interpreter's
// installation), but nothing inside a Hidden path; and working in dir (empty: the caller's
// working directory, shown read-only, unless a Hidden path is in it or it in one: then /).
func (sb *Sandbox) withCommand(argv []string, dir string) *Sandbox {
	c := sb.Clone()
	hidden := cleanList(sb.Hidden)
	shown := append(sandboxSystemDirs(), "/proc", "/sys", "/dev", "/run", "/var/run")
	show := func(p string) {
		p = filepath.Clean(p)
		for _, h := range hidden {
			if under(p, h) {
				return
			}
		}
		for _, d := range shown { // shown already, or the sandbox's own (never the host's)
			if under(p, d) {
				return
			}
		}
		c.ReadOnly = append(c.ReadOnly, p)
	}
	for _, w := range commandWords(argv) {
		if filepath.IsAbs(w) && w != "/" {
			if _, err := os.Stat(w); err == nil {
				show(w)
			}
		}
	}
	if len(argv) > 0 && filepath.IsAbs(argv[0]) {
		venv := filepath.Dir(filepath.Dir(argv[0]))
		if data, err := os.ReadFile(filepath.Join(venv, "pyvenv.cfg")); err == nil {
			show(venv)
			for _, line := range strings.Split(string(data), "\n") {
				if k, v, ok := strings.Cut(line, "="); ok && strings.TrimSpace(k) == "home" {
					if home := strings.TrimSpace(v); filepath.IsAbs(home) {
						show(filepath.Dir(home)) // the base interpreter's installation
					}
				}
			}
		}
	}
	if dir == "" {
		// The command's default working directory is the caller's, as outside the sandbox
		// (build none without engine.source serves from there): shown read-only, unless it
		// is hidden (the results' folder, the runner's workspace), when the command runs in /.
		if wd, err := os.Getwd(); err == nil && !slices.ContainsFunc(hidden, func(h string) bool { return under(wd, h) || under(h, wd) }) {
			dir = wd
			show(wd)
		}
	}
	if dir != "" {
		if abs, err := filepath.Abs(dir); err == nil {
			c.Dir = abs
		}
	}
	return c
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

// under reports whether p is dir or inside it.
func under(p, dir string) bool {
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
