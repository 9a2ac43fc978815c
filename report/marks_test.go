package report

import (
	"bytes"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/speedmatrix/speedmatrix/results"
)

// TestMarksDoc: the table of marks in docs/verdicts.md is report.MarkTable; -update rewrites it.
func TestMarksDoc(t *testing.T) {
	docTable(t, markTableBegin, markTableEnd, MarkTable())
}

// TestMarkOf: a mark follows from the verdict, and for a cell not comparable from its statuses.
func TestMarkOf(t *testing.T) {
	over, valid := results.StatusOverCapacity, results.StatusValid
	for _, tc := range []struct {
		v          results.Verdict
		base, head results.Status
		want       string
	}{
		{results.VerdictRegression, valid, valid, MarkRegression},
		{results.VerdictRegression, valid, over, MarkRegression}, // a status change is slower
		{results.VerdictImprovement, valid, valid, MarkImprovement},
		{results.VerdictUnchanged, valid, valid, MarkUnchanged},
		{results.VerdictInconclusive, valid, valid, MarkNotJudged},
		{results.VerdictUnproven, valid, valid, MarkNotJudged},
		{results.VerdictIncomplete, valid, "", MarkNotJudged},
		{results.VerdictNotComparable, over, over, MarkOverCapacity},
		{results.VerdictNotComparable, "", valid, MarkNotCompared},
		{results.VerdictNotComparable, valid, valid, MarkNotCompared},
	} {
		if got := markOf(tc.v, tc.base, tc.head); got != tc.want {
			t.Errorf("markOf(%s, %q, %q) = %q, want %q", tc.v, tc.base, tc.head, got, tc.want)
		}
	}
}

// TestMarkRowsCoverVerdicts: every verdict of results.Outcomes has its mark in the set, listed
// with the verdicts it marks, and no two rows share a mark.
func TestMarkRowsCoverVerdicts(t *testing.T) {
	seen := map[string]bool{}
	for _, r := range markRows() {
		if seen[r.mark] {
			t.Errorf("mark %q is listed twice", r.mark)
		}
		seen[r.mark] = true
	}
	for _, o := range results.Outcomes {
		m := VerdictMark(o.Verdict)
		i := slices.IndexFunc(markRows(), func(r markRow) bool { return r.mark == m })
		if i < 0 || !slices.Contains(markRows()[i].verdicts, o.Verdict) {
			t.Errorf("verdict %s: its mark %q is not in the set with it", o.Verdict, m)
		}
	}
}

// renderings renders c as compare's text and markdown, the comment and the check run's text.
func renderings(t *testing.T, c *results.Comparison) map[string]string {
	t.Helper()
	var text, md bytes.Buffer
	if err := ComparisonText(&text, c); err != nil {
		t.Fatal(err)
	}
	if err := ComparisonMarkdown(&md, c); err != nil {
		t.Fatal(err)
	}
	cm, err := NewComment(c, CommentContext{})
	if err != nil {
		t.Fatal(err)
	}
	return map[string]string{"text": text.String(), "markdown": md.String(), "comment": cm.Body, "check text": cm.Text}
}

// TestOneSetOfMarks: the comment's matrix and compare's (and the check run's full matrices,
// which are compare's markdown) mark a cell alike where the cell's verdict is its total tok/s
// verdict, every mark a renderer writes in a matrix is one of the set, and no rendering writes
// the marks compare used before the set was one (✗ ✓).
func TestOneSetOfMarks(t *testing.T) {
	set := map[string]bool{"": true}
	for _, r := range markRows() {
		set[r.mark] = true
	}
	for name, c := range scenarios(t) {
		t.Run(name, func(t *testing.T) {
			m := newModel(c, CommentContext{})
			comment, changes := m.decodeMatrix(), changeDecodeTable(c, results.MetricTotalTokPerS)
			if comment == nil || changes == nil {
				t.Fatal("no decode matrix")
			}
			for _, tab := range []*matrixTable{comment, changes} {
				for _, r := range tab.rows {
					for _, cell := range r.cells {
						if !set[cell.mark] {
							t.Errorf("mark %q of %q is not one of the set", cell.mark, cell.plain())
						}
					}
				}
			}
			compared := 0
			for i, r := range comment.rows {
				j := slices.IndexFunc(changes.rows, func(x matrixRow) bool { return x.head == r.head })
				if j < 0 {
					continue
				}
				for k, cm := range r.cells {
					col := slices.Index(changes.cols, comment.cols[k])
					if col < 0 || cm.mark == "" || changes.rows[j].cells[col].mark == "" {
						continue
					}
					var cell *results.CellComparison
					for n := range c.Cells {
						x := &c.Cells[n]
						if x.Phase == results.PhaseDecode && x.ContextLabel == r.head && comment.cols[k] == strconv.Itoa(x.Concurrency) {
							cell = x
						}
					}
					if cell == nil {
						t.Fatalf("no decode cell %s × %s", r.head, comment.cols[k])
					}
					if mc := cell.Metric(results.MetricTotalTokPerS); mc == nil || mc.Verdict != cell.Verdict {
						continue
					}
					compared++
					if got, want := changes.rows[j].cells[col].mark, cm.mark; got != want {
						t.Errorf("row %d %s × %s: compare marks %q, the comment %q", i, r.head, comment.cols[k], got, want)
					}
				}
			}
			if compared == 0 {
				t.Error("no cell compared")
			}
			for what, s := range renderings(t, c) {
				if strings.ContainsAny(s, "✗✓") {
					t.Errorf("%s writes a mark of the old set (✗ ✓)", what)
				}
			}
		})
	}
}

// TestTextTableAligns: the text tables pad by a terminal's columns, in which ❌ ⚡ ❔ ⏳ take two,
// so that every column starts at the same column on every line.
func TestTextTableAligns(t *testing.T) {
	var b bytes.Buffer
	table(&b, "  ", [][]string{
		{"Context", "1", "8"},
		{"8K", "-20.8% (±2.8%) " + MarkRegression, "+1.0% (±1.1%) " + MarkUnchanged},
		{"32K", "+0.1% (±9.0%) " + MarkNotJudged + " " + MarkQueued, "+4.4% (±1.0%) " + MarkImprovement},
		{"128K", "new in head " + MarkNotCompared, MarkOverCapacity},
	})
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	var starts []int
	for _, l := range lines {
		// The third column starts after the last run of two or more spaces.
		i := strings.LastIndex(l, "  ")
		starts = append(starts, textWidth(l[:i+2]))
	}
	for i, s := range starts {
		if s != starts[0] {
			t.Errorf("line %d's last column starts at column %d, line 0's at %d:\n%s", i, s, starts[0], b.String())
		}
	}
	if w := textWidth(MarkRegression + MarkOverCapacity); w != 3 || utf8.RuneCountInString(MarkRegression+MarkOverCapacity) != 2 {
		t.Errorf("textWidth(❌—) = %d, want 3", w)
	}
}
