package cli

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/speedmatrix/speedmatrix/compare"
	"github.com/speedmatrix/speedmatrix/results"
)

// pairedSimRun runs `run --paired` against two built-in simulators of the same engine (no URLs)
// whose work slows down by 12 % per second of wall-clock time (about 4 % per block), 6 blocks per
// side of one decode cell, and returns the comparison of the two files it wrote.
func pairedSimRun(t *testing.T, scheme string) *results.Comparison {
	t.Helper()
	dir := t.TempDir()
	head, base := filepath.Join(dir, "head.json"), filepath.Join(dir, "base.json")
	_, stderr, err := runSimTime(t, nil, "run", "--paired", "--paired-scheme", scheme, "--blocks", "6",
		"--cells", "decode/8K/4", "--duration", "200ms", "--warmup", "0", "--context-warmup=false",
		"--sim-speedup", "100", "--sim-noise", "0", "--sim-slowdown", "all=+12%/s", "--quiet",
		"-o", head, "--base-output", base)
	if err != nil {
		t.Fatalf("run --paired --paired-scheme %s: %v\n%s", scheme, err, stderr)
	}
	b, h := readResults(t, base), readResults(t, head)
	for _, f := range []*results.File{b, h} {
		p := f.Run.Pairing
		if p == nil || p.Scheme != scheme || p.Blocks != 6 || p.ID != b.Run.Pairing.ID {
			t.Fatalf("%s: pairing %+v, want %s with 6 blocks, one id for both sides", f.Run.ID, p, scheme)
		}
		if n := len(f.Decode[0].Trials); n != 6 {
			t.Fatalf("%s: %d trials, want one per block (6)", f.Run.ID, n)
		}
	}
	// Every block in one measuring order, so that a cell sits at the same place in each.
	if sb, sh := b.Run.Settings, h.Run.Settings; sb == nil || sh == nil || sb.OrderSeed == 0 || sb.OrderSeed != sh.OrderSeed {
		t.Errorf("order seeds: base %+v, head %+v; want one, shared by every block", sb, sh)
	}
	c, err := compare.Compare(compare.Input{Base: []*results.File{b}, Head: []*results.File{h}, BasePath: base, HeadPath: head}, compare.DefaultThresholds())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestPairedCancelsDrift is the acceptance test of paired A/B: base and head are the same
// engine on a machine that drifts (every block about 4 % slower than the one before). Measured
// in separate blocks (all base, then all head: what two runs do), the head is about 15 % slower
// and the comparison reports a regression that is not there; measured ABBA and compared pair by
// pair, the drift cancels: no metric regressed or improved, and the per-request rate and the
// time between tokens (medians over requests) are shown unchanged. Total tok/s is unchanged too
// on a quiet machine; on a loaded one a stall of a 200 ms window can make it inconclusive (one
// run in four with 8 test jobs on 2 cores), never a regression, so it is held to that.
func TestPairedCancelsDrift(t *testing.T) {
	seq := pairedSimRun(t, results.PairingSequential)
	if seq.Settings.Pairing != nil {
		t.Errorf("sequential: pairing %+v, want none (its blocks are not pairs)", seq.Settings.Pairing)
	}
	if seq.Verdict != results.VerdictRegression {
		t.Errorf("sequential blocks under drift: verdict %s, want the false regression that pairing prevents\n%s", seq.Verdict, verdicts(seq))
	}

	abba := pairedSimRun(t, results.PairingABBA)
	if p := abba.Settings.Pairing; p == nil || p.Scheme != results.PairingABBA || p.Blocks != 6 {
		t.Errorf("ABBA: pairing %+v, want ABBA over 6 blocks", p)
	}
	if abba.Verdict == results.VerdictRegression || abba.Verdict == results.VerdictImprovement {
		t.Errorf("ABBA under drift: verdict %s, want no change found\n%s", abba.Verdict, verdicts(abba))
	}
	for _, m := range results.Metrics(results.PhaseDecode) {
		mc := metricOf(t, abba, "decode/8K/4", m)
		if mc.Noise == nil || mc.Noise.Source != results.NoisePaired {
			t.Errorf("ABBA %s: noise %+v, want the pairs'", m, mc.Noise)
		}
		robust := m == results.MetricPerRequestTokPerS || m == results.MetricTBT
		if mc.Verdict == results.VerdictRegression || mc.Verdict == results.VerdictImprovement || (robust && mc.Verdict != results.VerdictUnchanged) {
			t.Errorf("ABBA %s: %s (%s), want unchanged", m, mc.Verdict, mc.Reason)
		}
	}
}

// verdicts lists a comparison's cell-metrics for a failure message.
func verdicts(c *results.Comparison) string {
	var b strings.Builder
	for _, cc := range c.Cells {
		for _, m := range cc.Metrics {
			ch := 0.0
			if m.Change != nil {
				ch = m.Change.Change
			}
			src := ""
			if m.Noise != nil {
				src = m.Noise.Source
			}
			b.WriteString(cc.Cell + " " + string(m.Metric) + " " + string(m.Verdict) + " " + src + " " + formatPct(ch) + "\n")
		}
	}
	return b.String()
}

func formatPct(x float64) string { return fmt.Sprintf("%+.1f%%", 100*x) }

func metricOf(t *testing.T, c *results.Comparison, cell string, m results.Metric) results.MetricComparison {
	t.Helper()
	for _, cc := range c.Cells {
		if cc.Cell != cell {
			continue
		}
		for _, mc := range cc.Metrics {
			if mc.Metric == m {
				return mc
			}
		}
	}
	t.Fatalf("no %s %s in the comparison", cell, m)
	return results.MetricComparison{}
}
