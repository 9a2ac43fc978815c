package action

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/speedmatrix/speedmatrix/compare"
	"github.com/speedmatrix/speedmatrix/config"
	"github.com/speedmatrix/speedmatrix/ghbot"
	"github.com/speedmatrix/speedmatrix/measure"
	"github.com/speedmatrix/speedmatrix/report"
	"github.com/speedmatrix/speedmatrix/results"
	"github.com/speedmatrix/speedmatrix/store"
)

// measureCompare measures the plan's commit, keeps its results in the store (a baseline run's
// as the default branch's, any other as the PR's), and compares any other run with its baseline:
// the store's (the merge-base, or its nearest ancestor with results) with the store's history as
// the noise, else the local baseline directory's result of the base commit. c is nil where no
// token can write (the measure mode): the local directory alone. It writes the artifact
// directory.
func (j *job) measureCompare(ctx context.Context, c *ghbot.Client, p plan) (outcome, error) {
	cfg := j.measureConfig(p) // shards.go
	for _, dir := range []string{filepath.Dir(cfg.Output), j.in.ArtifactDir} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return outcome{}, err
		}
	}
	// The action pairs a run by paired.mode (paired.go); an unpaired measurement is the head's only.
	cfg.Paired.Enabled = false
	var warnings []string
	if why, base := j.pairedBefore(ctx, j.openStore(c), p); why != "" { // paired.go
		out, err := j.pairedFirst(ctx, c, cfg, p, pairedInfo{Why: why, BaseSHA: base, Cells: p.Cells})
		if err == nil || !j.pairedFallback(ctx, p, err) {
			return out, err
		}
		warnings = append(warnings, "A paired run (paired.mode) failed, so the head was measured alone: "+code(firstLine(err.Error())))
	}
	j.log.Info("measuring", "sha", p.HeadSHA, "cells", strings.Join(p.Cells, ","), "results", cfg.Output)
	if err := j.measure(ctx, cfg); err != nil {
		return outcome{}, fmt.Errorf("measure %s: %w", ghbot.ShortSHA(p.HeadSHA), err)
	}
	if err := ctx.Err(); err != nil {
		return outcome{}, err
	}
	head, err := results.ReadFile(cfg.Output)
	if err != nil {
		return outcome{}, fmt.Errorf("read the results: %w", err)
	}
	out := outcome{Head: head, ResultsPath: cfg.Output}
	if err := copyFile(cfg.Output, filepath.Join(j.in.ArtifactDir, artifactResults)); err != nil {
		return out, fmt.Errorf("copy the results to the artifact directory: %w", err)
	}
	rs := j.openStore(c)
	if p.Kind == ghbot.RunBaseline {
		stored := j.put(ctx, rs, store.KindDefault, p.HeadSHA, 0, head)
		if !stored || rs.commits == nil {
			// The local directory is the fallback where the store could not be written.
			if err := (dirStore{j.in.BaselineDir}).Put(p.HeadSHA, cfg.Output); err != nil {
				return out, err
			}
		}
		if stored {
			j.changePoint(ctx, c, rs, p.HeadSHA, head)
			j.autoBisect(ctx, c, rs, cfg, head, j.regressed) // bisect.go
		}
		// A/A: the full mode decides with the push's result stored; the measure mode, which
		// cannot read the store, was told by the decide job (input aa).
		due := j.in.AA
		if j.in.Mode != ModeMeasure {
			due = stored && j.aaDue(ctx, rs, store.ConfigID(head), p.HeadSHA)
		}
		if due {
			if again := j.measureAA(ctx, cfg, p.HeadSHA); again != nil && stored {
				j.put(ctx, rs, store.KindAA, p.HeadSHA, 0, again)
			}
		}
		if stored {
			j.prune(ctx, rs, p.HeadSHA)
		}
		out.Baseline = true
		return out, nil
	}
	var base *results.File
	var hist []*results.File
	baseCommit := "" // the stored result's commit, which the PR's stored result cites
	var earlier *results.File
	if p.rerun() {
		// The first pass at this head, which the rerun pools with (rerun.go); the store keeps it
		// as the pull request's result, the rerun's cells go to the artifacts.
		if earlier = j.earlierHead(ctx, rs, p, head); earlier == nil {
			warnings = append(warnings, noEarlierWarning)
		}
	}
	putPR := func(base string) {
		if earlier == nil {
			j.putPR(ctx, rs, p, base, head)
		}
	}
	if j.in.Baseline == "" {
		sb, ok, err := j.storeBaseline(ctx, rs, p, j.seriesFile(p, head))
		var be *baselineError
		switch {
		case errors.As(err, &be):
			// Fail closed: the local directory is not asked either, it would say "no baseline".
			out.Unresolved = be.why()
			putPR("")
			return out, nil
		case ok:
			base, hist, baseCommit = sb.base, sb.hist, sb.commit
			warnings = append(warnings, sb.warnings...)
			if err := results.WriteFile(filepath.Join(j.in.ArtifactDir, artifactBase), base); err != nil {
				return out, err
			}
		case sb.why != "":
			out.NoBaseline = "No baseline in the store: " + sb.why + "."
		}
	}
	putPR(baseCommit)
	if base == nil {
		basePath := j.in.Baseline
		if basePath == "" {
			basePath = dirStore{j.in.BaselineDir}.Get(p.BaseSHA)
		}
		if basePath == "" {
			if out.NoBaseline == "" {
				out.NoBaseline = fmt.Sprintf("No baseline results for the base %s: a push to the default branch measures one (or set the action's baseline input).", code(orDash(ghbot.ShortSHA(p.BaseSHA))))
			}
			if len(warnings) > 0 {
				out.NoBaseline += " " + strings.Join(warnings, " ")
			}
			return out, nil
		}
		out.NoBaseline = ""
		if base, err = results.ReadFile(basePath); err != nil {
			return out, fmt.Errorf("read the baseline: %w", err)
		}
		if err := copyFile(basePath, filepath.Join(j.in.ArtifactDir, artifactBase)); err != nil {
			return out, err
		}
	}
	switch {
	case earlier != nil:
		// The second look, the last: a budgeted job buys no reruns beyond it.
		out, err = j.compareRerun(out, earlier, base, hist, warnings) // rerun.go
	case cfg.Budget > 0:
		out, err = j.budgeted(ctx, cfg, out, base, hist, warnings, p.Cells) // budget.go
	default:
		out, err = j.compareWithHistory(out, base, hist, warnings, p.Cells)
	}
	if err != nil {
		return out, err
	}
	return j.pairedAfter(ctx, rs, cfg, p, out) // paired.go
}

// compareWith compares out.Head with base under the configuration's thresholds.
func (j *job) compareWith(out outcome, base *results.File, cells []string) (outcome, error) {
	return j.compareWithHistory(out, base, nil, nil, cells)
}

// compareInput is what the bot compares: head with base, the history's noise and the measured
// noise, only cells (CellID strings) when any are named.
func (j *job) compareInput(head, base *results.File, hist []*results.File, cells []string) (compare.Input, error) {
	in := compare.Input{Base: []*results.File{base}, Head: []*results.File{head}, BasePath: "base", HeadPath: "head", History: hist, HistoryByCommit: j.histByCommit && len(hist) > 0, MeasuredNoise: j.measured}
	for _, s := range cells {
		id, err := results.ParseCellID(s)
		if err != nil {
			return in, err
		}
		in.Cells = append(in.Cells, id)
	}
	return in, nil
}

// compareWithHistory compares out.Head with base under the configuration's thresholds, the
// noise of each cell taken from hist when it holds enough runs; warnings are added to the
// comparison's.
func (j *job) compareWithHistory(out outcome, base *results.File, hist []*results.File, warnings []string, cells []string) (outcome, error) {
	th := measure.Thresholds(j.cfg)
	// `/bench rerun` measures the head alone against the stored base (rerun.go), a paired
	// comparison's reruns pair again: the advice is for what is measured again.
	th.HeadOnlyReruns = out.Head != nil && out.Head.Run.Pairing == nil
	in, err := j.compareInput(out.Head, base, hist, cells)
	if err != nil {
		return out, err
	}
	cmp, err := compare.Compare(in, th)
	return j.keepComparison(out, cmp, err, warnings) // rerun.go
}

// conclusion maps an outcome to the check's conclusion and the verdict output. A comparison's
// conclusion is its row of results.Outcomes (docs/verdicts.md), changed only by the setting the
// row names: github.fail_on_regression and an acceptance for a regression, github.undecided and
// an acceptance for an unproven matrix; github.no_baseline is publish's (it applies to pull requests only).
func (j *job) conclusion(out outcome, accepted *Acceptance) (ghbot.Conclusion, string) {
	switch {
	case out.Baseline:
		return ghbot.ConclusionSuccess, VerdictBaseline
	case out.Unresolved != "":
		return ghbot.ConclusionFailure, VerdictBaselineError
	case out.ConfigChanged:
		return ghbot.ConclusionFailure, VerdictConfigChanged
	case out.NoBaseline != "" || out.Comparison == nil:
		return ghbot.ConclusionNeutral, VerdictNoBaseline
	}
	o := results.OutcomeOf(out.Comparison.Verdict)
	switch o.Verdict {
	case results.VerdictRegression:
		switch {
		case accepted != nil:
			return ghbot.ConclusionSuccess, VerdictAccepted
		case !j.cfg.GitHub.FailOnRegression:
			return ghbot.ConclusionNeutral, string(o.Verdict)
		}
	case results.VerdictUnproven:
		if accepted != nil {
			return ghbot.ConclusionSuccess, VerdictAccepted
		}
		switch j.cfg.GitHub.Undecided {
		case config.UndecidedNeutral:
			return ghbot.ConclusionNeutral, string(o.Verdict)
		case config.UndecidedSuccess:
			return ghbot.ConclusionSuccess, string(o.Verdict)
		}
		return ghbot.ConclusionFailure, string(o.Verdict)
	}
	return ghbot.Conclusion(o.Check), string(o.Verdict)
}

// render fills the context of a render input and renders it.
func (j *job) render(p plan, out outcome, in renderInput) page {
	in.Repo, in.HeadSHA, in.BaseSHA, in.PR, in.Kind, in.By, in.Cells = j.repo.FullName(), p.HeadSHA, p.BaseSHA, p.PR, p.Kind, p.By, p.Cells
	in.ServerURL, in.RunURL, in.ArtifactURL = strings.TrimRight(j.ghc.ServerURL, "/"), j.runURL, j.artifactURL
	if !in.Measuring && in.Cancelled == "" {
		in.Head, in.Comparison, in.NoBaseline, in.Baseline = out.Head, out.Comparison, out.NoBaseline, out.Baseline
		if out.Unresolved != "" {
			in.Comparison, in.NoBaseline = nil, out.Unresolved
		}
	}
	in.FailOff = !j.cfg.GitHub.FailOnRegression
	in.CheckName = j.checkName()
	if in.Measuring || in.Cancelled != "" {
		return measuringPaired(renderComment(in), p, in) // paired.go
	}
	return withPaired(renderComment(in), out.Paired) // paired.go
}

// state returns the comment's state after this step.
func (j *job) state(p plan, phase string, out outcome, conclusion ghbot.Conclusion) State {
	st := State{Phase: phase, HeadSHA: p.HeadSHA, BaseSHA: p.BaseSHA, RunURL: j.runURL, Conclusion: string(conclusion)}
	st.Accepted = p.Accepted
	if out.Comparison != nil {
		st.Verdict = string(out.Comparison.Verdict)
		st.Regressions = cellsWith(out.Comparison, results.VerdictRegression)
		st.Inconclusive = cellsWith(out.Comparison, results.VerdictInconclusive)
		st.Paired = out.Paired != nil
	}
	return st
}

// publish posts the results: the comment, the completed check, the job summary, the outputs.
func (j *job) publish(ctx context.Context, c *ghbot.Client, p plan, out outcome) error {
	accepted := p.Accepted
	if out.Comparison == nil || !acceptable(string(out.Comparison.Verdict)) {
		accepted = nil
	}
	conclusion, verdict := j.conclusion(out, accepted)
	if (verdict == VerdictNoBaseline || verdict == string(results.VerdictNotComparable)) && p.PR != 0 && j.cfg.GitHub.NoBaseline == config.NoBaselineFailure {
		// A required check passes on neutral: github.no_baseline failure keeps an unmeasured
		// pull request from merging.
		conclusion = ghbot.ConclusionFailure
	}
	comparedNothing := out.Comparison != nil && out.NoBaseline == "" && verdict == string(results.VerdictNotComparable) &&
		(p.PR != 0 || p.Kind == ghbot.RunMergeGroup)
	if comparedNothing {
		// A baseline was found and nothing of the head was compared with it (cells that neither
		// file holds): that proves nothing about the pull request, so it cannot pass.
		conclusion = ghbot.ConclusionFailure
	}
	in := renderInput{Accepted: accepted, Conclusion: conclusion}
	switch {
	case out.Unresolved != "":
		in.Blocked = fmt.Sprintf("Blocked: the baseline of %s could not be resolved, so nothing was compared", ghbot.ShortSHA(p.HeadSHA))
	case out.ConfigChanged:
		in.Blocked = fmt.Sprintf("Blocked: %s measured another config than the default branch's baseline (the config changed), so the merge is blocked until it is measured there", ghbot.ShortSHA(p.HeadSHA))
	case conclusion == ghbot.ConclusionFailure && verdict == VerdictNoBaseline:
		in.Blocked = fmt.Sprintf("Blocked: nothing to compare %s with (github.no_baseline: failure)", ghbot.ShortSHA(p.HeadSHA))
	case comparedNothing:
		in.Blocked = fmt.Sprintf("Blocked: no cell of %s was compared with its baseline, so nothing shows it is not slower", ghbot.ShortSHA(p.HeadSHA))
	}
	r := j.render(p, out, in)
	summary := r.summary
	if out.Comparison != nil && verdict != VerdictNoBaseline {
		// The row of results.Outcomes that decided the conclusion (docs/verdicts.md).
		summary = afterFirstLine(summary, report.VerdictRow(out.Comparison.Verdict))
	}
	st := j.state(p, phaseDone, out, conclusion)
	st.Accepted = accepted
	regressed := len(st.Regressions)
	if p.PR != 0 {
		switch j.cfg.GitHub.Comment {
		case config.CommentAlways:
			j.upsertState(ctx, c, p, r.body, st)
		case config.CommentRegression:
			if regressed > 0 || p.State != nil {
				j.upsertState(ctx, c, p, r.body, st)
			}
		}
	}
	var buttons []ghbot.CheckAction
	if out.Comparison != nil {
		buttons = append(buttons, ghbot.ButtonRerun)
		if conclusion == ghbot.ConclusionFailure && acceptable(string(out.Comparison.Verdict)) {
			buttons = append(buttons, ghbot.ButtonAccept)
		}
	}
	cs := checkState{Accepted: p.Accepted}
	if out.Comparison != nil {
		cs.Verdict = string(out.Comparison.Verdict)
	}
	if _, err := c.CompleteCheck(ctx, j.repo, p.HeadSHA, j.checkName(), ghbot.CheckUpdate{
		Conclusion: conclusion, DetailsURL: j.runURL, Actions: buttons,
		Output: ghbot.CheckOutput{Title: r.title, Summary: cs.line() + "\n" + summary + j.sameNameWarning(c), Text: r.text},
	}); err != nil {
		return err
	}
	j.summary(r.full)
	j.resultOutputs(verdict, conclusion, regressed, out)
	return nil
}

// sameNameWarning returns the paragraph a check posted with the workflow's GITHUB_TOKEN ends
// in when it is to block merges (github.fail_on_regression): branch protection that requires
// a check by name accepts any check of that name made with GITHUB_TOKEN, so a job named like
// it in a workflow a pull request adds could turn the required check green while this one
// fails. A GitHub App's check can be required as the App's (docs/install.md); "" for an App.
func (j *job) sameNameWarning(c *ghbot.Client) string {
	if c == nil || c.Identity().App || !j.cfg.GitHub.FailOnRegression {
		return ""
	}
	return fmt.Sprintf("\n\n> ⚠️ This check is posted with the workflow's `GITHUB_TOKEN`: any workflow job named %s makes a check of the same name, so a pull request that adds one could satisfy a required %s check while this one fails. Authenticate the action as a GitHub App (inputs `app-id`, `installation-id`, `private-key`) and require the App's check ([install.md](https://github.com/speedmatrix/speedmatrix/blob/main/docs/install.md#a-github-app-and-the-required-check)).", code(j.checkName()), code(j.checkName()))
}

func (j *job) resultOutputs(verdict string, conclusion ghbot.Conclusion, regressed int, out outcome) {
	j.setOutput("verdict", verdict)
	j.setOutput("conclusion", string(conclusion))
	j.setOutput("regressions", strconv.Itoa(regressed))
	j.setOutput("results", out.ResultsPath)
	j.setOutput("comparison", out.ComparisonPath)
}

// upsertState writes the comment with its state line first (a comment cut at GitHub's limit
// loses its end), when the comment mode allows one.
func (j *job) upsertState(ctx context.Context, c *ghbot.Client, p plan, body string, st State) {
	if p.PR == 0 || j.cfg.GitHub.Comment == config.CommentNever {
		return
	}
	res, err := c.UpsertComment(ctx, j.repo, p.PR, j.checkName(), st.Line()+"\n"+body, j.artifactURL)
	if err != nil {
		j.log.Warn("writing the pull request comment", "err", err)
		return
	}
	j.setOutput("comment-url", res.URL)
}

// readAcceptance returns the acceptance in force at sha: the one the bot's own check run there
// records (checkState), nil when none or when the run cannot be read.
func (j *job) readAcceptance(ctx context.Context, c *ghbot.Client, sha string) *Acceptance {
	cs, ok := j.readCheckState(ctx, c, sha)
	if !ok || cs.Accepted == nil || cs.Accepted.SHA != sha {
		return nil
	}
	return cs.Accepted
}

// readCheckState reads the state line of the bot's check run on sha.
func (j *job) readCheckState(ctx context.Context, c *ghbot.Client, sha string) (checkState, bool) {
	if !ghbot.ValidSHA(sha) {
		return checkState{}, false
	}
	cr, ok, err := c.FindCheck(ctx, j.repo, sha, j.checkName())
	if err != nil {
		j.log.Warn("reading the check run", "sha", sha, "err", err)
		return checkState{}, false
	}
	if !ok {
		return checkState{}, false
	}
	return parseCheckState(cr.Summary)
}

// acceptancePrefix returns the check state line that carries p's acceptance over a write of the
// check that holds no verdict (a run started, stopped or refused), with its line break; "" when
// there is none.
func (j *job) acceptancePrefix(p plan) string {
	if p.Accepted == nil {
		return ""
	}
	return checkState{Accepted: p.Accepted}.line() + "\n"
}

// readState reads the state of the bot's comment on a PR.
func (j *job) readState(ctx context.Context, c *ghbot.Client, pr int) (State, bool) {
	found, ok, err := c.FindComment(ctx, j.repo, pr, j.checkName())
	if err != nil {
		j.log.Warn("reading the pull request comment", "err", err)
		return State{}, false
	}
	if !ok {
		return State{}, false
	}
	return parseState(found.Body)
}

func (j *job) reply(ctx context.Context, c *ghbot.Client, pr int, text string) {
	if pr == 0 {
		return
	}
	if _, err := c.Reply(ctx, j.repo, pr, text); err != nil {
		j.log.Warn("replying on the pull request", "err", err)
	}
}
