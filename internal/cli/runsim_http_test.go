package cli

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/speedmatrix/speedmatrix/sim"
	"github.com/speedmatrix/speedmatrix/sim/profile"
)

// TestRunOverHTTPRecordsSimulatorSpeedup: `speedmatrix run --url` against a `speedmatrix sim
// --sim-speedup 20` records the simulator and its speedup (from /version), so that reports show
// the numbers in the profile's time; the numbers themselves stay as measured.
func TestRunOverHTTPRecordsSimulatorSpeedup(t *testing.T) {
	if testing.Short() {
		t.Skip("measures the simulator for a few seconds")
	}
	srv := serveDefaultSim(t, 1, 20)
	out := filepath.Join(t.TempDir(), "r.json")
	if _, stderr, err := runBench(t, nil, "run", "--url", srv.URL(), "--contexts", "8K", "--concurrency", "1",
		"--duration", "1s", "--warmup", "0", "--quiet", "-o", out); err != nil {
		t.Fatalf("run: %v\n%s", err, stderr)
	}
	f := readResults(t, out)
	s := f.Run.Settings.Simulator
	if s == nil || s.Profile != profile.Default || s.Speedup != 20 || f.TimeScale() != 20 {
		t.Fatalf("simulator settings %+v, want profile %s at speedup 20", s, profile.Default)
	}
	if !strings.Contains(strings.Join(f.Notes, "\n"), "at 20× its profile's speed") {
		t.Errorf("notes %q lack the simulator's speed", f.Notes)
	}
	// As measured: the profile's ~160 tok/s at 8K×1, twenty times over.
	if c := f.Decode[0]; c.TotalTokPerS == nil || *c.TotalTokPerS < 160*20*0.5 {
		t.Errorf("decode 8K×1: %v tok/s, want the measured ~3,200", c.TotalTokPerS)
	}
}

// serveDefaultSim serves the default profile without noise over HTTP at speedup, with seed, as
// `speedmatrix sim` does, until the test ends.
func serveDefaultSim(t *testing.T, seed uint64, speedup float64) *sim.Server {
	t.Helper()
	p, err := profile.Load(profile.Default, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := sim.Start(ctx, sim.Config{Profile: p, Seed: seed, NoiseCV: -1, Speedup: speedup})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = srv.Close()
		cancel()
	})
	return srv
}
