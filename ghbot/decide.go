package ghbot

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/google/go-github/v66/github"
)

// Do is what a Decision asks the caller to do.
type Do string

// The outcomes of Decide.
const (
	DoNothing        Do = "nothing"         // ignore the event; Reason says why
	DoRun            Do = "run"             // measure HeadSHA (against BaseSHA/BaseRef)
	DoAccept         Do = "accept"          // accept the regression at HeadSHA; Command.Reason says why
	DoHelp           Do = "help"            // post Reply; run nothing
	DoRefuse         Do = "refuse"          // post Reply (when set) saying why and who may; run nothing
	DoActionRequired Do = "action_required" // complete the check at HeadSHA as action_required, with Reason as its summary
)

// RunKind says what started a run.
type RunKind string

// The kinds of run.
const (
	RunPullRequest RunKind = "pull_request" // a trusted PR opened, pushed, reopened, or labelled by a writer
	RunCommand     RunKind = "command"      // /bench, /bench rerun or /bench accept
	RunCheckRun    RunKind = "check_run"    // the check's Re-run or Accept, by a writer
	RunBaseline    RunKind = "baseline"     // a push to the default branch
	RunMergeGroup  RunKind = "merge_group"  // a merge queue asks for the check
	RunDispatch    RunKind = "dispatch"     // workflow_dispatch
)

// Decision is what an event asks for, after the trust rules. For DoRun and DoAccept, HeadSHA is
// a full commit id checked with ValidSHA and pinned: build it, never a branch name, and call
// VerifyHead before starting when PR is set.
type Decision struct {
	Do   Do
	Kind RunKind
	// PR is the pull request's number, 0 for none.
	PR      int
	HeadSHA string
	HeadRef string
	BaseSHA string // empty when unknown
	BaseRef string
	// By is who asked: the commenter, the labeller, the author of a trusted PR, the pusher.
	By string
	// Command is the parsed /bench command (or the Accept button as CommandAccept).
	Command *Command
	// CommentID is the comment that gave the command, for the reaction.
	CommentID int64
	// Inputs are workflow_dispatch inputs.
	Inputs map[string]string
	// Reason says why, for every outcome but DoRun and DoHelp.
	Reason string
	// Reply is the text to post as a new PR comment (DoHelp, DoRefuse); empty for none.
	Reply string
	// Reaction, when set, is the reaction Respond adds to the command's comment instead of a
	// reply: a user without write permission gets no comment that mentions them.
	Reaction string
}

// Policy holds the routing settings from the configuration.
type Policy struct {
	// CheckName is the check run's name; check_run events for other names are ignored.
	CheckName string
	// TrustLabel is the label a writer adds to start a run on a PR that is not trusted by its
	// author; empty disables labels.
	TrustLabel string
}

// Permission levels GetPermissionLevel returns.
const (
	PermAdmin = "admin"
	PermWrite = "write"
	PermRead  = "read"
	PermNone  = "none"
)

// canWrite reports whether a permission level may start runs.
func canWrite(level string) bool { return level == PermAdmin || level == PermWrite }

// Permission returns user's permission on repo: admin, write, read or none (a 404, e.g. for a
// bot account, is none).
func (c *Client) Permission(ctx context.Context, repo Repo, user string) (string, error) {
	if user == "" {
		return PermNone, nil
	}
	p, _, err := c.gh.Repositories.GetPermissionLevel(ctx, repo.Owner, repo.Name, user)
	var er *github.ErrorResponse
	if errors.As(err, &er) && er.Response != nil && er.Response.StatusCode == http.StatusNotFound {
		return PermNone, nil
	}
	if err != nil {
		return "", fmt.Errorf("permission of %s on %s: %w", user, repo.FullName(), err)
	}
	return p.GetPermission(), nil
}

// GetPullRequest fetches a pull request.
func (c *Client) GetPullRequest(ctx context.Context, repo Repo, number int) (PullRequest, error) {
	p, _, err := c.gh.PullRequests.Get(ctx, repo.Owner, repo.Name, number)
	if err != nil {
		return PullRequest{}, fmt.Errorf("get pull request %s#%d: %w", repo.FullName(), number, err)
	}
	return pullRequest(p), nil
}

// ErrHeadMoved is returned by VerifyHead when the PR's head is no longer the pinned commit.
var ErrHeadMoved = errors.New("the pull request's head moved")

// VerifyHead re-fetches the PR and returns an error wrapping ErrHeadMoved unless its head is
// still sha. Call it right before the build starts: a push after the approval voids it.
func (c *Client) VerifyHead(ctx context.Context, repo Repo, number int, sha string) error {
	pr, err := c.GetPullRequest(ctx, repo, number)
	if err != nil {
		return err
	}
	if pr.HeadSHA != sha {
		return fmt.Errorf("%w: %s#%d was approved at %s and is now at %s; a maintainer must read the new commits and approve them (comment /bench %s)",
			ErrHeadMoved, repo.FullName(), number, sha, pr.HeadSHA, pr.HeadSHA)
	}
	return nil
}

// pushedAt returns when the repository last received a push to any ref.
func (c *Client) pushedAt(ctx context.Context, fullName string) (time.Time, error) {
	owner, name, ok := strings.Cut(fullName, "/")
	if !ok {
		return time.Time{}, fmt.Errorf("head repository %q: not owner/name", fullName)
	}
	r, _, err := c.gh.Repositories.Get(ctx, owner, name)
	if err != nil {
		return time.Time{}, fmt.Errorf("get repository %s: %w", fullName, err)
	}
	if r.PushedAt == nil {
		return time.Time{}, fmt.Errorf("repository %s: no pushed_at", fullName)
	}
	return r.GetPushedAt().Time, nil
}

// labeledAt returns when user last added label to issue or pull request n, as the issue events
// API lists it; ok is false when it lists no such event.
func (c *Client) labeledAt(ctx context.Context, repo Repo, n int, label, user string) (at time.Time, ok bool, err error) {
	opts := &github.ListOptions{PerPage: 100}
	for {
		page, resp, err := c.gh.Issues.ListIssueEvents(ctx, repo.Owner, repo.Name, n, opts)
		if err != nil {
			return time.Time{}, false, fmt.Errorf("list the events of %s#%d: %w", repo.FullName(), n, err)
		}
		for _, e := range page {
			if e.GetEvent() == "labeled" && e.GetLabel().GetName() == label && strings.EqualFold(e.GetActor().GetLogin(), user) && e.CreatedAt != nil &&
				(!ok || e.GetCreatedAt().After(at)) {
				at, ok = e.GetCreatedAt().Time, true
			}
		}
		if resp == nil || resp.NextPage == 0 {
			return at, ok, nil
		}
		opts.Page = resp.NextPage
	}
}

// pinLabel pins the head a writer labelled, as a /bench comment's is pinned: the head GitHub
// has now must be the payload's, and its repository must have received no push since the label
// was added (pushed_at strictly before the label's time), so that it is the commit the labeller
// saw. It returns why not ("" when pinned), with what to do instead.
func (c *Client) pinLabel(ctx context.Context, ev *Event, label string) (string, error) {
	pr := ev.PullRequest
	again := fmt.Sprintf("read the latest commits and comment `/bench %s` on the pull request, naming the commit you read, or remove the label `%s` and add it again", pr.HeadSHA, label)
	at, ok, err := c.labeledAt(ctx, ev.Repo, pr.Number, label, ev.Sender)
	if err != nil {
		return "", err
	}
	if !ok {
		return fmt.Sprintf("The label `%s` by %s is not among the pull request's events, so the commit it approved cannot be pinned: %s.", label, ev.Sender, again), nil
	}
	cur, err := c.GetPullRequest(ctx, ev.Repo, pr.Number)
	if err != nil {
		return "", err
	}
	if cur.HeadSHA != pr.HeadSHA {
		return fmt.Sprintf("The head of #%d moved from %s to %s after the label `%s` was added: read the new commits and comment `/bench %s` on the pull request.",
			pr.Number, pr.HeadSHA, cur.HeadSHA, label, cur.HeadSHA), nil
	}
	if cur.HeadRepo == "" {
		return fmt.Sprintf("The head repository of #%d is gone, so its head cannot be pinned and nothing of it can be measured: the author opens a new pull request from a repository that exists.", pr.Number), nil
	}
	pushed, err := c.pushedAt(ctx, cur.HeadRepo)
	if err != nil {
		return "", err
	}
	if !pushed.Before(at) {
		return fmt.Sprintf("The head of #%d may have moved after the label `%s` was added (%s received a push at %s, the label is from %s), so it is not certain that %s saw %s: %s.",
			pr.Number, label, cur.HeadRepo, pushed.UTC().Format(time.RFC3339), at.UTC().Format(time.RFC3339), ev.Sender, pr.HeadSHA, again), nil
	}
	return "", nil
}

// pinComment pins the head of a pull request for a command posted at created: its repository
// (headRepo) must have received no push since (pushed_at strictly before the comment), so that
// the head is the commit the commenter saw. It returns the time of the last push and whether
// the head is pinned.
func (c *Client) pinComment(ctx context.Context, headRepo string, created time.Time) (time.Time, bool, error) {
	pushed, err := c.pushedAt(ctx, headRepo)
	if err != nil {
		return time.Time{}, false, err
	}
	return pushed, pushed.Before(created), nil
}

// Decide applies the routing and trust rules of the package doc to an event. It asks GitHub for
// permissions, the PR and its head repository where a rule needs them; it changes nothing (see
// Respond). An error means the decision could not be made (an API failure, a payload without a
// commit id); the caller runs nothing.
func (c *Client) Decide(ctx context.Context, ev *Event, p Policy) (Decision, error) {
	nothing := func(format string, a ...any) (Decision, error) {
		return Decision{Do: DoNothing, Reason: fmt.Sprintf(format, a...)}, nil
	}
	missing := map[string]bool{
		"pull_request": ev.PullRequest == nil, "pull_request_target": ev.PullRequest == nil, "issue_comment": ev.Comment == nil, "check_run": ev.CheckRun == nil,
		"push": ev.Push == nil, "merge_group": ev.MergeGroup == nil, "workflow_dispatch": ev.Dispatch == nil,
	}
	if missing[ev.Name] {
		return Decision{}, fmt.Errorf("%s event without its payload object (parse it with ParseEvent)", ev.Name)
	}
	switch ev.Name {
	case "pull_request", "pull_request_target":
		return c.decidePullRequest(ctx, ev, p)
	case "issue_comment":
		return c.decideComment(ctx, ev)
	case "check_run":
		return c.decideCheckRun(ctx, ev, p)
	case "push":
		return decidePush(ev)
	case "merge_group":
		if ev.Action != "checks_requested" {
			return nothing("merge_group %s: only checks_requested asks for the check", ev.Action)
		}
		mg := ev.MergeGroup
		if !ValidSHA(mg.HeadSHA) {
			return Decision{}, fmt.Errorf("merge_group event: head_sha %q is not a commit id", mg.HeadSHA)
		}
		d := Decision{Do: DoRun, Kind: RunMergeGroup, HeadSHA: mg.HeadSHA, HeadRef: mg.HeadRef, BaseRef: mg.BaseRef, By: ev.Sender}
		if ValidSHA(mg.BaseSHA) {
			d.BaseSHA = mg.BaseSHA
		}
		return d, nil
	case "workflow_dispatch":
		if !ValidSHA(ev.RunSHA) {
			return Decision{}, fmt.Errorf("workflow_dispatch: the run's commit %q is not a commit id (set Event.RunSHA from GITHUB_SHA)", ev.RunSHA)
		}
		return Decision{Do: DoRun, Kind: RunDispatch, HeadSHA: ev.RunSHA, HeadRef: ev.Dispatch.Ref, By: ev.Sender, Inputs: ev.Dispatch.Inputs}, nil
	case "check_suite":
		return nothing("check_suite %s: speedmatrix reports through its own check run, not suites", ev.Action)
	}
	return nothing("event %q is not one speedmatrix handles", ev.Name)
}

func (c *Client) decidePullRequest(ctx context.Context, ev *Event, p Policy) (Decision, error) {
	pr := ev.PullRequest
	nothing := func(format string, a ...any) (Decision, error) {
		return Decision{Do: DoNothing, PR: pr.Number, Reason: fmt.Sprintf(format, a...)}, nil
	}
	labeled := ev.Action == "labeled"
	switch ev.Action {
	case "opened", "synchronize", "reopened":
	case "labeled":
		if p.TrustLabel == "" || ev.Label != p.TrustLabel {
			return nothing("pull_request labeled %q: not the label that starts a run (%q)", ev.Label, p.TrustLabel)
		}
	default:
		return nothing("pull_request %s: only opened, synchronize, reopened and labeled start a run", ev.Action)
	}
	if pr.State == "closed" {
		return nothing("pull request #%d is closed", pr.Number)
	}
	if !ValidSHA(pr.HeadSHA) {
		return Decision{}, fmt.Errorf("pull_request event: head sha %q is not a commit id", pr.HeadSHA)
	}
	d := Decision{Do: DoRun, Kind: RunPullRequest, PR: pr.Number, HeadSHA: pr.HeadSHA, HeadRef: pr.HeadRef, BaseRef: pr.BaseRef}
	if ValidSHA(pr.BaseSHA) {
		d.BaseSHA = pr.BaseSHA
	}
	if labeled {
		level, err := c.Permission(ctx, ev.Repo, ev.Sender)
		if err != nil {
			return Decision{}, err
		}
		if !canWrite(level) {
			return nothing("label %q was added by %s, whose permission is %s; only write or admin starts a run", p.TrustLabel, ev.Sender, level)
		}
		// The writer approved the head they saw when they labelled: pinned as a comment's is.
		why, err := c.pinLabel(ctx, ev, p.TrustLabel)
		if err != nil {
			return Decision{}, err
		}
		if why != "" {
			return Decision{Do: DoActionRequired, Kind: RunPullRequest, PR: pr.Number, HeadSHA: pr.HeadSHA, HeadRef: pr.HeadRef,
				BaseSHA: d.BaseSHA, BaseRef: pr.BaseRef, Reason: why}, nil
		}
		d.By = ev.Sender
		return d, nil
	}
	sameRepo := strings.EqualFold(pr.HeadRepo, ev.Repo.FullName())
	level := PermNone
	if sameRepo {
		var err error
		if level, err = c.Permission(ctx, ev.Repo, pr.Author); err != nil {
			return Decision{}, err
		}
		if canWrite(level) {
			d.By = pr.Author
			return d, nil
		}
	}
	why := fmt.Sprintf("the pull request comes from the fork %s", pr.HeadRepo)
	if sameRepo {
		why = fmt.Sprintf("its author %s has %s permission", pr.Author, level)
	}
	start := fmt.Sprintf("comment `/bench %s` on the pull request", pr.HeadSHA)
	if p.TrustLabel != "" {
		start += fmt.Sprintf(" or add the label `%s`", p.TrustLabel)
	}
	return Decision{
		Do: DoActionRequired, Kind: RunPullRequest, PR: pr.Number, HeadSHA: pr.HeadSHA, HeadRef: pr.HeadRef,
		BaseSHA: d.BaseSHA, BaseRef: pr.BaseRef,
		Reason: fmt.Sprintf("Benchmarks run code of the pull request on a GPU machine, so they start on their own only for pull requests from this repository by users with write access; %s. "+
			"A maintainer with write access who has read the changes at %s starts the run: %s. A later push needs a new approval.", why, pr.HeadSHA, start),
	}, nil
}

func (c *Client) decideComment(ctx context.Context, ev *Event) (Decision, error) {
	cm := ev.Comment
	nothing := func(format string, a ...any) (Decision, error) {
		return Decision{Do: DoNothing, Reason: fmt.Sprintf(format, a...)}, nil
	}
	if ev.Action != "created" {
		return nothing("issue_comment %s: only new comments are commands", ev.Action)
	}
	if ev.OnIssue || ev.PullRequest == nil {
		return nothing("the comment is on an issue, not a pull request")
	}
	if cm.IsBot || strings.EqualFold(cm.Author, c.identity.Login) {
		return nothing("the comment is by a bot (%s)", cm.Author)
	}
	number := ev.PullRequest.Number
	cmd, err := ParseCommand(cm.Body)
	if errors.Is(err, ErrNotCommand) {
		return nothing("the comment holds no /bench command")
	}
	base := Decision{PR: number, By: cm.Author, CommentID: cm.ID}
	var ce *CommandError
	if err != nil && !errors.As(err, &ce) {
		return Decision{}, err
	}
	// Permission first: only a writer gets a reply (which mentions them); anyone else's
	// command, well-formed or not, gets a reaction, so no user can make the bot post at will.
	level, perr := c.Permission(ctx, ev.Repo, cm.Author)
	if perr != nil {
		return Decision{}, perr
	}
	if !canWrite(level) {
		base.Do, base.Reaction = DoRefuse, "-1"
		base.Reason = fmt.Sprintf("%s, whose permission is %s, posted a /bench command; only users with write or admin permission on %s may run benchmarks (reacted, not answered)",
			cm.Author, level, ev.Repo.FullName())
		return base, nil
	}
	if ce != nil {
		base.Do, base.Reply, base.Reason = DoHelp, fmt.Sprintf("@%s %s", cm.Author, ce.Error()), ce.Problem
		return base, nil
	}
	if cmd.Kind == CommandHelp {
		base.Do, base.Reply = DoHelp, HelpText
		return base, nil
	}
	base.Command = &cmd
	refuse := func(why string) (Decision, error) {
		base.Do, base.Reason, base.Reply = DoRefuse, why, fmt.Sprintf("@%s %s", cm.Author, why)
		return base, nil
	}
	if cmd.Kind == CommandBisect {
		return refuse("`/bench bisect` bisects the default branch: post it on the change-point issue, not on a pull request.")
	}
	pr, err := c.GetPullRequest(ctx, ev.Repo, number)
	if err != nil {
		return Decision{}, err
	}
	if pr.State != "open" {
		return refuse(fmt.Sprintf("`/bench %s` was not run: pull request #%d is %s. Reopen it and post the command again.", cmd.Kind, number, pr.State))
	}
	if !ValidSHA(pr.HeadSHA) {
		return Decision{}, fmt.Errorf("pull request #%d: head sha %q is not a commit id", number, pr.HeadSHA)
	}
	name := "/bench " + string(cmd.Kind)
	if cmd.Kind == CommandRun {
		name = "/bench"
	}
	// again is the command naming the current head by its full id, which the replies suggest.
	again := CodeSpan(name+" "+pr.HeadSHA, 0)
	if cmd.Kind == CommandAccept {
		again = CodeSpan(name+" "+pr.HeadSHA+" <reason>", 0)
	}
	if cmd.SHA != "" && !strings.HasPrefix(strings.ToLower(pr.HeadSHA), cmd.SHA) {
		// The commenter named the commit they read, and it is not the head.
		return refuse(fmt.Sprintf("`%s %s` was not run: %s is not the head of #%d, which is now %s. Read the commits up to %s and post %s.",
			name, cmd.SHA, CodeSpan(cmd.SHA, 0), number, CodeSpan(pr.HeadSHA, 0), CodeSpan(pr.HeadSHA, 0), again))
	}
	if len(cmd.SHA) != len(pr.HeadSHA) {
		// The bare form, or a prefix, which a fork can match with another commit it pushes
		// after the comment: the head is pinned only if its repository received no push since.
		what := fmt.Sprintf("`%s`", name)
		if cmd.SHA != "" {
			what = fmt.Sprintf("`%s %s`", name, cmd.SHA)
		}
		if pr.HeadRepo == "" {
			return refuse(fmt.Sprintf("%s was not run: the head repository of #%d is gone, so its head cannot be pinned and nothing of it can be measured: the author opens a new pull request from a repository that exists.", what, number))
		}
		pushed, ok, err := c.pinComment(ctx, pr.HeadRepo, cm.CreatedAt)
		if err != nil {
			return Decision{}, err
		}
		if !ok {
			named := "it is not certain you saw " + CodeSpan(pr.HeadSHA, 0)
			if cmd.SHA != "" {
				named = fmt.Sprintf("the prefix %s could name another commit than the one you read (the head is now %s)", CodeSpan(cmd.SHA, 0), CodeSpan(pr.HeadSHA, 0))
			}
			return refuse(fmt.Sprintf("%s was not run: the head of #%d may have moved after your comment (%s received a push at %s, your comment is from %s), so %s. "+
				"Read the latest commits and post the command again, naming the commit you read by its full id: %s.", what, number, pr.HeadRepo,
				pushed.UTC().Format(time.RFC3339), cm.CreatedAt.UTC().Format(time.RFC3339), named, again))
		}
	}
	base.HeadSHA, base.HeadRef, base.BaseRef = pr.HeadSHA, pr.HeadRef, pr.BaseRef
	if ValidSHA(pr.BaseSHA) {
		base.BaseSHA = pr.BaseSHA
	}
	base.Do, base.Kind = DoRun, RunCommand
	if cmd.Kind == CommandAccept {
		base.Do = DoAccept
		base.Reason = cmd.Reason
	}
	return base, nil
}

// Identifiers of the check run's buttons.
const (
	ActionIDRerun  = "rerun"
	ActionIDAccept = "accept"
)

func (c *Client) decideCheckRun(ctx context.Context, ev *Event, p Policy) (Decision, error) {
	cr := ev.CheckRun
	nothing := func(format string, a ...any) (Decision, error) {
		return Decision{Do: DoNothing, Reason: fmt.Sprintf(format, a...)}, nil
	}
	if cr.Name != p.CheckName {
		return nothing("check run %q is not ours (%q)", cr.Name, p.CheckName)
	}
	var cmd *Command
	switch ev.Action {
	case "rerequested":
	case "requested_action":
		switch cr.RequestedActionID {
		case ActionIDRerun:
		case ActionIDAccept:
			cmd = &Command{Kind: CommandAccept, Reason: "accepted with the check's Accept button"}
		default:
			return nothing("check run button %q is not one of ours", cr.RequestedActionID)
		}
	default:
		return nothing("check_run %s: only rerequested and requested_action start a run", ev.Action)
	}
	if !ValidSHA(cr.HeadSHA) {
		return Decision{}, fmt.Errorf("check_run event: head sha %q is not a commit id", cr.HeadSHA)
	}
	level, err := c.Permission(ctx, ev.Repo, ev.Sender)
	if err != nil {
		return Decision{}, err
	}
	if !canWrite(level) {
		return Decision{Do: DoRefuse, Reason: fmt.Sprintf("%s, whose permission is %s, pressed a check button; only write or admin may", ev.Sender, level)}, nil
	}
	d := Decision{Do: DoRun, Kind: RunCheckRun, HeadSHA: cr.HeadSHA, By: ev.Sender, Command: cmd}
	for _, pr := range cr.PullRequests {
		if pr.HeadSHA == cr.HeadSHA || len(cr.PullRequests) == 1 {
			d.PR, d.HeadRef, d.BaseRef = pr.Number, pr.HeadRef, pr.BaseRef
			if ValidSHA(pr.BaseSHA) {
				d.BaseSHA = pr.BaseSHA
			}
			break
		}
	}
	if cmd != nil {
		d.Do, d.Reason = DoAccept, cmd.Reason
	}
	return d, nil
}

func decidePush(ev *Event) (Decision, error) {
	p := ev.Push
	nothing := func(format string, a ...any) (Decision, error) {
		return Decision{Do: DoNothing, Reason: fmt.Sprintf(format, a...)}, nil
	}
	branch, isBranch := strings.CutPrefix(p.Ref, "refs/heads/")
	switch {
	case !isBranch:
		return nothing("push to %s: not a branch", p.Ref)
	case p.Deleted || !ValidSHA(p.After):
		return nothing("push to %s deletes the branch", p.Ref)
	case ev.Repo.DefaultBranch == "":
		return Decision{}, fmt.Errorf("push event: the repository's default branch is missing")
	case branch != ev.Repo.DefaultBranch:
		return nothing("push to %s: baselines are measured on the default branch %s only", branch, ev.Repo.DefaultBranch)
	case !validRef(branch):
		return nothing("push to %q: not a usable branch name", branch)
	}
	d := Decision{Do: DoRun, Kind: RunBaseline, HeadSHA: p.After, HeadRef: branch, By: ev.Sender}
	if ValidSHA(p.Before) {
		d.BaseSHA = p.Before
	}
	return d, nil
}

// Respond does the visible part of a decision taken on a comment: an eyes reaction on a taken
// command, a reply for help and refusals. Other decisions need nothing here.
func (c *Client) Respond(ctx context.Context, repo Repo, d Decision) error {
	switch {
	case (d.Do == DoRun || d.Do == DoAccept) && d.CommentID != 0:
		return c.React(ctx, repo, d.CommentID, "eyes")
	case d.Reaction != "" && d.CommentID != 0:
		return c.React(ctx, repo, d.CommentID, d.Reaction)
	case (d.Do == DoHelp || d.Do == DoRefuse) && d.Reply != "" && d.PR != 0:
		_, err := c.Reply(ctx, repo, d.PR, d.Reply)
		return err
	}
	return nil
}

// ShortSHA returns the first 7 characters of a commit id (all of it when shorter), as commit
// ids are shown in comments, check runs and errors.
func ShortSHA(sha string) string {
	if len(sha) > 7 {
		return sha[:7]
	}
	return sha
}
