package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/speedmatrix/speedmatrix/results"
	"github.com/speedmatrix/speedmatrix/sim"
	"github.com/speedmatrix/speedmatrix/sim/profile"
)

// TestRunAgainstKeyedSim checks `speedmatrix run --url … --api-key-env K` against a simulator
// that wants a key, as vLLM with --api-key: with the key it measures (and the key is nowhere
// in the results or the log), without it the run fails saying the server refused.
func TestRunAgainstKeyedSim(t *testing.T) {
	const key = "sk-keyed-sim-s3cret"
	p, err := profile.Load(profile.Default, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := sim.Start(context.Background(), sim.Config{Profile: p, NoiseCV: -1, Speedup: 50, APIKey: key})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	dir := t.TempDir()
	args := func(out string) []string {
		return []string{"run", "--url", srv.URL(), "--contexts", "1K", "--concurrency", "1", "--prefill-contexts", "none",
			"--duration", "300ms", "--max-tokens", "16", "--warmup", "0", "--quiet", "--log-level", "debug", "-o", out}
	}

	out := filepath.Join(dir, "r.json")
	_, stderr, err := runBench(t, map[string]string{"K": key}, append(args(out), "--api-key-env", "K")...)
	if err != nil {
		t.Fatalf("run with the key: %v\n%s", err, stderr)
	}
	f, err := results.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Decode) != 1 || !f.Decode[0].Status.Measured() {
		t.Errorf("decode cells %+v, want one measured", f.Decode)
	}
	data, _ := os.ReadFile(out)
	if strings.Contains(string(data), key) || strings.Contains(stderr, key) {
		t.Errorf("the key leaked into the results file or the log")
	}

	_, stderr, err = runBench(t, nil, args(filepath.Join(dir, "r2.json"))...)
	if err == nil || !strings.Contains(err.Error()+stderr, "401") {
		t.Errorf("run without the key: %v, want a failure naming HTTP 401\n%s", err, stderr)
	}
}

// TestSimFitPrintsNotes checks that `sim fit` says on stderr what it derived or assumed (the
// profile's fit.notes), also when the profile goes to a file.
func TestSimFitPrintsNotes(t *testing.T) {
	out := filepath.Join(t.TempDir(), "fitted.yaml")
	stdout, stderr, code := runCLI("sim", "fit", "--check=false", "-o", out, "../../testdata/reference/glm-5.3-flash-nvfp4-h200nvl-x2.txt")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	if stdout != "" {
		t.Errorf("with -o the profile goes to the file, stdout got:\n%s", stdout)
	}
	for _, want := range []string{"fit.notes", "KV cache tokens between 2621440", "running ceiling 23", "tokens per decode step assumed 3.00"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if data, err := os.ReadFile(out); err != nil || !strings.Contains(string(data), "running ceiling 23") {
		t.Errorf("the profile file lacks its notes (%v)", err)
	}
}
