package compare_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/speedmatrix/speedmatrix/calibrate"
	"github.com/speedmatrix/speedmatrix/compare"
	"github.com/speedmatrix/speedmatrix/results"
)

func f64(v float64) *float64 { return &v }

// summaryFile returns a file with summary-only decode cells: one per (concurrency, total tok/s).
func summaryFile(model string, cells map[int]float64, status map[int]results.Status) *results.File {
	f := &results.File{Schema: results.SchemaV1, Run: results.Run{Source: results.SourceImported, ServedModel: model}, Hardware: results.Hardware{GPU: "H200 NVL", GPUCount: 2}}
	for _, c := range []int{1, 2, 4, 8, 16, 32, 64, 128} {
		v, ok := cells[c]
		if !ok {
			continue
		}
		st := results.StatusValid
		if s, ok := status[c]; ok {
			st = s
		}
		cell := results.DecodeCell{Context: 8192, ContextLabel: "8K", Concurrency: c, Status: st, SummaryOnly: true}
		if st.Measured() {
			cell.TotalTokPerS = f64(v)
			cell.PerRequestTokPerS = f64(v / float64(c))
			cell.TTFTMs = f64(500)
			cell.TBTMs = f64(1000 / (v / float64(c)))
		}
		f.Decode = append(f.Decode, cell)
	}
	return f
}

func find(t *testing.T, c *results.Comparison, cell string, m results.Metric) results.MetricComparison {
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
	t.Fatalf("no %s %s in comparison", cell, m)
	return results.MetricComparison{}
}

func cellOf(t *testing.T, c *results.Comparison, cell string) results.CellComparison {
	t.Helper()
	for _, cc := range c.Cells {
		if cc.Cell == cell {
			return cc
		}
	}
	t.Fatalf("no cell %s", cell)
	return results.CellComparison{}
}

func TestStatusChanges(t *testing.T) {
	v, q, oc, e := results.StatusValid, results.StatusQueued, results.StatusOverCapacity, results.StatusError
	base := summaryFile("m", map[int]float64{1: 150, 2: 250, 4: 400, 8: 600, 16: 900, 32: 950}, map[int]results.Status{4: q, 16: oc, 32: e})
	head := summaryFile("m", map[int]float64{1: 150, 2: 250, 4: 400, 8: 600, 16: 900, 32: 950}, map[int]results.Status{1: q, 2: e, 4: v, 8: oc, 16: oc, 32: oc})
	c, err := compare.Compare(compare.Input{Base: []*results.File{base}, Head: []*results.File{head}}, compare.DefaultThresholds())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]results.Verdict{
		"decode/8K/1":  results.VerdictRegression,    // valid → queued
		"decode/8K/2":  results.VerdictRegression,    // valid → error
		"decode/8K/4":  results.VerdictImprovement,   // queued → valid
		"decode/8K/8":  results.VerdictRegression,    // valid → over capacity
		"decode/8K/16": results.VerdictNotComparable, // over capacity in both
		"decode/8K/32": results.VerdictNotComparable, // error → over capacity
	}
	got := map[string]results.Verdict{}
	for _, cc := range c.Cells {
		got[cc.Cell] = cc.Verdict
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("cell verdicts (-want +got):\n%s", d)
	}
	if c.Verdict != results.VerdictRegression {
		t.Errorf("overall %s, want regression", c.Verdict)
	}
	if r := cellOf(t, c, "decode/8K/1").Reason; r != "status valid → queued" {
		t.Errorf("reason %q", r)
	}
	_ = e
}

func TestMismatchNeedsForce(t *testing.T) {
	a := summaryFile("model-a", map[int]float64{1: 150}, nil)
	b := summaryFile("model-b", map[int]float64{1: 150}, nil)
	b.Hardware.GPU = "B200"
	_, err := compare.Compare(compare.Input{Base: []*results.File{a}, Head: []*results.File{b}}, compare.DefaultThresholds())
	var me *compare.MismatchError
	if !errors.As(err, &me) || len(me.Differences) != 2 || !strings.Contains(err.Error(), "--force") {
		t.Fatalf("err = %v, want a MismatchError naming model and GPU and --force", err)
	}
	c, err := compare.Compare(compare.Input{Base: []*results.File{a}, Head: []*results.File{b}, Force: true}, compare.DefaultThresholds())
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Warnings) == 0 || !strings.Contains(c.Warnings[0], "--force") || !c.Settings.Forced {
		t.Errorf("forced comparison must warn: %q", c.Warnings)
	}
}

func TestPriorNoiseSummaryOnly(t *testing.T) {
	// Summary-only cells: the prior decides. At concurrency 8 the prior CV is 1 %: SE of the
	// log difference √2 %, so −10 % is beyond it — unproven, since a prior alone never blocks —
	// and −0.5 % is unchanged (90 % CI within ±3 %); at concurrency 1 (prior 20 %) −10 % is
	// inconclusive.
	base := summaryFile("m", map[int]float64{1: 150, 8: 600, 16: 900}, nil)
	head := summaryFile("m", map[int]float64{1: 135, 8: 540, 16: 895.5}, nil)
	c, err := compare.Compare(compare.Input{Base: []*results.File{base}, Head: []*results.File{head}}, compare.DefaultThresholds())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		cell string
		want results.Verdict
	}{
		{"decode/8K/8", results.VerdictUnproven},
		{"decode/8K/16", results.VerdictUnchanged},
		{"decode/8K/1", results.VerdictInconclusive},
	} {
		m := find(t, c, tc.cell, results.MetricTotalTokPerS)
		if m.Verdict != tc.want {
			t.Errorf("%s: %s (%s), want %s", tc.cell, m.Verdict, m.Reason, tc.want)
		}
		if m.Noise == nil || m.Noise.Source != results.NoisePrior {
			t.Errorf("%s: noise %+v, want prior", tc.cell, m.Noise)
		}
	}
	m := find(t, c, "decode/8K/8", results.MetricTotalTokPerS)
	if math.Abs(m.Change.Change-(-0.10)) > 1e-9 || m.Change.Low > -0.10 || m.Change.High < -0.10 {
		t.Errorf("change %+v, want −10 %% inside its interval", m.Change)
	}
	// TTFT did not move: unchanged needs |Δ| within 5 % with 20 % prior noise — not shown.
	if v := find(t, c, "decode/8K/8", results.MetricTTFT).Verdict; v != results.VerdictInconclusive {
		t.Errorf("ttft verdict %s, want inconclusive", v)
	}
	if c.Rerun == nil || c.Rerun.Rule.Level2 <= 0 || c.Rerun.Rule.Level1 <= 0 {
		t.Fatalf("rerun advice missing: %+v", c.Rerun)
	}
	for _, s := range strings.Split(c.Rerun.Cells, ",") {
		if s == "" {
			continue
		}
		if _, err := results.ParseCellID(s); err != nil {
			t.Errorf("advice cell %q: %v", s, err)
		}
	}
}

func TestNoiseSources(t *testing.T) {
	m := calibrate.NewMatrix(7, 1)
	r := rand.New(rand.NewPCG(1, 2))
	base, head := m.Run(r, "b", nil), m.Run(r, "h", nil)
	th := compare.DefaultThresholds()
	c, err := compare.Compare(compare.Input{Base: []*results.File{base}, Head: []*results.File{head}}, th)
	if err != nil {
		t.Fatal(err)
	}
	if src := find(t, c, "decode/8K/16", results.MetricTotalTokPerS).Noise.Source; src != results.NoiseWithin {
		t.Errorf("single trial with bins: source %s, want %s", src, results.NoiseWithin)
	}
	if src := find(t, c, "prefill/8K", results.MetricTTFT).Noise.Source; src != results.NoisePrior {
		t.Errorf("one prefill request: source %s, want prior", src)
	}
	// Three runs a side pool into trials: Welch on the trials.
	pool := func(tag string) []*results.File {
		var fs []*results.File
		for i := range 3 {
			fs = append(fs, m.Run(r, tag+string(rune('0'+i)), nil))
		}
		return fs
	}
	c, err = compare.Compare(compare.Input{Base: pool("b"), Head: pool("h")}, th)
	if err != nil {
		t.Fatal(err)
	}
	mc := find(t, c, "decode/8K/16", results.MetricTotalTokPerS)
	if mc.Noise.Source != results.NoiseTrials || mc.Noise.BaseTrials != 3 || mc.Noise.DF == nil {
		t.Errorf("pooled runs: noise %+v, want trials with 3 a side and finite df", mc.Noise)
	}
	// History of the base: the spread across earlier runs.
	var hist []*results.File
	for i := range 5 {
		hist = append(hist, m.Run(r, "hist"+string(rune('0'+i)), nil))
	}
	c, err = compare.Compare(compare.Input{Base: []*results.File{base}, Head: []*results.File{head}, History: hist}, th)
	if err != nil {
		t.Fatal(err)
	}
	mc = find(t, c, "decode/8K/16", results.MetricTotalTokPerS)
	// Its 4 degrees of freedom, plus what the cell's noise class lends it (moderate.go).
	if mc.Noise.Source != results.NoiseHistory || mc.Noise.DF == nil || *mc.Noise.DF < 4 || mc.Noise.PooledRuns != 6 {
		t.Errorf("history: noise %+v, want history with at least 4 df, pooled over 6 runs", mc.Noise)
	}
	if c.Settings.HistoryFiles != 5 {
		t.Errorf("history files %d", c.Settings.HistoryFiles)
	}
}

func TestShapeDiffersAndCellsFilter(t *testing.T) {
	base := summaryFile("m", map[int]float64{1: 150, 2: 250, 8: 600}, nil)
	head := summaryFile("m", map[int]float64{1: 150, 8: 600, 16: 900}, nil)
	c, err := compare.Compare(compare.Input{Base: []*results.File{base}, Head: []*results.File{head}}, compare.DefaultThresholds())
	if err != nil {
		t.Fatal(err)
	}
	if cc := cellOf(t, c, "decode/8K/2"); cc.Verdict != results.VerdictIncomplete || cc.Reason != "missing in head" {
		t.Errorf("decode/8K/2: %s %q", cc.Verdict, cc.Reason)
	}
	if cc := cellOf(t, c, "decode/8K/16"); cc.Verdict != results.VerdictNotComparable || cc.Reason != "missing in base" {
		t.Errorf("decode/8K/16: %s %q", cc.Verdict, cc.Reason)
	}
	if len(c.Warnings) != 2 || !strings.Contains(c.Warnings[0], "differ in shape") || !strings.Contains(c.Warnings[1], "head is incomplete") {
		t.Errorf("warnings %q", c.Warnings)
	}
	id, _ := results.ParseCellID("decode/8K/8")
	c, err = compare.Compare(compare.Input{Base: []*results.File{base}, Head: []*results.File{head}, Cells: []results.CellID{id}}, compare.DefaultThresholds())
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Cells) != 1 || c.Cells[0].Cell != "decode/8K/8" {
		t.Errorf("cells filter kept %d cells", len(c.Cells))
	}
}

func TestComparisonValidates(t *testing.T) {
	m := calibrate.NewMatrix(3, 1)
	r := rand.New(rand.NewPCG(3, 4))
	var hist []*results.File
	for i := range 10 {
		hist = append(hist, m.Run(r, "hist"+string(rune('0'+i)), nil))
	}
	c, err := compare.Compare(compare.Input{History: hist, Base: []*results.File{m.Run(r, "b", nil)}, Head: []*results.File{m.Run(r, "h", &calibrate.Slowdown{ContextLabel: "8K", RateFactor: 0.9, TTFTFactor: 1.2})}}, compare.DefaultThresholds())
	if err != nil {
		t.Fatal(err)
	}
	data, err := results.EncodeComparison(c)
	if err != nil {
		t.Fatal(err)
	}
	back, err := results.DecodeComparison(data)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(c, back); d != "" {
		t.Errorf("round trip (-want +got):\n%s", d)
	}
	if c.Verdict != results.VerdictRegression {
		t.Errorf("a 10 %% slowdown of the 8K row: verdict %s", c.Verdict)
	}
	if g := c.Summary.DecodeTotalGeomean; g == nil || g.Cells != 43 || !(g.Low < g.Change && g.Change < g.High) {
		t.Errorf("geomean %+v", g)
	}
}

func TestParseThreshold(t *testing.T) {
	for _, tc := range []struct {
		in   string
		ms   []results.Metric
		d    float64
		fail bool
	}{
		{in: "total_tok_per_s=3", ms: []results.Metric{results.MetricTotalTokPerS}, d: 0.03},
		{in: "ttft=10%", ms: []results.Metric{results.MetricTTFT}, d: 0.10},
		{in: " Latency = 2.5 % ", ms: []results.Metric{results.MetricTTFT, results.MetricTBT}, d: 0.025},
		{in: "throughput=1", ms: []results.Metric{results.MetricPromptTokPerS, results.MetricTotalTokPerS, results.MetricPerRequestTokPerS}, d: 0.01},
		{in: "ttft", fail: true},
		{in: "speed=3", fail: true},
		{in: "ttft=0", fail: true},
		{in: "ttft=100", fail: true},
		{in: "ttft=-1", fail: true},
		{in: "ttft=NaN", fail: true},
		{in: "ttft=abc", fail: true},
	} {
		ms, d, err := compare.ParseThreshold(tc.in)
		if tc.fail {
			if err == nil {
				t.Errorf("%q: want error", tc.in)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.in, err)
			continue
		}
		if d := cmp.Diff(tc.ms, ms); d != "" {
			t.Errorf("%q metrics: %s", tc.in, d)
		}
		if math.Abs(d-tc.d) > 1e-12 {
			t.Errorf("%q: δ %v, want %v", tc.in, d, tc.d)
		}
	}
	th := compare.DefaultThresholds()
	if err := th.SetThreshold("tbt=7"); err != nil || th.Delta[results.MetricTBT] != 0.07 || compare.DefaultThresholds().Delta[results.MetricTBT] != 0.05 {
		t.Errorf("SetThreshold: %v %v", err, th.Delta)
	}
}

func FuzzParseThreshold(f *testing.F) {
	for _, s := range []string{"total_tok_per_s=3", "ttft=10%", "latency=2.5 %", "=", "x=1e400", "all=99.99"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ms, d, err := compare.ParseThreshold(s)
		if err != nil {
			return
		}
		if len(ms) == 0 || !(d > 0 && d < 1) {
			t.Fatalf("%q: accepted %v %v", s, ms, d)
		}
	})
}

func TestThresholdsChecked(t *testing.T) {
	th := compare.DefaultThresholds()
	th.FDR = 0
	if _, err := compare.Compare(compare.Input{Base: []*results.File{summaryFile("m", map[int]float64{1: 1}, nil)}, Head: []*results.File{summaryFile("m", map[int]float64{1: 1}, nil)}}, th); err == nil {
		t.Error("FDR 0: want error")
	}
	if _, err := compare.Compare(compare.Input{}, compare.DefaultThresholds()); !errors.Is(err, compare.ErrNoInput) {
		t.Errorf("no input: %v", err)
	}
}

// oneTrialFile returns a decode cell 8K/16 with one trial whose 30 bins are given.
func oneTrialFile(bins []int) *results.File {
	f := summaryFile("m", nil, nil)
	var sum int
	for _, b := range bins {
		sum += b
	}
	total := float64(sum) / float64(len(bins))
	cell := results.DecodeCell{Context: 8192, ContextLabel: "8K", Concurrency: 16, Status: results.StatusValid}
	cell.TotalTokPerS = &total
	cell.Trials = []results.DecodeTrial{{BinSeconds: 1, WindowSeconds: float64(len(bins)), BinOutputTokens: bins}}
	cell.Trials[0].TotalTokPerS = &total
	f.Decode = append(f.Decode, cell)
	return f
}

// The within-run estimate is batch means over the bins, and it replaces the prior only when it
// is larger.
func TestWithinRunNoise(t *testing.T) {
	// 30 bins in 5 batches of 6: batch means 900, 1000, 1100, 1000, 1000 → variance of the mean
	// 0.005·1000²/5, CV² = 0.001 (CV 3.16 %), above the 1 % prior at concurrency 16. The bins
	// alternate ±100 around each batch's mean (noise from bin to bin, as measured windows
	// show): batches that were flat would be one stretch of bins 10 % below the rest, a stall
	// by the runner's rule (results.DetectDisturbance), which compare decides around.
	var noisy []int
	for _, m := range []int{900, 1000, 1100, 1000, 1000} {
		for k := range 6 {
			noisy = append(noisy, m+100*(1-2*(k%2))) // bin-to-bin noise, not a stall
		}
	}
	c, err := compare.Compare(compare.Input{Base: []*results.File{oneTrialFile(noisy)}, Head: []*results.File{oneTrialFile(noisy)}}, compare.DefaultThresholds())
	if err != nil {
		t.Fatal(err)
	}
	m := find(t, c, "decode/8K/16", results.MetricTotalTokPerS)
	if m.Noise.Source != results.NoiseWithin || m.Noise.WithinCV == nil || math.Abs(*m.Noise.WithinCV-math.Sqrt(0.001)) > 1e-9 {
		t.Fatalf("noise %+v, want within CV %.5f", m.Noise, math.Sqrt(0.001))
	}
	if math.Abs(m.Noise.CV-math.Sqrt(0.001)) > 1e-9 || m.Noise.DF == nil || math.Abs(*m.Noise.DF-8) > 1e-9 {
		t.Errorf("noise CV %v df %v, want the within estimate with 4+4 df", m.Noise.CV, m.Noise.DF)
	}
	// Flat bins: the within estimate (0) is below the prior, so the prior (1 %) applies.
	flat := make([]int, 30)
	for i := range flat {
		flat[i] = 1000
	}
	c, err = compare.Compare(compare.Input{Base: []*results.File{oneTrialFile(flat)}, Head: []*results.File{oneTrialFile(flat)}}, compare.DefaultThresholds())
	if err != nil {
		t.Fatal(err)
	}
	m = find(t, c, "decode/8K/16", results.MetricTotalTokPerS)
	if m.Noise.CV != 0.01 || m.Noise.DF != nil || m.Verdict != results.VerdictUnchanged {
		t.Errorf("flat bins: noise %+v verdict %s, want the 1 %% prior and unchanged", m.Noise, m.Verdict)
	}
}

// More trials shrink the smallest detectable change, and the rank test runs from four trials.
func TestMDCShrinksWithTrials(t *testing.T) {
	m := calibrate.NewMatrix(9, 1)
	r := rand.New(rand.NewPCG(9, 9))
	mdc := func(n int) (float64, *float64) {
		var b, h []*results.File
		for range n {
			b = append(b, m.Run(r, "b", nil))
			h = append(h, m.Run(r, "h", nil))
		}
		c, err := compare.Compare(compare.Input{Base: b, Head: h}, compare.DefaultThresholds())
		if err != nil {
			t.Fatal(err)
		}
		mc := find(t, c, "decode/8K/2", results.MetricTotalTokPerS)
		if mc.MDC == nil {
			return math.Inf(1), mc.RankP
		}
		return *mc.MDC, mc.RankP
	}
	m3, r3 := mdc(3)
	m8, r8 := mdc(8)
	if !(m8 < m3) {
		t.Errorf("MDC with 8 trials %v not below MDC with 3 trials %v", m8, m3)
	}
	if r3 != nil || r8 == nil {
		t.Errorf("rank p-value: 3 trials %v (want none), 8 trials %v (want one)", r3, r8)
	}
}

// When the changes across the matrix spread far wider than the prior allows, the prior is wrong:
// the empirical null scales the guessed noise up and the scattered changes are not called
// regressions, while a shift shared by every cell stays visible.
func TestEmpiricalNull(t *testing.T) {
	build := func(change func(i int) float64) (*results.File, *results.File) {
		base := &results.File{Schema: results.SchemaV1, Run: results.Run{Source: results.SourceImported}}
		head := &results.File{Schema: results.SchemaV1, Run: results.Run{Source: results.SourceImported}}
		i := 0
		for _, ctx := range []string{"8K", "16K", "32K", "64K"} {
			for _, c := range []int{8, 16, 32, 64} {
				n, _ := results.ParseContext(ctx)
				b := results.DecodeCell{Context: n, ContextLabel: ctx, Concurrency: c, Status: results.StatusValid, SummaryOnly: true}
				b.TotalTokPerS = f64(1000)
				h := b
				h.DecodeMetrics = results.DecodeMetrics{TotalTokPerS: f64(1000 * (1 + change(i)))}
				base.Decode, head.Decode = append(base.Decode, b), append(head.Decode, h)
				i++
			}
		}
		return base, head
	}
	// ±4 % scattered (z ≈ ±2.8 against the 1 % prior) over rows and columns alike: noise, not
	// a regression. (The same ±4 % repeated down each column would be a column's change, which
	// the spread between neighbours does not take for noise.)
	base, head := build(func(i int) float64 { return []float64{0.04, -0.04, 0.01, -0.01}[(i+i/4)%4] })
	c, err := compare.Compare(compare.Input{Base: []*results.File{base}, Head: []*results.File{head}}, compare.DefaultThresholds())
	if err != nil {
		t.Fatal(err)
	}
	if c.Summary.Counts.Regression != 0 {
		t.Errorf("scattered ±4 %% changes: %d regressions", c.Summary.Counts.Regression)
	}
	m := find(t, c, "decode/8K/8", results.MetricTotalTokPerS)
	if m.Noise.Scale == nil || *m.Noise.Scale <= 1 || len(c.Warnings) == 0 || !strings.Contains(c.Warnings[0], "empirical null") {
		t.Errorf("scale %v, warnings %q", m.Noise.Scale, c.Warnings)
	}
	// Every cell −8 % with a little scatter: the run's shift (runeffect.go), shown in every cell,
	// and beyond the prior; one run a side measures no run-to-run spread, so it is unproven.
	base, head = build(func(i int) float64 { return -0.08 + 0.002*float64(i%3) })
	c, err = compare.Compare(compare.Input{Base: []*results.File{base}, Head: []*results.File{head}}, compare.DefaultThresholds())
	if err != nil {
		t.Fatal(err)
	}
	if c.Verdict != results.VerdictUnproven || c.Summary.CellCounts.Regression != 0 {
		t.Errorf("a shared −8 %% shift: verdict %s with %d cells regressed, warnings %q", c.Verdict, c.Summary.CellCounts.Regression, c.Warnings)
	}
	if ch := find(t, c, "decode/8K/8", results.MetricTotalTokPerS).Change; ch == nil || math.Abs(ch.Change+0.08) > 0.005 {
		t.Errorf("a shared −8 %% shift: decode/8K/8 shows %+v", ch)
	}
	var shift *results.GroupComparison
	for i := range c.Groups {
		if c.Groups[i].Kind == results.GroupShift && c.Groups[i].Phase == results.PhaseDecode {
			shift = &c.Groups[i]
		}
	}
	if shift == nil || shift.Verdict != results.VerdictUnproven || math.Abs(shift.Change+0.08) > 0.005 {
		t.Errorf("a shared −8 %% shift: the shift test %+v, want unproven at −8 %%", shift)
	}
}

// The minimum-effect test asks whether a change lies beyond δ: −4 % at concurrency 8 (1 % prior
// noise, SE 1.4 %) differs from zero (unproven: the prior alone bounds it) but is not shown
// beyond −3 %.
func TestMinimumEffect(t *testing.T) {
	base := summaryFile("m", map[int]float64{8: 1000}, nil)
	head := summaryFile("m", map[int]float64{8: 960}, nil)
	th := compare.DefaultThresholds()
	c, err := compare.Compare(compare.Input{Base: []*results.File{base}, Head: []*results.File{head}}, th)
	if err != nil {
		t.Fatal(err)
	}
	if v := find(t, c, "decode/8K/8", results.MetricTotalTokPerS).Verdict; v != results.VerdictUnproven {
		t.Errorf("against zero: %s, want unproven (beyond the prior, which alone never blocks)", v)
	}
	th.MinimumEffect = true
	c, err = compare.Compare(compare.Input{Base: []*results.File{base}, Head: []*results.File{head}}, th)
	if err != nil {
		t.Fatal(err)
	}
	m := find(t, c, "decode/8K/8", results.MetricTotalTokPerS)
	if m.Verdict != results.VerdictInconclusive || !c.Settings.MinimumEffect {
		t.Errorf("minimum effect: %s (%s), want inconclusive", m.Verdict, m.Reason)
	}
	// p = 2·P(T < (log 0.96 − log 0.97)/SE) with SE = √2 %.
	x := (math.Log(0.96) - math.Log(0.97)) / (0.01 * math.Sqrt2)
	want := math.Erfc(-x / math.Sqrt2) // 2·Φ(x)
	if math.Abs(*m.P-want) > 1e-9 {
		t.Errorf("p = %v, want %v", *m.P, want)
	}
}

// BenchmarkCompareFullMatrix compares two runs of the reference-shaped matrix (one trial a
// cell with raw bins and requests).
func BenchmarkCompareFullMatrix(b *testing.B) {
	m := calibrate.NewMatrix(1, 1)
	r := rand.New(rand.NewPCG(1, 1))
	in := compare.Input{Base: []*results.File{m.Run(r, "b", nil)}, Head: []*results.File{m.Run(r, "h", nil)}}
	th := compare.DefaultThresholds()
	for b.Loop() {
		if _, err := compare.Compare(in, th); err != nil {
			b.Fatal(err)
		}
	}
}

// Repeated trials of one side only give the noise of both (five of them: with fewer than 4
// degrees of freedom the prior floors them where it is the sharper test, trialsnoise.go).
func TestOneSidedTrials(t *testing.T) {
	m := calibrate.NewMatrix(5, 1)
	r := rand.New(rand.NewPCG(5, 5))
	var base []*results.File
	for range 5 {
		base = append(base, m.Run(r, "b", nil))
	}
	c, err := compare.Compare(compare.Input{Base: base, Head: []*results.File{m.Run(r, "h", nil)}}, compare.DefaultThresholds())
	if err != nil {
		t.Fatal(err)
	}
	mc := find(t, c, "decode/8K/1", results.MetricTotalTokPerS)
	if mc.Noise.Source != results.NoiseTrials || mc.Noise.DF == nil || *mc.Noise.DF != 4 || mc.Noise.BaseTrials != 5 || mc.Noise.HeadTrials != 1 {
		t.Errorf("noise %+v, want trials of the base with 4 df", mc.Noise)
	}
}

// The looks spend min(q, FalseAlarm): 0.01 by default (the whole-matrix false-alarm target), q
// when the cap is off or looser than q.
func TestLevelsKeepFalseAlarm(t *testing.T) {
	pocock := math.Log(1 + (math.E-1)/2)
	for _, tc := range []struct {
		name       string
		fdr, alarm float64
		budget     float64
	}{
		{"default", 0.05, 0.01, 0.01},
		{"cap off", 0.05, 0, 0.05},
		{"q below the cap", 0.005, 0.01, 0.005},
	} {
		th := compare.DefaultThresholds()
		th.FDR, th.FalseAlarm = tc.fdr, tc.alarm
		plan, err := th.Plan()
		if err != nil {
			t.Fatal(err)
		}
		if th.Budget() != tc.budget {
			t.Errorf("%s: budget %g, want %g", tc.name, th.Budget(), tc.budget)
		}
		if l1 := tc.budget * pocock; math.Abs(plan.Level1-l1) > 1e-12 {
			t.Errorf("%s: level1 %g, want %g", tc.name, plan.Level1, l1)
		}
		if l2 := (tc.budget - plan.Level1) / (1 - plan.Level1); math.Abs(plan.Level2-l2) > 1e-12 {
			t.Errorf("%s: level2 %g, want %g", tc.name, plan.Level2, l2)
		}
	}
	th := compare.DefaultThresholds()
	th.FalseAlarm = 0.6
	if _, err := compare.Compare(compare.Input{Base: []*results.File{summaryFile("m", map[int]float64{1: 100}, nil)}, Head: []*results.File{summaryFile("m", map[int]float64{1: 100}, nil)}}, th); err == nil {
		t.Error("false-alarm rate 0.6 accepted")
	}
}

// TestMismatchMeasurementSettings checks that files measured with another decode window,
// max_tokens or endpoint are refused as different setups (the config id differs for the same
// reason), while a side that does not say (an import) is no difference.
func TestMismatchMeasurementSettings(t *testing.T) {
	settings := func(window float64, maxTokens int, endpoint string) *results.Settings {
		return &results.Settings{DurationSeconds: window, MaxTokens: maxTokens, Endpoint: endpoint}
	}
	for _, tc := range []struct {
		name       string
		base, head *results.Settings
		want       string // "" for comparable
	}{
		{"same", settings(30, 4096, "chat"), settings(30, 4096, "chat"), ""},
		{"window", settings(2, 4096, "chat"), settings(0.5, 4096, "chat"), "decode window 2s vs 0.5s"},
		{"max_tokens", settings(30, 4096, "chat"), settings(30, 256, "chat"), "max_tokens 4096 vs 256"},
		{"endpoint", settings(30, 4096, "chat"), settings(30, 4096, "completions"), `endpoint "chat" vs "completions"`},
		{"unknown on one side", settings(0, 0, ""), settings(30, 4096, "chat"), ""},
		{"no settings", nil, settings(30, 4096, "chat"), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := summaryFile("m", map[int]float64{1: 150}, nil)
			b := summaryFile("m", map[int]float64{1: 150}, nil)
			a.Run.Settings, b.Run.Settings = tc.base, tc.head
			_, err := compare.Compare(compare.Input{Base: []*results.File{a}, Head: []*results.File{b}}, compare.DefaultThresholds())
			var me *compare.MismatchError
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("err = %v, want comparable", err)
			case tc.want != "" && (!errors.As(err, &me) || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("err = %v, want a MismatchError naming %s", err, tc.want)
			}
		})
	}
}
