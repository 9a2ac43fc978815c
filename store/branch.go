package store

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/google/go-github/v66/github"

	"github.com/speedmatrix/speedmatrix/internal/textout"
	"github.com/speedmatrix/speedmatrix/results"
)

// DefaultBranch is the data branch results are committed to unless configured otherwise.
const DefaultBranch = "speedmatrix-data"

// SkipCI is in the message of every commit the store makes, so that pushes to the data branch
// start no workflow (GitHub skips push and pull_request workflows for such commits).
const SkipCI = "[skip ci]"

// Branch is a store on a data branch of a GitHub repository, written through the Git Data API:
// blob → tree (base_tree: the branch's tip) → commit (parent: the tip) → fast-forward update of
// the ref (force=false). A writer that loses a race (422: not a fast forward, or the ref was
// created meanwhile) reads the new tip, applies its change again and retries with backoff. The
// branch is created on first use as an orphan: its first commit has no parent, so it shares no
// history with the code.
type Branch struct {
	gh          *github.Client
	owner, repo string
	branch      string
	now         func() time.Time
	sleep       func(context.Context, time.Duration) error
	attempts    int
	base, max   time.Duration
	logger      *slog.Logger
}

// BranchOption configures NewBranch.
type BranchOption func(*Branch)

// WithBranchName sets the data branch (default DefaultBranch).
func WithBranchName(name string) BranchOption {
	return func(b *Branch) {
		if name != "" {
			b.branch = name
		}
	}
}

// WithBranchClock sets the clock and the sleep between retries, for tests.
func WithBranchClock(now func() time.Time, sleep func(context.Context, time.Duration) error) BranchOption {
	return func(b *Branch) { b.now, b.sleep = now, sleep }
}

// WithBranchRetry sets how many times a write is attempted when it loses a race, and the
// backoff (doubling from base up to max). The default is 8 attempts, 250 ms to 8 s.
func WithBranchRetry(attempts int, base, max time.Duration) BranchOption {
	return func(b *Branch) { b.attempts, b.base, b.max = attempts, base, max }
}

// WithBranchLogger sets the logger (default slog.Default()).
func WithBranchLogger(l *slog.Logger) BranchOption { return func(b *Branch) { b.logger = l } }

// NewBranch returns the store on the data branch of owner/repo, written with gh (a
// ghbot.Client's GitHub(), which authenticates and retries 5xx and rate limits).
func NewBranch(gh *github.Client, owner, repo string, opts ...BranchOption) *Branch {
	b := &Branch{gh: gh, owner: owner, repo: repo, branch: DefaultBranch, now: time.Now,
		sleep: sleepContext, attempts: 8, base: 250 * time.Millisecond, max: 8 * time.Second}
	for _, o := range opts {
		o(b)
	}
	if b.logger == nil {
		b.logger = slog.Default()
	}
	return b
}

// Name returns the data branch's name.
func (b *Branch) Name() string { return b.branch }

func sleepContext(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// tip is the branch's state at one moment.
type tip struct {
	exists bool
	commit string
	tree   string
	index  *Index
}

func (b *Branch) where() string {
	return fmt.Sprintf("data branch %s of %s/%s", b.branch, b.owner, b.repo)
}

func statusOf(resp *github.Response) int {
	if resp == nil || resp.Response == nil {
		return 0
	}
	return resp.StatusCode
}

// readTip reads the branch's tip commit and its index; a missing branch is an empty store.
func (b *Branch) readTip(ctx context.Context) (tip, error) {
	ref, resp, err := b.gh.Git.GetRef(ctx, b.owner, b.repo, "heads/"+b.branch)
	if statusOf(resp) == http.StatusNotFound {
		return tip{index: &Index{Schema: IndexSchema}}, nil
	}
	if err != nil {
		return tip{}, fmt.Errorf("%s: read the branch: %w", b.where(), err)
	}
	t := tip{exists: true, commit: ref.GetObject().GetSHA()}
	c, _, err := b.gh.Git.GetCommit(ctx, b.owner, b.repo, t.commit)
	if err != nil {
		return tip{}, fmt.Errorf("%s: read commit %s: %w", b.where(), t.commit, err)
	}
	t.tree = c.GetTree().GetSHA()
	tree, _, err := b.gh.Git.GetTree(ctx, b.owner, b.repo, t.tree, false)
	if err != nil {
		return tip{}, fmt.Errorf("%s: read tree %s: %w", b.where(), t.tree, err)
	}
	t.index = &Index{Schema: IndexSchema}
	for _, e := range tree.Entries {
		if e.GetPath() == IndexFile && e.GetType() == "blob" {
			data, err := b.blob(ctx, e.GetSHA())
			if err != nil {
				return tip{}, err
			}
			if t.index, err = decodeIndex(data, "restore it from the data branch's history"); err != nil {
				return tip{}, fmt.Errorf("%s at %s: %w", b.where(), t.commit, err)
			}
		}
	}
	return t, nil
}

func (b *Branch) blob(ctx context.Context, sha string) ([]byte, error) {
	bl, resp, err := b.gh.Git.GetBlob(ctx, b.owner, b.repo, sha)
	if statusOf(resp) == http.StatusNotFound {
		return nil, fmt.Errorf("%s: blob %s: %w", b.where(), sha, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: read blob %s: %w", b.where(), sha, err)
	}
	if bl.GetEncoding() != "base64" {
		return []byte(bl.GetContent()), nil
	}
	data, err := base64.StdEncoding.DecodeString(strings.ReplaceAll(bl.GetContent(), "\n", ""))
	if err != nil {
		return nil, fmt.Errorf("%s: blob %s: %w", b.where(), sha, err)
	}
	return data, nil
}

func (b *Branch) createBlob(ctx context.Context, data []byte) (string, error) {
	bl, _, err := b.gh.Git.CreateBlob(ctx, b.owner, b.repo, &github.Blob{
		Content: github.String(base64.StdEncoding.EncodeToString(data)), Encoding: github.String("base64")})
	if err != nil {
		return "", fmt.Errorf("%s: create blob: %w (the token needs contents: write)", b.where(), err)
	}
	return bl.GetSHA(), nil
}

// errNothing is returned by a change that has nothing to commit.
var errNothing = errors.New("nothing to commit")

// commit applies change to the tip's index and commits the tree entries it returns together
// with the new index, fast-forwarding the branch (or creating it as an orphan); it retries from
// a fresh tip when another writer moved the branch first.
func (b *Branch) commit(ctx context.Context, change func(*Index) (message string, entries []*github.TreeEntry, err error)) error {
	delay := b.base
	for attempt := 1; ; attempt++ {
		t, err := b.readTip(ctx)
		if err != nil {
			return err
		}
		message, entries, err := change(t.index)
		if errors.Is(err, errNothing) {
			return nil
		}
		if err != nil {
			return err
		}
		ixSHA, err := b.createBlob(ctx, t.index.encode())
		if err != nil {
			return err
		}
		entries = append(entries, &github.TreeEntry{Path: github.String(IndexFile), Mode: github.String("100644"),
			Type: github.String("blob"), SHA: github.String(ixSHA)})
		tree, _, err := b.gh.Git.CreateTree(ctx, b.owner, b.repo, t.tree, entries)
		if err != nil {
			return fmt.Errorf("%s: create tree: %w", b.where(), err)
		}
		c := &github.Commit{Message: github.String(message), Tree: &github.Tree{SHA: tree.SHA}}
		if t.exists {
			c.Parents = []*github.Commit{{SHA: github.String(t.commit)}}
		}
		made, _, err := b.gh.Git.CreateCommit(ctx, b.owner, b.repo, c, nil)
		if err != nil {
			return fmt.Errorf("%s: create commit: %w", b.where(), err)
		}
		ref := &github.Reference{Ref: github.String("refs/heads/" + b.branch), Object: &github.GitObject{SHA: made.SHA}}
		var resp *github.Response
		if t.exists {
			_, resp, err = b.gh.Git.UpdateRef(ctx, b.owner, b.repo, ref, false)
		} else {
			_, resp, err = b.gh.Git.CreateRef(ctx, b.owner, b.repo, ref)
		}
		if err == nil {
			return nil
		}
		if statusOf(resp) != http.StatusUnprocessableEntity || attempt >= b.attempts {
			if statusOf(resp) == http.StatusUnprocessableEntity {
				return fmt.Errorf("%s: the branch kept moving: %d attempts lost the race to other writers: %w (retry later)", b.where(), attempt, err)
			}
			return fmt.Errorf("%s: update the branch: %w (the token needs contents: write)", b.where(), err)
		}
		b.logger.Info("store: the data branch moved meanwhile; retrying on its new tip", "branch", b.branch, "attempt", attempt, "wait", delay)
		if err := b.sleep(ctx, delay); err != nil {
			return err
		}
		delay = min(2*delay, b.max)
	}
}

// Put implements Store: one commit holds the results file and the updated index.
func (b *Branch) Put(ctx context.Context, e Entry, f *results.File) (Entry, error) {
	e, err := prepare(e, f, b.now)
	if err != nil {
		return Entry{}, err
	}
	data, err := encodeFile(f)
	if err != nil {
		return Entry{}, err
	}
	// Blobs are content-addressed: one is enough whatever the retries.
	if e.Blob, err = b.createBlob(ctx, data); err != nil {
		return Entry{}, err
	}
	short := e.Commit[:12]
	what := string(e.Kind)
	if e.Kind == KindPR {
		what = fmt.Sprintf("PR #%d", e.PR)
	}
	msg := fmt.Sprintf("speedmatrix: %s results of %s, config %s %s", what, short, e.ConfigID, SkipCI)
	err = b.commit(ctx, func(ix *Index) (string, []*github.TreeEntry, error) {
		ix.put(e)
		return msg, []*github.TreeEntry{{Path: github.String(e.Path), Mode: github.String("100644"), Type: github.String("blob"), SHA: github.String(e.Blob)}}, nil
	})
	if err != nil {
		return Entry{}, err
	}
	return e, nil
}

// Get implements Store.
func (b *Branch) Get(ctx context.Context, commit, configID string) (*results.File, Entry, error) {
	if err := checkLookup(commit, configID); err != nil {
		return nil, Entry{}, err
	}
	t, err := b.readTip(ctx)
	if err != nil {
		return nil, Entry{}, err
	}
	e, ok := t.index.find(commit, configID)
	if !ok {
		return nil, Entry{}, fmt.Errorf("%s: results of %s for config %s: %w", b.where(), commit, configID, ErrNotFound)
	}
	f, err := b.Open(ctx, e)
	return f, e, err
}

// Open implements Store. An entry read from the index carries its blob id; one without is
// looked up in the tip's tree.
func (b *Branch) Open(ctx context.Context, e Entry) (*results.File, error) {
	if err := checkEntryPath(e); err != nil {
		return nil, err
	}
	sha := e.Blob
	if sha == "" {
		t, err := b.readTip(ctx)
		if err != nil {
			return nil, err
		}
		for _, x := range t.index.Entries {
			if x.Path == e.Path {
				sha = x.Blob
			}
		}
		if sha == "" {
			return nil, fmt.Errorf("%s: %s: %w", b.where(), e.Path, ErrNotFound)
		}
	}
	data, err := b.blob(ctx, sha)
	if err != nil {
		return nil, err
	}
	f, err := decodeStored(data)
	if err != nil {
		return nil, &DamagedError{Where: b.where(), Path: e.Path, Err: err,
			Fix: "restore it from the data branch's history: git log " + b.branch + " -- " + e.Path}
	}
	return f, nil
}

// List implements Store.
func (b *Branch) List(ctx context.Context, f Filter) ([]Entry, error) {
	t, err := b.readTip(ctx)
	if err != nil {
		return nil, err
	}
	return t.index.list(f), nil
}

// Prune implements Store: one commit deletes the files Plan removes and rewrites the index.
func (b *Branch) Prune(ctx context.Context, p Policy) ([]Entry, error) {
	if p.Now.IsZero() {
		p.Now = b.now()
	}
	var removed []Entry
	err := b.commit(ctx, func(ix *Index) (string, []*github.TreeEntry, error) {
		var keep []Entry
		keep, removed = Plan(ix.Entries, p)
		if p.DryRun || len(removed) == 0 {
			return "", nil, errNothing
		}
		ix.Entries = keep
		var entries []*github.TreeEntry
		for _, e := range removed {
			if checkEntryPath(e) != nil {
				continue // a damaged entry: dropped from the index, its path not trusted
			}
			// No SHA and no content: go-github sends "sha": null, which deletes the file.
			entries = append(entries, &github.TreeEntry{Path: github.String(e.Path), Mode: github.String("100644"), Type: github.String("blob")})
		}
		return fmt.Sprintf("speedmatrix: prune %s (retention) %s", textout.Plural(len(removed), "result", "results"), SkipCI), entries, nil
	})
	if err != nil {
		return nil, err
	}
	return removed, nil
}
