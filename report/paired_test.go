package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/speedmatrix/speedmatrix/results"
)

// pairedComparison is a small comparison of one paired run, with a drift removed.
func pairedComparison() *results.Comparison {
	f := func(v float64) *float64 { return &v }
	c := &results.Comparison{
		Schema: results.ComparisonSchemaV1, Verdict: results.VerdictUnchanged,
		Base:     results.ComparedRun{RunID: "p-base", Engine: "vllm", GPU: "H200 NVL"},
		Head:     results.ComparedRun{RunID: "p-head", Engine: "vllm", GPU: "H200 NVL"},
		Settings: results.ComparisonSettings{FDR: 0.05, Look: 1, Level: 0.0062, ConfidenceLevel: 0.95, Pairing: &results.Pairing{ID: "p", Scheme: results.PairingABBA, Blocks: 6, Order: "ABBAABBAABBA"}},
		Cells: []results.CellComparison{{Cell: "decode/8K/4", Phase: results.PhaseDecode, ContextLabel: "8K", Context: 8192, Concurrency: 4,
			BaseStatus: results.StatusValid, HeadStatus: results.StatusValid, Verdict: results.VerdictUnchanged,
			Metrics: []results.MetricComparison{{Metric: results.MetricTotalTokPerS, Base: f(100), Head: f(100.1), Delta: 0.03, Verdict: results.VerdictUnchanged,
				Change: &results.Change{Change: 0.001, Low: -0.007, High: 0.008}, P: f(0.8), TOSTP: f(0.001),
				Noise: &results.Noise{Source: results.NoisePaired, CV: 0.01, Pairs: 6, BaseTrials: 6, HeadTrials: 6, Drift: f(-0.041)}}}}},
	}
	c.Summary.CellCounts.Unchanged, c.Summary.Counts.Unchanged, c.Summary.Tests = 1, 1, 1
	return c
}

// TestPairedSaysSo checks that the text report, the Markdown report and the PR comment of a
// paired comparison say that it was paired, how, and what drift it removed.
func TestPairedSaysSo(t *testing.T) {
	c := pairedComparison()
	want := "Paired A/B: base and head were served alternately on one machine, 6 blocks each in ABBA order; every change is from the per-pair head/base ratios, with the drift between blocks (up to 4.1% per block) removed."
	pages := renderings(t, c)
	for _, name := range []string{"text", "markdown", "comment"} {
		if got := pages[name]; !strings.Contains(got, want) {
			t.Errorf("%s report lacks %q:\n%s", name, want, got)
		}
	}
	if !strings.Contains(pages["text"], "paired: 1 (") {
		t.Errorf("text report's noise sources lack the paired count:\n%s", pages["text"])
	}
	c.Settings.Pairing = nil
	var text bytes.Buffer
	_ = ComparisonText(&text, c)
	if strings.Contains(text.String(), "Paired A/B") {
		t.Errorf("an unpaired comparison says it was paired:\n%s", text.String())
	}
}
