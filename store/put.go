package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/speedmatrix/speedmatrix/internal/usage"
	"github.com/speedmatrix/speedmatrix/results"
)

// CheckFileCommit returns a usage error when the results file at path measured another engine
// commit than sha (its engine.commit, in full or abbreviated, is not sha): stored under sha, a
// pull request's head or another commit's run would be compared as sha's result. A file that
// names no engine commit gets sha, and the log says so. The check is PutFile's (store put's),
// not Put's: tests store one fixture under many commits.
func CheckFileCommit(log *slog.Logger, f *results.File, sha, path string) error {
	c := strings.ToLower(strings.TrimSpace(f.Engine.Commit))
	switch {
	case c == "":
		f.Engine.Commit = sha
		log.Info("the results file names no engine commit; the stored copy records --commit", "file", path, "commit", sha)
		return nil
	case c == sha, IsCommitPrefix(c) && strings.HasPrefix(sha, c):
		return nil
	}
	return usage.Errorf("%s measured engine commit %s, not --commit %s: stored under %s it would be taken for that commit's result; "+
		"store it under its own commit (--commit %s), or, if its engine.commit is wrong, correct that in the file first",
		path, f.Engine.Commit, sha, results.ShortCommit(sha), f.Engine.Commit)
}

// PutDefault stores f as the default-branch result e names (the commit's baseline), keeping the
// result it replaces: when the store already holds a result of the same commit and config from
// another run, that earlier run is first stored as an A/A rerun of the commit (KindAA,
// under its own run id), since two runs of one commit are an A/A pair for calibrate --store and
// compare's measured noise. The same run stored again (the same run id) just replaces it. Only
// baseline (measure.Baseline) and store put (PutFile) do this; Put replaces, as its contract says.
func PutDefault(ctx context.Context, log *slog.Logger, s Store, e Entry, f *results.File) (Entry, error) {
	if err := keepEarlier(ctx, log, s, e, f); err != nil {
		return Entry{}, err
	}
	return s.Put(ctx, e, f)
}

// keepEarlier stores the default-branch result that e and f would replace as an A/A rerun of
// its commit, unless it is the same run (PutDefault).
func keepEarlier(ctx context.Context, log *slog.Logger, s Store, e Entry, f *results.File) error {
	old, oe, err := s.Get(ctx, e.Commit, ConfigID(f))
	switch {
	case errors.Is(err, ErrNotFound):
		return nil // nothing stored before (or its file is gone)
	case Unreadable(err):
		log.Warn("the earlier result of this commit cannot be read; it is replaced, not kept as an A/A rerun", "err", err)
		return nil
	case err != nil:
		return err
	}
	newID, oldID := e.RunID, oe.RunID
	if newID == "" {
		newID = f.Run.ID
	}
	if oldID == "" {
		oldID = old.Run.ID
	}
	if newID == oldID && (newID != "" || sameFile(old, f)) {
		log.Info("the same run was stored before for this commit and config; replacing it", "path", oe.Path, "run_id", newID)
		return nil
	}
	aa, err := s.Put(ctx, Entry{Commit: e.Commit, Kind: KindAA, RunID: oldID, Time: oe.Time}, old)
	if err != nil {
		return fmt.Errorf("keeping the earlier result of %s as an A/A rerun: %w", results.ShortCommit(e.Commit), err)
	}
	log.Info("the commit already had a result of this config: kept it as an A/A rerun (a free A/A pair) before storing the new one",
		"commit", e.Commit, "config_id", aa.ConfigID, "earlier_run_id", aa.RunID, "path", aa.Path)
	return nil
}

// sameFile reports whether a and b encode to the same bytes.
func sameFile(a, b *results.File) bool {
	x, err1 := results.Encode(a)
	y, err2 := results.Encode(b)
	return err1 == nil && err2 == nil && bytes.Equal(x, y)
}

// PutCommit returns the full commit id that store put's flag what (--commit, --base) gives as rev:
// rev itself when it is a full id; for an abbreviation of MinCommitPrefix or more hex digits
// (as store list prints them), the file's own engine commit (fileCommit, when it is a full id
// starting with rev), else the one commit of the store's index it abbreviates, else what the
// clone resolves; any other revision, what the clone resolves. Outside a clone, the short
// commits store list prints still work.
func PutCommit(ctx context.Context, s Store, clone GitCommits, what, rev, fileCommit string) (string, error) {
	p := strings.ToLower(strings.TrimSpace(rev))
	switch {
	case p == "":
		return "", usage.Errorf("%s is required: the engine commit the results belong to", what)
	case IsCommit(p):
		return p, nil
	}
	if IsCommitPrefix(p) {
		if fc := strings.ToLower(strings.TrimSpace(fileCommit)); IsCommit(fc) && strings.HasPrefix(fc, p) {
			return fc, nil
		}
		if sha, found, err := expandStored(ctx, s, p, rev, what); found || err != nil {
			return sha, err
		}
	}
	sha, err := clone.RevParse(ctx, rev)
	if err != nil {
		where := "the current directory"
		if clone.Dir != "" {
			where = clone.Dir
		}
		return "", usage.Errorf("%s %q: neither the results file's engine.commit nor a stored commit starts with it, and the clone in %s cannot resolve it (%v); give the full id, or --git DIR, a clone of the engine", what, rev, where, err)
	}
	return sha, nil
}

// PutFile stores the results file f (read from path) as e says (its kind, pull request and run
// id), as `speedmatrix store put` does: commitRev and baseRev (e.Base, "" for none) resolved to
// full ids (PutCommit, with clone), the file checked to have measured that commit
// (CheckFileCommit), and a default-branch result stored with PutDefault, which keeps the result
// it replaces as an A/A rerun.
func PutFile(ctx context.Context, log *slog.Logger, s Store, clone GitCommits, e Entry, commitRev, baseRev string, f *results.File, path string) (Entry, error) {
	var err error
	if e.Commit, err = PutCommit(ctx, s, clone, "--commit", commitRev, f.Engine.Commit); err != nil {
		return Entry{}, err
	}
	if baseRev != "" {
		if e.Base, err = PutCommit(ctx, s, clone, "--base", baseRev, ""); err != nil {
			return Entry{}, err
		}
	}
	if err := CheckFileCommit(log, f, e.Commit, path); err != nil {
		return Entry{}, err
	}
	if e.Kind == KindDefault {
		return PutDefault(ctx, log, s, e, f) // keeps an earlier run of the commit as an A/A rerun
	}
	return s.Put(ctx, e, f)
}
