package ghbot

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/google/go-github/v66/github"
)

// Repo names a repository.
type Repo struct {
	Owner, Name string
	// DefaultBranch is the branch pushes are baselines on ("main"); empty when the event lacks it.
	DefaultBranch string
}

// FullName returns "owner/name".
func (r Repo) FullName() string { return r.Owner + "/" + r.Name }

// PullRequest is what an event tells about a pull request. Fields the event lacks are empty: an
// issue_comment event carries only the number.
type PullRequest struct {
	Number   int
	HeadSHA  string
	HeadRef  string // branch name, without refs/heads/
	HeadRepo string // owner/name of the head repository; differs from the base's for a fork
	BaseSHA  string
	BaseRef  string
	Author   string
	State    string // "open" or "closed"
}

// Comment is an issue comment.
type Comment struct {
	ID        int64
	Body      string
	Author    string
	IsBot     bool // the author's account type is Bot
	CreatedAt time.Time
}

// CheckRunEvent is what a check_run event tells.
type CheckRunEvent struct {
	ID                int64
	Name              string
	HeadSHA           string
	ExternalID        string
	AppID             int64
	RequestedActionID string // identifier of the button pressed, for requested_action
	PullRequests      []PullRequest
}

// Push is what a push event tells.
type Push struct {
	Ref     string // full ref, refs/heads/main
	Before  string
	After   string
	Created bool
	Deleted bool
}

// MergeGroup is what a merge_group event tells.
type MergeGroup struct {
	HeadSHA, HeadRef, BaseSHA, BaseRef string
}

// Dispatch is what a workflow_dispatch event tells.
type Dispatch struct {
	Ref      string
	Workflow string
	Inputs   map[string]string
}

// Event is a webhook event reduced to the fields speedmatrix routes on. Name and Action come from
// the delivery; exactly one of the pointers matching Name is set (none for events not handled).
type Event struct {
	Name   string // webhook event name: pull_request, issue_comment, …
	Action string // the payload's action, empty for push and workflow_dispatch
	Repo   Repo
	Sender string
	// InstallationID is the GitHub App installation the delivery is for; 0 outside an App.
	InstallationID int64

	PullRequest *PullRequest   // pull_request, issue_comment on a PR
	Label       string         // pull_request labeled/unlabeled: the label's name
	Comment     *Comment       // issue_comment
	OnIssue     bool           // issue_comment whose issue is not a pull request
	Issue       int            // issue_comment on an issue (OnIssue): the issue's number
	CheckRun    *CheckRunEvent // check_run
	Push        *Push          // push
	MergeGroup  *MergeGroup    // merge_group
	Dispatch    *Dispatch      // workflow_dispatch

	// RunSHA is the commit the workflow runs at (GITHUB_SHA). ParseEvent leaves it empty; the
	// caller sets it, and a workflow_dispatch run measures it.
	RunSHA string
}

// setPullRequest sets what a pull_request or pull_request_target payload tells of the pull
// request.
func (e *Event) setPullRequest(p *github.PullRequest, number int, label *github.Label) error {
	if p == nil {
		return fmt.Errorf("parse %s event: no pull_request object", e.Name)
	}
	pr := pullRequest(p)
	if pr.Number == 0 {
		pr.Number = number
	}
	e.PullRequest = &pr
	e.Label = label.GetName()
	return nil
}

// IsPullRequest reports whether the event is a pull request's own (pull_request, or
// pull_request_target, which carries the same payload but runs the default branch's workflow).
func (e *Event) IsPullRequest() bool {
	return e.Name == "pull_request" || e.Name == "pull_request_target"
}

// Handled lists the event names ParseEvent reads; others parse to an Event with only Name set.
var handled = map[string]bool{
	"pull_request": true, "pull_request_target": true, "issue_comment": true, "check_run": true, "push": true,
	"merge_group": true, "workflow_dispatch": true, "check_suite": true,
}

// ParseEvent reads a webhook payload (the file at GITHUB_EVENT_PATH) of the named event
// (GITHUB_EVENT_NAME) with go-github's ParseWebHook. Events speedmatrix does not handle yield an
// Event with only Name set, which Decide ignores; a malformed payload of a handled event is an
// error.
func ParseEvent(name string, payload []byte) (*Event, error) {
	ev := &Event{Name: name}
	if !handled[name] {
		return ev, nil
	}
	raw, err := github.ParseWebHook(name, payload)
	if err != nil {
		return nil, fmt.Errorf("parse %s event payload: %w (is GITHUB_EVENT_NAME right for GITHUB_EVENT_PATH?)", name, err)
	}
	switch e := raw.(type) {
	case *github.PullRequestEvent:
		ev.Action = e.GetAction()
		ev.setCommon(e.GetRepo(), e.GetSender(), e.GetInstallation())
		if err := ev.setPullRequest(e.PullRequest, e.GetNumber(), e.GetLabel()); err != nil {
			return nil, err
		}
	case *github.PullRequestTargetEvent:
		// The same payload as pull_request's; the workflow that runs is the default branch's.
		ev.Action = e.GetAction()
		ev.setCommon(e.GetRepo(), e.GetSender(), e.GetInstallation())
		if err := ev.setPullRequest(e.PullRequest, e.GetNumber(), e.GetLabel()); err != nil {
			return nil, err
		}
	case *github.IssueCommentEvent:
		ev.Action = e.GetAction()
		ev.setCommon(e.GetRepo(), e.GetSender(), e.GetInstallation())
		if e.Issue == nil || e.Comment == nil {
			return nil, fmt.Errorf("parse issue_comment event: no issue or comment object")
		}
		c := e.GetComment()
		ev.Comment = &Comment{
			ID:        c.GetID(),
			Body:      c.GetBody(),
			Author:    c.GetUser().GetLogin(),
			IsBot:     c.GetUser().GetType() == "Bot",
			CreatedAt: c.GetCreatedAt().Time,
		}
		if e.Issue.IsPullRequest() {
			ev.PullRequest = &PullRequest{Number: e.Issue.GetNumber(), State: e.Issue.GetState(), Author: e.Issue.GetUser().GetLogin()}
		} else {
			ev.OnIssue, ev.Issue = true, e.Issue.GetNumber()
		}
	case *github.CheckRunEvent:
		ev.Action = e.GetAction()
		ev.setCommon(e.GetRepo(), e.GetSender(), e.GetInstallation())
		cr := e.GetCheckRun()
		ev.CheckRun = &CheckRunEvent{
			ID:         cr.GetID(),
			Name:       cr.GetName(),
			HeadSHA:    cr.GetHeadSHA(),
			ExternalID: cr.GetExternalID(),
			AppID:      cr.GetApp().GetID(),
		}
		if e.RequestedAction != nil {
			ev.CheckRun.RequestedActionID = e.RequestedAction.Identifier
		}
		for _, p := range cr.PullRequests {
			ev.CheckRun.PullRequests = append(ev.CheckRun.PullRequests, pullRequest(p))
		}
	case *github.CheckSuiteEvent:
		ev.Action = e.GetAction()
		ev.setCommon(e.GetRepo(), e.GetSender(), e.GetInstallation())
	case *github.PushEvent:
		r := e.GetRepo()
		ev.Repo = Repo{Owner: r.GetOwner().GetLogin(), Name: r.GetName(), DefaultBranch: r.GetDefaultBranch()}
		if ev.Repo.Owner == "" {
			ev.Repo.Owner = r.GetOwner().GetName() // push payloads name the owner with "name"
		}
		if ev.Repo.DefaultBranch == "" {
			ev.Repo.DefaultBranch = r.GetMasterBranch()
		}
		ev.Sender = e.GetSender().GetLogin()
		ev.InstallationID = e.GetInstallation().GetID()
		ev.Push = &Push{Ref: e.GetRef(), Before: e.GetBefore(), After: e.GetAfter(), Created: e.GetCreated(), Deleted: e.GetDeleted()}
	case *github.MergeGroupEvent:
		ev.Action = e.GetAction()
		ev.setCommon(e.GetRepo(), e.GetSender(), e.GetInstallation())
		mg := e.GetMergeGroup()
		ev.MergeGroup = &MergeGroup{HeadSHA: mg.GetHeadSHA(), HeadRef: mg.GetHeadRef(), BaseSHA: mg.GetBaseSHA(), BaseRef: mg.GetBaseRef()}
	case *github.WorkflowDispatchEvent:
		ev.setCommon(e.GetRepo(), e.GetSender(), e.GetInstallation())
		inputs, err := dispatchInputs(e.Inputs)
		if err != nil {
			return nil, fmt.Errorf("parse workflow_dispatch inputs: %w", err)
		}
		ev.Dispatch = &Dispatch{Ref: e.GetRef(), Workflow: e.GetWorkflow(), Inputs: inputs}
	default:
		return nil, fmt.Errorf("parse %s event: unexpected payload type %T", name, raw)
	}
	return ev, nil
}

func (ev *Event) setCommon(r *github.Repository, sender *github.User, inst *github.Installation) {
	ev.Repo = Repo{Owner: r.GetOwner().GetLogin(), Name: r.GetName(), DefaultBranch: r.GetDefaultBranch()}
	ev.Sender = sender.GetLogin()
	ev.InstallationID = inst.GetID()
}

func pullRequest(p *github.PullRequest) PullRequest {
	return PullRequest{
		Number:   p.GetNumber(),
		HeadSHA:  p.GetHead().GetSHA(),
		HeadRef:  p.GetHead().GetRef(),
		HeadRepo: p.GetHead().GetRepo().GetFullName(),
		BaseSHA:  p.GetBase().GetSHA(),
		BaseRef:  p.GetBase().GetRef(),
		Author:   p.GetUser().GetLogin(),
		State:    p.GetState(),
	}
}

// dispatchInputs renders the inputs object's values as strings (booleans and numbers as JSON).
func dispatchInputs(raw json.RawMessage) (map[string]string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		var s string
		if err := json.Unmarshal(v, &s); err == nil {
			out[k] = s
			continue
		}
		out[k] = string(v)
	}
	return out, nil
}

// InputNames returns the dispatch inputs' names in order.
func (d *Dispatch) InputNames() []string {
	names := make([]string, 0, len(d.Inputs))
	for k := range d.Inputs {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

var shaRE = regexp.MustCompile(`^(?:[0-9a-f]{40}|[0-9a-f]{64})$`)

// ValidSHA reports whether s is a full commit id (SHA-1 or SHA-256, lower-case hex) other than
// the all-zero id GitHub uses for "no commit". Only such ids ever reach a Decision to run, so
// nothing else from a payload can reach git or a shell.
func ValidSHA(s string) bool {
	return shaRE.MatchString(s) && strings.Trim(s, "0") != ""
}

// validRef reports whether s is a branch name or full ref that is safe to pass on: git's
// check-ref-format rules, loosely, and no leading "-".
func validRef(s string) bool {
	if s == "" || len(s) > 255 || strings.HasPrefix(s, "-") || strings.HasPrefix(s, "/") ||
		strings.HasSuffix(s, "/") || strings.HasSuffix(s, ".lock") || strings.HasSuffix(s, ".") ||
		strings.Contains(s, "..") || strings.Contains(s, "//") || strings.Contains(s, "@{") {
		return false
	}
	for _, r := range s {
		if r <= ' ' || r == 0x7f || strings.ContainsRune("~^:?*[\\", r) {
			return false
		}
	}
	return true
}
