package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/speedmatrix/speedmatrix/results"
)

// Reindex rebuilds d's index.json from the files under results/, pr/, aa/ and bisect/, for a folder
// whose index is damaged or lost. Each file's commit, config id, kind, pull request (and an A/A
// rerun's run id) come from its path, as the layout puts them; its run id and time from the
// file, as Put records them (the run's end, else its start, else the file's modification time).
// Where the old index is still readable, an entry it holds for the same path keeps its time, run
// id and a PR result's baseline commit (Entry.Base, which no file records). Files that cannot be
// read as results files, or that lie where the layout puts none, are skipped and returned as
// warnings naming them (*SkippedError); hidden files (a writer's temporary files, the lock) are
// passed over. The index is written atomically, under the store's lock; Reindex returns the
// entries indexed, oldest first.
func (d *Dir) Reindex(ctx context.Context) ([]Entry, []error, error) {
	if fi, err := os.Stat(d.root); err != nil || !fi.IsDir() {
		return nil, nil, fmt.Errorf("store %s: not a directory", d.root)
	}
	unlock, err := d.lock(ctx)
	if err != nil {
		return nil, nil, err
	}
	defer unlock()
	old := map[string]Entry{}
	if ix, err := d.readIndex(); err == nil {
		for _, e := range ix.Entries {
			old[e.Path] = e
		}
	}
	ix := &Index{Schema: IndexSchema}
	var skipped []error
	for _, top := range []string{"results", "pr", "aa", "bisect"} {
		err := filepath.WalkDir(filepath.Join(d.root, top), func(p string, de fs.DirEntry, err error) error {
			if errors.Is(err, fs.ErrNotExist) && p == filepath.Join(d.root, top) {
				return fs.SkipDir // no results of this kind
			}
			if err != nil {
				return err
			}
			if strings.HasPrefix(de.Name(), ".") {
				if de.IsDir() {
					return fs.SkipDir
				}
				return nil
			}
			if de.IsDir() {
				return nil
			}
			rel, err := filepath.Rel(d.root, p)
			if err != nil {
				return err
			}
			rel = filepath.ToSlash(rel)
			e, err := d.reindexEntry(rel, p, de)
			if err != nil {
				skipped = append(skipped, err)
				return nil
			}
			if o, ok := old[rel]; ok { // what Put recorded (an A/A rerun's run id is its path's)
				e.Time, e.Base = o.Time, o.Base
				if e.Kind != KindAA && e.Kind != KindBisect {
					e.RunID = o.RunID
				}
			}
			ix.Entries = append(ix.Entries, e)
			return ctx.Err()
		})
		if err != nil {
			return nil, skipped, fmt.Errorf("store %s: %w", d.root, err)
		}
	}
	if err := results.WriteFileAtomic(d.indexPath(), ix.encode()); err != nil {
		return nil, skipped, fmt.Errorf("store %s: %w", d.root, err)
	}
	return ix.Entries, skipped, nil
}

// reindexEntry returns the index entry of the stored file at rel (slash-separated, relative to
// the store's root; p is its path on disk), or why it is skipped.
func (d *Dir) reindexEntry(rel, p string, de fs.DirEntry) (Entry, error) {
	skip := func(format string, a ...any) (Entry, error) {
		return Entry{}, &SkippedError{Where: "store " + d.root, Path: rel, Why: fmt.Sprintf(format, a...)}
	}
	if !de.Type().IsRegular() {
		return skip("not a regular file")
	}
	parts := strings.Split(strings.TrimSuffix(rel, ".json"), "/")
	var e Entry
	switch {
	case !strings.HasSuffix(rel, ".json"):
		return skip("not a .json file")
	case parts[0] == "results" && len(parts) == 3:
		e = Entry{Kind: KindDefault, Commit: parts[1], ConfigID: parts[2]}
	case parts[0] == "pr" && len(parts) == 4:
		n, err := strconv.Atoi(parts[1])
		if err != nil || n <= 0 || strconv.Itoa(n) != parts[1] {
			return skip("%s is not a pull request's number", parts[1])
		}
		e = Entry{Kind: KindPR, PR: n, Commit: parts[2], ConfigID: parts[3]}
	case parts[0] == "aa" && len(parts) == 4:
		e = Entry{Kind: KindAA, Commit: parts[1], ConfigID: parts[2], RunID: parts[3]}
	case parts[0] == "bisect" && len(parts) == 4:
		e = Entry{Kind: KindBisect, Commit: parts[1], ConfigID: parts[2], RunID: parts[3]}
	default:
		return skip("not where the layout puts a result (%s)", layoutSummary)
	}
	e.Path = rel
	if err := checkEntryPath(e); err != nil {
		return skip("its path names no valid commit, config id or run id (%s)", layoutSummary)
	}
	data, err := os.ReadFile(p)
	if err != nil {
		return skip("%v", err)
	}
	f, err := decodeStored(data)
	if err != nil {
		return skip("%v (restore it from a copy, or delete it)", err)
	}
	if e.Kind != KindAA && e.Kind != KindBisect {
		e.RunID = f.Run.ID
	}
	e.Time = runTime(f) // as Put records it
	if e.Time.IsZero() {
		if fi, err := de.Info(); err == nil {
			e.Time = fi.ModTime()
		}
	}
	e.Time = e.Time.UTC()
	return e, nil
}

// SkippedError names a file Reindex left out of the index, and why.
type SkippedError struct {
	// Where names the store; Path is the file's path in it.
	Where, Path, Why string
}

func (e *SkippedError) Error() string {
	return fmt.Sprintf("%s: skipped %s: %s", e.Where, e.Path, e.Why)
}

// layoutSummary names the paths a store's results lie at.
const layoutSummary = "results/COMMIT/CONFIG_ID.json, pr/N/COMMIT/CONFIG_ID.json, aa/COMMIT/CONFIG_ID/RUN_ID.json, bisect/COMMIT/CONFIG_ID/RUN_ID.json"
