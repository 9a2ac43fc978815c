package compare_test

import (
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/speedmatrix/speedmatrix/compare"
	"github.com/speedmatrix/speedmatrix/results"
)

// pairedFiles returns the base and head files of a paired run of one decode cell (8K at
// concurrency 8) in the given order (A base, B head): block b (1-based) runs at
// 1000·(1 − drift·b)·change tok/s (change on head blocks only), times a small deterministic
// jitter, and its latencies are the inverse.
func pairedFiles(order string, drift, change float64) (base, head *results.File) {
	mk := func(side string) *results.File {
		return &results.File{Schema: results.SchemaV1, Run: results.Run{ID: "pr-" + side, Source: results.SourceMeasured, ServedModel: "m",
			Pairing: &results.Pairing{ID: "pr", Scheme: results.PairingABBA, Blocks: len(order) / 2, Side: side, Order: order}}}
	}
	base, head = mk("base"), mk("head")
	cells := map[byte]*results.DecodeCell{}
	for _, s := range []byte{'A', 'B'} {
		cells[s] = &results.DecodeCell{Context: 8192, ContextLabel: "8K", Concurrency: 8, Status: results.StatusValid}
	}
	seen := map[byte]int{}
	for i := range len(order) {
		s := order[i]
		seen[s]++
		b := i + 1
		jitter := 1 + 0.002*math.Sin(float64(7*b))
		v := 1000 * (1 - drift*float64(b)) * jitter
		if s == 'B' {
			v *= change
		}
		tr := results.DecodeTrial{Block: b, Pair: seen[s]}
		tr.TotalTokPerS = f64(v)
		tr.PerRequestTokPerS = f64(v / 8)
		tr.TBTMs = f64(8000 / v)
		tr.TTFTMs = f64(500 * 1000 / v)
		cells[s].Trials = append(cells[s].Trials, tr)
	}
	for s, f := range map[byte]*results.File{'A': base, 'B': head} {
		c := cells[s]
		c.DecodeMetrics = c.Trials[0].DecodeMetrics
		f.Decode = append(f.Decode, *c)
	}
	return base, head
}

// TestPairedDrift: with a drift of 2 % per block and no change, the paired comparison of an
// ABBA run calls every metric unchanged, says it was paired and reports the drift it removed;
// a real 8 % slowdown under the same drift is a regression.
func TestPairedDrift(t *testing.T) {
	base, head := pairedFiles("ABBAABBAABBA", 0.02, 1)
	c, err := compare.Compare(compare.Input{Base: []*results.File{base}, Head: []*results.File{head}}, compare.DefaultThresholds())
	if err != nil {
		t.Fatal(err)
	}
	if c.Settings.Pairing == nil || c.Settings.Pairing.Scheme != results.PairingABBA || c.Settings.Pairing.Blocks != 6 {
		t.Fatalf("settings.pairing = %+v, want ABBA with 6 blocks", c.Settings.Pairing)
	}
	for _, m := range results.Metrics(results.PhaseDecode) {
		mc := find(t, c, "decode/8K/8", m)
		if mc.Verdict != results.VerdictUnchanged {
			t.Errorf("%s: verdict %s (%s), want unchanged", m, mc.Verdict, mc.Reason)
		}
		if mc.Noise == nil || mc.Noise.Source != results.NoisePaired || mc.Noise.Pairs != 6 {
			t.Fatalf("%s: noise %+v, want source paired over 6 pairs", m, mc.Noise)
		}
		if mc.Noise.Drift == nil || math.Abs(math.Abs(*mc.Noise.Drift)-0.02) > 0.005 {
			t.Errorf("%s: drift %v, want about ±2 %% per block", m, mc.Noise.Drift)
		}
		if mc.RankP == nil {
			t.Errorf("%s: no sign-flip p", m)
		}
	}

	base, head = pairedFiles("ABBAABBAABBA", 0.02, 0.92)
	c, err = compare.Compare(compare.Input{Base: []*results.File{base}, Head: []*results.File{head}}, compare.DefaultThresholds())
	if err != nil {
		t.Fatal(err)
	}
	if mc := find(t, c, "decode/8K/8", results.MetricTotalTokPerS); mc.Verdict != results.VerdictRegression || math.Abs(mc.Change.Change+0.08) > 0.005 {
		t.Errorf("8 %% slowdown under drift: verdict %s change %+v, want a regression near −8 %%", mc.Verdict, mc.Change)
	}
}

// TestPairedNeedsOneRun: files of two different paired runs, or a sequential run, are compared
// unpaired (Welch over the trials), with a warning in the first case.
func TestPairedNeedsOneRun(t *testing.T) {
	base, _ := pairedFiles("ABBAABBAABBA", 0.02, 1)
	_, head := pairedFiles("ABBAABBAABBA", 0.02, 1)
	head.Run.Pairing.ID = "other"
	c, err := compare.Compare(compare.Input{Base: []*results.File{base}, Head: []*results.File{head}}, compare.DefaultThresholds())
	if err != nil {
		t.Fatal(err)
	}
	if c.Settings.Pairing != nil {
		t.Errorf("pairing = %+v, want none", c.Settings.Pairing)
	}
	if mc := find(t, c, "decode/8K/8", results.MetricTotalTokPerS); mc.Noise.Source != results.NoiseTrials {
		t.Errorf("noise source %s, want trials", mc.Noise.Source)
	}
	if !strings.Contains(strings.Join(c.Warnings, "\n"), "different paired runs") {
		t.Errorf("warnings %q, want one about different paired runs", c.Warnings)
	}

	base, head = pairedFiles("AAAAAABBBBBB", 0.02, 1)
	base.Run.Pairing.Scheme, head.Run.Pairing.Scheme = results.PairingSequential, results.PairingSequential
	c, err = compare.Compare(compare.Input{Base: []*results.File{base}, Head: []*results.File{head}}, compare.DefaultThresholds())
	if err != nil {
		t.Fatal(err)
	}
	if c.Settings.Pairing != nil {
		t.Errorf("sequential: pairing = %+v, want none", c.Settings.Pairing)
	}
	// Six blocks later, the head reads about 12 % slower: the unpaired comparison calls the
	// drift a regression, which is what pairing exists to prevent.
	if mc := find(t, c, "decode/8K/8", results.MetricTotalTokPerS); mc.Verdict != results.VerdictRegression {
		t.Errorf("sequential with drift: verdict %s (%s), want the false regression", mc.Verdict, mc.Reason)
	}
}

// TestPairedPooled: two paired runs given as two files per side (a second look after more
// blocks) pool their pairs, each base block paired with the head block of its own run.
func TestPairedPooled(t *testing.T) {
	b1, h1 := pairedFiles("ABBAAB", 0.02, 1)
	b2, h2 := pairedFiles("ABBAAB", 0.02, 1)
	for _, f := range []*results.File{b2, h2} {
		f.Run.Pairing.ID = "second"
		f.Run.ID += "-2"
	}
	c, err := compare.Compare(compare.Input{Base: []*results.File{b1, b2}, Head: []*results.File{h1, h2}}, compare.DefaultThresholds())
	if err != nil {
		t.Fatal(err)
	}
	if p := c.Settings.Pairing; p == nil || p.Blocks != 6 || p.ID != "pr,second" {
		t.Fatalf("pairing %+v, want 6 blocks over runs pr and second", p)
	}
	mc := find(t, c, "decode/8K/8", results.MetricTotalTokPerS)
	if mc.Noise == nil || mc.Noise.Source != results.NoisePaired || mc.Noise.Pairs != 6 || mc.Verdict != results.VerdictUnchanged {
		t.Errorf("pooled pairs: %s from %+v, want unchanged from 6 pairs", mc.Verdict, mc.Noise)
	}
	// A head file without its base's run: nothing pairs the runs, so nothing is paired.
	c, err = compare.Compare(compare.Input{Base: []*results.File{b1, b2}, Head: []*results.File{h1}}, compare.DefaultThresholds())
	if err != nil {
		t.Fatal(err)
	}
	if c.Settings.Pairing != nil || !strings.Contains(strings.Join(c.Warnings, "\n"), "different paired runs") {
		t.Errorf("unmatched runs: pairing %+v, warnings %q; want unpaired with a warning", c.Settings.Pairing, c.Warnings)
	}
}

// TestPairedRerunAdvice: the rerun advice of a paired comparison asks for one more paired run
// of the cells, whose pairs pool with these.
func TestPairedRerunAdvice(t *testing.T) {
	base, head := pairedFiles("ABBA", 0.02, 1) // 2 pairs: one degree of freedom, too few
	c, err := compare.Compare(compare.Input{Base: []*results.File{base}, Head: []*results.File{head}}, compare.DefaultThresholds())
	if err != nil {
		t.Fatal(err)
	}
	if c.Rerun == nil || len(c.Rerun.Items) == 0 {
		t.Fatalf("rerun advice %+v, want some cells; %+v", c.Rerun, c.Cells)
	}
	want := "run --paired --blocks " + strconv.Itoa(max(c.Rerun.Trials, 2)) + " --cells " + c.Rerun.Cells
	if !strings.Contains(c.Rerun.Rule.Text, want) {
		t.Errorf("rule %q, want it to say %q", c.Rerun.Rule.Text, want)
	}
}

// TestPairedFewPairsCanDecide: with the default 4 blocks per side, an 8 % slowdown under drift
// is a regression. The sign-flip check cannot reach q with 4 or 5 pairs (its smallest p is
// 2/2^n: 0.125, 0.0625), so it is only asked where it can.
func TestPairedFewPairsCanDecide(t *testing.T) {
	base, head := pairedFiles("ABBAABBA", 0.02, 0.92)
	c, err := compare.Compare(compare.Input{Base: []*results.File{base}, Head: []*results.File{head}}, compare.DefaultThresholds())
	if err != nil {
		t.Fatal(err)
	}
	if mc := find(t, c, "decode/8K/8", results.MetricTotalTokPerS); mc.Verdict != results.VerdictRegression {
		t.Errorf("8 %% slowdown over 4 pairs: verdict %s (%s), want a regression", mc.Verdict, mc.Reason)
	}
}

// TestPairedRow: a paired comparison's row test is paired too (the crossover estimate of each
// pair's score difference), so the drift that swamps the Welch test of the runs' scores cancels
// and the row is shown unchanged; a row-wide slowdown under the same drift is a regression.
func TestPairedRow(t *testing.T) {
	for _, tc := range []struct {
		change float64
		want   results.Verdict
	}{{1, results.VerdictUnchanged}, {0.94, results.VerdictRegression}} {
		base, head := pairedFiles("ABBAABBAABBA", 0.02, tc.change)
		c, err := compare.Compare(compare.Input{Base: []*results.File{base}, Head: []*results.File{head}}, compare.DefaultThresholds())
		if err != nil {
			t.Fatal(err)
		}
		if len(c.Rows) != 1 {
			t.Fatalf("rows %+v, want the 8K row", c.Rows)
		}
		if r := c.Rows[0]; r.Verdict != tc.want || r.Pairs != 6 {
			t.Errorf("change %g: row verdict %s over %d pairs (%s), want %s over 6 pairs", tc.change, r.Verdict, r.Pairs, r.Reason, tc.want)
		}
	}
}
