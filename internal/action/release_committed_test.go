package action

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// releaseRepo makes a git repository in a new folder holding the release scripts and a small
// tree of the kinds of files release/sourcehash.sh hashes and leaves out, all committed, and
// returns its path.
func releaseRepo(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not found")
	}
	dir := t.TempDir()
	files := map[string]string{
		"go.mod":                       "module example.com/m\n",
		"cmd/speedmatrix/main.go":      "package main\n\nfunc main() {}\n",
		"cmd/speedmatrix/main_test.go": "package main\n",
		"README.md":                    "# m\n",
		"sim/testdata/a.txt":           "a\n",
		".github/workflows/w.yml":      "on: push\n",
		".gitignore":                   "/speedmatrix\n/dist/\n",
		"release/TAG":                  "v0.0.1\n",
	}
	for _, name := range []string{"make.sh", "sourcehash.sh", "committed.sh"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "release", name))
		if err != nil {
			t.Fatal(err)
		}
		files["release/"+name] = string(b)
	}
	for name, text := range files {
		writeTestFile(t, filepath.Join(dir, name), text)
	}
	for _, args := range [][]string{
		{"init", "-q"},
		{"add", "-A"},
		{"-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "c0"},
	} {
		gitIn(t, dir, args...)
	}
	return dir
}

func writeTestFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func gitIn(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// treeSourceHash runs release/sourcehash.sh in dir.
func treeSourceHash(t *testing.T, dir string) string {
	t.Helper()
	cmd := exec.Command("bash", "release/sourcehash.sh")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("release/sourcehash.sh: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// TestReleaseCommittedTree (issue 35's walk-through): release/committed.sh refuses a tree
// exactly when release/sourcehash.sh's hash of it is not the commit's, and names the files
// that make the difference. The committed release/SHA256SUMS of v1.0.0 named a source hash that
// no clone of main reproduced (a file the commit does not hold was in the tree it was made
// from), so `release/make.sh --verify` failed on a fresh clone; the README's own
// `go build -o speedmatrix ./cmd/speedmatrix` leaves such a file.
func TestReleaseCommittedTree(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(t *testing.T, dir string)
		stray  string // the file committed.sh must name; empty: the tree is the commit's
	}{
		{"clean", func(*testing.T, string) {}, ""},
		{"the README's binary", func(t *testing.T, dir string) {
			writeTestFile(t, filepath.Join(dir, "speedmatrix"), "\x7fELF")
		}, "speedmatrix"},
		{"an untracked source file", func(t *testing.T, dir string) {
			writeTestFile(t, filepath.Join(dir, "cmd/speedmatrix/extra.go"), "package main\n")
		}, "cmd/speedmatrix/extra.go"},
		{"a change not committed", func(t *testing.T, dir string) {
			writeTestFile(t, filepath.Join(dir, "go.mod"), "module example.com/m\n\ngo 1.26\n")
		}, "go.mod"},
		{"a deleted file", func(t *testing.T, dir string) {
			if err := os.Remove(filepath.Join(dir, "cmd/speedmatrix/main.go")); err != nil {
				t.Fatal(err)
			}
		}, "cmd/speedmatrix/main.go"},
		{"what the hash leaves out", func(t *testing.T, dir string) {
			for _, name := range []string{"cmd/speedmatrix/x_test.go", "docs/notes.md", "sim/testdata/b.txt",
				"internal/testdata/deep/c.txt", ".github/workflows/v.yml", "dist/speedmatrix_linux_amd64", "release/SHA256SUMS"} {
				writeTestFile(t, filepath.Join(dir, name), "x\n")
			}
			writeTestFile(t, filepath.Join(dir, "README.md"), "# changed\n")
		}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := releaseRepo(t)
			committed := treeSourceHash(t, dir)
			tc.change(t, dir)
			cmd := exec.Command("bash", "release/committed.sh")
			cmd.Dir = dir
			out, err := cmd.CombinedOutput()
			refused := err != nil
			if hashDiffers := treeSourceHash(t, dir) != committed; refused != hashDiffers {
				t.Errorf("committed.sh refused: %v; the source hash differs from the commit's: %v\n%s", refused, hashDiffers, out)
			}
			if refused != (tc.stray != "") {
				t.Fatalf("committed.sh refused: %v, want %v\n%s", refused, tc.stray != "", out)
			}
			if tc.stray != "" && !strings.Contains(string(out), " "+tc.stray+"\n") {
				t.Errorf("committed.sh does not name %s:\n%s", tc.stray, out)
			}
		})
	}
}

// TestReleaseMakeRefusesStrayFiles: release/make.sh, both writing a release and verifying one,
// checks the tree before it builds anything: a file the commit does not hold stops it with the
// file named, and neither dist/ nor release/TAG is written.
func TestReleaseMakeRefusesStrayFiles(t *testing.T) {
	for _, arg := range []string{"v9.9.9", "--verify"} {
		t.Run(arg, func(t *testing.T) {
			dir := releaseRepo(t)
			writeTestFile(t, filepath.Join(dir, "speedmatrix"), "\x7fELF")
			cmd := exec.Command("bash", "release/make.sh", arg)
			cmd.Dir = dir
			out, err := cmd.CombinedOutput()
			if err == nil {
				t.Fatalf("release/make.sh %s made a release of a tree with a file the commit does not hold:\n%s", arg, out)
			}
			if !strings.Contains(string(out), "!! speedmatrix\n") {
				t.Errorf("release/make.sh %s does not name the stray file:\n%s", arg, out)
			}
			if _, err := os.Stat(filepath.Join(dir, "dist")); err == nil {
				t.Errorf("release/make.sh %s built dist/ before it refused", arg)
			}
			if b, _ := os.ReadFile(filepath.Join(dir, "release", "TAG")); string(b) != "v0.0.1\n" {
				t.Errorf("release/make.sh %s wrote release/TAG: %q", arg, b)
			}
		})
	}
}
