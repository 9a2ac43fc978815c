package results_test

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/speedmatrix/speedmatrix/results"
)

// nullDevice makes a character device like /dev/null (major 1, minor 3) at dir/null, so that a
// test that would replace it breaks no other program of the machine; it skips the test where
// the process may not make device nodes (not root).
func nullDevice(t *testing.T, dir string) string {
	t.Helper()
	p := filepath.Join(dir, "null")
	if err := syscall.Mknod(p, syscall.S_IFCHR|0o666, 1<<8|3); err != nil {
		t.Skipf("mknod %s: %v (run as root to test writes to a device)", p, err)
	}
	return p
}

// isCharDevice reports whether path is still a character device.
func isCharDevice(t *testing.T, path string) bool {
	t.Helper()
	st, err := os.Lstat(path)
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// TestWriteKinds: what each writer does with each kind of file at its path. A path the user
// named (WriteOutput): a device or FIFO is written into and stays what it was, a link is
// written through (its target replaced, the link kept), a regular file is replaced atomically,
// a folder refused. A file in speedmatrix's own folders (WriteFileAtomic): only a regular
// file or none is written; a link (O_NOFOLLOW: not followed), a device or a FIFO is refused
// and left as it was. Before, both renamed a regular file over whatever was there: as root, a
// device node became a regular file.
func TestWriteKinds(t *testing.T) {
	data := []byte("{\"x\": 1}\n")
	for _, tc := range []struct {
		name string
		// make makes the thing at the path in dir and returns the path and a check of what is
		// left after the write (nil: none).
		make    func(t *testing.T, dir string) (string, func(t *testing.T))
		named   bool   // WriteOutput; else WriteFileAtomic
		wantErr string // "" when the write must succeed
	}{
		{name: "named: none", named: true, make: func(t *testing.T, dir string) (string, func(*testing.T)) {
			p := filepath.Join(dir, "out.json")
			return p, func(t *testing.T) { wantFile(t, p, data) }
		}},
		{name: "named: regular file", named: true, make: func(t *testing.T, dir string) (string, func(*testing.T)) {
			p := filepath.Join(dir, "out.json")
			writeFile(t, p, "old")
			return p, func(t *testing.T) { wantFile(t, p, data) }
		}},
		{name: "named: character device", named: true, make: func(t *testing.T, dir string) (string, func(*testing.T)) {
			p := nullDevice(t, dir)
			return p, func(t *testing.T) {
				if !isCharDevice(t, p) {
					t.Errorf("%s is no longer a character device", p)
				}
			}
		}},
		{name: "named: link to a character device", named: true, make: func(t *testing.T, dir string) (string, func(*testing.T)) {
			dev := nullDevice(t, dir)
			p := filepath.Join(dir, "stdout")
			symlink(t, dev, p)
			return p, func(t *testing.T) {
				if !isCharDevice(t, dev) {
					t.Errorf("%s is no longer a character device", dev)
				}
				if target, err := os.Readlink(p); err != nil || target != dev {
					t.Errorf("the link now points at %q (%v)", target, err)
				}
			}
		}},
		{name: "named: FIFO", named: true, make: func(t *testing.T, dir string) (string, func(*testing.T)) {
			p := filepath.Join(dir, "fifo")
			if err := syscall.Mkfifo(p, 0o644); err != nil {
				t.Skipf("mkfifo: %v", err)
			}
			got := make(chan string, 1)
			go func() {
				fh, err := os.Open(p)
				if err != nil {
					got <- err.Error()
					return
				}
				b, _ := io.ReadAll(fh)
				fh.Close()
				got <- string(b)
			}()
			return p, func(t *testing.T) {
				if s := <-got; s != string(data) {
					t.Errorf("the FIFO's reader got %q, want %q", s, data)
				}
				if st, err := os.Lstat(p); err != nil || st.Mode()&os.ModeNamedPipe == 0 {
					t.Errorf("%s is no longer a FIFO", p)
				}
			}
		}},
		{name: "named: /dev/stdout, a pipe", named: true, make: func(t *testing.T, dir string) (string, func(*testing.T)) {
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			got := make(chan string, 1)
			go func() { b, _ := io.ReadAll(r); got <- string(b) }()
			// What /dev/stdout names when stdout is a pipe: /proc/self/fd/N, a link to the pipe.
			p := fmt.Sprintf("/proc/self/fd/%d", w.Fd())
			if _, err := os.Stat(p); err != nil {
				t.Skipf("%s: %v", p, err)
			}
			return p, func(t *testing.T) {
				w.Close()
				if s := <-got; s != string(data) {
					t.Errorf("the pipe's reader got %q, want %q", s, data)
				}
				r.Close()
			}
		}},
		{name: "named: link to a regular file", named: true, make: func(t *testing.T, dir string) (string, func(*testing.T)) {
			target := filepath.Join(dir, "real.json")
			writeFile(t, target, "old")
			p := filepath.Join(dir, "link.json")
			symlink(t, target, p)
			return p, func(t *testing.T) {
				wantFile(t, target, data)
				if st, err := os.Lstat(p); err != nil || st.Mode()&os.ModeSymlink == 0 {
					t.Errorf("the link %s was replaced", p)
				}
			}
		}},
		{name: "named: folder", named: true, wantErr: "is a folder", make: func(t *testing.T, dir string) (string, func(*testing.T)) {
			return dir, nil
		}},
		{name: "own folder: regular file", make: func(t *testing.T, dir string) (string, func(*testing.T)) {
			p := filepath.Join(dir, "meta.json")
			writeFile(t, p, "old")
			return p, func(t *testing.T) { wantFile(t, p, data) }
		}},
		{name: "own folder: link", wantErr: "is a symbolic link", make: func(t *testing.T, dir string) (string, func(*testing.T)) {
			target := filepath.Join(dir, "elsewhere.json")
			writeFile(t, target, "secret")
			p := filepath.Join(dir, "meta.json")
			symlink(t, target, p)
			return p, func(t *testing.T) { wantFile(t, target, []byte("secret")) }
		}},
		{name: "own folder: dangling link", wantErr: "is a symbolic link", make: func(t *testing.T, dir string) (string, func(*testing.T)) {
			target := filepath.Join(dir, "planted.json")
			p := filepath.Join(dir, "meta.json")
			symlink(t, target, p)
			return p, func(t *testing.T) {
				if _, err := os.Lstat(target); err == nil {
					t.Errorf("the write created the link's target %s", target)
				}
			}
		}},
		{name: "own folder: character device", wantErr: "a character device", make: func(t *testing.T, dir string) (string, func(*testing.T)) {
			p := nullDevice(t, dir)
			return p, func(t *testing.T) {
				if !isCharDevice(t, p) {
					t.Errorf("%s is no longer a character device", p)
				}
			}
		}},
		{name: "own folder: FIFO", wantErr: "a FIFO", make: func(t *testing.T, dir string) (string, func(*testing.T)) {
			p := filepath.Join(dir, "fifo")
			if err := syscall.Mkfifo(p, 0o644); err != nil {
				t.Skipf("mkfifo: %v", err)
			}
			return p, nil
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			p, check := tc.make(t, dir)
			write := results.WriteFileAtomic
			if tc.named {
				write = results.WriteOutput
			}
			err := write(p, data)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("write %s: %v", p, err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("write %s: %v, want an error saying %q", p, err, tc.wantErr)
			}
			if check != nil {
				check(t)
			}
			entries, _ := os.ReadDir(dir)
			for _, e := range entries {
				if strings.Contains(e.Name(), ".tmp-") {
					t.Errorf("temporary file %s left behind", e.Name())
				}
			}
		})
	}
}

func writeFile(t *testing.T, p, s string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func symlink(t *testing.T, target, p string) {
	t.Helper()
	if err := os.Symlink(target, p); err != nil {
		t.Fatal(err)
	}
}

func wantFile(t *testing.T, p string, want []byte) {
	t.Helper()
	st, err := os.Lstat(p)
	if err != nil || !st.Mode().IsRegular() {
		t.Fatalf("%s: %v, mode %v; want a regular file", p, err, st)
	}
	if b, _ := os.ReadFile(p); string(b) != string(want) {
		t.Errorf("%s holds %q, want %q", p, b, want)
	}
}
