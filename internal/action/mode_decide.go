package action

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/speedmatrix/speedmatrix/config"
	"github.com/speedmatrix/speedmatrix/ghbot"
	"github.com/speedmatrix/speedmatrix/internal/textout"
)

// routed is the full and the decide mode: route the event and act on the decision.
func (j *job) routed(ctx context.Context, full bool) error {
	c, err := j.client(ctx)
	if err != nil {
		return err
	}
	defer j.flushOutputs()
	if !full && j.ev.Name == "pull_request" {
		// The decide mode routes for a GPU job; under pull_request that job is defined by the
		// pull request's merge commit, which can replace it (docs/security.md).
		j.log.Warn("this workflow starts the GPU job from the pull_request trigger, which runs the workflow as the pull request itself defines it: a pull request can add its own job on the GPU runner and skip decide and the commit pin. Route pull requests with pull_request_target instead, as example-gpu.yml does (docs/security.md)")
	}
	if !full {
		if done, err := j.decideBisectRound(ctx, c); done { // a bisection round (bisectsplit.go)
			return err
		}
	}
	if done, err := j.bisectCommand(ctx, c, full); done { // /bench bisect on the change-point issue (bisect.go)
		return err
	}
	d, err := c.Decide(ctx, j.ev, j.policy())
	if err != nil {
		return err
	}
	j.log.Info("decision", "event", j.ev.Name, "action", j.ev.Action, "do", d.Do, "kind", d.Kind, "pr", d.PR, "sha", d.HeadSHA, "reason", d.Reason)
	if err := c.Respond(ctx, j.repo, d); err != nil {
		j.log.Warn("responding to the command", "err", err)
	}
	j.setOutput("run", "false")
	switch d.Do {
	case ghbot.DoNothing:
		j.setOutput("verdict", VerdictSkipped)
		j.summary("speedmatrix: nothing to do for this event (" + d.Reason + ").\n")
		return nil
	case ghbot.DoHelp, ghbot.DoRefuse:
		j.setOutput("verdict", VerdictRefused)
		why := ""
		if d.Do == ghbot.DoRefuse && d.Reason != "" {
			why = " " + code(d.Reason)
		}
		j.summary("speedmatrix: the command was not run." + why + "\n")
		return nil
	case ghbot.DoActionRequired:
		return j.actionRequired(ctx, c, d)
	case ghbot.DoAccept:
		return j.accept(ctx, c, d)
	case ghbot.DoRun:
	default:
		return fmt.Errorf("decision %q is not handled", d.Do)
	}
	p, ok, err := j.planRun(ctx, c, d)
	if err != nil || !ok {
		return err
	}
	return j.run(ctx, c, p, full)
}

func (j *job) actionRequired(ctx context.Context, c *ghbot.Client, d ghbot.Decision) error {
	j.setOutput("verdict", VerdictActionRequired)
	title := "Waiting for a maintainer: benchmarks of this pull request need approval"
	_, err := c.CompleteCheck(ctx, j.repo, d.HeadSHA, j.checkName(), ghbot.CheckUpdate{
		Conclusion: ghbot.ConclusionActionRequired, DetailsURL: j.runURL,
		Output: ghbot.CheckOutput{Title: title, Summary: d.Reason},
	})
	if err != nil {
		// A fork's read-only token cannot write checks: say so, do not fail the workflow.
		j.log.Warn("could not complete the check as action_required (a fork's token is read-only)", "err", err)
	}
	j.summary("### " + title + "\n\n" + d.Reason + "\n")
	return nil
}

// planRun reads the comment's state and turns a run decision into a plan; ok is false when the
// decision was answered without a run (a rerun with nothing to rerun, a reused merge group).
func (j *job) planRun(ctx context.Context, c *ghbot.Client, d ghbot.Decision) (plan, bool, error) {
	p := plan{Kind: d.Kind, PR: d.PR, HeadSHA: d.HeadSHA, BaseSHA: d.BaseSHA, By: d.By}
	if p.PR != 0 {
		if st, ok := j.readState(ctx, c, p.PR); ok {
			p.State = &st
		}
		p.Accepted = j.readAcceptance(ctx, c, p.HeadSHA)
	}
	if d.Command != nil && d.Command.Kind == ghbot.CommandRerun {
		for _, id := range d.Command.Cells {
			p.Cells = append(p.Cells, id.String())
		}
		if len(p.Cells) == 0 && p.State != nil {
			p.Cells = append(p.Cells, p.State.Inconclusive...)
		}
		if p.State != nil && p.State.Paired && p.State.HeadSHA == p.HeadSHA {
			p.Paired = "the last comparison at this head was paired, so `/bench rerun` reruns paired"
		}
		if len(p.Cells) == 0 {
			j.reply(ctx, c, p.PR, fmt.Sprintf("@%s `/bench rerun` has nothing to rerun: the last comparison left no cell undecided. Post `/bench` to measure the whole matrix, or name the cells: `/bench rerun decode/8K/32`.", d.By))
			j.setOutput("verdict", VerdictRefused)
			return p, false, nil
		}
	}
	if d.Command != nil && d.Command.Kind == ghbot.CommandPaired {
		if j.in.Shards > 0 {
			// A paired run serves base and head on one runner in turn; the shards' runners each
			// measure other cells, so there is no pair to make.
			j.reply(ctx, c, p.PR, fmt.Sprintf("@%s `/bench paired` was not run: this workflow splits the matrix into shards (input shards: %d) for several runners, and a paired run serves base and head in turn on one runner. Run the workflow without shards (e.g. by hand with `shards: 0`), or post `/bench` to measure the head against the stored baseline.", d.By, j.in.Shards))
			j.setOutput("verdict", VerdictRefused)
			return p, false, nil
		}
		p.Paired = fmt.Sprintf("%s asked for it with `/bench paired`", code(d.By))
		for _, id := range d.Command.Cells {
			p.Cells = append(p.Cells, id.String())
		}
	}
	if len(j.in.Cells) > 0 && len(p.Cells) == 0 {
		p.Cells = j.in.Cells
	}
	if p.Kind == ghbot.RunMergeGroup && j.cfg.GitHub.MergeQueue == config.MergeQueueReuse {
		reused, err := j.reuseMergeGroup(ctx, c, d)
		if err != nil || reused {
			return p, false, err
		}
	}
	return p, true, nil
}

// reuseMergeGroup reports the PR's success on the group's head when the group's ref names one
// PR whose check of ours succeeded on its head.
func (j *job) reuseMergeGroup(ctx context.Context, c *ghbot.Client, d ghbot.Decision) (bool, error) {
	m := queueRefRE.FindStringSubmatch(d.HeadRef)
	if m == nil {
		j.log.Info("merge group: its ref names no pull request; measuring", "ref", d.HeadRef)
		return false, nil
	}
	prSHA := m[2]
	cr, ok, err := c.FindCheck(ctx, j.repo, prSHA, j.checkName())
	if err != nil {
		return false, err
	}
	if !ok || cr.Status != "completed" || cr.Conclusion != string(ghbot.ConclusionSuccess) {
		j.log.Info("merge group: the pull request's check did not succeed on its head; measuring", "pr", m[1], "sha", prSHA, "conclusion", cr.Conclusion)
		return false, nil
	}
	title := fmt.Sprintf("Not blocked: pull request #%s succeeded at %s (reused)", m[1], ghbot.ShortSHA(prSHA))
	summary := fmt.Sprintf("The merge group's head %s adds pull request #%s, whose %s check succeeded on its head %s; github.merge_queue is reuse, so that verdict is reported here. Set it to run to measure every merge group.",
		code(ghbot.ShortSHA(d.HeadSHA)), m[1], code(j.checkName()), code(ghbot.ShortSHA(prSHA)))
	if _, err := c.CompleteCheck(ctx, j.repo, d.HeadSHA, j.checkName(), ghbot.CheckUpdate{
		Conclusion: ghbot.ConclusionSuccess, DetailsURL: j.runURL, Output: ghbot.CheckOutput{Title: title, Summary: summary},
	}); err != nil {
		return false, err
	}
	j.setOutput("verdict", VerdictReused)
	j.setOutput("conclusion", string(ghbot.ConclusionSuccess))
	j.summary("### " + title + "\n\n" + summary + "\n")
	return true, nil
}

// run starts the check and the measuring comment, verifies the head, and then measures and
// reports (full) or says what to measure (decide).
func (j *job) run(ctx context.Context, c *ghbot.Client, p plan, full bool) (err error) {
	name := j.checkName()
	measuring := j.render(p, outcome{}, renderInput{Measuring: true})
	if _, err := c.StartCheck(ctx, j.repo, p.HeadSHA, name, ghbot.CheckUpdate{
		DetailsURL: j.runURL, Output: ghbot.CheckOutput{Title: measuring.title, Summary: j.acceptancePrefix(p) + measuring.summary + j.sameNameWarning(c)},
	}); err != nil {
		return err
	}
	done := false
	defer func() {
		if !done { // in decide mode too: an error after the start would leave it in_progress
			j.abort(ctx, c, p, err)
		}
	}()
	if p.PR != 0 && j.cfg.GitHub.Comment == config.CommentAlways {
		st := j.state(p, phaseMeasuring, outcome{}, "")
		if _, err := c.UpsertComment(ctx, j.repo, p.PR, name, st.Line()+"\n"+measuring.body, j.artifactURL); err != nil {
			j.log.Warn("posting the measuring comment", "err", err)
		}
	}
	if p.PR != 0 && p.Kind != ghbot.RunMergeGroup {
		if err := c.VerifyHead(ctx, j.repo, p.PR, p.HeadSHA); err != nil {
			if !errors.Is(err, ghbot.ErrHeadMoved) {
				return err
			}
			j.headMoved(ctx, c, p, err)
			done = true
			return nil
		}
	}
	if !full {
		if err := j.shardOutputs(p); err != nil { // shards.go
			return err
		}
		done = true
		j.setOutput("run", "true")
		j.setOutput("verdict", VerdictPending)
		j.setOutput("sha", p.HeadSHA)
		p.BaseSHA = j.decidePaired(ctx, c, p) // paired.go
		j.setOutput("base-sha", p.BaseSHA)
		j.setOutput("pr", strconv.Itoa(p.PR))
		j.setOutput("kind", string(p.Kind))
		j.setOutput("cells", strings.Join(p.Cells, ","))
		if p.Kind == ghbot.RunBaseline {
			j.setOutput("aa", strconv.FormatBool(j.aaDecide(ctx, j.openStore(c), p.HeadSHA)))
		}
		return nil
	}
	out, err := j.measureCompare(ctx, c, p)
	if err != nil {
		return err
	}
	if err := j.publish(ctx, c, p, out); err != nil {
		return err
	}
	done = true
	return nil
}

// headMoved reports a run that did not start because the PR's head moved.
func (j *job) headMoved(ctx context.Context, c *ghbot.Client, p plan, cause error) {
	why := "The pull request's head moved after the run was approved; nothing was measured. A maintainer who has read the new commits posts `/bench <commit>` again, naming the commit they read by its full id."
	r := j.render(p, outcome{}, renderInput{Cancelled: why})
	if _, err := c.CompleteCheck(ctx, j.repo, p.HeadSHA, j.checkName(), ghbot.CheckUpdate{
		Conclusion: ghbot.ConclusionCancelled, DetailsURL: j.runURL, Output: ghbot.CheckOutput{Title: r.title, Summary: j.acceptancePrefix(p) + r.summary},
	}); err != nil {
		j.log.Warn("completing the check after the head moved", "err", err)
	}
	j.upsertState(ctx, c, p, r.body, j.state(p, phaseCancelled, outcome{}, ""))
	if p.Kind == ghbot.RunCommand {
		j.reply(ctx, c, p.PR, fmt.Sprintf("@%s the benchmark was not run: the head of #%d moved from %s after your command. Read the new commits and post the command again, naming the commit you read by its full id: `/bench <commit>`.", p.By, p.PR, code(p.HeadSHA)))
	}
	j.log.Warn("not measured: the head moved", "err", cause)
	j.setOutput("verdict", VerdictHeadMoved)
	j.setOutput("conclusion", string(ghbot.ConclusionCancelled))
}

// abort completes a started check that would otherwise stay in_progress: cancelled, or
// timed_out when the context's deadline passed.
func (j *job) abort(ctx context.Context, c *ghbot.Client, p plan, cause error) {
	conclusion := ghbot.ConclusionCancelled
	why := "The run stopped before its results."
	var measureErr *measureJobError
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded) || errors.Is(cause, context.DeadlineExceeded):
		conclusion, why = ghbot.ConclusionTimedOut, "The run timed out before its results."
	case ctx.Err() != nil:
		why = "The run was cancelled before its results."
	case errors.As(cause, &measureErr):
		why = measureErr.why(j.runURL)
	case cause != nil:
		why = "The run failed before its results: " + code(firstLine(cause.Error()))
		if exit := serverExit(cause); exit != "" {
			why += " " + exit
		}
	}
	partial := j.partialResults(p)
	if measureErr != nil && measureErr.Partial != nil {
		partial = measureErr.Partial
	}
	if partial != nil {
		n := measuredCells(partial)
		why += fmt.Sprintf(" %d %s measured before it stopped: their results are in the run's artifacts (%s, marked partial) and below.",
			n, textout.Pick(n, "cell was", "cells were"), artifactResults)
	}
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	r := j.render(p, outcome{}, renderInput{Cancelled: why, Head: partial})
	if _, err := c.CompleteCheck(actx, j.repo, p.HeadSHA, j.checkName(), ghbot.CheckUpdate{
		Conclusion: conclusion, DetailsURL: j.runURL, Output: ghbot.CheckOutput{Title: r.title, Summary: j.acceptancePrefix(p) + r.summary, Text: r.text},
	}); err != nil {
		j.log.Error("completing the check of a run that stopped", "err", err)
	}
	j.upsertState(actx, c, p, r.body, j.state(p, phaseCancelled, outcome{}, ""))
	j.setOutput("verdict", VerdictCancelled)
	j.setOutput("conclusion", string(conclusion))
}
