package cli

import (
	"path/filepath"
	"testing"
)

// TestPairedRecordsGPUTime: each side's results file of `run --paired` states the GPU time that
// side took (build, load, measuring: the sum of its blocks), so that the bot can show the GPU
// time of both builds.
func TestPairedRecordsGPUTime(t *testing.T) {
	dir := t.TempDir()
	head, base := filepath.Join(dir, "head.json"), filepath.Join(dir, "base.json")
	_, stderr, err := runSimTime(t, nil, "run", "--paired", "--blocks", "2",
		"--cells", "decode/8K/4", "--duration", "200ms", "--warmup", "0", "--context-warmup=false",
		"--sim-speedup", "100", "--quiet", "-o", head, "--base-output", base)
	if err != nil {
		t.Fatalf("run --paired: %v\n%s", err, stderr)
	}
	for _, p := range []string{head, base} {
		f := readResults(t, p)
		g := f.Run.GPUTime
		if g == nil {
			t.Fatalf("%s: no gpu_time", filepath.Base(p))
		}
		if !(g.MeasureSeconds > 0) || g.TotalSeconds != g.BuildSeconds+g.LoadSeconds+g.MeasureSeconds+g.RerunSeconds {
			t.Errorf("%s: gpu_time %+v: want the blocks' measuring time, summed", filepath.Base(p), *g)
		}
	}
}
