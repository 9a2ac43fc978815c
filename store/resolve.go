package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/go-github/v66/github"

	"github.com/speedmatrix/speedmatrix/internal/textout"
	"github.com/speedmatrix/speedmatrix/results"
)

// Commits is the commit graph baseline resolution walks.
type Commits interface {
	// MergeBase returns the best common ancestor of base (a branch or commit) and head.
	MergeBase(ctx context.Context, base, head string) (string, error)
	// Ancestors returns from and its first-parent ancestors, nearest first, at most limit.
	Ancestors(ctx context.Context, from string, limit int) ([]string, error)
}

// DefaultMaxDepth is how many first-parent ancestors of the merge-base Resolve looks at.
const DefaultMaxDepth = 200

// Query is what Resolve looks for.
type Query struct {
	ConfigID string
	// Head is the PR's head commit; Base its base branch (or commit). For a push to the
	// default branch, give the pushed commit's parent as Head and the branch as Base.
	Head, Base string
	// MaxDepth bounds the walk back from the merge-base (default DefaultMaxDepth).
	MaxDepth int
}

// Baseline is the result of Resolve.
type Baseline struct {
	// Commit is the default-branch commit whose results are the baseline; "" when none was
	// found, and Reason says why.
	Commit string
	// MergeBase is the merge-base of head and base.
	MergeBase string
	// Distance is how many first-parent steps back from the merge-base Commit is (0: the
	// merge-base itself).
	Distance int
	Entry    Entry
	File     *results.File
	Reason   string
}

// Found reports whether a baseline was found.
func (b Baseline) Found() bool { return b.Commit != "" }

// Describe says in one line which commit the comparison used and how far back it went, or why
// there is no baseline.
func (b Baseline) Describe() string {
	switch {
	case !b.Found():
		return "no baseline: " + b.Reason
	case b.Distance == 0:
		return fmt.Sprintf("baseline: the merge-base %s", results.ShortCommit(b.Commit))
	}
	return fmt.Sprintf("baseline: %s, %s before the merge-base %s (which has no results)", results.ShortCommit(b.Commit), textout.Plural(b.Distance, "commit", "commits"), results.ShortCommit(b.MergeBase))
}

// Warning is the line a comparison with b records among its warnings when b is not the
// merge-base itself: which commit it used and how far back from the merge-base it went; "" for
// the merge-base, or when there is no baseline.
func (b Baseline) Warning() string {
	if !b.Found() || b.Distance == 0 {
		return ""
	}
	return "The " + b.Describe()
}

// Resolve finds the baseline of a comparison: the merge-base of q.Head and q.Base if the store
// holds default-branch results of it for q.ConfigID, else the nearest first-parent ancestor of
// the merge-base that has them, at most q.MaxDepth steps back. Only commits on that walk can be
// picked, so results of a commit a force push removed from the default branch are never a
// baseline, and PR results are never one either. The merge-base's own results are found
// without listing commits; only the walk past it lists them. No baseline is not an error: the
// Baseline says why (Reason), and the caller reports it as github.no_baseline says. An error of
// the commit graph (the compare API, the listing: a 5xx, a timeout) is an error, never "no
// baseline": the caller must fail closed with its reason.
func Resolve(ctx context.Context, c Commits, s Store, q Query) (Baseline, error) {
	if q.MaxDepth <= 0 {
		q.MaxDepth = DefaultMaxDepth
	}
	stored, err := s.List(ctx, Filter{ConfigID: q.ConfigID, Kind: KindDefault})
	if err != nil {
		return Baseline{}, err
	}
	if len(stored) == 0 {
		return Baseline{Reason: fmt.Sprintf("the store holds no default-branch results for config %s (run `speedmatrix baseline --commit SHA` on a default-branch commit, or let the bot measure a push)", q.ConfigID)}, nil
	}
	byCommit := map[string]Entry{}
	for _, e := range stored {
		if _, ok := byCommit[e.Commit]; !ok {
			byCommit[e.Commit] = e
		}
	}
	mb, err := c.MergeBase(ctx, q.Base, q.Head)
	if err != nil {
		return Baseline{}, fmt.Errorf("baseline: merge-base of %s and %s: %w", q.Base, results.ShortCommit(q.Head), err)
	}
	if mb == "" {
		return Baseline{Reason: fmt.Sprintf("%s and %s have no common ancestor", q.Base, results.ShortCommit(q.Head))}, nil
	}
	if e, ok := byCommit[mb]; ok {
		// The merge-base's own results need no commit listing: an outage of the listing
		// cannot hide them.
		f, err := s.Open(ctx, e)
		if err != nil {
			return Baseline{}, fmt.Errorf("baseline: %w", err)
		}
		return Baseline{Commit: mb, MergeBase: mb, Entry: e, File: f}, nil
	}
	walk, err := c.Ancestors(ctx, mb, q.MaxDepth)
	if err != nil {
		// Never "no baseline": an ancestor the listing would have shown may hold results.
		return Baseline{}, fmt.Errorf("baseline: the merge-base %s has no results, and its first-parent ancestors could not be listed: %w", results.ShortCommit(mb), err)
	}
	for i, sha := range walk {
		e, ok := byCommit[sha]
		if !ok {
			continue
		}
		f, err := s.Open(ctx, e)
		if err != nil {
			return Baseline{}, fmt.Errorf("baseline: %w", err)
		}
		return Baseline{Commit: sha, MergeBase: mb, Distance: i, Entry: e, File: f}, nil
	}
	return Baseline{MergeBase: mb, Reason: fmt.Sprintf("none of the merge-base %s and its %d first-parent ancestors looked at has results for config %s (the %d stored are elsewhere: older, or on history a force push replaced); run `speedmatrix baseline --commit %s`",
		results.ShortCommit(mb), len(walk)-1, q.ConfigID, len(byCommit), mb)}, nil
}

// MemoCommits returns c remembering the first-parent walks it made: a job that walks from one
// commit several times (a push's change points and its pruning walk the pushed commit's first
// parents) reads the commit listing once. A shorter walk from a commit walked before is a
// prefix of it; nil stays nil.
func MemoCommits(c Commits) Commits {
	if c == nil {
		return nil
	}
	return &memoCommits{c: c, walks: map[string]memoWalk{}}
}

type memoCommits struct {
	c     Commits
	mu    sync.Mutex
	walks map[string]memoWalk
}

// memoWalk is one walk and the limit it was asked for (fewer commits than that: the whole line).
type memoWalk struct {
	commits []string
	limit   int
}

func (m *memoCommits) MergeBase(ctx context.Context, base, head string) (string, error) {
	return m.c.MergeBase(ctx, base, head)
}

func (m *memoCommits) Ancestors(ctx context.Context, from string, limit int) ([]string, error) {
	m.mu.Lock()
	w, ok := m.walks[from]
	m.mu.Unlock()
	if ok && (limit <= w.limit || len(w.commits) < w.limit) {
		return slices.Clone(w.commits[:min(limit, len(w.commits))]), nil
	}
	commits, err := m.c.Ancestors(ctx, from, limit)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	m.walks[from] = memoWalk{commits: commits, limit: limit}
	m.mu.Unlock()
	return slices.Clone(commits), nil
}

// GitHubCommits is Commits over the GitHub API: the compare API's merge_base_commit, and the
// commit listing (ListCommits with sha, paginated) followed along first parents.
type GitHubCommits struct {
	GH          *github.Client
	Owner, Repo string
	// MaxPages bounds the listing pages read (100 commits each; default 10). The listing holds
	// every reachable commit, merged branches' too, so the first-parent chain may need more
	// pages than its length.
	MaxPages int
	// PageTimeout bounds each page of the listing (default DefaultPageTimeout): a listing that
	// hangs is an error, never a wait as long as the job's.
	PageTimeout time.Duration
}

// DefaultPageTimeout is how long GitHubCommits waits for one page of the commit listing.
const DefaultPageTimeout = time.Minute

// MergeBase implements Commits.
func (g GitHubCommits) MergeBase(ctx context.Context, base, head string) (string, error) {
	cmp, resp, err := g.GH.Repositories.CompareCommits(ctx, g.Owner, g.Repo, base, head, &github.ListOptions{PerPage: 1})
	if statusOf(resp) == http.StatusNotFound {
		return "", nil // no common ancestor, or an unknown commit
	}
	if err != nil {
		if st := statusOf(resp); st != 0 {
			return "", fmt.Errorf("GET /repos/%s/%s/compare answered HTTP %d%s: %w", g.Owner, g.Repo, st, apiMessage(err), errStatus)
		}
		return "", fmt.Errorf("GET /repos/%s/%s/compare: %w", g.Owner, g.Repo, err)
	}
	return cmp.GetMergeBaseCommit().GetSHA(), nil
}

// Tip returns the commit a branch of the repository points at; with branch "" the repository's
// default branch.
func (g GitHubCommits) Tip(ctx context.Context, branch string) (string, error) {
	if branch == "" {
		r, _, err := g.GH.Repositories.Get(ctx, g.Owner, g.Repo)
		if err != nil {
			return "", fmt.Errorf("the default branch of %s/%s: %w", g.Owner, g.Repo, err)
		}
		if branch = r.GetDefaultBranch(); branch == "" {
			return "", fmt.Errorf("%s/%s names no default branch", g.Owner, g.Repo)
		}
	}
	ref, _, err := g.GH.Git.GetRef(ctx, g.Owner, g.Repo, "heads/"+branch)
	if err != nil {
		return "", fmt.Errorf("branch %s of %s/%s: %w", branch, g.Owner, g.Repo, err)
	}
	return ref.GetObject().GetSHA(), nil
}

// Ancestors implements Commits. from is a commit id or a branch name.
func (g GitHubCommits) Ancestors(ctx context.Context, from string, limit int) ([]string, error) {
	if !commitRE.MatchString(from) {
		sha, err := g.Tip(ctx, from)
		if err != nil {
			return nil, err
		}
		from = sha
	}
	pages := g.MaxPages
	if pages <= 0 {
		pages = 10
	}
	parent := map[string]string{} // commit → first parent, "" for a root
	out := []string{from}
	next := from
	opts := &github.CommitsListOptions{SHA: from, ListOptions: github.ListOptions{PerPage: 100}}
	for page := 0; len(out) < limit; {
		p, seen := parent[next]
		if seen {
			if p == "" {
				break // the root
			}
			out = append(out, p)
			next = p
			continue
		}
		if page >= pages || (page > 0 && opts.Page == 0) {
			break // the listing is exhausted, or the bound reached
		}
		list, resp, err := g.listPage(ctx, opts)
		if err != nil {
			return nil, err
		}
		page++
		for _, c := range list {
			fp := ""
			if len(c.Parents) > 0 {
				fp = c.Parents[0].GetSHA()
			}
			parent[c.GetSHA()] = fp
		}
		opts.Page = resp.NextPage
	}
	return out, nil
}

// listPage reads one page of the commit listing within PageTimeout; an error says which
// request failed and how (the HTTP status, or that it timed out).
func (g GitHubCommits) listPage(ctx context.Context, opts *github.CommitsListOptions) ([]*github.RepositoryCommit, *github.Response, error) {
	timeout := g.PageTimeout
	if timeout <= 0 {
		timeout = DefaultPageTimeout
	}
	pctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	list, resp, err := g.GH.Repositories.ListCommits(pctx, g.Owner, g.Repo, opts)
	switch {
	case err == nil:
		return list, resp, nil
	case ctx.Err() == nil && errors.Is(pctx.Err(), context.DeadlineExceeded):
		return nil, resp, fmt.Errorf("GET /repos/%s/%s/commits timed out after %s: %w", g.Owner, g.Repo, timeout, context.DeadlineExceeded)
	case statusOf(resp) != 0:
		return nil, resp, fmt.Errorf("GET /repos/%s/%s/commits answered HTTP %d%s: %w", g.Owner, g.Repo, statusOf(resp), apiMessage(err), errStatus)
	}
	return nil, resp, fmt.Errorf("GET /repos/%s/%s/commits: %w", g.Owner, g.Repo, err)
}

// errStatus is what a GitHub API error of the commit graph wraps: the message names the request
// and its status, without go-github's whole URL.
var errStatus = errors.New("the GitHub API failed")

// apiMessage is " (message)" of a GitHub API error response, "" when it has none.
func apiMessage(err error) string {
	var er *github.ErrorResponse
	if errors.As(err, &er) && strings.TrimSpace(er.Message) != "" {
		return " (" + strings.TrimSpace(er.Message) + ")"
	}
	return ""
}

// GitCommits is Commits over a local clone, running git (for the CLI).
type GitCommits struct {
	// Dir is the repository's directory ("" the current one).
	Dir string
}

func (g GitCommits) git(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = g.Dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return "", fmt.Errorf("git %s: %s (%w)", strings.Join(args, " "), strings.TrimSpace(stderr.String()), err)
		}
		return "", fmt.Errorf("git %s: %w (is git installed?)", strings.Join(args, " "), err)
	}
	return strings.TrimSpace(string(out)), nil
}

// MergeBase implements Commits: git merge-base; "" when there is no common ancestor.
func (g GitCommits) MergeBase(ctx context.Context, base, head string) (string, error) {
	out, err := g.git(ctx, "merge-base", base, head)
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() == 1 && out == "" {
		return "", nil
	}
	return out, err
}

// Ancestors implements Commits: git rev-list --first-parent.
func (g GitCommits) Ancestors(ctx context.Context, from string, limit int) ([]string, error) {
	out, err := g.git(ctx, "rev-list", "--first-parent", fmt.Sprintf("--max-count=%d", limit), from, "--")
	if err != nil {
		return nil, err
	}
	return strings.Fields(out), nil
}

// RevParse returns the full commit id rev names in the local clone.
func (g GitCommits) RevParse(ctx context.Context, rev string) (string, error) {
	return g.git(ctx, "rev-parse", "--verify", "--end-of-options", rev+"^{commit}")
}

// OriginHead returns the branch the clone's origin/HEAD names (e.g. "origin/main"): the remote's
// default branch as the clone last saw it; "" when the clone has no origin/HEAD.
func (g GitCommits) OriginHead(ctx context.Context) (string, error) {
	out, err := g.git(ctx, "symbolic-ref", "--quiet", "refs/remotes/origin/HEAD")
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() == 1 {
		return "", nil // not a symbolic ref: no origin/HEAD
	}
	if err != nil {
		return "", err
	}
	return strings.TrimPrefix(out, "refs/remotes/"), nil
}

// DefaultBranch returns the clone's default branch as a revision: the branch its origin/HEAD
// names (e.g. "origin/main"), else "main". It does not check that the branch exists.
func (g GitCommits) DefaultBranch(ctx context.Context) (string, error) {
	ref, err := g.OriginHead(ctx)
	if err != nil || ref != "" {
		return ref, err
	}
	return "main", nil
}
