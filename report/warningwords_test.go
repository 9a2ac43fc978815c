package report

import (
	"strings"
	"testing"

	"github.com/speedmatrix/speedmatrix/results"
)

// TestWarningWords: a comparison's warning reads in the comment's words: the threshold as its
// percentages, metric titles, no q-value or procedure name, code kept as code.
func TestWarningWords(t *testing.T) {
	c := &results.Comparison{Settings: results.ComparisonSettings{Metrics: []results.MetricSettings{
		{Metric: results.MetricTotalTokPerS, Delta: 0.03, HigherIsBetter: true}, {Metric: results.MetricTTFT, Delta: 0.05}}}}
	m := newModel(c, CommentContext{})
	for _, tc := range []struct{ in, want string }{
		{"the base's history shifted in 2 cell-metrics (a sustained change of at least δ): `speedmatrix history` shows the change points",
			"the base's history shifted in 2 cell metrics (a sustained change of at least 3 % for throughput, 5 % for latency): `speedmatrix history` shows the change points"},
		{"decode total_tok_per_s: the changes spread 1.28× more than the assumed noise allows (empirical null)",
			"decode Total tok/s: the changes spread 1.28× more than the assumed noise allows"},
		{"decode/8K/1 passed (q = 2.6e-06) at the second look", "decode/8K/1 passed at the second look"},
		{"shifted in 1 cell-metrics; 11 cell-metrics", "shifted in 1 cell metric; 11 cell metrics"},
		{"an unclosed `code span", "an unclosed \\`code span"},
	} {
		if got := m.warningWords(tc.in, 2000); got != tc.want {
			t.Errorf("warningWords(%q)\n got %q\nwant %q", tc.in, got, tc.want)
		}
	}
	same := newModel(&results.Comparison{Settings: results.ComparisonSettings{Metrics: []results.MetricSettings{{Metric: results.MetricTotalTokPerS, Delta: 0.03, HigherIsBetter: true}}}}, CommentContext{})
	if got := same.thresholdWords(); got != "3 %" {
		t.Errorf("one threshold: %q", got)
	}
}

// TestPlainEngineWords: an engine's name and version ("speedmatrix-sim 0.1.dev1+g3b5189828
// (simulated)") reads as written in the comment's header, the text comparison and the
// markdown comparison: no backslash escapes where markdown needs none.
func TestPlainEngineWords(t *testing.T) {
	s := commentScenarios(t)["regression"]
	c := *s.c
	c.Base.Engine, c.Base.EngineVersion = "speedmatrix-sim", "0.1.dev1+g3b5189828 (simulated)"
	c.Head.Engine, c.Head.EngineVersion = c.Base.Engine, c.Base.EngineVersion
	const want = "speedmatrix-sim 0.1.dev1+g3b5189828 (simulated)"
	got, err := NewComment(&c, s.x)
	if err != nil {
		t.Fatal(err)
	}
	var text, md strings.Builder
	if err := ComparisonText(&text, &c); err != nil {
		t.Fatal(err)
	}
	if err := ComparisonMarkdown(&md, &c); err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"comment": got.Body, "text": text.String(), "markdown": md.String()} {
		if !strings.Contains(out, want) {
			t.Errorf("%s lacks %q", name, want)
		}
	}
}
