package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/speedmatrix/speedmatrix/results"
)

// The markers around the tables of docs/verdicts.md that the code renders.
const (
	verdictTableBegin = "<!-- verdict-table:begin"
	verdictTableEnd   = "<!-- verdict-table:end -->"
	markTableBegin    = "<!-- mark-table:begin"
	markTableEnd      = "<!-- mark-table:end -->"
)

// TestVerdictsDoc: the table in docs/verdicts.md is report.VerdictTable, rendered from
// results.Outcomes; -update rewrites it.
func TestVerdictsDoc(t *testing.T) {
	docTable(t, verdictTableBegin, verdictTableEnd, VerdictTable())
}

// docTable checks that docs/verdicts.md holds want between the lines begin and end, or with
// -update writes it there.
func docTable(t *testing.T, begin, end, want string) {
	t.Helper()
	path := filepath.Join("..", "docs", "verdicts.md")
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := string(doc)
	i := strings.Index(s, begin)
	j := strings.Index(s, end)
	if i < 0 || j < i {
		t.Fatalf("%s lacks the markers %q … %q around the table", path, begin, end)
	}
	i += strings.Index(s[i:], "\n") + 1
	got := s[i:j]
	if got == want {
		return
	}
	if *update {
		if err := os.WriteFile(path, []byte(s[:i]+want+s[j:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("the table of %s differs from the code's (go test ./report -run 'Test(Verdicts|Marks)Doc' -update rewrites it):\n--- doc\n%s--- table\n%s", path, got, want)
}

// TestVerdictTable: one row per verdict of results.Outcomes, in its order, each saying its exit
// status, its default conclusion and whether it passes a required check.
func TestVerdictTable(t *testing.T) {
	lines := strings.Split(strings.TrimSuffix(VerdictTable(), "\n"), "\n")
	if len(lines) != 2+len(results.Outcomes) {
		t.Fatalf("%d lines, want the header, the rule and %d rows:\n%s", len(lines), len(results.Outcomes), VerdictTable())
	}
	for k, o := range results.Outcomes {
		cols := strings.Split(lines[2+k], " | ")
		if len(cols) != 6 {
			t.Fatalf("row %d has %d columns, want 6: %q", k, len(cols), lines[2+k])
		}
		pass := map[bool]string{true: "yes", false: "no"}[o.Passes]
		if cols[0] != "| `"+string(o.Verdict)+"`" || cols[1] != string(rune('0'+o.Exit)) || cols[2] != "`"+o.Check+"`" || cols[4] != pass {
			t.Errorf("row %d = %q, want verdict %s, exit %d, check %s, passes %s", k, lines[2+k], o.Verdict, o.Exit, o.Check, pass)
		}
	}
}

// TestVerdictRow: the check's summary line quotes the row of its verdict and links the table.
func TestVerdictRow(t *testing.T) {
	for _, tc := range []struct {
		v    results.Verdict
		want []string
	}{
		{results.VerdictUnproven, []string{"`unproven`", "check `failure`", "`github.undecided`", "does not pass a required check", "exits 4", "`/bench paired`", VerdictsURL}},
		{results.VerdictIncomplete, []string{"`incomplete`", "check `failure`", "does not pass", "exits 4", "missing data never passes"}},
		{results.VerdictInconclusive, []string{"`inconclusive`", "check `success`", "which passes a required check", "exits 0"}},
		{results.VerdictNotComparable, []string{"`not_comparable`", "check `neutral`", "`github.no_baseline`", "exits 4"}},
		{results.VerdictRegression, []string{"`regression`", "check `failure`", "`github.fail_on_regression`", "exits 3"}},
	} {
		got := VerdictRow(tc.v)
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("VerdictRow(%s) = %q lacks %q", tc.v, got, w)
			}
		}
	}
}

// TestComparisonTextNewVerdicts: the text and markdown renderings of an unproven and an
// incomplete comparison say so in their headline and explain the cells' marks.
func TestComparisonTextNewVerdicts(t *testing.T) {
	for _, tc := range []struct {
		v          results.Verdict
		head, mark string
	}{
		{results.VerdictUnproven, "Unproven: a change worse than δ, neither shown nor ruled out", MarkNotJudged + " unproven"},
		{results.VerdictIncomplete, "Incomplete: the head lacks data it should hold", MarkNotJudged + " incomplete"},
	} {
		t.Run(string(tc.v), func(t *testing.T) {
			c := &results.Comparison{Verdict: tc.v, Cells: []results.CellComparison{{Cell: "decode/32K/8", Phase: results.PhaseDecode, ContextLabel: "32K", Concurrency: 8, Verdict: tc.v,
				Metrics: []results.MetricComparison{{Metric: results.MetricTotalTokPerS, Verdict: tc.v}}}}}
			var text, md strings.Builder
			if err := ComparisonText(&text, c); err != nil {
				t.Fatal(err)
			}
			if err := ComparisonMarkdown(&md, c); err != nil {
				t.Fatal(err)
			}
			for name, out := range map[string]string{"text": text.String(), "markdown": md.String()} {
				if !strings.Contains(out, tc.head) || !strings.Contains(out, tc.mark) {
					t.Errorf("%s lacks %q or %q:\n%s", name, tc.head, tc.mark, out)
				}
			}
			if VerdictMark(tc.v) != MarkNotJudged {
				t.Errorf("VerdictMark(%s) = %q, want %q (not judged)", tc.v, VerdictMark(tc.v), MarkNotJudged)
			}
		})
	}
}

// TestCommentBlockedWithoutComparison: a check that fails with nothing compared (the config
// changed, the baseline could not be resolved) gets a heading that says the merge is blocked,
// with the reason, and no /bench accept (there is no regression to accept).
func TestCommentBlockedWithoutComparison(t *testing.T) {
	cm, err := NewComment(nil, CommentContext{Blocked: "Blocked: the config changed", NoBaseline: "another serve flag", PRNumber: 2})
	if err != nil {
		t.Fatal(err)
	}
	first, _, _ := strings.Cut(cm.Body, "\n")
	if cm.State != StateBlocked || cm.Title != "Blocked: the config changed" || first != "### ❌ Blocked: the config changed" {
		t.Errorf("state %s, title %q, heading %q; want blocked with the words given", cm.State, cm.Title, first)
	}
	if !strings.Contains(cm.Body, "Why: another serve flag") || strings.Contains(cm.Body, "/bench accept") || strings.Contains(cm.Body, "No baseline") {
		t.Errorf("body:\n%s", cm.Body)
	}
}
