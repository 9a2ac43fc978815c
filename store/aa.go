package store

import (
	"context"
	"fmt"
	"slices"

	"github.com/speedmatrix/speedmatrix/results"
)

// AACandidate returns the commit an A/A rerun should re-measure (config.Store.AAEvery): the
// newest default-branch result of configID whose commit holds exactly one stored run (its
// default-branch result and no A/A rerun yet). ok is false when every stored commit already
// has a rerun, or the store holds none.
func AACandidate(ctx context.Context, s Store, configID string) (e Entry, ok bool, err error) {
	defaults, err := s.List(ctx, Filter{ConfigID: configID, Kind: KindDefault})
	if err != nil {
		return Entry{}, false, err
	}
	aa, err := s.List(ctx, Filter{ConfigID: configID, Kind: KindAA})
	if err != nil {
		return Entry{}, false, err
	}
	reruns := map[string]int{}
	for _, x := range aa {
		reruns[x.Commit]++
	}
	for _, d := range defaults { // newest first
		if reruns[d.Commit] == 0 {
			return d, true, nil
		}
	}
	return Entry{}, false, nil
}

// Repeats returns the runs of every commit of configID that the store holds at least twice
// (its default-branch result and its A/A reruns), one group per commit, newest commit first,
// with the entries read: the material of a real A/A calibration and of measured noise
// (compare.MeasuredNoise). A/A runs are optional evidence: a stored file that is missing or
// damaged (Unreadable) is left out of its group, and returned in warnings naming it and how to
// remove or restore it; a commit left with fewer than two readable runs has no group.
func Repeats(ctx context.Context, s Store, configID string) ([][]*results.File, [][]Entry, []error, error) {
	var entries []Entry
	for _, k := range []Kind{KindDefault, KindAA} {
		es, err := s.List(ctx, Filter{ConfigID: configID, Kind: k})
		if err != nil {
			return nil, nil, nil, err
		}
		entries = append(entries, es...)
	}
	slices.SortStableFunc(entries, func(a, b Entry) int { return b.Time.Compare(a.Time) })
	byCommit := map[string][]Entry{}
	var commits []string
	for _, e := range entries {
		if _, ok := byCommit[e.Commit]; !ok {
			commits = append(commits, e.Commit)
		}
		byCommit[e.Commit] = append(byCommit[e.Commit], e)
	}
	var (
		groups   [][]*results.File
		used     [][]Entry
		warnings []error
	)
	for _, c := range commits {
		es := byCommit[c]
		if len(es) < 2 {
			continue
		}
		var files []*results.File
		var read []Entry
		for _, e := range es {
			f, err := s.Open(ctx, e)
			if Unreadable(err) {
				warnings = append(warnings, fmt.Errorf("A/A runs: skipped a stored result: %w", err))
				continue
			}
			if err != nil {
				return nil, nil, warnings, err
			}
			files, read = append(files, f), append(read, e)
		}
		if len(files) < 2 {
			continue
		}
		groups = append(groups, files)
		used = append(used, read)
	}
	return groups, used, warnings, nil
}
