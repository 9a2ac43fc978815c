package cli

import (
	"path/filepath"
	"testing"

	"github.com/speedmatrix/speedmatrix/results"
)

// TestRunQueuedDecidedOnSimulator measures decode/8K/1 and decode/8K/32 through `run --url`
// against the simulator served over HTTP at 20× (as `speedmatrix sim --sim-speedup 20`, whose
// speed the client does not know): the queued cell is decided within a few seconds of its last
// request reaching the server (32 × 0.58 s of front end ÷ 20 = 0.93 s after the first), not after
// the 60 s readiness timeout (issue 9: each queued cell cost a minute), and the valid cell stays
// valid.
func TestRunQueuedDecidedOnSimulator(t *testing.T) {
	if testing.Short() {
		t.Skip("measures the simulator for several seconds")
	}
	srv := serveDefaultSim(t, 0, 20)
	out := filepath.Join(t.TempDir(), "r.json")
	if _, stderr, err := runBench(t, nil, "run", "--url", srv.URL(), "--cells", "decode/8K/1,decode/8K/32", "--duration", "2s",
		"--warmup", "0", "--quiet", "-o", out); err != nil {
		t.Fatalf("run: %v\n%s", err, stderr)
	}
	f := readResults(t, out)
	want := map[int]results.Status{1: results.StatusValid, 32: results.StatusQueued}
	for _, c := range f.Decode {
		if c.Status != want[c.Concurrency] {
			t.Errorf("decode/8K/%d: %s, want %s", c.Concurrency, c.Status, want[c.Concurrency])
		}
	}
	b := f.Run.Budget
	if b == nil || b.ReadinessSeconds > 4 {
		t.Errorf("budget %+v: want both cells ready within 4 s together", b)
	}
}
