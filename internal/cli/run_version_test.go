package cli

import (
	"path/filepath"
	"testing"

	"github.com/speedmatrix/speedmatrix/bench/benchtest"
	"github.com/speedmatrix/speedmatrix/results"
)

// TestRunURLReadsVersionOnce: run --url asks the server's /version once (whether it is the
// built-in simulator, and the engine's version, come from the one answer), and still records
// the version.
func TestRunURLReadsVersionOnce(t *testing.T) {
	srv := fakeServer(t, benchtest.Config{})
	out := filepath.Join(t.TempDir(), "r.json")
	if _, stderr, err := runBench(t, nil, smallRun(srv.URL, out)...); err != nil {
		t.Fatalf("run: %v\n%s", err, stderr)
	}
	if n := srv.VersionRequests(); n != 1 {
		t.Errorf("/version asked %d times, want once", n)
	}
	f, err := results.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if f.Engine.Version != "0.0.0-fake" {
		t.Errorf("engine version %q, want the server's 0.0.0-fake", f.Engine.Version)
	}
}
