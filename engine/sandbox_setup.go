package engine

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// enter makes the sandbox's file system, as the init of its namespaces (the reaper, before it
// starts the command): the new root on a tmpfs at Base, then pivot_root into it.
func (sb *Sandbox) enter() error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make the mounts private: %w", err)
	}
	nr := sb.Base
	if nr == "" || !filepath.IsAbs(nr) {
		return errors.New("no base directory for the new root")
	}
	if err := unix.Mount("tmpfs", nr, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0755"); err != nil {
		return fmt.Errorf("tmpfs for the new root: %w", err)
	}
	at := func(p string) string { return filepath.Join(nr, p) }

	for _, d := range sandboxSystemDirs() {
		st, err := os.Lstat(d)
		if err != nil {
			continue
		}
		if st.Mode()&os.ModeSymlink != 0 {
			target, err := os.Readlink(d)
			if err != nil {
				return err
			}
			if err := os.Symlink(target, at(d)); err != nil {
				return err
			}
			continue
		}
		if !st.IsDir() {
			continue
		}
		if err := bindPath(d, at(d), true); err != nil {
			return err
		}
	}

	// /dev: the few nodes a program needs, the GPUs, a private /dev/shm.
	if err := os.MkdirAll(at("/dev"), 0o755); err != nil {
		return err
	}
	if err := unix.Mount("tmpfs", at("/dev"), "tmpfs", unix.MS_NOSUID, "mode=0755"); err != nil {
		return fmt.Errorf("tmpfs /dev: %w", err)
	}
	devs := sandboxDevices()
	gpus, _ := filepath.Glob("/dev/nvidia*")
	for _, g := range gpus {
		devs = append(devs, filepath.Base(g))
	}
	for _, d := range devs {
		src := filepath.Join("/dev", d)
		st, err := os.Stat(src)
		if err != nil {
			continue
		}
		if st.IsDir() { // /dev/nvidia-caps
			if err := bindPath(src, at(src), false); err != nil {
				return err
			}
			continue
		}
		if err := bindFile(src, at(src), false); err != nil {
			return err
		}
	}
	if st, err := os.Stat("/dev/dri"); err == nil && st.IsDir() {
		if err := bindPath("/dev/dri", at("/dev/dri"), false); err != nil {
			return err
		}
	}
	for name, target := range map[string]string{"fd": "/proc/self/fd", "stdin": "/proc/self/fd/0", "stdout": "/proc/self/fd/1", "stderr": "/proc/self/fd/2"} {
		if err := os.Symlink(target, at("/dev/"+name)); err != nil {
			return err
		}
	}
	for _, d := range []string{"/dev/shm", "/tmp", "/var/tmp", "/run"} {
		if err := tmpfsAt(at(d), "mode=1777"); err != nil {
			return err
		}
	}

	// /proc of the namespace; /sys read-only (the GPU's topology, NUMA).
	if err := os.MkdirAll(at("/proc"), 0o755); err != nil {
		return err
	}
	if err := unix.Mount("proc", at("/proc"), "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("mount /proc: %w", err)
	}
	if err := bindPath("/sys", at("/sys"), true); err != nil {
		return err
	}

	// The hidden paths, the private HOME and the shown paths, shallowest first, so that a
	// deeper one wins: a path shown inside a hidden one (the engine's build directory in the
	// engine cache, speedmatrix under RUNNER_TEMP) is visible, and a hidden path inside a shown
	// one (the results' directory in the workspace, RUNNER_TEMP in a directory a command
	// names) is covered. At one path, the private HOME covers a path shown read-only, and a
	// writable path (the checkout) is shown over both.
	for _, m := range sb.mounts() {
		if err := m.mount(at); err != nil {
			return err
		}
	}

	old := at("/.oldroot")
	if err := os.MkdirAll(old, 0o700); err != nil {
		return err
	}
	if err := unix.PivotRoot(nr, old); err != nil {
		return fmt.Errorf("pivot_root: %w", err)
	}
	if err := os.Chdir("/"); err != nil {
		return err
	}
	if err := unix.Unmount("/.oldroot", unix.MNT_DETACH); err != nil {
		return fmt.Errorf("detach the old root: %w", err)
	}
	if err := os.Remove("/.oldroot"); err != nil {
		return err
	}
	// The root itself read-only: nothing but the mounts above is writable.
	if err := unix.Mount("", "/", "", unix.MS_REMOUNT|unix.MS_BIND|unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV, ""); err != nil {
		return fmt.Errorf("read-only root: %w", err)
	}
	dir := sb.Dir
	if dir == "" {
		dir = "/"
	}
	if err := os.Chdir(dir); err != nil {
		return fmt.Errorf("working directory %s: %w", dir, err)
	}
	return nil
}

// tmpfsAt mounts an empty tmpfs at p, creating it.
func tmpfsAt(p, opts string) error {
	if err := os.MkdirAll(p, 0o755); err != nil {
		return err
	}
	if err := unix.Mount("tmpfs", p, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, opts); err != nil {
		return fmt.Errorf("tmpfs %s: %w", p, err)
	}
	return nil
}

// bindPath binds the directory src (with what is mounted under it) at dst, read-only and
// nosuid when ro.
func bindPath(src, dst string, ro bool) error {
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return fmt.Errorf("mount point %s: %w", dst, err)
	}
	if err := unix.Mount(src, dst, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("bind %s: %w", src, err)
	}
	if ro {
		return readOnly(dst)
	}
	return nil
}

// bindFile binds the file src at dst (created empty).
func bindFile(src, dst string, ro bool) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return fmt.Errorf("mount point %s: %w", dst, err)
	}
	if _, err := os.Lstat(dst); err != nil {
		f, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			return fmt.Errorf("mount point %s: %w", dst, err)
		}
		f.Close()
	}
	if err := unix.Mount(src, dst, "", unix.MS_BIND, ""); err != nil {
		return fmt.Errorf("bind %s: %w", src, err)
	}
	if ro {
		return readOnly(dst)
	}
	return nil
}

// readOnly makes the mount at p and every mount under it read-only and nosuid
// (mount_setattr, Linux 5.12); on an older kernel, the mount at p only, keeping the flags the
// kernel locked on it.
func readOnly(p string) error {
	err := unix.MountSetattr(unix.AT_FDCWD, p, unix.AT_RECURSIVE, &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY | unix.MOUNT_ATTR_NOSUID})
	if err == nil {
		return nil
	}
	if !errors.Is(err, unix.ENOSYS) {
		return fmt.Errorf("read-only %s: %w", p, err)
	}
	var st unix.Statfs_t
	if err := unix.Statfs(p, &st); err != nil {
		return fmt.Errorf("read-only %s: %w", p, err)
	}
	flags := uintptr(unix.MS_REMOUNT | unix.MS_BIND | unix.MS_RDONLY | unix.MS_NOSUID)
	for _, f := range []struct{ st, ms int64 }{{unix.ST_NODEV, unix.MS_NODEV}, {unix.ST_NOEXEC, unix.MS_NOEXEC}, {unix.ST_RELATIME, unix.MS_RELATIME}, {unix.ST_NOATIME, unix.MS_NOATIME}, {unix.ST_NODIRATIME, unix.MS_NODIRATIME}} {
		if st.Flags&f.st != 0 {
			flags |= uintptr(f.ms)
		}
	}
	if err := unix.Mount("", p, "", flags, ""); err != nil {
		return fmt.Errorf("read-only %s: %w", p, err)
	}
	return nil
}

// command returns the command to run inside the sandbox: in a nested user and mount namespace
// (its own user as outside, no capability over the sandbox; every mount locked), with
// no_new_privs set on the reaper first so that no setuid program gains anything.
func (sb *Sandbox) command(argv []string) (*exec.Cmd, error) {
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return nil, fmt.Errorf("no_new_privs: %w", err)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:                 syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS,
		UidMappings:                []syscall.SysProcIDMap{{ContainerID: sb.UID, HostID: 0, Size: 1}},
		GidMappings:                []syscall.SysProcIDMap{{ContainerID: sb.GID, HostID: 0, Size: 1}},
		GidMappingsEnableSetgroups: false,
	}
	return cmd, nil
}

// sandboxMount is one mount of the sandbox's own paths (Sandbox.mounts).
type sandboxMount struct {
	path string
	kind int // mountHidden, mountReadOnly, mountHome or mountWritable: at one path, the later wins
}

// The kinds of a sandboxMount, in the order they are mounted at one path.
const (
	mountHidden = iota
	mountReadOnly
	mountHome
	mountWritable
)

// mounts returns sb's hidden, read-only, home and writable paths in the order enter mounts
// them: by depth, then by kind. A shown path that is or holds one of the sandbox's private
// directories (/tmp, /dev, ...) is left out: the host's would replace the sandbox's.
func (sb *Sandbox) mounts() []sandboxMount {
	var ms []sandboxMount
	for _, h := range cleanList(sb.Hidden) {
		ms = append(ms, sandboxMount{h, mountHidden})
	}
	for _, p := range cleanList(sb.ReadOnly) {
		if !holdsPrivate(p) {
			ms = append(ms, sandboxMount{p, mountReadOnly})
		}
	}
	if home := filepath.Clean(sb.Home); sb.Home != "" && filepath.IsAbs(home) && home != "/" {
		ms = append(ms, sandboxMount{home, mountHome})
	}
	for _, p := range cleanList(sb.Writable) {
		ms = append(ms, sandboxMount{p, mountWritable})
	}
	depth := func(p string) int { return strings.Count(p, "/") }
	slices.SortStableFunc(ms, func(a, b sandboxMount) int {
		if d := depth(a.path) - depth(b.path); d != 0 {
			return d
		}
		return a.kind - b.kind
	})
	return ms
}

// mount makes m under the new root (at maps a path to its place there).
func (m sandboxMount) mount(at func(string) string) error {
	switch m.kind {
	case mountHidden:
		if st, err := os.Stat(at(m.path)); err == nil && st.IsDir() {
			// Writable (private, empty): a path shown inside it gets its mount point there.
			if err := unix.Mount("tmpfs", at(m.path), "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0755"); err != nil {
				return fmt.Errorf("hide %s: %w", m.path, err)
			}
		}
		return nil
	case mountHome:
		if err := tmpfsAt(at(m.path), "mode=0700"); err != nil {
			return fmt.Errorf("private HOME %s: %w", m.path, err)
		}
		return nil
	}
	ro := m.kind == mountReadOnly
	if holdsPrivate(m.path) {
		return fmt.Errorf("writable %s: it is or holds the sandbox's private %s; give the engine a directory of its own", m.path, strings.Join(sandboxPrivateDirs(), ", "))
	}
	st, err := os.Stat(m.path)
	if err != nil {
		if ro {
			return nil // a read-only path that does not exist is left out
		}
		return fmt.Errorf("writable %s: %w", m.path, err)
	}
	if st.IsDir() {
		return bindPath(m.path, at(m.path), ro)
	}
	return bindFile(m.path, at(m.path), ro)
}
