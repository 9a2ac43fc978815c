package ghtest

import (
	"bytes"
	"crypto/rsa"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/golang-jwt/jwt/v4"
	"github.com/google/go-github/v66/github"
)

// ActionsLogin is the login of GITHUB_TOKEN's comments; ActionsAppID the GitHub Actions App,
// which owns check runs made with GITHUB_TOKEN.
const (
	ActionsLogin = "github-actions[bot]"
	ActionsAppID = 15368
)

// Repo is a repository.
type Repo struct {
	Owner, Name   string
	DefaultBranch string
	// PushedAt is the time of the last push to any ref.
	PushedAt time.Time
}

// FullName returns "owner/name".
func (r Repo) FullName() string { return r.Owner + "/" + r.Name }

// Pull is a pull request.
type Pull struct {
	Repo     string // owner/name of the base repository
	Number   int
	State    string // "open" (default) or "closed"
	Author   string
	HeadSHA  string
	HeadRef  string
	HeadRepo string // owner/name; default Repo
	BaseSHA  string
	BaseRef  string
	// MergeCommitSHA is the commit the pull request's merge made on the base branch (its
	// squash or merge commit), which GET /repos/{o}/{r}/commits/{sha}/pulls finds it by.
	MergeCommitSHA string
}

// Comment is an issue or PR comment.
type Comment struct {
	ID        int64
	Repo      string
	Issue     int
	User      string
	Body      string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Reaction is a reaction to a comment.
type Reaction struct {
	ID        int64
	Repo      string
	CommentID int64
	User      string
	Content   string
}

// CheckRun is a check run.
type CheckRun struct {
	ID          int64
	Repo        string
	HeadSHA     string
	Name        string
	Status      string
	Conclusion  string
	ExternalID  string
	DetailsURL  string
	AppID       int64
	Title       string
	Summary     string
	Text        string
	Actions     []github.CheckRunAction
	StartedAt   time.Time
	CompletedAt time.Time
}

// Call is one request the server received.
type Call struct {
	Method string
	Path   string // as received, with the /api/v3 prefix of Enterprise
	Query  string
	Body   string
	Login  string // who the credentials belong to; "" when refused
	Status int    // what the server answered
}

// State is a snapshot of what the fake GitHub holds.
type State struct {
	Comments  []Comment
	Reactions []Reaction
	CheckRuns []CheckRun
	Calls     []Call
	// Tokens are the installation tokens minted, in order, with what each request asked for.
	Tokens []Token
	// Dispatches are the workflow_dispatch events asked for, in order (actions.go).
	Dispatches []Dispatch
	// Issues are the issues (not pull requests), oldest first.
	Issues []Issue
	// Releases are the releases, oldest first, with their assets' metadata (releases.go).
	Releases []Release
}

// CommentsOn returns the comments on one issue or PR, oldest first.
func (s State) CommentsOn(repo string, issue int) []Comment {
	var out []Comment
	for _, c := range s.Comments {
		if c.Repo == repo && c.Issue == issue {
			out = append(out, c)
		}
	}
	return out
}

// ChecksOn returns the check runs on one commit, by id.
func (s State) ChecksOn(repo, sha string) []CheckRun {
	var out []CheckRun
	for _, c := range s.CheckRuns {
		if c.Repo == repo && c.HeadSHA == sha {
			out = append(out, c)
		}
	}
	return out
}

// CallsTo returns the calls of a method whose path (without the Enterprise prefix) has prefix.
func (s State) CallsTo(method, prefix string) []Call {
	var out []Call
	for _, c := range s.Calls {
		if c.Method == method && strings.HasPrefix(strings.TrimPrefix(c.Path, "/api/v3"), prefix) {
			out = append(out, c)
		}
	}
	return out
}

// App is a GitHub App: requests signed with its key (a JWT) reach /app endpoints; tokens it
// mints for InstallationID act as "<Slug>[bot]".
type App struct {
	ID             int64
	Slug           string
	InstallationID int64
	PublicKey      *rsa.PublicKey
}

// Fault is an error answered instead of the real response, for the next Times requests (default
// 1) matching Method ("" any) and a path prefix (without the Enterprise prefix; "" any), or with
// Exact the path itself (GET /repos/o/r/commits, the listing, and not /commits/{ref}/check-runs).
type Fault struct {
	Method, Path string
	Exact        bool
	// Hang answers nothing: the request waits until the client gives up on it (its context
	// ends, a timeout), as a GitHub that never answers.
	Hang   bool
	Status int
	Header http.Header
	Body   string
	Times  int
}

// Server is the fake GitHub API.
type Server struct {
	// URL is the server's base URL; give it to the client as the API URL (for Enterprise, as
	// GHES's host: go-github adds /api/v3).
	URL string

	srv    *httptest.Server
	prefix string
	now    func() time.Time

	mu        sync.Mutex
	tokens    map[string]principal
	apps      []App
	repos     map[string]Repo
	pulls     map[string]*Pull // "owner/name#n"
	perms     map[string]string
	comments  []*Comment
	reactions []*Reaction
	checks    []*CheckRun
	calls     []Call
	faults    []*Fault
	nextID    int64
	minted    int
	tokenLog  []Token
	gitRepos  map[string]*gitRepo
	gitHook   func(method, path string)
	issues    []*Issue
	// labelEvents are the labeled events of issues and pull requests (issues.go).
	labelEvents []LabelEvent
	// dispatches are the workflow_dispatch events asked for (actions.go).
	dispatches []Dispatch
	// releases are the repositories' releases, oldest first (releases.go).
	releases []*Release
}

type principal struct {
	login string
	appID int64
	// repos, when set, are the only repositories (names, without the owner) the token reaches,
	// as an installation token minted with "repositories" does.
	repos []string
}

// Token is an installation token the fake minted, with the narrowing its request asked for
// (the body of POST /app/installations/{id}/access_tokens).
type Token struct {
	Token          string
	InstallationID int64
	Repositories   []string
	Permissions    map[string]string
}

// Option configures New.
type Option func(*Server)

// Enterprise serves the API under /api/v3 only, as GitHub Enterprise Server does.
func Enterprise() Option { return func(s *Server) { s.prefix = "/api/v3" } }

// WithClock sets the server's clock (comment, push and check times; installation tokens expire
// an hour after the real time).
func WithClock(now func() time.Time) Option { return func(s *Server) { s.now = now } }

// New starts a fake GitHub API, closed when the test ends.
func New(t testing.TB, opts ...Option) *Server {
	s := NewHandler(opts...)
	s.srv = httptest.NewServer(s)
	s.URL = s.srv.URL
	t.Cleanup(s.srv.Close)
	return s
}

// NewHandler returns a fake GitHub API that listens nowhere: serve it with ServeHTTP behind a
// listener of the caller's (the ghfake command serves it as a process). URL and Transport are
// for New's servers only.
func NewHandler(opts ...Option) *Server {
	s := &Server{
		now:    time.Now,
		tokens: map[string]principal{},
		repos:  map[string]Repo{},
		pulls:  map[string]*Pull{},
		perms:  map[string]string{},
		nextID: 1000,
	}
	for _, o := range opts {
		o(s)
	}
	return s
}

// ServeHTTP answers one request of the API.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.serve(w, r) }

// Transport returns a transport that sends every request, whatever its host, to the server:
// a client for github.com (https://api.github.com) then reaches the fake with github.com's
// paths. A client given s.URL as an Enterprise URL instead talks to /api/v3 (use Enterprise()).
func (s *Server) Transport() http.RoundTripper {
	target, _ := url.Parse(s.URL)
	return redirect{host: target.Host, next: s.srv.Client().Transport}
}

type redirect struct {
	host string
	next http.RoundTripper
}

func (r redirect) RoundTrip(req *http.Request) (*http.Response, error) {
	out := req.Clone(req.Context())
	out.URL.Scheme, out.URL.Host, out.Host = "http", r.host, r.host
	return r.next.RoundTrip(out)
}

// Handler returns the server's API handler, to serve it elsewhere than at s.URL: a test that
// runs its client in a testing/synctest bubble serves it there over an in-memory network, at
// s.URL's address, so that the client's waits on the fake are the bubble's own.
func (s *Server) Handler() http.Handler { return http.HandlerFunc(s.serve) }

// AddToken makes token act as login (ActionsLogin for a GITHUB_TOKEN).
func (s *Server) AddToken(token, login string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tokens[token] = principal{login: login, appID: ActionsAppID}
}

// AddApp registers a GitHub App.
func (s *Server) AddApp(a App) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.apps = append(s.apps, a)
}

// AddRepo adds or replaces a repository.
func (s *Server) AddRepo(r Repo) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r.DefaultBranch == "" {
		r.DefaultBranch = "main"
	}
	s.repos[r.FullName()] = r
}

// AddPull adds or replaces a pull request.
func (s *Server) AddPull(p Pull) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p.State == "" {
		p.State = "open"
	}
	if p.HeadRepo == "" {
		p.HeadRepo = p.Repo
	}
	s.pulls[fmt.Sprintf("%s#%d", p.Repo, p.Number)] = &p
}

// MovePullHead pushes sha to a PR's head: the head changes and its repository's pushed_at
// becomes now.
func (s *Server) MovePullHead(repo string, number int, sha string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.pulls[fmt.Sprintf("%s#%d", repo, number)]
	if p == nil {
		panic(fmt.Sprintf("ghtest: no pull request %s#%d", repo, number))
	}
	p.HeadSHA = sha
	if r, ok := s.repos[p.HeadRepo]; ok {
		r.PushedAt = s.now()
		s.repos[p.HeadRepo] = r
	}
}

// SetPermission sets user's permission on repo (admin, write, read, none). Users not set have
// read, as on a public repository.
func (s *Server) SetPermission(repo, user, level string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.perms[repo+"@"+strings.ToLower(user)] = level
}

// AddComment seeds a comment and returns its id.
func (s *Server) AddComment(repo string, issue int, user, body string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	s.nextID++
	s.comments = append(s.comments, &Comment{ID: s.nextID, Repo: repo, Issue: issue, User: user, Body: body, CreatedAt: now, UpdatedAt: now})
	return s.nextID
}

// PutComment seeds a comment as given (e.g. with the id and time of an event payload's comment);
// a zero ID gets a fresh one, a zero CreatedAt now. It returns the id.
func (s *Server) PutComment(c Comment) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c.ID == 0 {
		s.nextID++
		c.ID = s.nextID
	}
	if c.CreatedAt.IsZero() {
		c.CreatedAt = s.now()
	}
	if c.UpdatedAt.IsZero() {
		c.UpdatedAt = c.CreatedAt
	}
	s.comments = append(s.comments, &c)
	return c.ID
}

// AddCheckRun seeds a check run (e.g. one left in_progress) and returns its id.
func (s *Server) AddCheckRun(c CheckRun) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextID++
	c.ID = s.nextID
	if c.Status == "" {
		c.Status = "queued"
	}
	s.checks = append(s.checks, &c)
	return c.ID
}

// Fail queues a fault.
func (s *Server) Fail(f Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if f.Times == 0 {
		f.Times = 1
	}
	s.faults = append(s.faults, &f)
}

// State returns a copy of what the server holds and the calls it received.
func (s *Server) State() State {
	s.mu.Lock()
	defer s.mu.Unlock()
	var st State
	for _, c := range s.comments {
		st.Comments = append(st.Comments, *c)
	}
	for _, r := range s.reactions {
		st.Reactions = append(st.Reactions, *r)
	}
	for _, c := range s.checks {
		cc := *c
		cc.Actions = append([]github.CheckRunAction(nil), c.Actions...)
		st.CheckRuns = append(st.CheckRuns, cc)
	}
	st.Calls = append(st.Calls, s.calls...)
	for _, t := range s.tokenLog {
		t.Repositories = append([]string(nil), t.Repositories...)
		st.Tokens = append(st.Tokens, t)
	}
	for _, d := range s.dispatches {
		d.Inputs = maps.Clone(d.Inputs)
		st.Dispatches = append(st.Dispatches, d)
	}
	for _, i := range s.issues {
		ii := *i
		ii.Labels = slices.Clone(i.Labels)
		st.Issues = append(st.Issues, ii)
	}
	for _, r := range s.releases {
		rr := *r
		rr.Assets = nil
		for _, a := range r.Assets {
			a.data = nil
			rr.Assets = append(rr.Assets, a)
		}
		st.Releases = append(st.Releases, rr)
	}
	return st
}

// recorder keeps the status a handler wrote.
type recorder struct {
	http.ResponseWriter
	status int
}

func (r *recorder) WriteHeader(code int) {
	r.status = code
	r.ResponseWriter.WriteHeader(code)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	rec := &recorder{ResponseWriter: w, status: http.StatusOK}
	call := Call{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Body: string(body)}
	defer func() {
		call.Status = rec.status
		s.mu.Lock()
		s.calls = append(s.calls, call)
		s.mu.Unlock()
	}()

	path, ok := strings.CutPrefix(r.URL.Path, s.prefix)
	upload := false
	if up, isUp := strings.CutPrefix(r.URL.Path, uploadsPrefix+"/"); isUp {
		// The uploads API (a release's assets): its bodies are files, recorded by size only.
		path, ok, upload = "/"+up, true, true
		call.Body = fmt.Sprintf("(%d bytes)", len(body))
	}
	if !ok || (s.prefix == "" && strings.HasPrefix(path, "/api/v3/")) {
		writeError(rec, http.StatusNotFound, "Not Found")
		return
	}
	if f := s.takeFault(r.Method, path); f != nil {
		if f.Hang {
			<-r.Context().Done()
			rec.status = 0 // no answer
			return
		}
		for k, v := range f.Header {
			rec.Header()[k] = v
		}
		if f.Body == "" {
			f.Body = `{"message":"injected fault"}`
		}
		rec.Header().Set("Content-Type", "application/json")
		rec.WriteHeader(f.Status)
		io.WriteString(rec, f.Body)
		return
	}
	who, err := s.authenticate(r, path)
	if err != nil {
		writeError(rec, http.StatusUnauthorized, err.Error())
		return
	}
	call.Login = who.login
	if seg := strings.Split(strings.Trim(path, "/"), "/"); len(who.repos) > 0 && len(seg) >= 3 && seg[0] == "repos" && !slices.Contains(who.repos, seg[2]) {
		// A token narrowed to some repositories reaches no other.
		writeError(rec, http.StatusForbidden, "Resource not accessible by integration")
		return
	}
	h := &handler{s: s, w: rec, r: r, body: body, who: who, base: "http://" + r.Host + s.prefix, upload: upload}
	s.beforeGit(r.Method, path)
	h.route(path)
}

func (s *Server) takeFault(method, path string) *Fault {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, f := range s.faults {
		if (f.Method == "" || f.Method == method) && (strings.HasPrefix(path, f.Path) && !f.Exact || path == f.Path) {
			f.Times--
			if f.Times <= 0 {
				s.faults = append(s.faults[:i], s.faults[i+1:]...)
			}
			return f
		}
	}
	return nil
}

// authenticate checks the credentials: an App JWT for /app routes, a token elsewhere.
func (s *Server) authenticate(r *http.Request, path string) (principal, error) {
	auth := r.Header.Get("Authorization")
	_, cred, ok := strings.Cut(auth, " ")
	if !ok || cred == "" {
		return principal{}, fmt.Errorf("Requires authentication")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if strings.HasPrefix(path, "/app") {
		for _, a := range s.apps {
			tok, err := jwt.ParseWithClaims(cred, &jwt.RegisteredClaims{}, func(t *jwt.Token) (any, error) {
				if _, ok := t.Method.(*jwt.SigningMethodRSA); !ok {
					return nil, fmt.Errorf("unexpected signing method %v", t.Header["alg"])
				}
				return a.PublicKey, nil
			})
			if err == nil && tok.Valid && tok.Claims.(*jwt.RegisteredClaims).Issuer == strconv.FormatInt(a.ID, 10) {
				return principal{login: a.Slug + "[bot]", appID: a.ID}, nil
			}
		}
		return principal{}, fmt.Errorf("A JSON web token could not be decoded")
	}
	p, ok := s.tokens[cred]
	if !ok {
		return principal{}, fmt.Errorf("Bad credentials")
	}
	return p, nil
}

type handler struct {
	s    *Server
	w    http.ResponseWriter
	r    *http.Request
	body []byte
	who  principal
	base string
	// upload is a request on the uploads API (uploadsPrefix), which serves only release assets.
	upload bool
}

func writeError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]string{"message": msg, "documentation_url": "https://docs.github.com/rest"})
}

func (h *handler) json(status int, v any) {
	h.w.Header().Set("Content-Type", "application/json")
	h.w.WriteHeader(status)
	json.NewEncoder(h.w).Encode(v)
}

func (h *handler) route(path string) {
	seg := strings.Split(strings.Trim(path, "/"), "/")
	m := h.r.Method
	match := func(method string, pattern ...string) bool {
		if m != method || len(seg) != len(pattern) {
			return false
		}
		for i, p := range pattern {
			if p != "*" && p != seg[i] {
				return false
			}
		}
		return true
	}
	h.s.mu.Lock()
	defer h.s.mu.Unlock()
	if h.upload {
		if !h.routeReleases(m, seg, true) {
			writeError(h.w, http.StatusNotFound, "Not Found")
		}
		return
	}
	switch {
	case match("GET", "app"):
		h.getApp()
	case match("POST", "app", "installations", "*", "access_tokens"):
		h.mintToken(seg[2])
	case match("GET", "repos", "*", "*"):
		h.getRepo(seg[1] + "/" + seg[2])
	case match("GET", "repos", "*", "*", "pulls", "*"):
		h.getPull(seg[1]+"/"+seg[2], seg[4])
	case match("GET", "repos", "*", "*", "collaborators", "*", "permission"):
		h.getPermission(seg[1]+"/"+seg[2], seg[4])
	case match("GET", "repos", "*", "*", "issues", "*", "comments"):
		h.listComments(seg[1]+"/"+seg[2], seg[4])
	case match("POST", "repos", "*", "*", "issues", "*", "comments"):
		h.createComment(seg[1]+"/"+seg[2], seg[4])
	case match("GET", "repos", "*", "*", "issues", "comments", "*"):
		h.withComment(seg[1]+"/"+seg[2], seg[5], func(c *Comment) { h.json(200, h.commentJSON(c)) })
	case match("PATCH", "repos", "*", "*", "issues", "comments", "*"):
		h.withComment(seg[1]+"/"+seg[2], seg[5], h.editComment)
	case match("DELETE", "repos", "*", "*", "issues", "comments", "*"):
		h.withComment(seg[1]+"/"+seg[2], seg[5], h.deleteComment)
	case match("POST", "repos", "*", "*", "issues", "comments", "*", "reactions"):
		h.withComment(seg[1]+"/"+seg[2], seg[5], h.react)
	case match("GET", "repos", "*", "*", "commits", "*", "check-runs"):
		h.listChecks(seg[1]+"/"+seg[2], seg[4])
	case match("POST", "repos", "*", "*", "check-runs"):
		h.createCheck(seg[1] + "/" + seg[2])
	case match("GET", "repos", "*", "*", "check-runs", "*"):
		h.withCheck(seg[1]+"/"+seg[2], seg[4], func(c *CheckRun) { h.json(200, h.checkJSON(c)) })
	case match("PATCH", "repos", "*", "*", "check-runs", "*"):
		h.withCheck(seg[1]+"/"+seg[2], seg[4], h.updateCheck)
	case match("GET", "repos", "*", "*", "commits", "*", "pulls"):
		h.commitPulls(seg[1]+"/"+seg[2], seg[4])
	case match("POST", "repos", "*", "*", "actions", "workflows", "*", "dispatches"):
		h.createDispatch(seg[1]+"/"+seg[2], seg[5]) // actions.go
	case h.routeIssues(m, seg):
	case h.routeReleases(m, seg, false):
	case h.routeGit(seg):
	default:
		writeError(h.w, http.StatusNotFound, "Not Found")
	}
}

func (h *handler) getApp() {
	for _, a := range h.s.apps {
		if a.ID == h.who.appID {
			h.json(200, github.App{ID: github.Int64(a.ID), Slug: github.String(a.Slug), Name: github.String(a.Slug)})
			return
		}
	}
	writeError(h.w, http.StatusNotFound, "Not Found")
}

func (h *handler) mintToken(inst string) {
	id, _ := strconv.ParseInt(inst, 10, 64)
	for _, a := range h.s.apps {
		if a.ID == h.who.appID && a.InstallationID == id {
			var req struct {
				Repositories []string          `json:"repositories"`
				Permissions  map[string]string `json:"permissions"`
			}
			if len(h.body) > 0 {
				if err := json.Unmarshal(h.body, &req); err != nil {
					writeError(h.w, http.StatusUnprocessableEntity, "Invalid request: "+err.Error())
					return
				}
			}
			h.s.minted++
			tok := fmt.Sprintf("ghs_fake%d_%d", a.ID, h.s.minted)
			h.s.tokens[tok] = principal{login: a.Slug + "[bot]", appID: a.ID, repos: req.Repositories}
			h.s.tokenLog = append(h.s.tokenLog, Token{Token: tok, InstallationID: id, Repositories: req.Repositories, Permissions: req.Permissions})
			// Real time: ghinstallation judges expiry by time.Now, whatever the test's clock.
			h.json(http.StatusCreated, map[string]any{"token": tok, "expires_at": time.Now().Add(time.Hour).UTC().Format(time.RFC3339)})
			return
		}
	}
	writeError(h.w, http.StatusNotFound, "Not Found")
}

func (h *handler) repoJSON(r Repo) *github.Repository {
	gr := &github.Repository{
		Name: github.String(r.Name), FullName: github.String(r.FullName()),
		Owner: &github.User{Login: github.String(r.Owner)}, DefaultBranch: github.String(r.DefaultBranch),
	}
	if !r.PushedAt.IsZero() {
		gr.PushedAt = &github.Timestamp{Time: r.PushedAt}
	}
	return gr
}

func (h *handler) getRepo(full string) {
	r, ok := h.s.repos[full]
	if !ok {
		writeError(h.w, http.StatusNotFound, "Not Found")
		return
	}
	h.json(200, h.repoJSON(r))
}

func (h *handler) getPull(repo, num string) {
	p := h.s.pulls[repo+"#"+num]
	if p == nil {
		writeError(h.w, http.StatusNotFound, "Not Found")
		return
	}
	headRepo := h.s.repos[p.HeadRepo]
	if headRepo.Name == "" {
		owner, name, _ := strings.Cut(p.HeadRepo, "/")
		headRepo = Repo{Owner: owner, Name: name}
	}
	baseRepo := h.s.repos[p.Repo]
	h.json(200, github.PullRequest{
		Number: github.Int(p.Number), State: github.String(p.State), User: &github.User{Login: github.String(p.Author)},
		HTMLURL: github.String(fmt.Sprintf("https://github.com/%s/pull/%d", p.Repo, p.Number)),
		Head:    &github.PullRequestBranch{SHA: github.String(p.HeadSHA), Ref: github.String(p.HeadRef), Repo: h.repoJSON(headRepo)},
		Base:    &github.PullRequestBranch{SHA: github.String(p.BaseSHA), Ref: github.String(p.BaseRef), Repo: h.repoJSON(baseRepo)},
	})
}

// commitPulls answers GET /repos/{o}/{r}/commits/{sha}/pulls: the repository's pull requests
// whose merge commit or head is sha, by number.
func (h *handler) commitPulls(repo, sha string) {
	if _, ok := h.s.repos[repo]; !ok {
		writeError(h.w, http.StatusNotFound, "Not Found")
		return
	}
	var out []*github.PullRequest
	for _, p := range h.s.pulls {
		if p.Repo != repo || (p.MergeCommitSHA != sha && p.HeadSHA != sha) {
			continue
		}
		pr := &github.PullRequest{Number: github.Int(p.Number), State: github.String(p.State), User: &github.User{Login: github.String(p.Author)},
			HTMLURL: github.String(fmt.Sprintf("https://github.com/%s/pull/%d", p.Repo, p.Number)),
			Head:    &github.PullRequestBranch{SHA: github.String(p.HeadSHA), Ref: github.String(p.HeadRef)},
			Base:    &github.PullRequestBranch{SHA: github.String(p.BaseSHA), Ref: github.String(p.BaseRef)}}
		if p.MergeCommitSHA != "" {
			pr.MergeCommitSHA = github.String(p.MergeCommitSHA)
		}
		out = append(out, pr)
	}
	slices.SortFunc(out, func(a, b *github.PullRequest) int { return a.GetNumber() - b.GetNumber() })
	if out == nil {
		out = []*github.PullRequest{}
	}
	h.json(200, out)
}

func (h *handler) getPermission(repo, user string) {
	level, ok := h.s.perms[repo+"@"+strings.ToLower(user)]
	if !ok {
		level = "read"
	}
	role := level
	if role == "none" {
		role = ""
	}
	h.json(200, github.RepositoryPermissionLevel{Permission: github.String(level), RoleName: github.String(role), User: &github.User{Login: github.String(user)}})
}

func (h *handler) commentJSON(c *Comment) *github.IssueComment {
	typ := "User"
	if strings.HasSuffix(c.User, "[bot]") {
		typ = "Bot"
	}
	return &github.IssueComment{
		ID: github.Int64(c.ID), Body: github.String(c.Body), User: &github.User{Login: github.String(c.User), Type: github.String(typ)},
		HTMLURL:   github.String(fmt.Sprintf("https://github.com/%s/pull/%d#issuecomment-%d", c.Repo, c.Issue, c.ID)),
		CreatedAt: &github.Timestamp{Time: c.CreatedAt}, UpdatedAt: &github.Timestamp{Time: c.UpdatedAt},
	}
}

// page reads per_page (default 30, at most 100) and page (from 1), and sets the Link header.
func (h *handler) page(n int) (lo, hi int) {
	q := h.r.URL.Query()
	per, _ := strconv.Atoi(q.Get("per_page"))
	if per <= 0 {
		per = 30
	}
	if per > 100 {
		per = 100
	}
	pg, _ := strconv.Atoi(q.Get("page"))
	if pg <= 0 {
		pg = 1
	}
	last := (n + per - 1) / per
	if last == 0 {
		last = 1
	}
	link := func(p int, rel string) string {
		u := url.URL{Scheme: "http", Host: h.r.Host, Path: h.r.URL.Path}
		q := h.r.URL.Query()
		q.Set("page", strconv.Itoa(p))
		q.Set("per_page", strconv.Itoa(per))
		u.RawQuery = q.Encode()
		return fmt.Sprintf(`<%s>; rel="%s"`, u.String(), rel)
	}
	var links []string
	if pg < last {
		links = append(links, link(pg+1, "next"), link(last, "last"))
	}
	if pg > 1 {
		links = append(links, link(1, "first"), link(pg-1, "prev"))
	}
	if len(links) > 0 {
		h.w.Header().Set("Link", strings.Join(links, ", "))
	}
	lo, hi = (pg-1)*per, pg*per
	if lo > n {
		lo = n
	}
	if hi > n {
		hi = n
	}
	return lo, hi
}

func (h *handler) listComments(repo, num string) {
	n, _ := strconv.Atoi(num)
	var all []*Comment
	for _, c := range h.s.comments {
		if c.Repo == repo && c.Issue == n {
			all = append(all, c)
		}
	}
	lo, hi := h.page(len(all))
	out := []*github.IssueComment{}
	for _, c := range all[lo:hi] {
		out = append(out, h.commentJSON(c))
	}
	h.json(200, out)
}

// MaxCommentChars is GitHub's limit on a comment body.
const MaxCommentChars = 65536

func (h *handler) commentBody() (string, bool) {
	var in struct {
		Body *string `json:"body"`
	}
	if err := json.Unmarshal(h.body, &in); err != nil || in.Body == nil {
		writeError(h.w, http.StatusUnprocessableEntity, "body is required")
		return "", false
	}
	if utf8.RuneCountInString(*in.Body) > MaxCommentChars {
		writeError(h.w, http.StatusUnprocessableEntity, "Validation Failed: body is too long (maximum is 65536 characters)")
		return "", false
	}
	return *in.Body, true
}

func (h *handler) createComment(repo, num string) {
	n, _ := strconv.Atoi(num)
	if _, ok := h.s.repos[repo]; !ok {
		writeError(h.w, http.StatusNotFound, "Not Found")
		return
	}
	body, ok := h.commentBody()
	if !ok {
		return
	}
	now := h.s.now()
	h.s.nextID++
	c := &Comment{ID: h.s.nextID, Repo: repo, Issue: n, User: h.who.login, Body: body, CreatedAt: now, UpdatedAt: now}
	h.s.comments = append(h.s.comments, c)
	h.json(http.StatusCreated, h.commentJSON(c))
}

func (h *handler) withComment(repo, id string, f func(*Comment)) {
	withItem(h, h.s.comments, func(c *Comment) (string, int64) { return c.Repo, c.ID }, repo, id, f)
}

// withItem calls f with the item of list that key names repo and id, or answers 404 Not Found.
func withItem[T any](h *handler, list []*T, key func(*T) (string, int64), repo, id string, f func(*T)) {
	n, _ := strconv.ParseInt(id, 10, 64)
	for _, x := range list {
		if r, i := key(x); r == repo && i == n {
			f(x)
			return
		}
	}
	writeError(h.w, http.StatusNotFound, "Not Found")
}

func (h *handler) editComment(c *Comment) {
	body, ok := h.commentBody()
	if !ok {
		return
	}
	c.Body, c.UpdatedAt = body, h.s.now()
	h.json(200, h.commentJSON(c))
}

func (h *handler) deleteComment(c *Comment) {
	for i, x := range h.s.comments {
		if x == c {
			h.s.comments = append(h.s.comments[:i], h.s.comments[i+1:]...)
			break
		}
	}
	h.w.WriteHeader(http.StatusNoContent)
}

var reactionContents = map[string]bool{"+1": true, "-1": true, "laugh": true, "confused": true, "heart": true, "hooray": true, "rocket": true, "eyes": true}

func (h *handler) react(c *Comment) {
	var in struct {
		Content string `json:"content"`
	}
	if err := json.Unmarshal(h.body, &in); err != nil || !reactionContents[in.Content] {
		writeError(h.w, http.StatusUnprocessableEntity, "Validation Failed: content is not a reaction")
		return
	}
	out := func(status int, r *Reaction) {
		h.json(status, github.Reaction{ID: github.Int64(r.ID), Content: github.String(r.Content), User: &github.User{Login: github.String(r.User)}})
	}
	for _, r := range h.s.reactions {
		if r.CommentID == c.ID && r.User == h.who.login && r.Content == in.Content {
			out(http.StatusOK, r)
			return
		}
	}
	h.s.nextID++
	r := &Reaction{ID: h.s.nextID, Repo: c.Repo, CommentID: c.ID, User: h.who.login, Content: in.Content}
	h.s.reactions = append(h.s.reactions, r)
	out(http.StatusCreated, r)
}

func (h *handler) checkJSON(c *CheckRun) *github.CheckRun {
	cr := &github.CheckRun{
		ID: github.Int64(c.ID), HeadSHA: github.String(c.HeadSHA), Name: github.String(c.Name), Status: github.String(c.Status),
		ExternalID: github.String(c.ExternalID), App: &github.App{ID: github.Int64(c.AppID)},
		HTMLURL: github.String(fmt.Sprintf("https://github.com/%s/runs/%d", c.Repo, c.ID)),
		Output:  &github.CheckRunOutput{Title: github.String(c.Title), Summary: github.String(c.Summary), Text: github.String(c.Text)},
	}
	if c.Conclusion != "" {
		cr.Conclusion = github.String(c.Conclusion)
	}
	if c.DetailsURL != "" {
		cr.DetailsURL = github.String(c.DetailsURL)
	}
	if !c.StartedAt.IsZero() {
		cr.StartedAt = &github.Timestamp{Time: c.StartedAt}
	}
	if !c.CompletedAt.IsZero() {
		cr.CompletedAt = &github.Timestamp{Time: c.CompletedAt}
	}
	return cr
}

func (h *handler) listChecks(repo, ref string) {
	q := h.r.URL.Query()
	var all []*CheckRun
	for _, c := range h.s.checks {
		if c.Repo != repo || c.HeadSHA != ref {
			continue
		}
		if v := q.Get("check_name"); v != "" && c.Name != v {
			continue
		}
		if v := q.Get("status"); v != "" && c.Status != v {
			continue
		}
		if v := q.Get("app_id"); v != "" && strconv.FormatInt(c.AppID, 10) != v {
			continue
		}
		all = append(all, c)
	}
	if f := q.Get("filter"); f == "" || f == "latest" {
		latest := map[string]*CheckRun{}
		for _, c := range all {
			k := fmt.Sprintf("%s/%d", c.Name, c.AppID)
			if latest[k] == nil || c.ID > latest[k].ID {
				latest[k] = c
			}
		}
		all = all[:0]
		for _, c := range latest {
			all = append(all, c)
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i].ID > all[j].ID })
	lo, hi := h.page(len(all))
	out := []*github.CheckRun{}
	for _, c := range all[lo:hi] {
		out = append(out, h.checkJSON(c))
	}
	h.json(200, github.ListCheckRunsResults{Total: github.Int(len(all)), CheckRuns: out})
}

// checkInput is the body of a check run create or update; pointers tell absent from empty.
type checkInput struct {
	Name        *string                  `json:"name"`
	HeadSHA     *string                  `json:"head_sha"`
	DetailsURL  *string                  `json:"details_url"`
	ExternalID  *string                  `json:"external_id"`
	Status      *string                  `json:"status"`
	Conclusion  *string                  `json:"conclusion"`
	StartedAt   *time.Time               `json:"started_at"`
	CompletedAt *time.Time               `json:"completed_at"`
	Output      *github.CheckRunOutput   `json:"output"`
	Actions     []*github.CheckRunAction `json:"actions"`
}

var conclusions = map[string]bool{"success": true, "failure": true, "neutral": true, "cancelled": true, "skipped": true, "timed_out": true, "action_required": true, "stale": true}

// apply validates in as GitHub does and writes it to c.
func (h *handler) apply(c *CheckRun, in checkInput) bool {
	fail := func(msg string) bool {
		writeError(h.w, http.StatusUnprocessableEntity, "Validation Failed: "+msg)
		return false
	}
	if in.Status != nil && *in.Status != "queued" && *in.Status != "in_progress" && *in.Status != "completed" {
		return fail("status is not included in the list")
	}
	if in.Conclusion != nil && !conclusions[*in.Conclusion] {
		return fail("conclusion is not included in the list")
	}
	if in.Status != nil && *in.Status == "completed" && in.Conclusion == nil {
		return fail("conclusion is required when status is completed")
	}
	if o := in.Output; o != nil {
		if o.Title == nil || o.Summary == nil {
			return fail("output requires title and summary")
		}
		for _, f := range []*string{o.Title, o.Summary, o.Text} {
			if f != nil && len(*f) > 65535 {
				return fail("output field is too long (maximum is 65535 bytes)")
			}
		}
	}
	if len(in.Actions) > 3 {
		return fail("actions: at most 3")
	}
	for _, a := range in.Actions {
		if a.Label == "" || utf8.RuneCountInString(a.Label) > 20 || a.Identifier == "" || utf8.RuneCountInString(a.Identifier) > 20 || a.Description == "" || utf8.RuneCountInString(a.Description) > 40 {
			return fail("action label/identifier ≤ 20 and description ≤ 40 characters")
		}
	}
	if in.Name != nil {
		c.Name = *in.Name // GitHub renames the run, even to "" (go-github v66 always sends name)
	}
	if in.DetailsURL != nil {
		c.DetailsURL = *in.DetailsURL
	}
	if in.ExternalID != nil {
		c.ExternalID = *in.ExternalID
	}
	if in.StartedAt != nil {
		c.StartedAt = *in.StartedAt
	}
	if in.Status != nil {
		c.Status = *in.Status
		if c.Status != "completed" {
			c.Conclusion, c.CompletedAt = "", time.Time{}
		}
	}
	if in.Conclusion != nil {
		c.Conclusion, c.Status = *in.Conclusion, "completed"
		c.CompletedAt = h.s.now()
		if in.CompletedAt != nil {
			c.CompletedAt = *in.CompletedAt
		}
	}
	if o := in.Output; o != nil {
		c.Title, c.Summary, c.Text = o.GetTitle(), o.GetSummary(), o.GetText()
	}
	if in.Actions != nil {
		c.Actions = c.Actions[:0]
		for _, a := range in.Actions {
			c.Actions = append(c.Actions, *a)
		}
	}
	return true
}

func (h *handler) decodeCheck() (checkInput, bool) {
	var in checkInput
	dec := json.NewDecoder(bytes.NewReader(h.body))
	if err := dec.Decode(&in); err != nil {
		writeError(h.w, http.StatusBadRequest, "Problems parsing JSON")
		return in, false
	}
	return in, true
}

func (h *handler) createCheck(repo string) {
	in, ok := h.decodeCheck()
	if !ok {
		return
	}
	if in.Name == nil || *in.Name == "" || in.HeadSHA == nil || *in.HeadSHA == "" {
		writeError(h.w, http.StatusUnprocessableEntity, "Validation Failed: name and head_sha are required")
		return
	}
	if _, ok := h.s.repos[repo]; !ok {
		writeError(h.w, http.StatusNotFound, "Not Found")
		return
	}
	c := &CheckRun{Repo: repo, HeadSHA: *in.HeadSHA, Status: "queued", AppID: h.who.appID}
	if !h.apply(c, in) {
		return
	}
	h.s.nextID++
	c.ID = h.s.nextID
	h.s.checks = append(h.s.checks, c)
	h.json(http.StatusCreated, h.checkJSON(c))
}

func (h *handler) withCheck(repo, id string, f func(*CheckRun)) {
	withItem(h, h.s.checks, func(c *CheckRun) (string, int64) { return c.Repo, c.ID }, repo, id, f)
}

func (h *handler) updateCheck(c *CheckRun) {
	if c.AppID != h.who.appID {
		writeError(h.w, http.StatusForbidden, "Invalid app_id: the check run belongs to another app")
		return
	}
	in, ok := h.decodeCheck()
	if !ok {
		return
	}
	next := *c
	if !h.apply(&next, in) {
		return
	}
	*c = next
	h.json(200, h.checkJSON(c))
}
