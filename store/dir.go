package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/speedmatrix/speedmatrix/results"
)

// Dir is a store in a local directory, laid out as a data branch is (results/, pr/, aa/ and
// index.json). Every file is written atomically (a temporary file and a rename), and a lock
// file (.lock, taken with O_EXCL) serialises writers of the index, across processes too.
type Dir struct {
	root string
	now  func() time.Time
	// staleLock is the age after which a lock file left by a killed writer is broken.
	staleLock time.Duration
}

// NewDir returns the store in directory root, created on first Put.
func NewDir(root string) *Dir {
	return &Dir{root: root, now: time.Now, staleLock: time.Minute}
}

// WithClock returns a copy of d that reads the time from now (Put without a time in the entry
// or the file, Prune without Policy.Now).
func (d *Dir) WithClock(now func() time.Time) *Dir {
	c := *d
	c.now = now
	return &c
}

// Root returns the store's directory.
func (d *Dir) Root() string { return d.root }

func (d *Dir) indexPath() string { return filepath.Join(d.root, IndexFile) }

func (d *Dir) readIndex() (*Index, error) {
	data, err := os.ReadFile(d.indexPath())
	if errors.Is(err, fs.ErrNotExist) {
		// A new store has neither; stored files without an index are a store that lost it,
		// not an empty one.
		for _, top := range []string{"results", "pr", "aa", "bisect"} {
			if es, _ := os.ReadDir(filepath.Join(d.root, top)); len(es) > 0 {
				return nil, fmt.Errorf("store %s: index.json is missing but %s/ holds stored results; %s", d.root, top, d.reindexHint())
			}
		}
		return &Index{Schema: IndexSchema}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("store %s: %w", d.root, err)
	}
	return decodeIndex(data, d.reindexHint())
}

// reindexHint says how to rebuild the index of d.
func (d *Dir) reindexHint() string {
	return "rebuild it from the stored files with `speedmatrix store reindex --store " + d.root + "`"
}

// lock takes the store's lock file, waiting for another writer; it returns the unlock.
func (d *Dir) lock(ctx context.Context) (func(), error) {
	if err := os.MkdirAll(d.root, 0o755); err != nil {
		return nil, fmt.Errorf("store %s: %w", d.root, err)
	}
	p := filepath.Join(d.root, ".lock")
	for {
		f, err := os.OpenFile(p, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
		if err == nil {
			fmt.Fprintf(f, "%d\n", os.Getpid())
			f.Close()
			return func() { os.Remove(p) }, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("store %s: lock: %w", d.root, err)
		}
		if st, err := os.Stat(p); err == nil && time.Since(st.ModTime()) > d.staleLock {
			os.Remove(p) // left by a writer that died
			continue
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("store %s: waiting for the lock %s: %w (remove it if no speedmatrix is writing)", d.root, p, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Put implements Store.
func (d *Dir) Put(ctx context.Context, e Entry, f *results.File) (Entry, error) {
	e, err := prepare(e, f, d.now)
	if err != nil {
		return Entry{}, err
	}
	data, err := encodeFile(f)
	if err != nil {
		return Entry{}, err
	}
	unlock, err := d.lock(ctx)
	if err != nil {
		return Entry{}, err
	}
	defer unlock()
	ix, err := d.readIndex()
	if err != nil {
		return Entry{}, err
	}
	p := filepath.Join(d.root, filepath.FromSlash(e.Path))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return Entry{}, fmt.Errorf("store %s: %w", d.root, err)
	}
	if err := results.WriteFileAtomic(p, data); err != nil {
		return Entry{}, fmt.Errorf("store %s: %w", d.root, err)
	}
	ix.put(e)
	if err := results.WriteFileAtomic(d.indexPath(), ix.encode()); err != nil {
		return Entry{}, fmt.Errorf("store %s: %w", d.root, err)
	}
	return e, nil
}

// Get implements Store.
func (d *Dir) Get(ctx context.Context, commit, configID string) (*results.File, Entry, error) {
	if err := checkLookup(commit, configID); err != nil {
		return nil, Entry{}, err
	}
	ix, err := d.readIndex()
	if err != nil {
		return nil, Entry{}, err
	}
	e, ok := ix.find(commit, configID)
	if !ok {
		return nil, Entry{}, fmt.Errorf("store %s: results of %s for config %s: %w", d.root, commit, configID, ErrNotFound)
	}
	f, err := d.Open(ctx, e)
	return f, e, err
}

// Open implements Store.
func (d *Dir) Open(_ context.Context, e Entry) (*results.File, error) {
	if err := checkEntryPath(e); err != nil {
		return nil, err
	}
	data, err := os.ReadFile(filepath.Join(d.root, filepath.FromSlash(e.Path)))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("store %s: %s: %w (the index names it but the folder does not hold it: %s)", d.root, e.Path, ErrNotFound, d.reindexHint())
	}
	if err != nil {
		return nil, fmt.Errorf("store %s: %w", d.root, err)
	}
	f, err := decodeStored(data)
	if err != nil {
		return nil, &DamagedError{Where: "store " + d.root, Path: e.Path, Err: err,
			Fix: "restore it from a copy, or delete it and rebuild the index with `speedmatrix store reindex --store " + d.root + "`"}
	}
	return f, nil
}

// List implements Store.
func (d *Dir) List(_ context.Context, f Filter) ([]Entry, error) {
	ix, err := d.readIndex()
	if err != nil {
		return nil, err
	}
	return ix.list(f), nil
}

// Prune implements Store.
func (d *Dir) Prune(ctx context.Context, p Policy) ([]Entry, error) {
	if p.Now.IsZero() {
		p.Now = d.now()
	}
	unlock, err := d.lock(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	ix, err := d.readIndex()
	if err != nil {
		return nil, err
	}
	keep, remove := Plan(ix.Entries, p)
	if p.DryRun || len(remove) == 0 {
		return remove, nil
	}
	// The index first: a crash then leaves unindexed files, never entries without a file.
	ix.Entries = keep
	if err := results.WriteFileAtomic(d.indexPath(), ix.encode()); err != nil {
		return nil, fmt.Errorf("store %s: %w", d.root, err)
	}
	for _, e := range remove {
		if checkEntryPath(e) != nil {
			continue
		}
		p := filepath.Join(d.root, filepath.FromSlash(e.Path))
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return remove, fmt.Errorf("store %s: %w", d.root, err)
		}
		// Remove the directories it leaves empty, up to the store's root.
		for dir := filepath.Dir(p); dir != filepath.Clean(d.root); dir = filepath.Dir(dir) {
			if os.Remove(dir) != nil {
				break
			}
		}
	}
	return remove, nil
}
