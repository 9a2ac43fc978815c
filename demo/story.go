package demo

import (
	"fmt"
	"io"
	"math"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/speedmatrix/speedmatrix/compare"
	"github.com/speedmatrix/speedmatrix/internal/textout"
	"github.com/speedmatrix/speedmatrix/report"
	"github.com/speedmatrix/speedmatrix/results"
)

// CheckName is the check run the demo's check.md stands for.
const CheckName = "speedmatrix"

// Pages is what the demo writes: the comparison, the PR comment and the check run's output.
type Pages struct {
	Comparison *results.Comparison
	Comment    *report.Comment
	// Conclusion is the check's conclusion: failure for a regression, else success.
	Conclusion string
	// Check is check.md: the conclusion, then the check run's title, summary and text.
	Check string
}

// Render compares head with base, with hist as the base's history (the run-to-run noise;
// the store's default-branch results, base's among them, as the bot reads them), and renders the
// pages the bot would post. It does no I/O and gives the same pages for the same files (the
// example in docs/example is checked with it).
func Render(base, head *results.File, hist []*results.File, basePath, headPath string) (Pages, error) {
	th := compare.DefaultThresholds()
	th.HeadOnlyReruns = true // as the bot's: `/bench rerun` measures the head alone against the stored base
	c, err := compare.Compare(compare.Input{Base: []*results.File{base}, Head: []*results.File{head}, History: hist,
		BasePath: basePath, HeadPath: headPath}, th)
	if err != nil {
		return Pages{}, err
	}
	cm, err := report.NewComment(c, report.CommentContext{Base: base, Head: head, CheckName: CheckName})
	if err != nil {
		return Pages{}, err
	}
	// The bot's default conclusion of the verdict (results.Outcomes, docs/verdicts.md).
	d := Pages{Comparison: c, Comment: cm, Conclusion: results.OutcomeOf(c.Verdict).Check}
	var b strings.Builder
	fmt.Fprintf(&b, "<!-- The check run %q the bot would complete on the head commit: its conclusion, then its output's title, summary and text. -->\n\n", CheckName)
	fmt.Fprintf(&b, "**Conclusion:** `%s`\n\n**Title:** %s\n\n---\n\n%s\n\n---\n\n%s", d.Conclusion, cm.Title, strings.TrimSpace(cm.Summary), cm.Text)
	d.Check = b.String()
	return d, nil
}

// SummaryInput is what the terminal summary says besides the pages.
type SummaryInput struct {
	Dir, Store, Slowdown, Profile, Matrix string
	Speedup                               float64
	// TempDir says that Dir is a new temporary folder the demo made (no --dir): the summary
	// says that it is kept, and how to choose or remove it.
	TempDir bool
	// Lowered says why the demo measured at a lower speedup than asked ("" when it did not).
	Lowered string
	// Runs is how many runs of the base were stored; the comparison says how many of them it
	// took as history (none when too few to measure the noise).
	Runs int
}

// Summary writes the demo's story for a terminal: what was measured and stored, the
// verdict, the cells that regressed (in the profile's time), and the files written.
func Summary(w io.Writer, d Pages, in SummaryInput) error {
	c := d.Comparison
	scale := in.Speedup
	if !(scale > 0) {
		scale = 1
	}
	var b strings.Builder
	fmt.Fprintf(&b, "speedmatrix demo: the %s matrix on the simulated GPU (profile %s, run %g× faster; figures are in the profile's time)\n\n", in.Matrix, in.Profile, scale)
	if in.Lowered != "" {
		fmt.Fprintf(&b, "Run %g× faster, %s.\n\n", scale, in.Lowered)
	}
	if in.Runs > 1 {
		fmt.Fprintf(&b, "1. base: measured %d times, each a separate run of the simulator, and stored in %s as %d default-branch commits: the newest, %s, is the baseline, all %d its history\n",
			in.Runs, in.Store, in.Runs, BaseSHA[:7], in.Runs)
	} else {
		fmt.Fprintf(&b, "1. base: measured once and stored as the baseline of commit %s in %s, with no history\n", BaseSHA[:7], in.Store)
	}
	if in.Slowdown != "" {
		fmt.Fprintf(&b, "2. head: measured with a regression injected: --head-slowdown %s (a step-time factor: decode steps take that many times as long)\n", in.Slowdown)
	} else {
		b.WriteString("2. head: measured with no change injected (an A/A run)\n")
	}
	cc := c.Summary.CellCounts
	// The baseline's own run is the newest of its history; compare counts the others.
	noise := fmt.Sprintf("its history of %s (the run-to-run noise)", textout.Plural(c.Settings.HistoryFiles+1, "run", "runs"))
	if c.Settings.HistoryFiles == 0 {
		noise = fmt.Sprintf("no history (fewer than %d runs of the base: only the noise prior bounds the noise)", compare.DefaultThresholds().MinHistory)
	}
	fmt.Fprintf(&b, "3. compared with the stored baseline and %s: verdict %s — %s\n", noise, c.Verdict, report.CellCountWords(cc))
	rows := regressions(c, scale)
	if len(rows) > 0 {
		b.WriteString("\n   Slower cells (the metric that decided, base → head):\n")
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		for _, r := range rows {
			fmt.Fprintf(tw, "     %s\t%s\t%+.1f%%\t%s\n", r.cell, r.metric, r.change*100, r.values)
		}
		tw.Flush()
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "4. the check %q: %s — %s\n\n", CheckName, d.Conclusion, d.Comment.Title)
	b.WriteString("Files:\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	for _, f := range []struct{ name, what string }{
		{"comment.md", "the pull-request comment"},
		{"check.md", "the check run's conclusion and output"},
		{"comparison.json", "the comparison: every cell-metric's change, interval and verdict"},
		{"base.json", "the base's results, as measured (the baseline)"},
		{"history", "the base's earlier runs, as measured"},
		{"head.json", "the head's results, as measured"},
		{"store", "the local store holding the baseline and its history"},
	} {
		if f.name == "history" && in.Runs < 2 {
			continue // no earlier runs
		}
		fmt.Fprintf(tw, "  %s\t%s\n", filepath.Join(in.Dir, f.name), f.what)
	}
	tw.Flush()
	if in.TempDir {
		fmt.Fprintf(&b, "\nThey are kept in %s, a new temporary folder each run, so that you can read them: --dir DIR writes them where you choose; rm -r %s when done.\n", in.Dir, in.Dir)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// row is one slower cell of the summary.
type row struct {
	cell, metric, values string
	change               float64
}

// regressions returns the slower cells, worst first, each with the first of its metrics
// found slower (the order of the comparison: throughput before latency, as the comment's
// "decided by") and the values in the profile's time.
func regressions(c *results.Comparison, scale float64) []row {
	var rows []row
	for _, cl := range c.Cells {
		var worst *results.MetricComparison
		for i, m := range cl.Metrics {
			if m.Verdict != results.VerdictRegression || m.Change == nil {
				continue
			}
			worst = &cl.Metrics[i]
			break
		}
		if worst == nil {
			continue
		}
		r := row{cell: cl.Cell, metric: worst.Metric.Title(), change: worst.Change.Change}
		if worst.Base != nil && worst.Head != nil {
			if worst.Metric.HigherIsBetter() {
				r.values = fmt.Sprintf("%.1f%s → %.1f tok/s", *worst.Base/scale, report.BaseWord(worst), *worst.Head/scale)
			} else {
				r.values = fmt.Sprintf("%.0f%s → %.0f ms", *worst.Base*scale, report.BaseWord(worst), *worst.Head*scale)
			}
		}
		rows = append(rows, r)
	}
	sort.SliceStable(rows, func(i, j int) bool { return math.Abs(rows[i].change) > math.Abs(rows[j].change) })
	return rows
}
