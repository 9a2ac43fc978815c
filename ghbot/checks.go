package ghbot

import (
	"context"
	"fmt"
	"unicode/utf8"

	"github.com/google/go-github/v66/github"
)

// Conclusion is a completed check run's conclusion.
type Conclusion string

// The conclusions speedmatrix sets. Only success, neutral and skipped satisfy a required check.
const (
	ConclusionSuccess        Conclusion = "success"
	ConclusionFailure        Conclusion = "failure"
	ConclusionNeutral        Conclusion = "neutral"
	ConclusionCancelled      Conclusion = "cancelled"
	ConclusionTimedOut       Conclusion = "timed_out"
	ConclusionActionRequired Conclusion = "action_required"
	ConclusionSkipped        Conclusion = "skipped"
)

func (c Conclusion) valid() bool {
	switch c {
	case ConclusionSuccess, ConclusionFailure, ConclusionNeutral, ConclusionCancelled,
		ConclusionTimedOut, ConclusionActionRequired, ConclusionSkipped:
		return true
	}
	return false
}

// Limits of a check run.
const (
	MaxCheckOutputBytes = 65535 // each of output title, summary and text
	MaxCheckActions     = 3
	MaxActionLabel      = 20 // characters
	MaxActionIdentifier = 20
	MaxActionDesc       = 40
)

// CheckExternalID marks the check runs speedmatrix made, so that a workflow job of the same
// name (whose check run belongs to GitHub Actions too) is never taken for ours.
const CheckExternalID = "speedmatrix"

// CheckOutput is a check run's page: Summary and Text are markdown.
type CheckOutput struct {
	Title, Summary, Text string
}

// CheckAction is a requested-action button, shown on a completed check run of a GitHub App.
type CheckAction struct {
	Label, Identifier, Description string
}

// The buttons Decide understands.
var (
	ButtonRerun  = CheckAction{Label: "Re-run", Identifier: ActionIDRerun, Description: "Measure this commit again"}
	ButtonAccept = CheckAction{Label: "Accept", Identifier: ActionIDAccept, Description: "Accept this regression at this commit"}
)

// CheckRun is a check run of ours.
type CheckRun struct {
	ID         int64
	Name       string
	HeadSHA    string
	Status     string
	Conclusion string
	URL        string
	// Title is the run's output title; Summary its output summary, as the bot wrote them.
	Title   string
	Summary string
}

// CheckUpdate is what StartCheck and CompleteCheck write.
type CheckUpdate struct {
	Output     CheckOutput
	DetailsURL string // the workflow run's page; empty keeps the current one
	// Conclusion is required by CompleteCheck and ignored by StartCheck.
	Conclusion Conclusion
	// Actions are buttons; sent only when authenticated as a GitHub App (their events go only
	// to the App that made the run), ignored otherwise.
	Actions []CheckAction
}

// StartCheck marks the check run named name on sha in_progress: it updates ours if one exists
// (a rerun, or the same run twice) and creates it otherwise, so a SHA keeps one run per name.
func (c *Client) StartCheck(ctx context.Context, repo Repo, sha, name string, u CheckUpdate) (CheckRun, error) {
	return c.writeCheck(ctx, repo, sha, name, "in_progress", u)
}

// CompleteCheck completes the check run named name on sha with u.Conclusion, creating it when
// there is none (e.g. action_required for a PR that needs approval).
func (c *Client) CompleteCheck(ctx context.Context, repo Repo, sha, name string, u CheckUpdate) (CheckRun, error) {
	if !u.Conclusion.valid() {
		return CheckRun{}, fmt.Errorf("check run conclusion %q: want success, failure, neutral, cancelled, timed_out, action_required or skipped", u.Conclusion)
	}
	return c.writeCheck(ctx, repo, sha, name, "completed", u)
}

func (c *Client) writeCheck(ctx context.Context, repo Repo, sha, name, status string, u CheckUpdate) (CheckRun, error) {
	if !ValidSHA(sha) {
		return CheckRun{}, fmt.Errorf("check run %q: %q is not a commit id", name, sha)
	}
	if name == "" {
		return CheckRun{}, fmt.Errorf("check run on %s: empty name", ShortSHA(sha))
	}
	actions, err := c.checkActions(u.Actions)
	if err != nil {
		return CheckRun{}, err
	}
	if status != "completed" {
		actions = nil
	}
	output := c.fitOutput(u.Output)
	var details *string
	if u.DetailsURL != "" {
		details = github.String(u.DetailsURL)
	}
	var conclusion *string
	var completedAt *github.Timestamp
	if status == "completed" {
		conclusion = github.String(string(u.Conclusion))
		completedAt = &github.Timestamp{Time: c.now()}
	}
	existing, err := c.findChecks(ctx, repo, sha, name, "")
	if err != nil {
		return CheckRun{}, err
	}
	if len(existing) == 0 {
		cr, _, err := c.gh.Checks.CreateCheckRun(ctx, repo.Owner, repo.Name, github.CreateCheckRunOptions{
			Name: name, HeadSHA: sha, DetailsURL: details, ExternalID: github.String(CheckExternalID),
			Status: github.String(status), Conclusion: conclusion, StartedAt: &github.Timestamp{Time: c.now()},
			CompletedAt: completedAt, Output: output, Actions: actions,
		})
		if err != nil {
			return CheckRun{}, fmt.Errorf("create check run %q on %s: %w", name, ShortSHA(sha), err)
		}
		return checkRun(cr), nil
	}
	cur := existing[0]
	cr, _, err := c.gh.Checks.UpdateCheckRun(ctx, repo.Owner, repo.Name, cur.GetID(), github.UpdateCheckRunOptions{
		Name:       name, // v66 sends Name even when empty: an empty one would rename the run
		DetailsURL: details, ExternalID: github.String(CheckExternalID), Status: github.String(status),
		Conclusion: conclusion, CompletedAt: completedAt, Output: output, Actions: actions,
	})
	if err != nil {
		return CheckRun{}, fmt.Errorf("update check run %q (%d) on %s: %w", name, cur.GetID(), ShortSHA(sha), err)
	}
	return checkRun(cr), nil
}

// CompleteStale completes every check run of ours named name on sha that was left queued or
// in_progress (a run killed midway), with conclusion and output; for the `if: always()` step
// and for the start of the next run. It returns how many it completed.
func (c *Client) CompleteStale(ctx context.Context, repo Repo, sha, name string, conclusion Conclusion, output CheckOutput) (int, error) {
	if !conclusion.valid() {
		return 0, fmt.Errorf("check run conclusion %q is not valid", conclusion)
	}
	if !ValidSHA(sha) {
		return 0, fmt.Errorf("check run %q: %q is not a commit id", name, sha)
	}
	n := 0
	for _, status := range []string{"in_progress", "queued"} {
		runs, err := c.findChecks(ctx, repo, sha, name, status)
		if err != nil {
			return n, err
		}
		for _, cr := range runs {
			_, _, err := c.gh.Checks.UpdateCheckRun(ctx, repo.Owner, repo.Name, cr.GetID(), github.UpdateCheckRunOptions{
				Name: name, Status: github.String("completed"), Conclusion: github.String(string(conclusion)),
				CompletedAt: &github.Timestamp{Time: c.now()}, Output: c.fitOutput(output),
			})
			if err != nil {
				return n, fmt.Errorf("complete stale check run %q (%d) on %s: %w", name, cr.GetID(), ShortSHA(sha), err)
			}
			n++
		}
	}
	return n, nil
}

// findChecks lists our check runs named name on sha (all pages, filter=all), newest first,
// optionally of one status. For an App only its own runs are asked for.
func (c *Client) findChecks(ctx context.Context, repo Repo, sha, name, status string) ([]*github.CheckRun, error) {
	opts := &github.ListCheckRunsOptions{CheckName: github.String(name), Filter: github.String("all"), ListOptions: github.ListOptions{PerPage: 100}}
	if status != "" {
		opts.Status = github.String(status)
	}
	if c.identity.App {
		opts.AppID = github.Int64(c.identity.AppID)
	}
	var ours []*github.CheckRun
	for {
		res, resp, err := c.gh.Checks.ListCheckRunsForRef(ctx, repo.Owner, repo.Name, sha, opts)
		if err != nil {
			return nil, fmt.Errorf("list check runs %q on %s: %w", name, ShortSHA(sha), err)
		}
		for _, cr := range res.CheckRuns {
			if cr.GetName() == name && cr.GetHeadSHA() == sha && cr.GetExternalID() == CheckExternalID &&
				(status == "" || cr.GetStatus() == status) {
				ours = append(ours, cr)
			}
		}
		if resp.NextPage == 0 {
			break
		}
		opts.Page = resp.NextPage
	}
	// Newest first: the one to update.
	for i := 1; i < len(ours); i++ {
		for j := i; j > 0 && ours[j].GetID() > ours[j-1].GetID(); j-- {
			ours[j], ours[j-1] = ours[j-1], ours[j]
		}
	}
	return ours, nil
}

// checkActions validates buttons and drops them outside an App.
func (c *Client) checkActions(actions []CheckAction) ([]*github.CheckRunAction, error) {
	if len(actions) == 0 {
		return nil, nil
	}
	if len(actions) > MaxCheckActions {
		return nil, fmt.Errorf("check run: %d buttons, GitHub allows %d", len(actions), MaxCheckActions)
	}
	var out []*github.CheckRunAction
	for _, a := range actions {
		switch {
		case a.Label == "" || utf8.RuneCountInString(a.Label) > MaxActionLabel:
			return nil, fmt.Errorf("check run button label %q: want 1 to %d characters", a.Label, MaxActionLabel)
		case a.Identifier == "" || utf8.RuneCountInString(a.Identifier) > MaxActionIdentifier:
			return nil, fmt.Errorf("check run button identifier %q: want 1 to %d characters", a.Identifier, MaxActionIdentifier)
		case a.Description == "" || utf8.RuneCountInString(a.Description) > MaxActionDesc:
			return nil, fmt.Errorf("check run button description %q: want 1 to %d characters", a.Description, MaxActionDesc)
		}
		out = append(out, &github.CheckRunAction{Label: a.Label, Identifier: a.Identifier, Description: a.Description})
	}
	if !c.identity.App {
		c.logger.Debug("check run buttons dropped: they work only for a GitHub App", "buttons", len(out))
		return nil, nil
	}
	return out, nil
}

const cutNote = "\n\n✂️ Cut at GitHub's limit of 65,535 bytes; the full report is in the run's artifacts."

// fitOutput cuts each field of the output to MaxCheckOutputBytes at a UTF-8 boundary.
func (c *Client) fitOutput(o CheckOutput) *github.CheckRunOutput {
	if o == (CheckOutput{}) {
		return nil
	}
	out := &github.CheckRunOutput{}
	for _, f := range []struct {
		src  string
		dst  **string
		note string
	}{{o.Title, &out.Title, "…"}, {o.Summary, &out.Summary, cutNote}, {o.Text, &out.Text, cutNote}} {
		if f.src == "" {
			continue
		}
		s, cut := cutBytes(f.src, MaxCheckOutputBytes, f.note)
		if cut {
			c.logger.Warn("check run output cut at GitHub's limit", "bytes", len(f.src), "limit", MaxCheckOutputBytes)
		}
		*f.dst = github.String(s)
	}
	if out.Title == nil {
		out.Title = github.String("speedmatrix")
	}
	if out.Summary == nil { // GitHub requires a summary with an output
		out.Summary = github.String(*out.Title)
	}
	return out
}

func checkRun(cr *github.CheckRun) CheckRun {
	return CheckRun{ID: cr.GetID(), Name: cr.GetName(), HeadSHA: cr.GetHeadSHA(), Status: cr.GetStatus(), Conclusion: cr.GetConclusion(), URL: cr.GetHTMLURL(), Title: cr.GetOutput().GetTitle(), Summary: cr.GetOutput().GetSummary()}
}
