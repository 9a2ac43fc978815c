package cli

import (
	"context"
	"fmt"

	"github.com/speedmatrix/speedmatrix/config"
	"github.com/speedmatrix/speedmatrix/store"
)

// pruneSource is what `store prune` reads: the store, and the default branch's first-parent
// commits it ranks default-branch results along (none: by measurement time).
type pruneSource struct {
	st      store.Store
	lineage []string
	along   string // the tip walked, for the log
}

// openForPrune opens the store sf names and, when walk is set, reads the first parents that
// rank its default-branch results, at most depth: those of --ref (default HEAD) in the clone
// gitDir; else, with --branch, those of the repository's default branch (or --ref) on GitHub;
// else, run inside the engine's clone, those of its default branch (cwdLineage); else none. A commit graph that cannot be read is an error: pruning by time instead could
// remove the tip's result.
func (sf *storeFlags) openForPrune(ctx context.Context, env *Env, c config.Config, gitDir, ref string, walk bool, depth int) (pruneSource, error) {
	if ref != "" && gitDir == "" && sf.branch == "" {
		return pruneSource{}, usagef("--ref needs a commit graph: --git DIR (a clone of the engine), or --branch (the repository's default branch)")
	}
	var src pruneSource
	var commits store.Commits
	tip := ref
	if sf.branch != "" && sf.dir == "" {
		gh, owner, name, err := sf.gitHub(ctx, env)
		if err != nil {
			return pruneSource{}, err
		}
		src.st = sf.branchStore(env, gh, owner, name)
		if gitDir == "" && walk {
			gc := store.GitHubCommits{GH: gh.GitHub(), Owner: owner, Repo: name}
			src.along = fmt.Sprintf("%s of %s/%s", ref, owner, name)
			if tip == "" {
				if tip, err = gc.Tip(ctx, ""); err != nil {
					return pruneSource{}, fmt.Errorf("--branch: %w (give --git DIR, a clone of the engine, to rank the results along its commits instead)", err)
				}
				src.along = fmt.Sprintf("the default branch of %s/%s", owner, name)
			}
			commits = gc
		}
	} else {
		st, _, err := sf.openToRead(ctx, env, c) // storeread.go
		if err != nil {
			return pruneSource{}, err
		}
		src.st = st
	}
	if gitDir != "" {
		if tip == "" {
			tip = "HEAD"
		}
		gc := store.GitCommits{Dir: gitDir}
		if _, err := gc.RevParse(ctx, tip); err != nil {
			return pruneSource{}, usagef("--git %s --ref %s: %v", gitDir, tip, err)
		}
		commits, src.along = gc, fmt.Sprintf("%s in %s", tip, gitDir)
	}
	if commits == nil && walk && sf.branch == "" {
		// Run inside the engine's clone, as compare --store HEAD is: rank along its default
		// branch when the stored commits are on it.
		if line, ref, ok := cwdLineage(ctx, src.st, depth); ok {
			src.lineage, src.along = line, ref+cwdCloneNote
			return src, nil
		}
	}
	if commits == nil || !walk {
		return src, nil
	}
	lineage, err := commits.Ancestors(ctx, tip, depth)
	if err != nil {
		return pruneSource{}, fmt.Errorf("the first parents of %s: %w", src.along, err)
	}
	src.lineage = lineage
	return src, nil
}

// logRecency says on stderr how prune decided which default-branch results are the newest,
// and which results rank after the line's because their commit is not on it.
func logRecency(ctx context.Context, env *Env, src pruneSource, p store.Policy) error {
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

// cwdLineage returns the first parents of the default branch of the clone in the current
// directory (its origin/HEAD, else main), at most depth, and that branch, when some
// default-branch result of st is of a commit on them; ok is false otherwise (no clone there,
// another repository, no such branch), and prune and history then go by time.
func cwdLineage(ctx context.Context, st store.Store, depth int) ([]string, string, bool) {
	gc := store.GitCommits{}
	ref, err := gc.OriginHead(ctx)
	if err != nil {
		return nil, "", false
	}
	if ref == "" {
		ref = "main"
	}
	if _, err := gc.RevParse(ctx, ref); err != nil {
		return nil, "", false
	}
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
			return line, ref, true
		}
	}
	return nil, "", false
}
