package action

import (
	"strings"
	"testing"

	"github.com/speedmatrix/speedmatrix/config"
	"github.com/speedmatrix/speedmatrix/ghbot"
	"github.com/speedmatrix/speedmatrix/results"
)

// TestConclusion: a comparison's check conclusion is its row of results.Outcomes, changed only
// by the setting the row names; the runs without a comparison keep theirs, and a baseline that
// could not be resolved fails.
func TestConclusion(t *testing.T) {
	cmpOf := func(v results.Verdict) outcome { return outcome{Comparison: &results.Comparison{Verdict: v}} }
	acc := &Acceptance{By: "maint"}
	for _, tc := range []struct {
		name     string
		set      func(*config.Config)
		out      outcome
		accepted *Acceptance
		want     ghbot.Conclusion
		wantVerd string
	}{
		{name: "regression", out: cmpOf(results.VerdictRegression), want: ghbot.ConclusionFailure, wantVerd: "regression"},
		{name: "regression, fail_on_regression off", set: func(c *config.Config) { c.GitHub.FailOnRegression = false }, out: cmpOf(results.VerdictRegression), want: ghbot.ConclusionNeutral, wantVerd: "regression"},
		{name: "regression accepted", out: cmpOf(results.VerdictRegression), accepted: acc, want: ghbot.ConclusionSuccess, wantVerd: VerdictAccepted},
		{name: "incomplete", out: cmpOf(results.VerdictIncomplete), want: ghbot.ConclusionFailure, wantVerd: "incomplete"},
		{name: "incomplete whatever undecided says", set: func(c *config.Config) {
			c.GitHub.Undecided = config.UndecidedSuccess
			c.GitHub.FailOnRegression = false
		},
			out: cmpOf(results.VerdictIncomplete), want: ghbot.ConclusionFailure, wantVerd: "incomplete"},
		{name: "unproven by default", out: cmpOf(results.VerdictUnproven), want: ghbot.ConclusionFailure, wantVerd: "unproven"},
		{name: "unproven, undecided neutral", set: func(c *config.Config) { c.GitHub.Undecided = config.UndecidedNeutral }, out: cmpOf(results.VerdictUnproven), want: ghbot.ConclusionNeutral, wantVerd: "unproven"},
		{name: "unproven, undecided success", set: func(c *config.Config) { c.GitHub.Undecided = config.UndecidedSuccess }, out: cmpOf(results.VerdictUnproven), want: ghbot.ConclusionSuccess, wantVerd: "unproven"},
		{name: "inconclusive", out: cmpOf(results.VerdictInconclusive), want: ghbot.ConclusionSuccess, wantVerd: "inconclusive"},
		{name: "inconclusive, undecided neutral: still success", set: func(c *config.Config) { c.GitHub.Undecided = config.UndecidedNeutral }, out: cmpOf(results.VerdictInconclusive), want: ghbot.ConclusionSuccess, wantVerd: "inconclusive"},
		{name: "unchanged", out: cmpOf(results.VerdictUnchanged), want: ghbot.ConclusionSuccess, wantVerd: "unchanged"},
		{name: "improvement", out: cmpOf(results.VerdictImprovement), want: ghbot.ConclusionSuccess, wantVerd: "improvement"},
		{name: "not comparable", out: cmpOf(results.VerdictNotComparable), want: ghbot.ConclusionNeutral, wantVerd: "not_comparable"},
		{name: "an unknown verdict never passes as success", out: cmpOf("some_future_verdict"), want: ghbot.ConclusionNeutral, wantVerd: "not_comparable"},
		{name: "no baseline", out: outcome{NoBaseline: "none"}, want: ghbot.ConclusionNeutral, wantVerd: VerdictNoBaseline},
		{name: "baseline unresolved", out: outcome{Unresolved: "GET /commits answered HTTP 500"}, want: ghbot.ConclusionFailure, wantVerd: VerdictBaselineError},
		{name: "config changed", out: outcome{ConfigChanged: true, NoBaseline: "x"}, want: ghbot.ConclusionFailure, wantVerd: VerdictConfigChanged},
		{name: "baseline run", out: outcome{Baseline: true}, want: ghbot.ConclusionSuccess, wantVerd: VerdictBaseline},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j := &job{cfg: config.Default()}
			if tc.set != nil {
				tc.set(&j.cfg)
			}
			got, verdict := j.conclusion(tc.out, tc.accepted)
			if got != tc.want || verdict != tc.wantVerd {
				t.Errorf("conclusion = %s, %s; want %s, %s", got, verdict, tc.want, tc.wantVerd)
			}
		})
	}
}

// TestRenderUndecided: the heading of an unproven and of an incomplete comparison says what
// happened and what decides it: for unproven the paired run or the store's history, for
// incomplete which data is missing.
func TestRenderUndecided(t *testing.T) {
	for _, tc := range []struct {
		v    results.Verdict
		want []string
	}{
		{results.VerdictUnproven, []string{"Not proven, so blocked:", "decode 32K × 8 likely slower", "only an assumed noise bounds it", "`/bench paired`", "paired.mode: auto", "history"}},
		{results.VerdictIncomplete, []string{"Incomplete, so blocked:", "the head lacks data for 1 cell (decode 32K × 8)", "missing data never passes"}},
	} {
		t.Run(string(tc.v), func(t *testing.T) {
			c := &results.Comparison{Verdict: tc.v, Cells: []results.CellComparison{{Cell: "decode/32K/8", Verdict: tc.v}, {Cell: "decode/8K/8", Verdict: results.VerdictUnchanged}}}
			r := renderComment(renderInput{Comparison: c, HeadSHA: strings.Repeat("a", 40), PR: 2, Conclusion: ghbot.ConclusionFailure})
			first, _, _ := strings.Cut(r.body, "\n")
			for _, w := range tc.want {
				if !strings.Contains(first, w) {
					t.Errorf("heading %q lacks %q", first, w)
				}
			}
			for _, bad := range []string{"No slowdown found", "nothing is blocked", "✅"} {
				if strings.Contains(first, bad) {
					t.Errorf("heading %q says %q", first, bad)
				}
			}
		})
	}
}

// TestPairedCells: paired.mode auto measures the slower, the unproven and the inconclusive
// cells paired, and says how many of each.
func TestPairedCells(t *testing.T) {
	c := &results.Comparison{Cells: []results.CellComparison{
		{Cell: "decode/8K/1", Verdict: results.VerdictUnchanged},
		{Cell: "decode/8K/8", Verdict: results.VerdictInconclusive},
		{Cell: "decode/32K/8", Verdict: results.VerdictUnproven},
		{Cell: "decode/64K/8", Verdict: results.VerdictRegression},
	}}
	cells, why := pairedCells(c)
	if got, want := strings.Join(cells, ","), "decode/64K/8,decode/32K/8,decode/8K/8"; got != want {
		t.Errorf("cells %s, want %s", got, want)
	}
	if !strings.Contains(why, "1 cell slower, 1 unproven") {
		t.Errorf("why %q does not count the unproven cell", why)
	}
}
