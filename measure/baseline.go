package measure

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/speedmatrix/speedmatrix/results"
	"github.com/speedmatrix/speedmatrix/store"
)

// BaselineTarget says where `speedmatrix baseline` stores what it measures.
type BaselineTarget struct {
	Commit string // the default-branch engine commit measured (a full id)
	// Output also keeps the results file there ("": only a temporary file).
	Output string
	// Where names the store for messages; StoreFlags are the flags that name it again, for the
	// store put command a failure prints.
	Where, StoreFlags string
}

// Baseline measures o as Run does, with t.Commit recorded as the engine commit, and stores the
// results in st as that default-branch commit's baseline (store.PutDefault: a result it replaces
// is kept as an A/A rerun). A partial run is not stored. If storing fails, the results are kept
// (t.Output, else FallbackPath) and the error says how to store them later.
func Baseline(ctx context.Context, o Settings, deps Deps, st store.Store, t BaselineTarget) (store.Entry, error) {
	o.Engine.Commit = t.Commit
	o.Output = t.Output
	if t.Output == "" {
		dir, err := os.MkdirTemp("", "speedmatrix-baseline-*")
		if err != nil {
			return store.Entry{}, err
		}
		defer os.RemoveAll(dir)
		o.Output = filepath.Join(dir, "results.json")
	}
	if err := Run(ctx, o, deps); err != nil {
		return store.Entry{}, err
	}
	f, err := results.ReadFile(o.Output)
	if err != nil {
		return store.Entry{}, err
	}
	if f.Run.Partial {
		return store.Entry{}, fmt.Errorf("the run was partial (%s): not stored as a baseline; measure again", f.Run.PartialReason)
	}
	e, err := store.PutDefault(ctx, deps.Log, st, store.Entry{Commit: t.Commit, Kind: store.KindDefault}, f)
	if err != nil {
		return store.Entry{}, storeFailed(deps, t, f, err)
	}
	return e, nil
}

// storeFailed returns the error of a baseline whose results could not be stored: the results
// are kept (in t.Output, the -o file, else in the fallback file run writes when its output fails,
// $TMPDIR/speedmatrix-<run-id>.json) and the error says how to store them later.
func storeFailed(deps Deps, t BaselineTarget, f *results.File, err error) error {
	where, sha, kept := t.Where, t.Commit, t.Output
	if kept == "" {
		id := f.Run.ID
		if id == "" {
			id = "baseline-" + results.ShortCommit(sha)
		}
		kept = FallbackPath(id) // run.go
		if werr := results.WriteOutputFile(kept, f); werr != nil {
			return fmt.Errorf("storing the baseline in the %s: %w; and keeping the results in %s failed too: %v", where, err, kept, werr)
		}
	}
	deps.Log.Warn("the baseline was measured but not stored; the results are kept", "results", kept)
	return fmt.Errorf("storing the baseline in the %s: %w; the results are in %s: store them once the store is fixed with `speedmatrix store put %s --commit %s %s`",
		where, err, kept, kept, sha, t.StoreFlags)
}
