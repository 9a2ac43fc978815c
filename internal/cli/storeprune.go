package cli

import (
	"context"
	"fmt"

	"github.com/speedmatrix/speedmatrix/config"
	"github.com/speedmatrix/speedmatrix/store"
)

// storeAlong is a store and the commit graph its default-branch results are ordered along:
// `store prune` ranks them by it, `history --store` orders its series by it.
type storeAlong struct {
	st store.Store
	// commits walks the first parents of tip (nil: by the time the results were measured);
	// along names tip for the log.
	commits    store.Commits
	tip, along string
}

// openAlong opens the store sf names and, when graph is set, the commit graph that orders its
// default-branch results: --ref's (default the clone's default branch: origin/HEAD, else main)
// in the clone gitDir; else, with --branch, the
// repository's default branch (or --ref) on GitHub; else, run inside the engine's clone, its
// default branch when the stored commits are on its first parents, at most depth back
// (cwdLineage); else none. --ref without a graph is a usage error. The graph remembers its walks
// (store.MemoCommits): finding the clone's line walks it once for all.
func (sf *storeFlags) openAlong(ctx context.Context, env *Env, c config.Config, gitDir, ref string, graph bool, depth int) (storeAlong, error) {
	if ref != "" && gitDir == "" && sf.branch == "" {
		return storeAlong{}, usagef("--ref needs a commit graph: --git DIR (a clone of the engine), or --branch (the repository's default branch)")
	}
	var a storeAlong
	tip := ref
	if sf.branch != "" && sf.dir == "" {
		gh, owner, name, err := sf.gitHub(ctx, env)
		if err != nil {
			return storeAlong{}, err
		}
		a.st = sf.branchStore(env, gh, owner, name)
		if gitDir == "" && graph {
			gc := store.GitHubCommits{GH: gh.GitHub(), Owner: owner, Repo: name}
			a.along = fmt.Sprintf("%s of %s/%s", ref, owner, name)
			if tip == "" {
				if tip, err = gc.Tip(ctx, ""); err != nil {
					return storeAlong{}, fmt.Errorf("--branch: %w (give --git DIR, a clone of the engine, to order the results along its commits instead)", err)
				}
				a.along = fmt.Sprintf("the default branch of %s/%s", owner, name)
			}
			a.commits = store.MemoCommits(gc)
		}
	} else {
		st, _, err := sf.openToRead(ctx, env, c) // storeread.go
		if err != nil {
			return storeAlong{}, err
		}
		a.st = st
	}
	if gitDir != "" {
		gc := store.GitCommits{Dir: gitDir}
		if tip == "" {
			// The clone's default branch, not its HEAD: a clone checked out on a pull
			// request's branch would rank main's latest results as off the line.
			var err error
			if tip, err = gc.DefaultBranch(ctx); err != nil {
				return storeAlong{}, usagef("--git %s: %v", gitDir, err)
			}
		}
		if _, err := gc.RevParse(ctx, tip); err != nil {
			return storeAlong{}, usagef("--git %s --ref %s: %v", gitDir, tip, err)
		}
		a.commits, a.along = store.MemoCommits(gc), fmt.Sprintf("%s in %s", tip, gitDir)
	}
	if a.commits == nil && graph && sf.branch == "" {
		// Run inside the engine's clone, as compare --store HEAD is: along its default branch
		// when the stored commits are on it.
		if commits, branch, ok := cwdLineage(ctx, a.st, depth); ok {
			a.commits, tip, a.along = commits, branch, branch+cwdCloneNote
		}
	}
	a.tip = tip
	return a, nil
}

// lineage returns the first parents a.commits walks from a.tip, newest first, at most depth;
// none without a graph. A graph that cannot be read is an error: pruning by time instead could
// remove the tip's result.
func (a storeAlong) lineage(ctx context.Context, depth int) ([]string, error) {
	if a.commits == nil {
		return nil, nil
	}
	line, err := a.commits.Ancestors(ctx, a.tip, depth)
	if err != nil {
		return nil, fmt.Errorf("the first parents of %s: %w", a.along, err)
	}
	return line, nil
}

// logRecency says on stderr how prune decided which default-branch results are the newest,
// and which results rank after the line's because their commit is not on it.
func logRecency(ctx context.Context, env *Env, src storeAlong, p store.Policy) error {
	if len(p.Lineage) == 0 {
		env.Log.Info(p.Recency("") + "; give --git DIR (a clone of the engine) to rank them along the default branch's commits, so that a baseline measured later than its commit does not count as the newest")
		return nil
	}
	env.Log.Info(p.Recency(src.along))
	all, err := src.st.List(ctx, store.Filter{Kind: store.KindDefault})
	if err != nil {
		return err
	}
	if off := p.OffLineage(all); len(off) > 0 {
		env.Log.Warn("results of commits not on the default branch's first parents (force-pushed away, on a merged branch only, or older than the commits walked) rank after those on them, by time",
			"results", len(off), "commits", shortCommits(off, 5), "along", src.along)
	}
	return nil
}

// cwdCloneNote follows the name of the branch cwdLineage found.
const cwdCloneNote = " of the clone in the current directory (--git DIR chooses another)"

// cwdLineage returns the commit graph of the clone in the current directory and its default
// branch (its origin/HEAD, else main) when some default-branch result of st is of a commit on
// that branch's first parents, at most depth back (walked once: the graph remembers it); ok is
// false otherwise (no clone there, another repository, no such branch), and prune and history
// then go by time.
func cwdLineage(ctx context.Context, st store.Store, depth int) (store.Commits, string, bool) {
	git := store.GitCommits{}
	ref, err := git.DefaultBranch(ctx)
	if err != nil {
		return nil, "", false
	}
	if _, err := git.RevParse(ctx, ref); err != nil {
		return nil, "", false
	}
	gc := store.MemoCommits(git)
	line, err := gc.Ancestors(ctx, ref, depth)
	if err != nil {
		return nil, "", false
	}
	stored, err := st.List(ctx, store.Filter{Kind: store.KindDefault})
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
