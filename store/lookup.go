package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/speedmatrix/speedmatrix/internal/textout"
	"github.com/speedmatrix/speedmatrix/internal/usage"
	"github.com/speedmatrix/speedmatrix/results"
)

// FullCommit returns the full commit id of rev: rev itself when it is one, else what the local
// clone says (git rev-parse). what names the argument in errors ("--commit", "COMMIT").
func FullCommit(ctx context.Context, rev, what string) (string, error) {
	rev = strings.TrimSpace(rev)
	if id := strings.ToLower(rev); IsCommit(id) {
		return id, nil
	}
	if rev == "" {
		return "", usage.Errorf("%s is required: the engine commit the results belong to", what)
	}
	sha, err := GitCommits{}.RevParse(ctx, rev)
	if err != nil {
		return "", usage.Errorf("%s %q is not a full commit id and the local clone cannot resolve it: %v", what, rev, err)
	}
	return sha, nil
}

// ResolveCommit returns the full commit id rev names where it is matched against s's index
// (store list --commit, store get COMMIT, store prune --protect): rev itself when it is a full
// id; the one stored commit it abbreviates when it is MinCommitPrefix or more hex digits
// (store list prints 12); else what the local clone resolves it to. An abbreviation of several
// stored commits is a usage error naming them; one that no stored commit starts with and the
// clone does not know is an error wrapping ErrNotFound.
func ResolveCommit(ctx context.Context, s Store, rev, what string) (string, error) {
	p := strings.ToLower(strings.TrimSpace(rev))
	if !IsCommitPrefix(p) {
		return FullCommit(ctx, rev, what)
	}
	if sha, found, err := expandStored(ctx, s, p, rev, what); found || err != nil {
		return sha, err
	}
	if sha, err := (GitCommits{}).RevParse(ctx, rev); err == nil {
		return sha, nil
	}
	held := ""
	if all, err := s.List(ctx, Filter{}); err == nil {
		held = "; " + DescribeHeld(all)
	}
	return "", usage.Errorf("%s %s: %w: no stored result is of a commit starting with it, and the local clone does not know it%s", what, rev, ErrNotFound, held)
}

// expandStored returns the one commit of s's index that the abbreviation p (rev as the user
// wrote it, for flag what) starts, with found true; found false and no error when none does; an
// abbreviation of several stored commits is a usage error naming them.
func expandStored(ctx context.Context, s Store, p, rev, what string) (sha string, found bool, err error) {
	sha, err = ExpandCommit(ctx, s, p)
	var amb *AmbiguousCommitError
	switch {
	case err == nil:
		return sha, true, nil
	case errors.As(err, &amb):
		return "", false, usage.Errorf("%s %s abbreviates %d stored commits (%s); give more digits", what, rev, len(amb.Commits), strings.Join(amb.Commits, ", "))
	case errors.Is(err, ErrNotFound):
		return "", false, nil
	}
	return "", false, err
}

// DescribeHeld says in one line what a store holds (es: all its entries, newest first), for a
// lookup that found nothing: how many results of each kind, the config ids and the newest
// commits, as store list prints them.
func DescribeHeld(es []Entry) string {
	if len(es) == 0 {
		return "the store is empty"
	}
	kinds := map[Kind]int{}
	configs := map[string]int{}
	var ids, commits []string
	for _, e := range es {
		kinds[e.Kind]++
		if configs[e.ConfigID] == 0 {
			ids = append(ids, e.ConfigID)
		}
		configs[e.ConfigID]++
		if c := results.ShortCommit(e.Commit); !slices.Contains(commits, c) {
			commits = append(commits, c)
		}
	}
	var byKind []string
	for _, k := range []Kind{KindDefault, KindPR, KindAA, KindBisect} {
		if kinds[k] > 0 {
			byKind = append(byKind, fmt.Sprintf("%d %s", kinds[k], k))
		}
	}
	idList := make([]string, len(ids))
	for i, id := range ids {
		idList[i] = fmt.Sprintf("%s (%d)", id, configs[id])
	}
	const most = 8
	more := ""
	if len(commits) > most {
		more = fmt.Sprintf(" and %d more", len(commits)-most)
		commits = commits[:most]
	}
	return fmt.Sprintf("the store holds %s (%s) of config ids %s, of commits %s%s (see speedmatrix store list)",
		textout.Plural(len(es), "result", "results"), strings.Join(byKind, ", "), strings.Join(idList, ", "), strings.Join(commits, ", "), more)
}

// CheckStoredConfig returns an error naming the config ids of commit's default-branch results
// when configID is not among them (store get), or what the store holds when commit has none.
func CheckStoredConfig(ctx context.Context, s Store, commit, configID string) error {
	es, err := s.List(ctx, Filter{Commit: commit})
	if err != nil {
		return err
	}
	var ids, others []string
	for _, e := range es {
		switch {
		case e.Kind != KindDefault:
			others = append(others, e.Path)
		case e.ConfigID == configID:
			return nil
		case !slices.Contains(ids, e.ConfigID):
			ids = append(ids, e.ConfigID)
		}
	}
	switch {
	case len(ids) > 0:
		return fmt.Errorf("store get: commit %s has no default-branch result of config %s; its default-branch results are of config ids %s: %w",
			results.ShortCommit(commit), configID, strings.Join(ids, ", "), ErrNotFound)
	case len(others) > 0:
		return fmt.Errorf("store get: commit %s has no default-branch results, only %s (see store list --commit %s): %w",
			results.ShortCommit(commit), strings.Join(others, ", "), results.ShortCommit(commit), ErrNotFound)
	}
	all, err := s.List(ctx, Filter{})
	if err != nil {
		return err
	}
	return fmt.Errorf("store get: no result of commit %s is stored; %s: %w", results.ShortCommit(commit), DescribeHeld(all), ErrNotFound)
}

// OnlyConfigOf returns the config id of commit's one default-branch result in s, for store get
// without CONFIG_ID. A commit with results of several configs is a usage error listing their
// ids; one with none says what the store holds of it (CheckStoredConfig).
func OnlyConfigOf(ctx context.Context, s Store, commit string) (string, error) {
	es, err := s.List(ctx, Filter{Commit: commit, Kind: KindDefault})
	if err != nil {
		return "", err
	}
	var ids []string
	for _, e := range es {
		if !slices.Contains(ids, e.ConfigID) {
			ids = append(ids, e.ConfigID)
		}
	}
	switch len(ids) {
	case 1:
		return ids[0], nil
	case 0:
		return "", CheckStoredConfig(ctx, s, commit, "")
	}
	slices.Sort(ids)
	return "", usage.Errorf("store get: commit %s has default-branch results of %d configs (%s): give the config id, speedmatrix store get %s CONFIG_ID",
		results.ShortCommit(commit), len(ids), strings.Join(ids, ", "), results.ShortCommit(commit))
}
