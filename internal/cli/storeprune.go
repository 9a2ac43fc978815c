package cli

import (
	"context"
	"fmt"

	"github.com/speedmatrix/speedmatrix/config"
	"github.com/speedmatrix/speedmatrix/store"
)

// openAlong opens the store sf names and, when graph is set, the commit graph that orders its
// default-branch results: --ref's (default the clone's default branch: origin/HEAD, else main)
// in the clone gitDir; else, with --branch, the
// repository's default branch (or --ref) on GitHub; else, run inside the engine's clone, its
// default branch when the stored commits are on its first parents, at most depth back
// (cwdLineage); else none. --ref without a graph is a usage error. The graph remembers its walks
// (store.MemoCommits): finding the clone's line walks it once for all.
func (sf *storeFlags) openAlong(ctx context.Context, env *Env, c config.Config, gitDir, ref string, graph bool, depth int) (store.Along, error) {
	if ref != "" && gitDir == "" && sf.branch == "" {
		return store.Along{}, usagef("--ref needs a commit graph: --git DIR (a clone of the engine), or --branch (the repository's default branch)")
	}
	var a store.Along
	tip := ref
	if sf.branch != "" && sf.dir == "" {
		gh, owner, name, err := sf.gitHub(ctx, env)
		if err != nil {
			return store.Along{}, err
		}
		a.Store = sf.branchStore(env, gh, owner, name)
		if gitDir == "" && graph {
			gc := store.GitHubCommits{GH: gh.GitHub(), Owner: owner, Repo: name}
			a.Name = fmt.Sprintf("%s of %s/%s", ref, owner, name)
			if tip == "" {
				if tip, err = gc.Tip(ctx, ""); err != nil {
					return store.Along{}, fmt.Errorf("--branch: %w (give --git DIR, a clone of the engine, to order the results along its commits instead)", err)
				}
				a.Name = fmt.Sprintf("the default branch of %s/%s", owner, name)
			}
			a.Commits = store.MemoCommits(gc)
		}
	} else {
		st, _, err := sf.openToRead(ctx, env, c) // storeread.go
		if err != nil {
			return store.Along{}, err
		}
		a.Store = st
	}
	if gitDir != "" {
		gc := store.GitCommits{Dir: gitDir}
		if tip == "" {
			// The clone's default branch, not its HEAD: a clone checked out on a pull
			// request's branch would rank main's latest results as off the line.
			var err error
			if tip, err = gc.DefaultBranch(ctx); err != nil {
				return store.Along{}, usagef("--git %s: %v", gitDir, err)
			}
		}
		if _, err := gc.RevParse(ctx, tip); err != nil {
			return store.Along{}, usagef("--git %s --ref %s: %v", gitDir, tip, err)
		}
		a.Commits, a.Name = store.MemoCommits(gc), fmt.Sprintf("%s in %s", tip, gitDir)
	}
	if a.Commits == nil && graph && sf.branch == "" {
		// Run inside the engine's clone, as compare --store HEAD is: along its default branch
		// when the stored commits are on it.
		if commits, branch, ok := store.CwdLineage(ctx, a.Store, depth); ok {
			a.Commits, tip, a.Name = commits, branch, branch+store.CwdCloneNote
		}
	}
	a.Tip = tip
	return a, nil
}
