package store

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/speedmatrix/speedmatrix/internal/usage"
	"github.com/speedmatrix/speedmatrix/results"
)

// HeadBaseline is what `compare --store DIR HEAD` resolves: the head's baseline in the store
// (Resolve, as the bot does for a pull request) and the head's engine commit.
type HeadBaseline struct {
	Baseline
	HeadCommit string // the full id of the head's engine commit
}

// ResolveHead finds the baseline of head in st as the bot does: the default-branch
// results of the merge-base of head's engine commit and baseBranch in the clone gitDir ("" the
// current directory), or of its nearest first-parent ancestor that has results of head's
// config id. baseBranch "" is the clone's origin/HEAD when set, else main. No baseline is an
// error that says why and what to run.
func ResolveHead(ctx context.Context, log *slog.Logger, st Store, where string, head []*results.File, headPath, gitDir, baseBranch string) (HeadBaseline, error) {
	commit := strings.TrimSpace(head[0].Engine.Commit)
	for _, h := range head[1:] {
		if !strings.EqualFold(strings.TrimSpace(h.Engine.Commit), commit) {
			return HeadBaseline{}, usage.Errorf("the files of %s measured different engine commits (%q, %q): one head's baseline is resolved at a time", headPath, commit, h.Engine.Commit)
		}
	}
	if commit == "" {
		return HeadBaseline{}, usage.Errorf("%s names no engine commit, so its merge-base with the default branch is unknown: measure it with run --engine-commit SHA, or give the base yourself: speedmatrix compare BASE HEAD", headPath)
	}
	gc := GitCommits{Dir: gitDir}
	clone := gitDir
	if clone == "" {
		clone = "the current directory"
	}
	full, err := gc.RevParse(ctx, commit)
	if err != nil {
		return HeadBaseline{}, usage.Errorf("--git %s: the clone does not hold the head's engine commit %s (%v); fetch it, or give --git the engine's clone", clone, commit, err)
	}
	base := baseBranch
	if base == "" {
		if base, err = gc.DefaultBranch(ctx); err != nil {
			return HeadBaseline{}, usage.Errorf("--git %s: %v", clone, err)
		}
	}
	if _, err := gc.RevParse(ctx, base); err != nil {
		how := "--base-branch " + base
		if baseBranch == "" {
			how = "the default branch (no origin/HEAD in the clone, so main)"
		}
		return HeadBaseline{}, usage.Errorf("%s: not a branch of %s (%v); give the default branch with --base-branch", how, clone, err)
	}
	b, err := Resolve(ctx, gc, st, Query{ConfigID: ConfigID(head[0]), Head: full, Base: base})
	if err != nil {
		return HeadBaseline{}, fmt.Errorf("the baseline of %s: %w", headPath, err)
	}
	if !b.Found() {
		msg := fmt.Sprintf("no baseline for %s in %s: %s", headPath, where, b.Reason)
		if b.MergeBase == "" {
			if mb, err := gc.MergeBase(ctx, base, full); err == nil && mb != "" {
				msg += fmt.Sprintf("; the merge-base of %s and the head is %s: `speedmatrix baseline --commit %s` measures it", base, results.ShortCommit(mb), mb)
			} else {
				msg += "; check --base-branch (the default branch) and --git (the engine's clone)"
			}
		}
		return HeadBaseline{}, errors.New(msg)
	}
	log.Info(b.Describe(), "head", results.ShortCommit(full), "base_branch", base, "where", where)
	if b.File.Engine.Commit == "" {
		b.File.Engine.Commit = b.Commit // the store's commit is the base's
	}
	return HeadBaseline{Baseline: b, HeadCommit: full}, nil
}

// HeadHistory returns the history compare uses with --store: the newest default-branch
// results of the base's config id in s (at most max, none when fewer than min; along the
// baseline's first parents when along gives a graph (Commits and Tip; its Store is unused), and then the bool is set), leaving out the
// head's engine commits and the commits of also (a run must not be its own noise).
func HeadHistory(ctx context.Context, log *slog.Logger, s Store, base *results.File, head []*results.File, max, min int, along Along, also ...string) ([]*results.File, bool, error) {
	var exclude []string
	for _, c := range also {
		if c != "" {
			exclude = append(exclude, c)
		}
	}
	for _, h := range head {
		if h.Engine.Commit != "" {
			exclude = append(exclude, strings.ToLower(h.Engine.Commit))
		}
	}
	opts := HistoryOptions{Max: max, Min: min, Exclude: exclude, Commits: along.Commits, Tip: along.Tip}
	files, _, note, skipped, err := History(ctx, s, ConfigID(base), opts)
	for _, w := range skipped {
		log.Warn(w.Error())
	}
	if err != nil {
		return nil, false, fmt.Errorf("--store: %w", err)
	}
	log.Info(note)
	return files, along.Commits != nil && along.Tip != "", nil
}
