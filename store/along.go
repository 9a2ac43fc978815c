package store

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
)

// Along is a store and the commit graph its default-branch results are ordered along:
// `store prune` ranks them by it, `history --store` orders its series by it.
type Along struct {
	Store Store
	// Commits walks the first parents of Tip (nil: by the time the results were measured);
	// Name names Tip for the log.
	Commits   Commits
	Tip, Name string
}

// Lineage returns the first parents a.Commits walks from a.Tip, newest first, at most depth;
// none without a graph. A graph that cannot be read is an error: pruning by time instead could
// remove the tip's result.
func (a Along) Lineage(ctx context.Context, depth int) ([]string, error) {
	if a.Commits == nil {
		return nil, nil
	}
	line, err := a.Commits.Ancestors(ctx, a.Tip, depth)
	if err != nil {
		return nil, fmt.Errorf("the first parents of %s: %w", a.Name, err)
	}
	return line, nil
}

// LogRecency says on stderr how prune decided which default-branch results are the newest,
// and which results rank after the line's because their commit is not on it.
func (src Along) LogRecency(ctx context.Context, log *slog.Logger, p Policy) error {
	if len(p.Lineage) == 0 {
		log.Info(p.Recency("") + "; give --git DIR (a clone of the engine) to rank them along the default branch's commits, so that a baseline measured later than its commit does not count as the newest")
		return nil
	}
	log.Info(p.Recency(src.Name))
	all, err := src.Store.List(ctx, Filter{Kind: KindDefault})
	if err != nil {
		return err
	}
	if off := p.OffLineage(all); len(off) > 0 {
		log.Warn("results of commits not on the default branch's first parents (force-pushed away, on a merged branch only, or older than the commits walked) rank after those on them, by time",
			"results", len(off), "commits", ShortCommits(off, 5), "along", src.Name)
	}
	return nil
}

// CwdCloneNote follows the name of the branch cwdLineage found.
const CwdCloneNote = " of the clone in the current directory (--git DIR chooses another)"

// CwdLineage returns the commit graph of the clone in the current directory and its default
// branch (its origin/HEAD, else main) when some default-branch result of st is of a commit on
// that branch's first parents, at most depth back (walked once: the graph remembers it); ok is
// false otherwise (no clone there, another repository, no such branch), and prune and history
// then go by time.
func CwdLineage(ctx context.Context, st Store, depth int) (Commits, string, bool) {
	git := GitCommits{}
	ref, err := git.DefaultBranch(ctx)
	if err != nil {
		return nil, "", false
	}
	if _, err := git.RevParse(ctx, ref); err != nil {
		return nil, "", false
	}
	gc := MemoCommits(git)
	line, err := gc.Ancestors(ctx, ref, depth)
	if err != nil {
		return nil, "", false
	}
	stored, err := st.List(ctx, Filter{Kind: KindDefault})
	if err != nil {
		return nil, "", false
	}
	on := map[string]bool{}
	for _, c := range line {
		on[c] = true
	}
	for _, e := range stored {
		if on[e.Commit] {
			return gc, ref, true
		}
	}
	return nil, "", false
}

// ShortCommits lists up to n short commit ids (7 digits) of es, and how many more.
func ShortCommits(es []Entry, n int) string {
	var parts []string
	for i, e := range es {
		if i == n {
			parts = append(parts, fmt.Sprintf("and %d more", len(es)-n))
			break
		}
		parts = append(parts, e.Commit[:min(7, len(e.Commit))])
	}
	return strings.Join(parts, ", ")
}
