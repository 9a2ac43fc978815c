package cli

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/speedmatrix/speedmatrix/results"
)

// simRun returns the flags of a small run against the built-in simulator (one 8K context,
// concurrency 1 and 4, 1 s windows at 20× speed, so that no request ends inside a window and
// the client's 1 s samples of the running count never fall between two requests) plus extra.
func simRun(out string, extra ...string) []string {
	return append([]string{"run", "--contexts", "8K", "--concurrency", "1,4", "--duration", "1s",
		"--warmup", "0", "--sim-speedup", "20", "--quiet", "-o", out}, extra...)
}

func readResults(t *testing.T, path string) *results.File {
	t.Helper()
	f, err := results.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestRunSimulatorByDefault(t *testing.T) {
	if testing.Short() {
		t.Skip("measures the simulator for several seconds")
	}
	out := filepath.Join(t.TempDir(), "r.json")
	if _, stderr, err := runSimTime(t, nil, simRun(out)...); err != nil {
		t.Fatalf("run: %v\n%s", err, stderr)
	}
	f := readResults(t, out)
	sim := f.Run.Settings.Simulator
	if sim == nil || sim.Profile != "glm-5.3-flash-nvfp4-h200x2" || sim.Speedup != 20 {
		t.Fatalf("simulator settings %+v", sim)
	}
	if !strings.Contains(strings.Join(f.Notes, "\n"), "built-in simulator") || !strings.HasPrefix(f.Run.LaunchCommand, "speedmatrix sim --profile") {
		t.Errorf("notes %q, launch command %q", f.Notes, f.Run.LaunchCommand)
	}
	for _, c := range f.Decode {
		if c.Status != results.StatusValid || c.TotalTokPerS == nil {
			t.Errorf("decode %s×%d: %s %s", c.ContextLabel, c.Concurrency, c.Status, c.Error)
			continue
		}
		// The profile decodes 8K×1 at ~160 tok/s and 8K×4 at ~390 tok/s; at 20× speed the
		// client must see about 20 times that (a loaded machine may slow the simulator down).
		want := map[int]float64{1: 160 * 20, 4: 390 * 20}[c.Concurrency]
		if got := *c.TotalTokPerS; got < 0.5*want || got > 1.25*want {
			t.Errorf("decode 8K×%d: %.0f tok/s, want about %.0f", c.Concurrency, got, want)
		}
	}
}

func TestRunSeesSlowdown(t *testing.T) {
	if testing.Short() {
		t.Skip("measures the simulator twice")
	}
	dir := t.TempDir()
	base, slow := filepath.Join(dir, "base.json"), filepath.Join(dir, "slow.json")
	if _, stderr, err := runSimTime(t, nil, simRun(base)...); err != nil {
		t.Fatalf("run: %v\n%s", err, stderr)
	}
	if _, stderr, err := runSimTime(t, nil, simRun(slow, "--sim-slowdown", "decode=2")...); err != nil {
		t.Fatalf("run: %v\n%s", err, stderr)
	}
	b, s := readResults(t, base), readResults(t, slow)
	for i, c := range b.Decode {
		r := *s.Decode[i].TotalTokPerS / *c.TotalTokPerS
		if r > 0.75 {
			t.Errorf("decode %s×%d: decode=2 kept %.2f of the throughput, want about 0.5", c.ContextLabel, c.Concurrency, r)
		}
	}
	if r := *s.Prefill[0].PromptTokPerS / *b.Prefill[0].PromptTokPerS; r < 0.7 {
		t.Errorf("a decode slow-down changed prefill by %.2f", r)
	}
}

func TestRunSeesErrorFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("measures the simulator")
	}
	for _, tt := range []struct{ fault, reason string }{
		{"cut=20", ""},             // every stream ends abruptly after 20 tokens
		{"error=100%", "HTTP 500"}, // every request is answered with a 500
	} {
		out := filepath.Join(t.TempDir(), "r.json")
		_, stderr, err := runSimTime(t, nil, simRun(out, "--sim-fault", tt.fault)...)
		f := readResults(t, out)
		if len(f.Decode) != 2 {
			t.Fatalf("%s: want the 2 decode cells marked, got %d (run error %v)\n%s", tt.fault, len(f.Decode), err, stderr)
		}
		for _, c := range f.Decode {
			if c.Status != results.StatusError || c.Error == "" || c.TotalTokPerS != nil || !strings.Contains(c.Error, tt.reason) {
				t.Errorf("%s: decode %s×%d: status %s, error %q, throughput %v\n%s", tt.fault, c.ContextLabel, c.Concurrency, c.Status, c.Error, c.TotalTokPerS, stderr)
			}
		}
	}
}

func TestRunSurvivesCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("measures the simulator until it crashes")
	}
	out := filepath.Join(t.TempDir(), "r.json")
	_, stderr, err := runSimTime(t, nil, simRun(out, "--concurrency", "1,2,4,8", "--sim-fault", "crash=4s")...)
	if err == nil {
		t.Fatalf("a run whose server crashed must fail\n%s", stderr)
	}
	f := readResults(t, out)
	if !f.Run.Partial || f.Run.PartialReason == "" {
		t.Errorf("results after a crash: partial %v, reason %q", f.Run.Partial, f.Run.PartialReason)
	}
	t.Logf("run error: %v; partial reason: %s", err, f.Run.PartialReason)
}

// TestRunSeesNoise checks that --sim-noise makes two runs of the same engine differ as A/A runs
// do: with a 20 % CV and different seeds, some decode cell moves by more than 3 %, where
// noise-free runs agree far closer.
func TestRunSeesNoise(t *testing.T) {
	if testing.Short() {
		t.Skip("measures the simulator twice")
	}
	dir := t.TempDir()
	var files []*results.File
	for _, seed := range []string{"1", "2"} {
		out := filepath.Join(dir, "r"+seed+".json")
		if _, stderr, err := runSimTime(t, nil, simRun(out, "--sim-noise", "0.2", "--sim-seed", seed)...); err != nil {
			t.Fatalf("run: %v\n%s", err, stderr)
		}
		files = append(files, readResults(t, out))
	}
	if got := files[0].Run.Settings.Simulator; got.Noise != 0.2 || got.Seed != 1 {
		t.Errorf("simulator settings recorded %+v, want noise 0.2 and seed 1", got)
	}
	var moved float64
	for i, c := range files[0].Decode {
		if c.TotalTokPerS == nil || files[1].Decode[i].TotalTokPerS == nil {
			t.Fatalf("decode cell %d not measured: %s / %s", i, c.Status, files[1].Decode[i].Status)
		}
		r := *files[1].Decode[i].TotalTokPerS / *c.TotalTokPerS
		moved = max(moved, max(r-1, 1-r))
	}
	if moved < 0.03 {
		t.Errorf("with --sim-noise 0.2 and two seeds the decode cells moved by at most %.1f %%, want some beyond 3 %%", moved*100)
	}
}
