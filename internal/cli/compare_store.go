package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/speedmatrix/speedmatrix/internal/textout"
	"github.com/speedmatrix/speedmatrix/results"
	"github.com/speedmatrix/speedmatrix/store"
)

// headBaseline is what `compare --store DIR HEAD` resolves: the head's baseline in the store
// (store.Resolve, as the bot does for a pull request) and the head's engine commit.
type headBaseline struct {
	b          store.Baseline
	headCommit string // the full id of the head's engine commit
}

// resolveHeadBaseline finds the baseline of head in st as the bot does: the default-branch
// results of the merge-base of head's engine commit and baseBranch in the clone gitDir ("" the
// current directory), or of its nearest first-parent ancestor that has results of head's
// config id. baseBranch "" is the clone's origin/HEAD when set, else main. No baseline is an
// error that says why and what to run.
func resolveHeadBaseline(ctx context.Context, env *Env, st store.Store, where string, head []*results.File, headPath, gitDir, baseBranch string) (headBaseline, error) {
	commit := strings.TrimSpace(head[0].Engine.Commit)
	for _, h := range head[1:] {
		if !strings.EqualFold(strings.TrimSpace(h.Engine.Commit), commit) {
			return headBaseline{}, usagef("the files of %s measured different engine commits (%q, %q): one head's baseline is resolved at a time", headPath, commit, h.Engine.Commit)
		}
	}
	if commit == "" {
		return headBaseline{}, usagef("%s names no engine commit, so its merge-base with the default branch is unknown: measure it with run --engine-commit SHA, or give the base yourself: speedmatrix compare BASE HEAD", headPath)
	}
	gc := store.GitCommits{Dir: gitDir}
	clone := gitDir
	if clone == "" {
		clone = "the current directory"
	}
	full, err := gc.RevParse(ctx, commit)
	if err != nil {
		return headBaseline{}, usagef("--git %s: the clone does not hold the head's engine commit %s (%v); fetch it, or give --git the engine's clone", clone, commit, err)
	}
	base := baseBranch
	if base == "" {
		if base, err = gc.DefaultBranch(ctx); err != nil {
			return headBaseline{}, usagef("--git %s: %v", clone, err)
		}
	}
	if _, err := gc.RevParse(ctx, base); err != nil {
		how := "--base-branch " + base
		if baseBranch == "" {
			how = "the default branch (no origin/HEAD in the clone, so main)"
		}
		return headBaseline{}, usagef("%s: not a branch of %s (%v); give the default branch with --base-branch", how, clone, err)
	}
	b, err := store.Resolve(ctx, gc, st, store.Query{ConfigID: store.ConfigID(head[0]), Head: full, Base: base})
	if err != nil {
		return headBaseline{}, fmt.Errorf("the baseline of %s: %w", headPath, err)
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
		return headBaseline{}, errors.New(msg)
	}
	env.Log.Info(b.Describe(), "head", results.ShortCommit(full), "base_branch", base, "where", where)
	if b.File.Engine.Commit == "" {
		b.File.Engine.Commit = b.Commit // the store's commit is the base's
	}
	return headBaseline{b: b, headCommit: full}, nil
}

// storePutHint is the command that stores head as pull request N's result citing its baseline,
// in the store sf names.
func storePutHint(sf *storeFlags, headPath string, hb headBaseline) string {
	args := []string{"speedmatrix", "store", "put"}
	if sf.dir != "" {
		args = append(args, "--store", textout.ShellQuote(sf.dir))
	} else {
		args = append(args, "--branch", textout.ShellQuote(sf.branch))
		if sf.repo != "" {
			args = append(args, "--repo", textout.ShellQuote(sf.repo))
		}
	}
	first, _, _ := strings.Cut(headPath, ",")
	args = append(args, "--kind", "pr", "--pr", "N", "--commit", hb.headCommit, "--base", hb.b.Commit, textout.ShellQuote(strings.TrimSpace(first)))
	return strings.Join(args, " ")
}
