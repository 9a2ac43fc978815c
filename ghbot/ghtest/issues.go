package ghtest

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-github/v66/github"
)

// Issue is an issue of the fake (not a pull request; pull requests live in Pull).
type Issue struct {
	Number    int
	Repo      string
	Title     string
	Body      string
	User      string
	State     string // "open" or "closed"
	Labels    []string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Issues returns the issues of repo, oldest first.
func (s *Server) Issues(repo string) []Issue {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Issue
	for _, i := range s.issues {
		if i.Repo == repo {
			ii := *i
			ii.Labels = slices.Clone(i.Labels)
			out = append(out, ii)
		}
	}
	return out
}

// AddIssue adds an issue as user wrote it (a user, or another workflow's bot, rather than
// the client under test), numbered after the repository's issues and pull requests; it returns
// the number.
func (s *Server) AddIssue(i Issue) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 1
	for _, o := range s.issues {
		if o.Repo == i.Repo && o.Number >= n {
			n = o.Number + 1
		}
	}
	for _, p := range s.pulls {
		if p.Repo == i.Repo && p.Number >= n {
			n = p.Number + 1
		}
	}
	if i.State == "" {
		i.State = "open"
	}
	if i.CreatedAt.IsZero() {
		i.CreatedAt = s.now()
	}
	if i.UpdatedAt.IsZero() {
		i.UpdatedAt = i.CreatedAt
	}
	i.Number = n
	i.Labels = slices.Clone(i.Labels)
	s.issues = append(s.issues, &i)
	return n
}

// LabelEvent is a label added to an issue or pull request, as the issue events API lists it.
type LabelEvent struct {
	Repo   string
	Number int
	Label  string
	Actor  string
	At     time.Time
}

// AddLabelEvent records that actor added label to issue or pull request number of repo at at.
func (s *Server) AddLabelEvent(e LabelEvent) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.labelEvents = append(s.labelEvents, e)
}

// routeIssues handles listing (state, labels; paginated), creating and editing issues; it
// reports whether the path was one of them.
func (h *handler) routeIssues(m string, seg []string) bool {
	if len(seg) < 4 || seg[0] != "repos" || seg[3] != "issues" {
		return false
	}
	repo := seg[1] + "/" + seg[2]
	switch {
	case m == "GET" && len(seg) == 4:
		h.listIssues(repo)
	case m == "POST" && len(seg) == 4:
		h.createIssue(repo)
	case m == "GET" && len(seg) == 6 && seg[5] == "events":
		n, _ := strconv.Atoi(seg[4])
		out := []*github.IssueEvent{}
		for _, e := range h.s.labelEvents {
			if e.Repo == repo && e.Number == n {
				out = append(out, &github.IssueEvent{Event: github.String("labeled"), Actor: &github.User{Login: github.String(e.Actor)},
					Label: &github.Label{Name: github.String(e.Label)}, CreatedAt: &github.Timestamp{Time: e.At}})
			}
		}
		h.json(200, out)
	case m == "PATCH" && len(seg) == 5:
		n, _ := strconv.Atoi(seg[4])
		for _, i := range h.s.issues {
			if i.Repo == repo && i.Number == n {
				h.editIssue(i)
				return true
			}
		}
		writeError(h.w, http.StatusNotFound, "Not Found")
	default:
		return false
	}
	return true
}

func (h *handler) listIssues(repo string) {
	q := h.r.URL.Query()
	state := q.Get("state")
	if state == "" {
		state = "open"
	}
	var want []string
	if l := q.Get("labels"); l != "" {
		want = strings.Split(l, ",")
	}
	var all []*Issue
	for _, i := range h.s.issues {
		if i.Repo != repo || (state != "all" && i.State != state) {
			continue
		}
		ok := true
		for _, l := range want {
			ok = ok && slices.Contains(i.Labels, l)
		}
		if ok {
			all = append(all, i)
		}
	}
	slices.Reverse(all) // newest first, as GitHub lists by default
	lo, hi := h.page(len(all))
	out := []*github.Issue{}
	for _, i := range all[lo:hi] {
		out = append(out, h.issueJSON(i))
	}
	h.json(200, out)
}

type issueRequest struct {
	Title  *string   `json:"title"`
	Body   *string   `json:"body"`
	State  *string   `json:"state"`
	Labels *[]string `json:"labels"`
}

func (h *handler) issueRequest() (issueRequest, bool) {
	var in issueRequest
	if err := json.Unmarshal(h.body, &in); err != nil {
		writeError(h.w, http.StatusBadRequest, "Problems parsing JSON")
		return in, false
	}
	if in.Body != nil && len([]rune(*in.Body)) > MaxCommentChars {
		writeError(h.w, http.StatusUnprocessableEntity, "Validation Failed: body is too long (maximum is 65536 characters)")
		return in, false
	}
	return in, true
}

func (h *handler) createIssue(repo string) {
	if _, ok := h.s.repos[repo]; !ok {
		writeError(h.w, http.StatusNotFound, "Not Found")
		return
	}
	in, ok := h.issueRequest()
	if !ok {
		return
	}
	if in.Title == nil || *in.Title == "" {
		writeError(h.w, http.StatusUnprocessableEntity, "Validation Failed: title is required")
		return
	}
	now := h.s.now()
	n := 1
	for _, i := range h.s.issues {
		if i.Repo == repo && i.Number >= n {
			n = i.Number + 1
		}
	}
	for _, p := range h.s.pulls {
		if p.Repo == repo && p.Number >= n {
			n = p.Number + 1
		}
	}
	i := &Issue{Number: n, Repo: repo, Title: *in.Title, User: h.who.login, State: "open", CreatedAt: now, UpdatedAt: now}
	if in.Body != nil {
		i.Body = *in.Body
	}
	if in.Labels != nil {
		i.Labels = slices.Clone(*in.Labels)
	}
	h.s.issues = append(h.s.issues, i)
	h.json(http.StatusCreated, h.issueJSON(i))
}

func (h *handler) editIssue(i *Issue) {
	in, ok := h.issueRequest()
	if !ok {
		return
	}
	if in.Title != nil {
		i.Title = *in.Title
	}
	if in.Body != nil {
		i.Body = *in.Body
	}
	if in.State != nil {
		i.State = *in.State
	}
	if in.Labels != nil {
		i.Labels = slices.Clone(*in.Labels)
	}
	i.UpdatedAt = h.s.now()
	h.json(200, h.issueJSON(i))
}

func (h *handler) issueJSON(i *Issue) *github.Issue {
	out := &github.Issue{
		Number: github.Int(i.Number), Title: github.String(i.Title), Body: github.String(i.Body),
		State: github.String(i.State), User: &github.User{Login: github.String(i.User)},
		CreatedAt: &github.Timestamp{Time: i.CreatedAt}, UpdatedAt: &github.Timestamp{Time: i.UpdatedAt},
		HTMLURL: github.String("https://github.com/" + i.Repo + "/issues/" + strconv.Itoa(i.Number)),
	}
	for _, l := range i.Labels {
		out.Labels = append(out.Labels, &github.Label{Name: github.String(l)})
	}
	return out
}
