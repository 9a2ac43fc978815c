package action

import (
	"context"

	"github.com/speedmatrix/speedmatrix/ghbot"
)

// cleanupMode completes the check runs of ours left queued or in_progress on the commit.
func (j *job) cleanupMode(ctx context.Context) error {
	defer j.flushOutputs()
	c, err := j.client(ctx)
	if err != nil {
		return err
	}
	p := plan{HeadSHA: j.in.SHA, PR: j.in.PR}
	if p.PR == 0 {
		p.PR = j.eventPR()
	}
	if p.PR != 0 {
		if st, ok := j.readState(ctx, c, p.PR); ok {
			p.State = &st
			if p.HeadSHA == "" && st.Phase == phaseMeasuring {
				p.HeadSHA = st.HeadSHA
			}
		}
	}
	if p.HeadSHA == "" {
		p.HeadSHA = j.eventSHA()
	}
	if p.HeadSHA == "" {
		j.log.Info("cleanup: no commit known for this event; nothing to complete")
		return nil
	}
	why := "The run ended before its results (it failed or was cancelled); the cleanup step completed its check."
	r := j.render(p, outcome{}, renderInput{Cancelled: why})
	p.Accepted = j.readAcceptance(ctx, c, p.HeadSHA)
	n, err := c.CompleteStale(ctx, j.repo, p.HeadSHA, j.checkName(), ghbot.ConclusionCancelled, ghbot.CheckOutput{Title: r.title, Summary: j.acceptancePrefix(p) + r.summary})
	if err != nil {
		return err
	}
	j.log.Info("cleanup", "sha", p.HeadSHA, "completed", n)
	if n == 0 {
		return nil
	}
	if p.State != nil && p.State.Phase == phaseMeasuring && p.State.HeadSHA == p.HeadSHA {
		p.BaseSHA = p.State.BaseSHA
		j.upsertState(ctx, c, p, r.body, j.state(p, phaseCancelled, outcome{}, ghbot.ConclusionCancelled))
	}
	j.setOutput("verdict", VerdictCancelled)
	j.setOutput("conclusion", string(ghbot.ConclusionCancelled))
	j.summary("### " + r.title + "\n\n" + why + "\n")
	return nil
}
