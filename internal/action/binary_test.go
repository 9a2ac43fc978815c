package action

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// binaryRun runs release/binary.sh (action.yml's first step) in the action folder src with
// runner temp tmp, and returns its outputs and what it printed.
func binaryRun(t *testing.T, src, tmp, serverURL string) (map[string]string, string) {
	t.Helper()
	script, err := filepath.Abs("../../release/binary.sh")
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "github_output")
	cmd := exec.Command("bash", script)
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "RUNNER_TEMP="+tmp, "GITHUB_OUTPUT="+out, "GITHUB_SERVER_URL="+serverURL, "ACTION_REPOSITORY=speedmatrix/speedmatrix")
	printed, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("binary.sh: %v\n%s", err, printed)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		k, v, _ := strings.Cut(line, "=")
		got[k] = v
	}
	return got, string(printed)
}

func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestBinaryOncePerJobAndSource: the binary's path is under RUNNER_TEMP and named by the
// action's source, so a second use of the action in a job reuses it, a change to the source
// (not to its tests or prose) names another, and a job with a fresh RUNNER_TEMP builds again.
func TestBinaryOncePerJobAndSource(t *testing.T) {
	src, tmp := t.TempDir(), t.TempDir()
	writeTree(t, src, map[string]string{"go.mod": "module x\n", "cmd/speedmatrix/main.go": "package main\n", "a/a_test.go": "package a\n", "README.md": "x\n", "a/testdata/x.json": "{}"})
	first, _ := binaryRun(t, src, tmp, "")
	if first["found"] != "false" || !strings.HasPrefix(first["path"], filepath.Join(tmp, "speedmatrix-bin-")) || filepath.Base(first["path"]) != "speedmatrix" {
		t.Fatalf("first use: %v, want found=false and a path under RUNNER_TEMP", first)
	}
	if err := os.WriteFile(first["path"], []byte("#!/bin/sh\n"), 0o755); err != nil { // the build
		t.Fatal(err)
	}
	again, printed := binaryRun(t, src, tmp, "")
	if again["found"] != "true" || again["path"] != first["path"] || !strings.Contains(printed, "reusing") {
		t.Errorf("second use in the job: %v %q, want the first one's binary reused", again, printed)
	}
	writeTree(t, src, map[string]string{"a/a_test.go": "package a // changed\n", "README.md": "changed\n", "a/testdata/x.json": "[]"})
	if got, _ := binaryRun(t, src, tmp, ""); got["path"] != first["path"] {
		t.Errorf("a change to tests, test data and prose named another binary: %v", got)
	}
	writeTree(t, src, map[string]string{"cmd/speedmatrix/main.go": "package main // changed\n"})
	if got, _ := binaryRun(t, src, tmp, ""); got["found"] != "false" || got["path"] == first["path"] {
		t.Errorf("changed source: %v, want another path, not found", got)
	}
	if got, _ := binaryRun(t, src, t.TempDir(), ""); got["found"] != "false" {
		t.Errorf("a new job (fresh RUNNER_TEMP): %v, want a build", got)
	}
}

// TestBinaryRelease: a release binary is used only when its SHA-256 is the one
// release/SHA256SUMS of the action's source names; otherwise the action builds from source.
func TestBinaryRelease(t *testing.T) {
	if runtime.GOOS != "linux" || (runtime.GOARCH != "amd64" && runtime.GOARCH != "arm64") {
		t.Skip("release binaries are made for linux/amd64 and linux/arm64")
	}
	name := "speedmatrix_linux_" + runtime.GOARCH
	bin := []byte("#!/bin/sh\necho released\n")
	sum := sha256.Sum256(bin)
	var served []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/speedmatrix/speedmatrix/releases/download/v1.2.3/"+name || served == nil {
			http.NotFound(w, r)
			return
		}
		w.Write(served)
	}))
	defer srv.Close()
	for _, tc := range []struct {
		name   string
		serve  []byte
		sums   string
		found  string
		prints string
		later  bool
	}{
		{"matching", bin, hex.EncodeToString(sum[:]), "true", "release binary " + name + " of v1.2.3", false},
		{"tampered", []byte("#!/bin/sh\necho evil\n"), hex.EncodeToString(sum[:]), "false", "is not used, the action builds from source", false},
		{"not released", nil, hex.EncodeToString(sum[:]), "false", "no release binary at", false},
		{"no sums for this source", bin, "", "false", "", false},
		{"the release's sums in a later source", bin, hex.EncodeToString(sum[:]), "false", "not the one release/SHA256SUMS was made from", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			served = tc.serve
			src, tmp := t.TempDir(), t.TempDir()
			files := map[string]string{"go.mod": "module x\n"}
			if tc.sums != "" {
				files["release/TAG"] = "v1.2.3\n"
			}
			writeTree(t, src, files)
			if tc.sums != "" {
				// The sums name the source they were made from; a later source carrying them
				// builds its own binary.
				source := sourceHash(t, src)
				if tc.later {
					source = strings.Repeat("0", 64)
				}
				writeTree(t, src, map[string]string{"release/SHA256SUMS": "# go1.26.8\n# source " + source + "\n" + tc.sums + "  " + name + "\n"})
			}
			got, printed := binaryRun(t, src, tmp, srv.URL)
			if got["found"] != tc.found || !strings.Contains(printed, tc.prints) {
				t.Fatalf("%v %q, want found=%s and %q", got, printed, tc.found, tc.prints)
			}
			b, err := os.ReadFile(got["path"])
			switch {
			case tc.found == "true" && string(b) != string(bin):
				t.Errorf("binary %q, want the released one", b)
			case tc.found == "false" && err == nil:
				t.Errorf("a binary was left at %s: %q", got["path"], b)
			}
		})
	}
}

// sourceHash runs release/sourcehash.sh in src.
func sourceHash(t *testing.T, src string) string {
	t.Helper()
	script, err := filepath.Abs("../../release/sourcehash.sh")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", script)
	cmd.Dir = src
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("sourcehash.sh: %v", err)
	}
	return strings.TrimSpace(string(out))
}
