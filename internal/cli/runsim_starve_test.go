package cli

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/speedmatrix/speedmatrix/bench"
	"github.com/speedmatrix/speedmatrix/internal/memnet"
	"github.com/speedmatrix/speedmatrix/results"
	"github.com/speedmatrix/speedmatrix/sim"
	"github.com/speedmatrix/speedmatrix/sim/profile"
)

// TestRunStarvedSimulatorNotValid: a simulator the machine cannot keep up with (made
// deterministic by its starve fault, which loses model time as a starved simulator does and
// reports it as one) never gives `run` a valid number: the window is measured again, then
// the run ends with an error that says the machine could not keep up and names the speedup
// that works, and the cell it could not measure (the first prefill) is an error, not a slow
// engine.
func TestRunStarvedSimulatorNotValid(t *testing.T) {
	t.Setenv(bench.KeepStarvedEnv, "0") // TestMain keeps starved measurements for the other tests
	out := filepath.Join(t.TempDir(), "r.json")
	_, stderr, err := runSimTime(t, nil, "run", "--contexts", "8K", "--concurrency", "1,8", "--warmup", "0", "--quiet",
		"--sim-fault", "starve=50%", "-o", out)
	if !errors.Is(err, bench.ErrHostStarved) || !strings.Contains(err.Error(), "--sim-speedup 5") {
		t.Fatalf("run: %v, want ErrHostStarved naming --sim-speedup 5\n%s", err, stderr)
	}
	f := readResults(t, out)
	if !f.Run.Partial {
		t.Error("the results are not marked partial")
	}
	for _, c := range f.Decode {
		if c.Status == results.StatusValid || c.Status == results.StatusQueued {
			t.Errorf("decode %s×%d recorded %s (%v tok/s) from a starved simulator", c.ContextLabel, c.Concurrency, c.Status, c.TotalTokPerS)
		}
	}
	for _, c := range f.Prefill {
		if c.Status == results.StatusValid {
			t.Errorf("prefill %s recorded valid (%v tok/s) from a starved simulator", c.ContextLabel, c.PromptTokPerS)
		}
	}
	if len(f.Prefill) == 0 || !strings.Contains(f.Prefill[0].Error, "skipped") {
		t.Errorf("prefill cells %+v, want the first an error saying the simulator skipped model time", f.Prefill)
	}
}

// TestRunURLSimulatorWindow: `run --url` against a `speedmatrix sim --sim-speedup 20`, with the
// window left at its default, measures with the in-process simulator's window at 20× (30 s of
// model time, 1.5 s), so that compare takes a run of each as a pair.
func TestRunURLSimulatorWindow(t *testing.T) {
	out := filepath.Join(t.TempDir(), "r.json")
	synctest.Test(t, func(t *testing.T) {
		n := memnet.New()
		ln, err := n.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		p, err := profile.Load(profile.Default, nil)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		srv, err := sim.Start(ctx, sim.Config{Profile: p, Seed: 1, NoiseCV: -1, Speedup: 20, Listener: ln})
		if err != nil {
			t.Fatal(err)
		}
		defer srv.Close()
		var stdout, stderr bytes.Buffer
		e := &Env{Stdout: &stdout, Stderr: &stderr, Getenv: func(string) string { return "" }, Net: n}
		if err := RunEnv(t.Context(), e, []string{"run", "--url", srv.URL(), "--contexts", "8K", "--concurrency", "1", "--warmup", "0", "--quiet", "-o", out}); err != nil {
			t.Fatalf("run --url: %v\n%s", err, stderr.String())
		}
	})
	f := readResults(t, out)
	if got := f.Run.SecondsPerMeasurement; got != 1.5 {
		t.Errorf("window %g s, want 1.5 s (30 s of model time at 20×, as in process)", got)
	}
	if f.TimeScale() != 20 {
		t.Errorf("time scale %g, want 20", f.TimeScale())
	}
}
