package store

import (
	"context"
	"fmt"
	"slices"

	"github.com/speedmatrix/speedmatrix/internal/textout"
	"github.com/speedmatrix/speedmatrix/results"
)

// DefaultSeriesDepth is how many first-parent commits of the default branch Series walks back
// from its tip when SeriesOptions.Depth is not set.
const DefaultSeriesDepth = 1000

// SeriesOptions says how Series orders a config's results.
type SeriesOptions struct {
	// Tip is the default branch (a branch name or a commit) whose first-parent chain orders the
	// series. With no Tip (or no Commits) the series is in the order the runs were measured.
	Tip string
	// Depth bounds the walk back from Tip (default DefaultSeriesDepth commits).
	Depth int
	// Limit, when positive, keeps the newest Limit results of the series.
	Limit int
}

// Ordered is a config's default-branch results as a series over commits.
type Ordered struct {
	// Entries are oldest first: along the default branch's first parents from the oldest commit
	// walked to Tip, or by measurement time when ByCommit is false.
	Entries []Entry
	// Off are the results left out because their commit is not on the walk: a commit a force
	// push removed from the default branch, one only on a merged branch, or one older than the
	// commits walked. Newest first.
	Off []Entry
	// ByCommit reports whether Entries follow the commit graph (else: measurement time).
	ByCommit bool
}

// Describe says in one line how the series is ordered and what it left out.
func (o Ordered) Describe(tip string) string {
	if !o.ByCommit {
		return textout.Plural(len(o.Entries), "result", "results") + " ordered by the time they were measured (no commit graph given)"
	}
	s := fmt.Sprintf("%s ordered along the first parents of %s", textout.Plural(len(o.Entries), "result", "results"), tip)
	if n := len(o.Off); n > 0 {
		s += fmt.Sprintf("; %d left out, of commits not on that line (force-pushed away, on a merged branch, or older than the commits walked)", n)
	}
	return s
}

// Series returns the default-branch results of configID in the order of the commits they
// measured. With c and o.Tip, the order is the first-parent chain of o.Tip, walked at most
// o.Depth commits back: a trend over commits and its change points are then right even when a
// baseline was measured later than its commit (speedmatrix baseline --commit OLD), and results of
// commits no longer on the default branch (a force push) are left out (Ordered.Off), as baseline
// resolution leaves them out. Without them, the order is the measurement time. A/A reruns and PR
// results are never part of a series.
func Series(ctx context.Context, c Commits, s Store, configID string, o SeriesOptions) (Ordered, error) {
	all, err := s.List(ctx, Filter{ConfigID: configID, Kind: KindDefault}) // newest first
	if err != nil {
		return Ordered{}, err
	}
	if c == nil || o.Tip == "" {
		slices.Reverse(all)
		return Ordered{Entries: keepNewest(all, o.Limit)}, nil
	}
	depth := o.Depth
	if depth <= 0 {
		depth = DefaultSeriesDepth
	}
	byCommit := map[string]Entry{}
	for _, e := range all {
		if _, ok := byCommit[e.Commit]; !ok { // the newest of a commit (one per config: Put replaces)
			byCommit[e.Commit] = e
		}
	}
	walk, err := c.Ancestors(ctx, o.Tip, depth)
	if err != nil {
		return Ordered{}, fmt.Errorf("series: first-parent ancestors of %s: %w", o.Tip, err)
	}
	out := Ordered{ByCommit: true}
	on := map[string]bool{}
	for i := len(walk) - 1; i >= 0; i-- { // oldest first
		if e, ok := byCommit[walk[i]]; ok && !on[walk[i]] {
			on[walk[i]] = true
			out.Entries = append(out.Entries, e)
		}
	}
	for _, e := range all {
		if !on[e.Commit] {
			out.Off = append(out.Off, e)
		}
	}
	out.Entries = keepNewest(out.Entries, o.Limit)
	return out, nil
}

// keepNewest returns the last limit entries of es (all when limit ≤ 0).
func keepNewest(es []Entry, limit int) []Entry {
	if limit > 0 && len(es) > limit {
		return es[len(es)-limit:]
	}
	return es
}

// Configs returns the config ids that hold default-branch results, the one with the newest
// result first, each with its entries newest first.
func Configs(ctx context.Context, s Store) ([]string, map[string][]Entry, error) {
	all, err := s.List(ctx, Filter{Kind: KindDefault})
	if err != nil {
		return nil, nil, err
	}
	var ids []string
	by := map[string][]Entry{}
	for _, e := range all {
		if _, ok := by[e.ConfigID]; !ok {
			ids = append(ids, e.ConfigID)
		}
		by[e.ConfigID] = append(by[e.ConfigID], e)
	}
	return ids, by, nil
}

// SeriesFiles is Series with the results files of its entries, oldest first. A file that does
// not name its engine commit gets its entry's. A stored file that is missing or damaged
// (Unreadable) is left out of the series, its entry too, and returned in warnings: a trend is
// optional evidence.
func SeriesFiles(ctx context.Context, c Commits, s Store, configID string, o SeriesOptions) (Ordered, []*results.File, []error, error) {
	ord, err := Series(ctx, c, s, configID, o)
	if err != nil {
		return Ordered{}, nil, nil, err
	}
	files := make([]*results.File, 0, len(ord.Entries))
	kept := make([]Entry, 0, len(ord.Entries))
	var warnings []error
	for _, e := range ord.Entries {
		f, err := s.Open(ctx, e)
		if Unreadable(err) {
			warnings = append(warnings, fmt.Errorf("series of config %s: skipped a stored result: %w", configID, err))
			continue
		}
		if err != nil {
			return Ordered{}, nil, warnings, fmt.Errorf("series of config %s: %w", configID, err)
		}
		if f.Engine.Commit == "" {
			f.Engine.Commit = e.Commit // the store's commit is the series' point
		}
		files, kept = append(files, f), append(kept, e)
	}
	ord.Entries = kept
	return ord, files, warnings, nil
}
