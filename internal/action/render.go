package action

import (
	"bytes"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/speedmatrix/speedmatrix/ghbot"
	"github.com/speedmatrix/speedmatrix/internal/textout"
	"github.com/speedmatrix/speedmatrix/report"
	"github.com/speedmatrix/speedmatrix/results"
)

// renderInput is everything the comment, the check's page and the job summary show.
type renderInput struct {
	Repo    string // owner/name
	HeadSHA string
	BaseSHA string
	PR      int
	Kind    ghbot.RunKind
	By      string

	// Measuring is set while the run works: the page says so, with RunURL.
	Measuring bool
	// Cells are the cells measured, when not the whole matrix (a rerun).
	Cells []string
	// Cancelled, when set, says why the run ended without results.
	Cancelled string

	Head       *results.File
	Comparison *results.Comparison
	// NoBaseline, when set, says why nothing was compared.
	NoBaseline string
	// Blocked, when set, is the headline of a check that fails although nothing was compared
	// (the config changed, the baseline could not be resolved, github.no_baseline: failure).
	Blocked string
	// Baseline is set for a run that records the default branch's baseline.
	Baseline bool

	Accepted   *Acceptance
	Conclusion ghbot.Conclusion
	// FailOff is set when a regression does not fail the check (fail_on_regression: false).
	FailOff bool

	ServerURL   string
	RunURL      string
	ArtifactURL string
	CheckName   string
}

// page is a rendered page: the PR comment, the check run's title, summary and text, and the
// whole page for the job summary and the artifacts.
type page struct{ body, title, summary, text, full string }

// renderComment renders the PR comment, the check run's output and the job summary from one
// input. A comparison, a run under way and a missing baseline go through report.NewComment (the
// first line answers the merge question); a baseline run and a run that ended without results
// have no comparison to show and get the short page of renderPlain.
func renderComment(in renderInput) page {
	if in.Cancelled == "" && !in.Baseline && (in.Comparison != nil || in.Measuring || in.NoBaseline != "" || in.Blocked != "") {
		x := report.CommentContext{
			ServerURL: in.ServerURL, Repository: in.Repo, BaseSHA: in.BaseSHA, HeadSHA: in.HeadSHA,
			PRNumber: in.PR, CheckName: in.CheckName, RunURL: in.RunURL, ArtifactURL: in.ArtifactURL,
			Head: in.Head, Measuring: in.Measuring, NoBaseline: in.NoBaseline, Blocked: in.Blocked, NoCommands: in.PR == 0,
		}
		if a := in.Accepted; a != nil {
			x.Accepted = &report.Acceptance{By: a.By, At: a.At, SHA: a.SHA, Reason: a.Reason}
		}
		var c *results.Comparison
		if !in.Measuring {
			c = in.Comparison
		}
		if cm, err := report.NewComment(c, x); err == nil {
			title := cm.Title
			if in.FailOff && in.Accepted == nil && c != nil && c.Verdict == results.VerdictRegression {
				title = report.FitTitle("Not blocking (fail_on_regression off): " + strings.TrimPrefix(title, "Blocked: "))
			}
			if len(in.Cells) > 0 {
				line := "Cells measured: " + code(strings.Join(in.Cells, ","))
				if in.Measuring {
					line = fmt.Sprintf("Measuring %s of %s: %s", textout.Plural(len(in.Cells), "cell", "cells"), ghbot.ShortSHA(in.HeadSHA), code(strings.Join(in.Cells, ",")))
				}
				cm.Body, cm.Summary, cm.StepSummary = afterFirstLine(cm.Body, line), afterFirstLine(cm.Summary, line), afterFirstLine(cm.StepSummary, line)
			}
			return page{body: cm.Body, title: title, summary: cm.Summary, text: cm.Text, full: cm.StepSummary}
		}
	}
	body, title, summary, text := renderPlain(in)
	return page{body: body, title: title, summary: summary, text: text, full: body}
}

// afterFirstLine returns page with the paragraph line inserted after its first line (the
// headline).
func afterFirstLine(page, line string) string {
	first, rest, ok := strings.Cut(page, "\n")
	if !ok {
		return page + "\n\n" + line + "\n"
	}
	return first + "\n\n" + line + "\n" + rest
}

// renderPlain renders the short page of a run without a comparison to show (a baseline, a run
// that ended early): body, the check run's title, summary and text.
func renderPlain(in renderInput) (body, title, summary, text string) {
	title = headline(in)
	var head strings.Builder
	fmt.Fprintf(&head, "### %s %s\n\n", icon(in), title)
	fmt.Fprintf(&head, "%s\n", commitLine(in))
	if in.Accepted != nil {
		fmt.Fprintf(&head, "\n> **Accepted** by %s on %s at %s: %s\n", code(in.Accepted.By),
			in.Accepted.At.UTC().Format("2006-01-02 15:04 UTC"), code(ghbot.ShortSHA(in.Accepted.SHA)), code(in.Accepted.Reason))
	}
	if len(in.Cells) > 0 {
		fmt.Fprintf(&head, "\nCells measured: %s\n", code(strings.Join(in.Cells, ",")))
	}
	if in.RunURL != "" {
		fmt.Fprintf(&head, "\n[The run](%s)", in.RunURL)
		if in.ArtifactURL != "" {
			fmt.Fprintf(&head, " · [its artifacts](%s)", in.ArtifactURL)
		}
		head.WriteString("\n")
	}
	summary = head.String()
	var b strings.Builder
	b.WriteString(summary)
	switch {
	case in.Measuring, in.Cancelled != "" && in.Head == nil:
	case in.Comparison != nil:
		var page bytes.Buffer
		if err := report.PRComment(&page, in.Comparison, in.Head); err != nil {
			fmt.Fprintf(&b, "\nThe comparison could not be rendered: %s\n", code(err.Error()))
		} else {
			b.WriteString("\n")
			b.Write(page.Bytes())
		}
	case in.Head != nil:
		var page bytes.Buffer
		if err := report.NewPage(in.Head).Markdown(&page); err == nil {
			b.WriteString("\n<details><summary>The speed test matrix</summary>\n\n")
			b.Write(page.Bytes())
			b.WriteString("\n</details>\n")
		}
	}
	if in.PR != 0 && !in.Measuring {
		b.WriteString("\n<sub>Commands: `/bench` measures again · `/bench rerun [cells]` reruns the undecided (or the named) cells · `/bench accept <reason>` accepts a regression at this commit · `/bench help`.</sub>\n")
	}
	body = b.String()
	return body, title, summary, body
}

// headline answers the merge question in one line.
func headline(in renderInput) string {
	sha := ghbot.ShortSHA(in.HeadSHA)
	switch {
	case in.Measuring:
		if len(in.Cells) > 0 {
			return fmt.Sprintf("Measuring %s of %s…", textout.Plural(len(in.Cells), "cell", "cells"), sha)
		}
		return fmt.Sprintf("Measuring %s…", sha)
	case in.Cancelled != "" && in.Head != nil:
		n := measuredCells(in.Head)
		return fmt.Sprintf("Stopped: the run for %s ended after %d %s; partial results attached", sha, n, textout.Pick(n, "cell", "cells"))
	case in.Cancelled != "":
		return fmt.Sprintf("Not measured: the run for %s ended before its results", sha)
	case in.Baseline:
		return fmt.Sprintf("Baseline recorded for %s", sha)
	case in.NoBaseline != "":
		return fmt.Sprintf("Not compared: no baseline for %s", orDash(ghbot.ShortSHA(in.BaseSHA)))
	case in.Comparison == nil:
		return "Not compared"
	}
	c := in.Comparison
	cc := c.Summary.CellCounts
	checked := cc.Total() - cc.NotComparable
	switch c.Verdict {
	case results.VerdictRegression:
		worst, pct := worstRegression(c)
		what := fmt.Sprintf("%d %s slower", cc.Regression, textout.Pick(cc.Regression, "cell", "cells"))
		if worst != "" {
			what += fmt.Sprintf(", the worst %s by %s", worst, pct)
		}
		switch {
		case in.Accepted != nil:
			return "Not blocked: regression accepted (" + what + ")"
		case in.FailOff:
			return "Regression found, not blocking (fail_on_regression is off): " + what
		}
		return "Blocked: " + what
	case results.VerdictImprovement:
		return fmt.Sprintf("Not blocked: no slowdown found; %d of %d cells faster", cc.Improvement, checked)
	case results.VerdictUnchanged:
		return fmt.Sprintf("Not blocked: no slowdown found in %d %s", checked, textout.Pick(checked, "cell", "cells"))
	case results.VerdictInconclusive:
		return fmt.Sprintf("Not blocked: no slowdown found in %d %s; %d too noisy to tell in one run",
			checked, textout.Pick(checked, "cell", "cells"), cc.Inconclusive)
	case results.VerdictUnproven:
		return "Unproven: a slowdown neither shown nor ruled out; a paired run (/bench paired, paired.mode: auto), a rerun or store history decides it"
	case results.VerdictIncomplete:
		return "Incomplete: the head lacks data it should hold; missing data never passes"
	}
	return "Not compared: no cell could be compared"
}

// worstRegression returns the regressed cell with the largest change, and that change.
func worstRegression(c *results.Comparison) (string, string) {
	cell, worst := "", 0.0
	for _, cl := range c.Cells {
		for _, m := range cl.Metrics {
			if m.Verdict != results.VerdictRegression || m.Change == nil {
				continue
			}
			if d := math.Abs(m.Change.Change); d > worst {
				cell, worst = cl.Cell, d
			}
		}
	}
	if cell == "" {
		return "", ""
	}
	return cell, fmt.Sprintf("%.1f %%", worst*100)
}

// cellsWith returns the cells with verdict v, sorted.
func cellsWith(c *results.Comparison, v results.Verdict) []string {
	var out []string
	if c == nil {
		return nil
	}
	for _, cl := range c.Cells {
		if cl.Verdict == v {
			out = append(out, cl.Cell)
		}
	}
	sort.Strings(out)
	return out
}

func icon(in renderInput) string {
	switch {
	case in.Measuring:
		return "⏳"
	case in.Cancelled != "":
		return "⏹️"
	case in.Baseline:
		return "📌"
	case in.NoBaseline != "" || in.Comparison == nil:
		return "➖"
	case in.Comparison.Verdict == results.VerdictRegression && in.Accepted == nil:
		return "🔴"
	case in.Comparison.Verdict == results.VerdictUnproven:
		return "🟠"
	case in.Comparison.Verdict == results.VerdictIncomplete:
		return "🧩"
	}
	return "🟢"
}

func commitLine(in renderInput) string {
	link := func(sha string) string {
		if in.ServerURL == "" || in.Repo == "" {
			return code(ghbot.ShortSHA(sha))
		}
		return fmt.Sprintf("[%s](%s/%s/commit/%s)", code(ghbot.ShortSHA(sha)), in.ServerURL, in.Repo, sha)
	}
	var s string
	switch {
	case in.BaseSHA != "" && !in.Baseline:
		s = fmt.Sprintf("Comparing %s with the base %s", link(in.HeadSHA), link(in.BaseSHA))
	default:
		s = "Commit " + link(in.HeadSHA)
	}
	if in.By != "" {
		s += fmt.Sprintf(", started by %s (%s)", code(in.By), in.Kind)
	}
	s += "."
	if in.NoBaseline != "" {
		s += " " + in.NoBaseline
	}
	if in.Cancelled != "" {
		s += " " + in.Cancelled
	}
	return s
}

// code quotes text for markdown as ghbot.CodeSpan does, at most 300 characters, and "—" for
// text that is blank once quoted.
func code(s string) string {
	c := ghbot.CodeSpan(s, 300)
	if strings.TrimSpace(strings.Trim(c, "`")) == "" {
		return "—"
	}
	return c
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}
