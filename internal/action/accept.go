package action

import (
	"context"
	"fmt"
	"strings"

	"github.com/speedmatrix/speedmatrix/ghbot"
	"github.com/speedmatrix/speedmatrix/results"
)

// accept records /bench accept (or the Accept button) in the comment's state and turns the
// check success, when the last results at the pinned head block on a slowdown: a ❌ regression
// or a ❓ unproven one, recorded the same way. A refusal's reply says what to run instead.
func (j *job) accept(ctx context.Context, c *ghbot.Client, d ghbot.Decision) error {
	defer j.flushOutputs()
	reason := d.Reason
	if d.Command != nil && d.Command.Reason != "" {
		reason = d.Command.Reason
	}
	acc := Acceptance{By: d.By, At: j.now().UTC(), SHA: d.HeadSHA, Reason: reason}
	block := acceptanceLine(acc)
	refuse := func(why string) error {
		j.reply(ctx, c, d.PR, fmt.Sprintf("@%s `/bench accept` was not recorded: %s", d.By, why))
		j.setOutput("verdict", VerdictRefused)
		j.summary("speedmatrix: `/bench accept` was not recorded: " + why + "\n")
		return nil
	}
	// What is accepted is what the bot's check run on the head says (checkState): only the bot
	// writes it. The comment's state is read only to rewrite the comment.
	cr, okRun, err := c.FindCheck(ctx, j.repo, d.HeadSHA, j.checkName())
	if err != nil {
		return err
	}
	var cs checkState
	if okRun {
		cs, _ = parseCheckState(cr.Summary)
	}
	var found ghbot.FoundComment
	var st State
	okState := false
	if d.PR != 0 {
		var ok bool
		if found, ok, err = c.FindComment(ctx, j.repo, d.PR, j.checkName()); err != nil {
			return err
		}
		if ok {
			st, okState = parseState(found.Body)
		}
	}
	if why := acceptRefusal(d.HeadSHA, cr, okRun, cs, st, okState); why != "" {
		return refuse(why)
	}
	what := "regression"
	if cs.Verdict == string(results.VerdictUnproven) {
		what = "unproven slowdown"
	}
	title := fmt.Sprintf("Not blocked: %s accepted by %s at %s", what, d.By, ghbot.ShortSHA(d.HeadSHA))
	cs.Accepted = &acc
	if _, err := c.CompleteCheck(ctx, j.repo, d.HeadSHA, j.checkName(), ghbot.CheckUpdate{
		Conclusion: ghbot.ConclusionSuccess, DetailsURL: j.runURL,
		Output: ghbot.CheckOutput{Title: title, Summary: cs.line() + "\n" + block + "\n\nThe results are in the pull request's comment and the run's artifacts; a new push voids the acceptance."},
	}); err != nil {
		return err
	}
	if d.PR != 0 {
		st.Accepted = &acc
		st.Conclusion = string(ghbot.ConclusionSuccess)
		body := withoutState(strings.TrimPrefix(found.Body, ghbot.Marker(j.checkName())+"\n"))
		body = withAcceptance(body, title, block)
		j.upsertState(ctx, c, plan{PR: d.PR}, body, st)
	}
	j.setOutput("verdict", VerdictAccepted)
	j.setOutput("conclusion", string(ghbot.ConclusionSuccess))
	j.summary("### " + title + "\n\n" + block + "\n")
	return nil
}

// acceptable reports whether a verdict blocks on a slowdown an acceptance may lift: a
// regression (❌) or an unproven one (❓).
func acceptable(verdict string) bool {
	return verdict == string(results.VerdictRegression) || verdict == string(results.VerdictUnproven)
}

// acceptRefusal says why /bench accept at head cannot be recorded, and what to run instead; ""
// when it can: the bot's check run cr at head (okRun: one was found) holds a finished verdict an
// acceptance lifts (cs). st is the comment's state (okState: read), used only to name the
// commit the last results are for.
func acceptRefusal(head string, cr ghbot.CheckRun, okRun bool, cs checkState, st State, okState bool) string {
	measure := fmt.Sprintf("`/bench %s`", head)
	then := fmt.Sprintf(", then `/bench accept %s <reason>` if it blocks", head)
	switch {
	case okRun && cr.Status == "completed" && acceptable(cs.Verdict):
		return ""
	case !okRun && okState && st.Phase == phaseDone && st.HeadSHA != "" && st.HeadSHA != head:
		return fmt.Sprintf("the last results are for %s, but the head is now %s; an acceptance holds for one commit. Post %s to measure the head%s.",
			code(st.HeadSHA), code(head), measure, then)
	case !okRun:
		return fmt.Sprintf("there are no results at the head %s yet. Post %s to measure it%s.", code(head), measure, then)
	case cr.Status != "completed":
		return fmt.Sprintf("the head %s is being measured now (its check is %s); wait for its results, then post `/bench accept %s <reason>` if it blocks.",
			code(head), cr.Status, head)
	case cs.Verdict == string(results.VerdictIncomplete):
		return fmt.Sprintf("the results at %s are incomplete: the head lacks data it should hold, and missing data never passes, so there is no measured slowdown to accept. "+
			"Post `/bench rerun` to measure the missing cells again, or %s to measure the whole head%s.", code(head), measure, then)
	case cr.Conclusion == string(ghbot.ConclusionSuccess) || cr.Conclusion == string(ghbot.ConclusionNeutral):
		return fmt.Sprintf("nothing to accept: the check at %s already passes (%s: %s). No command is needed.", code(head), cr.Conclusion, code(cr.Title))
	case cs.Verdict == "" && cr.Conclusion == string(ghbot.ConclusionFailure):
		return fmt.Sprintf("nothing was compared at %s (the check says %s), so there is no measured slowdown to accept. Fix what the check names (a baseline is measured by a push to the default branch), then post %s%s.",
			code(head), code(cr.Title), measure, then)
	}
	return fmt.Sprintf("the last run at %s did not end in results an acceptance lifts (%s: %s). Post %s to measure it again%s.",
		code(head), orDash(cr.Conclusion), code(cr.Title), measure, then)
}

// acceptanceLine renders an acceptance; user text only inside code spans.
func acceptanceLine(a Acceptance) string {
	return fmt.Sprintf("> **Accepted** by %s on %s at %s: %s", code(a.By), a.At.UTC().Format("2006-01-02 15:04 UTC"), code(ghbot.ShortSHA(a.SHA)), code(a.Reason))
}

// The markers around the acceptance block of a results comment.
const (
	acceptOpen  = "<!-- speedmatrix:accepted -->"
	acceptClose = "<!-- /speedmatrix:accepted -->"
)

// withAcceptance rewrites a results comment as accepted: its heading says so and the
// acceptance block follows it (replacing an earlier one).
func withAcceptance(body, title, block string) string {
	if i := strings.Index(body, acceptOpen); i >= 0 {
		if k := strings.Index(body[i:], acceptClose); k >= 0 {
			body = body[:i] + strings.TrimLeft(body[i+k+len(acceptClose):], "\n")
		}
	}
	lines := strings.SplitN(body, "\n", 2)
	rest := ""
	if len(lines) == 2 {
		rest = lines[1]
	}
	if !strings.HasPrefix(lines[0], "### ") {
		rest, lines[0] = body, ""
	}
	return "### 🟢 " + title + "\n\n" + acceptOpen + "\n" + block + "\n" + acceptClose + "\n" + rest
}
