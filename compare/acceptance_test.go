package compare_test

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/speedmatrix/speedmatrix/compare"
	"github.com/speedmatrix/speedmatrix/results"
)

// specCell returns a decode cell at 8K and concurrency c whose trials read the acceptance lengths
// given (one trial each) and the same speed.
func specCell(c int, lengths ...float64) results.DecodeCell {
	cell := results.DecodeCell{Context: 8192, ContextLabel: "8K", Concurrency: c, Status: results.StatusValid}
	speed := func(m *results.DecodeMetrics, l float64) {
		m.TotalTokPerS, m.PerRequestTokPerS = f64(100*float64(c)), f64(100)
		m.TTFTMs, m.TBTMs = f64(500), f64(10)
		if l > 0 {
			m.Telemetry = &results.Telemetry{SpecAcceptanceLength: f64(l), Source: "server"}
		}
	}
	mean := 0.0
	for _, l := range lengths {
		var tr results.DecodeTrial
		speed(&tr.DecodeMetrics, l)
		cell.Trials = append(cell.Trials, tr)
		mean += l / float64(len(lengths))
	}
	speed(&cell.DecodeMetrics, mean)
	if len(lengths) == 0 {
		speed(&cell.DecodeMetrics, 0)
	}
	return cell
}

// specFile returns a file of the given decode cells; pass, when not nil, makes it a pinned run
// at length 3 with that acceptance pass.
func specFile(cells []results.DecodeCell, pass []results.DecodeCell) *results.File {
	f := &results.File{Schema: results.SchemaV1, Run: results.Run{Source: results.SourceMeasured, ServedModel: "m"}, Decode: cells}
	if pass != nil {
		f.SpecDecode = &results.SpecDecode{Mode: results.SpecDecodePinned, PinnedAcceptanceLength: 3, PinnedFrom: results.PinnedFromConfig, AcceptancePass: pass}
	}
	return f
}

// TestAcceptanceCompared: speculative acceptance length is a metric of decode cells where it was
// measured: a drop beyond measured noise is a regression (and the matrix's verdict), beyond a
// prior only unproven, a drop within the noise (the prior at low concurrency, or the trials'
// spread) neither; a pinned run's acceptance
// comes from its acceptance pass, not from its pinned matrix; a cell without acceptance on
// either side is compared as before.
func TestAcceptanceCompared(t *testing.T) {
	const cell = "decode/8K/1"
	for _, tc := range []struct {
		name       string
		base, head *results.File
		cell       string
		want       results.Verdict
		source     string
		reason     string // for not comparable
		// runs splits each side's trials into separate files (separate runs).
		runs bool
	}{
		{
			// Five windows of one run a side: replicates within the run, floored by the prior (20 %
			// at concurrency 1), which a 15 % drop is within.
			name: "drop of 15 % with five quiet trials a side",
			base: specFile([]results.DecodeCell{specCell(1, 3.0, 3.05, 2.98, 3.02, 3.01)}, nil),
			head: specFile([]results.DecodeCell{specCell(1, 2.55, 2.6, 2.57, 2.53, 2.56)}, nil),
			cell: cell, want: results.VerdictInconclusive, source: results.NoiseWithin,
		},
		{
			name: "drop of 15 % in five separate runs a side",
			base: specFile([]results.DecodeCell{specCell(1, 3.0, 3.05, 2.98, 3.02, 3.01)}, nil),
			head: specFile([]results.DecodeCell{specCell(1, 2.55, 2.6, 2.57, 2.53, 2.56)}, nil),
			cell: cell, want: results.VerdictRegression, source: results.NoiseTrials, runs: true,
		},
		{
			name: "same acceptance, noisy trials",
			base: specFile([]results.DecodeCell{specCell(1, 3.0, 3.3, 2.7, 3.1, 2.9)}, nil),
			head: specFile([]results.DecodeCell{specCell(1, 2.8, 3.2, 2.9, 3.3, 2.75)}, nil),
			cell: cell, want: results.VerdictInconclusive, source: results.NoiseWithin,
		},
		{
			name: "one run a side at concurrency 1: a 10 % drop is within the prior (20 %)",
			base: specFile([]results.DecodeCell{specCell(1, 3.0)}, nil),
			head: specFile([]results.DecodeCell{specCell(1, 2.7)}, nil),
			cell: cell, want: results.VerdictInconclusive, source: results.NoisePrior,
		},
		{
			name: "one run a side at concurrency 32: a 10 % drop is beyond the prior (1 %)",
			base: specFile([]results.DecodeCell{specCell(32, 3.0)}, nil),
			head: specFile([]results.DecodeCell{specCell(32, 2.7)}, nil),
			cell: "decode/8K/32", want: results.VerdictUnproven, source: results.NoisePrior,
		},
		{
			name: "pinned head: the acceptance pass shows the drop its pinned matrix hides",
			base: specFile([]results.DecodeCell{specCell(32, 3.0)}, nil),
			head: specFile([]results.DecodeCell{specCell(32, 3.0)}, []results.DecodeCell{specCell(32, 2.7)}),
			cell: "decode/8K/32", want: results.VerdictUnproven, source: results.NoisePrior,
		},
		{
			name: "pinned head whose pass did not measure the cell",
			base: specFile([]results.DecodeCell{specCell(32, 3.0)}, nil),
			head: specFile([]results.DecodeCell{specCell(32, 3.0)}, []results.DecodeCell{specCell(1, 2.7)}),
			cell: "decode/8K/32", want: results.VerdictNotComparable, reason: "no speculative acceptance measured in head",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := compare.Input{Base: []*results.File{tc.base}, Head: []*results.File{tc.head}}
			if tc.runs {
				in = compare.Input{Base: splitRuns(tc.base), Head: splitRuns(tc.head)}
			}
			c, err := compare.Compare(in, compare.DefaultThresholds())
			if err != nil {
				t.Fatal(err)
			}
			m := find(t, c, tc.cell, results.MetricSpecAcceptance)
			if m.Verdict != tc.want {
				t.Errorf("verdict %s (%s), want %s", m.Verdict, m.Reason, tc.want)
			}
			if tc.reason != "" && m.Reason != tc.reason {
				t.Errorf("reason %q, want %q", m.Reason, tc.reason)
			}
			if tc.source != "" && (m.Noise == nil || m.Noise.Source != tc.source) {
				t.Errorf("noise %+v, want source %s", m.Noise, tc.source)
			}
			// A prior alone never blocks: beyond it the matrix is unproven.
			blocking := func(v results.Verdict) bool { return v == results.VerdictRegression || v == results.VerdictUnproven }
			if blocking(tc.want) && c.Verdict != tc.want || !blocking(tc.want) && blocking(c.Verdict) {
				t.Errorf("matrix verdict %s with acceptance %s", c.Verdict, m.Verdict)
			}
			if tc.want != results.VerdictNotComparable && c.Settings.Metrics[len(c.Settings.Metrics)-1].Metric != results.MetricSpecAcceptance {
				t.Errorf("settings do not list the acceptance metric: %+v", c.Settings.Metrics)
			}
			if pinned := tc.head.Pinned() != tc.base.Pinned(); pinned != strings.Contains(strings.Join(c.Warnings, "\n"), "speculative decoding was served differently") {
				t.Errorf("warnings %q: want the pinned/as-launched difference named: %v", c.Warnings, pinned)
			}
			if err := results.ValidateComparison(c); err != nil {
				t.Errorf("the comparison does not validate: %v", err)
			}
		})
	}

	// Without acceptance on either side, a cell has exactly the metrics it had before.
	c, err := compare.Compare(compare.Input{Base: []*results.File{specFile([]results.DecodeCell{specCell(1)}, nil)}, Head: []*results.File{specFile([]results.DecodeCell{specCell(1)}, nil)}}, compare.DefaultThresholds())
	if err != nil {
		t.Fatal(err)
	}
	if got := len(cellOf(t, c, cell).Metrics); got != len(results.Metrics(results.PhaseDecode)) {
		t.Errorf("a cell without acceptance has %d metrics, want %d", got, len(results.Metrics(results.PhaseDecode)))
	}
	for _, s := range c.Settings.Metrics {
		if s.Metric == results.MetricSpecAcceptance {
			t.Error("settings list the acceptance metric although no cell measured it")
		}
	}
}

// TestAcceptanceNoiseIsNotRegression: A/A comparisons of one run a side whose acceptance varies
// run to run as published (CV 10 % at concurrency 1, 20 % at 2, 7.5 % at 4, 0.5 % at 8 and
// above) almost never flag acceptance; a real drop of 2δ at concurrency 8 and above, where
// acceptance is steady, is flagged — unproven, since one run a side measures no run-to-run
// noise and a prior alone never blocks.
func TestAcceptanceNoiseIsNotRegression(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	cvs := map[int]float64{1: 0.10, 2: 0.20, 4: 0.075, 8: 0.005, 16: 0.005, 32: 0.005}
	conc := []int{1, 2, 4, 8, 16, 32}
	file := func(drop float64) *results.File {
		var cells []results.DecodeCell
		for _, c := range conc {
			l := 3 * math.Exp(rng.NormFloat64()*cvs[c])
			if c >= 8 {
				l *= 1 - drop
			}
			cells = append(cells, specCell(c, l))
		}
		return specFile(cells, nil)
	}
	const n = 300
	falseAlarms, caught := 0, 0
	for range n {
		c, err := compare.Compare(compare.Input{Base: []*results.File{file(0)}, Head: []*results.File{file(0)}}, compare.DefaultThresholds())
		if err != nil {
			t.Fatal(err)
		}
		if c.Verdict == results.VerdictRegression || c.Verdict == results.VerdictUnproven {
			falseAlarms++
		}
		c, err = compare.Compare(compare.Input{Base: []*results.File{file(0)}, Head: []*results.File{file(2 * compare.DefaultAcceptanceDelta)}}, compare.DefaultThresholds())
		if err != nil {
			t.Fatal(err)
		}
		for _, conc := range []string{"decode/8K/8", "decode/8K/16", "decode/8K/32"} {
			if find(t, c, conc, results.MetricSpecAcceptance).Verdict == results.VerdictUnproven {
				caught++
			}
		}
	}
	t.Logf("A/A regressions %d of %d; 2δ drops caught %d of %d", falseAlarms, n, caught, 3*n)
	if falseAlarms > n/100 {
		t.Errorf("A/A: %d of %d comparisons call a regression, want at most 1 %%", falseAlarms, n)
	}
	if caught < 3*n*9/10 {
		t.Errorf("a 2δ acceptance drop at concurrency ≥ 8 was caught %d of %d times, want ≥ 90 %%", caught, 3*n)
	}
}

// splitRuns returns one file per trial of f's one decode cell: separate runs.
func splitRuns(f *results.File) []*results.File {
	var out []*results.File
	for _, tr := range f.Decode[0].Trials {
		c := f.Decode[0]
		c.Trials = []results.DecodeTrial{tr}
		c.DecodeMetrics = tr.DecodeMetrics
		g := *f
		g.Decode = []results.DecodeCell{c}
		out = append(out, &g)
	}
	return out
}
