package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/speedmatrix/speedmatrix/bench/benchtest"
	"github.com/speedmatrix/speedmatrix/compare"
	"github.com/speedmatrix/speedmatrix/internal/memnet"
	"github.com/speedmatrix/speedmatrix/results"
)

// TestRunRejectsNonsense checks that settings no run can measure are usage errors (exit 2)
// that say the valid range, before any request.
func TestRunRejectsNonsense(t *testing.T) {
	srv := fakeServer(t, benchtest.Config{})
	out := filepath.Join(t.TempDir(), "r.json")
	base := []string{"run", "--url", srv.URL, "-o", out, "--quiet"}
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--duration", "1ns"}, "at least 100ms"},
		{[]string{"--duration", "99ms"}, "at least 100ms"},
		{[]string{"--contexts", "1"}, "at least 256 tokens"},
		{[]string{"--prefill-contexts", "100"}, "at least 256 tokens"},
		{[]string{"--contexts", ""}, "--contexts is empty"},
		{[]string{"--contexts", " , "}, "--contexts is empty"},
		{[]string{"--concurrency", ""}, "--concurrency is empty"},
		{[]string{"--prefill-contexts", ""}, "--prefill-contexts is empty"},
		{[]string{"--cells", ""}, "--cells is empty"},
		{[]string{"--health-timeout", "0s"}, "health timeout"},
	}
	for _, c := range cases {
		args := append(append([]string(nil), base...), c.args...)
		_, _, err := runBench(t, nil, args...)
		if ExitCode(err) != ExitUsage || !strings.Contains(err.Error(), c.want) {
			t.Errorf("run %v: exit %d, %v; want a usage error saying %q", c.args, ExitCode(err), err, c.want)
		}
	}
	if n := srv.Requests(); n != 0 {
		t.Errorf("%d stream requests were sent; nonsense must be refused before the first", n)
	}
	dir := t.TempDir()
	yaml := filepath.Join(dir, "c.yaml")
	if err := os.WriteFile(yaml, []byte("contexts: []\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := runBench(t, nil, "run", "--url", srv.URL, "--config", yaml); ExitCode(err) != ExitUsage || !strings.Contains(err.Error(), "contexts is empty") {
		t.Errorf("contexts: [] in YAML: exit %d, %v; want a usage error", ExitCode(err), err)
	}
}

// TestRunURLNeedsScheme checks that a URL without http:// is a usage error that says to add it.
func TestRunURLNeedsScheme(t *testing.T) {
	cases := []struct{ url, want string }{
		{"127.0.0.1:8000", "add http://"},
		{"localhost:8000", "add http://"},
		{"gpu-box", "add http://"},
		{"ftp://gpu-box:8000", "http or https"},
		{"http://", "no host"},
		{"http:///v1", "no host"},
	}
	for _, c := range cases {
		_, _, err := runBench(t, nil, "run", "--url", c.url, "-o", filepath.Join(t.TempDir(), "r.json"))
		if ExitCode(err) != ExitUsage || !strings.Contains(err.Error(), c.want) {
			t.Errorf("--url %q: exit %d, %v; want a usage error saying %q", c.url, ExitCode(err), err, c.want)
		}
	}
}

// TestRunChecksOutputFirst checks the output path before the first request: a missing folder
// is created; a directory or a path under a file is a usage error. It runs in a
// testing/synctest bubble over internal/memnet, so the 2 s before refusing are the run's own
// waits (the fake clock's), not a loaded machine's.
func TestRunChecksOutputFirst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := memnet.New()
		ln, err := n.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		srv := fakeServer(t, benchtest.Config{Listener: ln})
		run := func(args ...string) (string, error) {
			var out, errOut bytes.Buffer
			err := RunEnv(t.Context(), &Env{Stdout: &out, Stderr: &errOut, Getenv: func(string) string { return "" }, Net: n}, args)
			return errOut.String(), err
		}
		dir := t.TempDir()
		aFile := filepath.Join(dir, "file")
		if err := os.WriteFile(aFile, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct{ out, want string }{
			{dir, "is a directory"},
			{filepath.Join(aFile, "r.json"), "cannot create"},
		} {
			_, err := run(smallRun(srv.URL, c.out)...)
			if ExitCode(err) != ExitUsage || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "-o") {
				t.Errorf("-o %s: exit %d, %v; want a usage error saying %q", c.out, ExitCode(err), err, c.want)
			}
			if n := srv.Requests(); n != 0 { // no time bound: a loaded machine may take its time to refuse
				t.Errorf("-o %s: %d stream requests before refusing; want none", c.out, n)
			}
		}
		out := filepath.Join(dir, "out", "missing", "r.json")
		if stderr, err := run(append(smallRun(srv.URL, out), "--quiet")...); err != nil {
			t.Fatalf("-o into a missing folder: %v\n%s", err, stderr)
		}
		if _, err := results.ReadFile(out); err != nil {
			t.Errorf("the results in a created folder: %v", err)
		}
	})
}

// TestRunSavesToFallback checks that when the output path stops being writable during the run,
// the results go to a fallback file named after the run, and both the log and the error say where.
func TestRunSavesToFallback(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	srv := fakeServer(t, benchtest.Config{})
	dir := filepath.Join(t.TempDir(), "out")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "r.json")
	var broke atomic.Bool
	go func() {
		for range 200 {
			if _, err := os.Stat(out); err == nil { // the first checkpoint
				os.RemoveAll(dir)
				os.WriteFile(dir, []byte("now a file"), 0o644)
				broke.Store(true)
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	args := []string{"run", "--url", srv.URL, "--contexts", "1K", "--concurrency", "1,2,4", "--duration", "400ms",
		"--max-tokens", "101", "--warmup", "0", "-o", out, "--quiet"}
	_, stderr, err := runBench(t, nil, args...)
	if !broke.Load() {
		t.Fatalf("the test never saw the first checkpoint; err %v\n%s", err, stderr)
	}
	matches, _ := filepath.Glob(filepath.Join(tmp, "speedmatrix-*.json"))
	if len(matches) != 1 {
		t.Fatalf("fallback files %q in TMPDIR, want one; err %v\n%s", matches, err, stderr)
	}
	fb := matches[0]
	if ExitCode(err) != ExitError || !strings.Contains(err.Error(), fb) {
		t.Errorf("exit %d, %v; want exit 1 naming the fallback file %s", ExitCode(err), err, fb)
	}
	if !strings.Contains(stderr, fb) {
		t.Errorf("the log does not name the fallback file %s:\n%s", fb, stderr)
	}
	f, rerr := results.ReadFile(fb)
	if rerr != nil {
		t.Fatal(rerr)
	}
	if f.Run.Partial || len(f.Decode) != 3 || !strings.Contains(fb, f.Run.ID) {
		t.Errorf("fallback %s: partial %v, %d decode cells, run id %s; want the whole run", fb, f.Run.Partial, len(f.Decode), f.Run.ID)
	}
}

// TestRunPartialCountsEveryCell checks that a partial run counts the prefill and decode cells
// the file holds, and says which.
func TestRunPartialCountsEveryCell(t *testing.T) {
	out, err := runServerDies(t)
	if ExitCode(err) != ExitError {
		t.Fatalf("exit %d, %v; want 1", ExitCode(err), err)
	}
	f, rerr := results.ReadFile(out)
	if rerr != nil {
		t.Fatal(rerr)
	}
	var pre, dec int
	for _, c := range f.Prefill {
		if c.Status.Measured() {
			pre++
		}
	}
	for _, c := range f.Decode {
		if c.Status.Measured() {
			dec++
		}
	}
	if pre != 2 || dec != 1 {
		t.Fatalf("the file holds %d measured prefill and %d decode cells, want 2 and 1", pre, dec)
	}
	if want := "the 3 cells measured so far (2 prefill, 1 decode)"; !strings.Contains(err.Error(), want) {
		t.Errorf("error %q, want it to say %q", err, want)
	}
	// compare counts the same cells of the same file (before: "stopped after 4 of 4 cells",
	// the cell the server died in counted as one it got).
	base, _ := results.ReadFile(out)
	base.Run.Partial, base.Run.PartialReason = false, ""
	c, cerr := compare.Compare(compare.Input{Base: []*results.File{base}, Head: []*results.File{f}}, compare.DefaultThresholds())
	if cerr != nil {
		t.Fatal(cerr)
	}
	if want := "stopped after 3 of "; !strings.Contains(c.VerdictReason, want) {
		t.Errorf("compare's reason %q, want it to say %q, as run's error does", c.VerdictReason, want)
	}
}

// TestRunSimWindowFloor checks that the simulator's default window, shrunk by a large speedup,
// stays at the shortest window a run accepts instead of becoming a usage error.
func TestRunSimWindowFloor(t *testing.T) {
	out := filepath.Join(t.TempDir(), "r.json")
	_, stderr, err := runSimTime(t, nil, "run", "--contexts", "1K", "--concurrency", "1", "--warmup", "0",
		"--sim-speedup", "1000", "--quiet", "-o", out)
	if err != nil {
		t.Fatalf("run at 1000×: %v\n%s", err, stderr)
	}
	f, err := results.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if got := f.Run.Settings.DurationSeconds; got != 0.1 {
		t.Errorf("window %gs, want the 0.1s floor", got)
	}
}
