package store_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/speedmatrix/speedmatrix/ghbot/ghtest"
	"github.com/speedmatrix/speedmatrix/results"
	"github.com/speedmatrix/speedmatrix/store"
)

// damage overwrites the file at rel in the store at root with data.
func damage(t *testing.T, root, rel, data string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(root, filepath.FromSlash(rel)), []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// fillStore puts default-branch results of c0…c3, a PR result citing c3 and two A/A reruns of
// c3 into s, each run named and timed apart, and returns the entries as the index holds them.
func fillStore(t *testing.T, s store.Store) []store.Entry {
	t.Helper()
	file := func(i int) *results.File {
		return runFile(t, func(f *results.File) {
			f.Run.ID = "run" + string(rune('a'+i))
			f.Run.Start, f.Run.End = t0.Add(time.Duration(i)*time.Hour), t0.Add(time.Duration(i)*time.Hour+time.Minute)
		})
	}
	put := func(e store.Entry, f *results.File) {
		if _, err := s.Put(ctx(t), e, f); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 4 {
		put(store.Entry{Commit: sha(string(rune('0' + i)))}, file(i))
	}
	put(store.Entry{Commit: sha("pr"), Kind: store.KindPR, PR: 7, Base: sha("3")}, file(4))
	put(store.Entry{Commit: sha("3"), Kind: store.KindAA}, file(5))
	put(store.Entry{Commit: sha("3"), Kind: store.KindAA, RunID: "given"}, file(6))
	es, err := s.List(ctx(t), store.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	return es
}

// TestReindex damages a local store's index.json and checks that its error says to run store
// reindex, and that Reindex rebuilds from the files the index that Put had written (less a PR
// result's baseline, which no file records), skipping a damaged file and a stray one by name and
// passing over hidden files; with a readable index it keeps what the index knew.
func TestReindex(t *testing.T) {
	root := t.TempDir()
	s := store.NewDir(root)
	want := fillStore(t, s)
	id := want[0].ConfigID

	damage(t, root, store.IndexFile, `{"schema": "speedmatrix/store-index/v1", "entries": [{"commit": "`)
	_, err := s.List(ctx(t), store.Filter{})
	if err == nil || !strings.Contains(err.Error(), "speedmatrix store reindex --store "+root) || strings.Contains(err.Error(), "data branch") {
		t.Fatalf("List of a damaged local index: %v; want advice to run store reindex, not the data branch's history", err)
	}

	broken := "results/" + sha("1") + "/" + id + ".json"
	damage(t, root, broken, `{"schema": "speedmatrix/results/v1", "run": {`)
	if err := os.WriteFile(filepath.Join(root, "results", "notes.txt"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "results", sha("2"), "."+id+".json.tmp-123"), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, skipped, err := s.Reindex(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, w := range skipped {
		var se *store.SkippedError
		if !errors.As(w, &se) {
			t.Fatalf("skipped %v: not a *store.SkippedError", w)
		}
		paths = append(paths, se.Path)
	}
	if diff := cmp.Diff([]string{"results/notes.txt", broken}, paths, cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
		t.Errorf("skipped files (-want +got):\n%s", diff)
	}
	var wantRebuilt []store.Entry
	for _, e := range want {
		if e.Path == broken {
			continue
		}
		e.Base = "" // in the damaged index only
		wantRebuilt = append(wantRebuilt, e)
	}
	listed, err := s.List(ctx(t), store.Filter{})
	if err != nil {
		t.Fatalf("List after Reindex: %v", err)
	}
	if diff := cmp.Diff(wantRebuilt, listed); diff != "" {
		t.Errorf("rebuilt index (-Put's +Reindex's):\n%s", diff)
	}
	if len(got) != len(wantRebuilt) {
		t.Errorf("Reindex returned %d entries, want %d", len(got), len(wantRebuilt))
	}

	// A readable index: its entries keep what only the index knew (the PR result's baseline).
	root2 := t.TempDir()
	s2 := store.NewDir(root2)
	want2 := fillStore(t, s2)
	if _, _, err := s2.Reindex(ctx(t)); err != nil {
		t.Fatal(err)
	}
	listed, _ = s2.List(ctx(t), store.Filter{})
	if diff := cmp.Diff(want2, listed); diff != "" {
		t.Errorf("reindex of a sound store changed the index (-before +after):\n%s", diff)
	}
}

// TestDamagedIndexOnBranch checks that a damaged index.json on the data branch points to the
// branch's history, not to store reindex (which rebuilds a local folder).
func TestDamagedIndexOnBranch(t *testing.T) {
	s, gh := fakeGitHub(t)
	tip := s.AddCommit("o/r", ghtest.GitCommit{Message: "damaged"}, map[string][]byte{store.IndexFile: []byte(`{"schema": `)})
	s.SetRef("o/r", "heads/"+store.DefaultBranch, tip)
	_, err := store.NewBranch(gh, "o", "r").List(ctx(t), store.Filter{})
	if err == nil || !strings.Contains(err.Error(), "restore it from the data branch's history") || strings.Contains(err.Error(), "reindex") {
		t.Errorf("List of a damaged index on the data branch: %v; want advice to restore it from the branch's history", err)
	}
}

// TestDamagedStoredFile checks that Get of a damaged stored file fails (a baseline that cannot
// be read is an error) with a *DamagedError naming the file and how to repair it where the store
// is kept, and without results.Decode's hint to convert a report with speedmatrix import.
func TestDamagedStoredFile(t *testing.T) {
	const report = "Speed test matrix\n"
	f := runFile(t)
	id := store.ConfigID(f)
	path := "results/" + sha("c") + "/" + id + ".json"
	check := func(t *testing.T, s store.Store, fix string) {
		t.Helper()
		_, _, err := s.Get(ctx(t), sha("c"), id)
		var de *store.DamagedError
		if !errors.As(err, &de) || de.Path != path || !store.Unreadable(err) || !strings.Contains(err.Error(), fix) ||
			strings.Contains(err.Error(), "speedmatrix import") {
			t.Errorf("Get of a damaged file: %v; want a *DamagedError naming %s and saying %q, without the import hint", err, path, fix)
		}
	}
	t.Run("dir", func(t *testing.T) {
		root := t.TempDir()
		s := store.NewDir(root)
		if _, err := s.Put(ctx(t), at(sha("c"), 0), f); err != nil {
			t.Fatal(err)
		}
		damage(t, root, path, report)
		check(t, s, "delete it and rebuild the index with `speedmatrix store reindex --store "+root+"`")
	})
	t.Run("branch", func(t *testing.T) {
		srv, gh := fakeGitHub(t)
		// The damaged blob's id, then a tip whose index names it.
		first := srv.AddCommit("o/r", ghtest.GitCommit{Message: "blob"}, map[string][]byte{path: []byte(report)})
		c, _ := srv.Commit("o/r", first)
		tree, _, err := gh.Git.GetTree(ctx(t), "o", "r", c.Tree, true)
		if err != nil {
			t.Fatal(err)
		}
		blob := ""
		for _, e := range tree.Entries {
			if e.GetPath() == path {
				blob = e.GetSHA()
			}
		}
		ix := fmt.Sprintf(`{"schema": %q, "entries": [{"commit": %q, "config_id": %q, "kind": "default-branch", "time": "2026-05-01T12:00:00Z", "path": %q, "blob": %q}]}`,
			store.IndexSchema, sha("c"), id, path, blob)
		tip := srv.AddCommit("o/r", ghtest.GitCommit{Message: "damaged", Parents: []string{first}},
			map[string][]byte{path: []byte(report), store.IndexFile: []byte(ix)})
		srv.SetRef("o/r", "heads/"+store.DefaultBranch, tip)
		check(t, store.NewBranch(gh, "o", "r"), "restore it from the data branch's history: git log "+store.DefaultBranch+" -- "+path)
	})
}

// TestHistorySkipsUnreadable checks that History leaves out a damaged and a missing stored
// file, reads the next older results in their place, and returns a warning naming each.
func TestHistorySkipsUnreadable(t *testing.T) {
	root := t.TempDir()
	s := store.NewDir(root)
	var entries []store.Entry
	for i := range 6 {
		e, err := s.Put(ctx(t), at(sha(string(rune('a'+i))), i), runFile(t, func(f *results.File) { f.Run.ID = string(rune('a' + i)) }))
		if err != nil {
			t.Fatal(err)
		}
		entries = append(entries, e)
	}
	id := entries[0].ConfigID
	damage(t, root, entries[5].Path, `{"schema": "speedmatrix/results/v1", "run`) // the newest: truncated
	if err := os.Remove(filepath.Join(root, filepath.FromSlash(entries[3].Path))); err != nil {
		t.Fatal(err)
	}
	files, used, note, warnings, err := store.History(ctx(t), s, id, store.HistoryOptions{Max: 3, Min: 3})
	if err != nil {
		t.Fatalf("History with a damaged and a missing file: %v", err)
	}
	var got []string
	for i, f := range files {
		got = append(got, f.Run.ID+"@"+used[i].Path)
	}
	want := []string{"e@" + entries[4].Path, "c@" + entries[2].Path, "b@" + entries[1].Path}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("history read (-want +got):\n%s", diff)
	}
	if !strings.Contains(note, "noise from 3") {
		t.Errorf("note %q", note)
	}
	if len(warnings) != 2 || !strings.Contains(warnings[0].Error(), entries[5].Path) || !strings.Contains(warnings[0].Error(), "store reindex") ||
		!strings.Contains(warnings[1].Error(), entries[3].Path) {
		t.Errorf("warnings %v; want the damaged then the missing file, each named with how to repair it", warnings)
	}
}

// TestRepeatsSkipsUnreadable checks that a truncated A/A rerun is left out of its commit's
// group with a warning, and that a commit left with one readable run has no group.
func TestRepeatsSkipsUnreadable(t *testing.T) {
	root := t.TempDir()
	s := store.NewDir(root)
	f := runFile(t)
	id := store.ConfigID(f)
	put := func(e store.Entry) store.Entry {
		t.Helper()
		got, err := s.Put(ctx(t), e, f)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	put(at(sha("a"), 0))
	put(store.Entry{Commit: sha("a"), Kind: store.KindAA, RunID: "a1", Time: t0.Add(time.Hour)})
	bad := put(store.Entry{Commit: sha("a"), Kind: store.KindAA, RunID: "a2", Time: t0.Add(2 * time.Hour)})
	put(at(sha("b"), 3))
	lone := put(store.Entry{Commit: sha("b"), Kind: store.KindAA, RunID: "b1", Time: t0.Add(4 * time.Hour)})
	damage(t, root, bad.Path, `{"schema": "speedmatrix/results/v1"`)
	damage(t, root, lone.Path, ``)
	groups, used, warnings, err := store.Repeats(ctx(t), s, id)
	if err != nil {
		t.Fatalf("Repeats with truncated A/A reruns: %v", err)
	}
	if len(groups) != 1 || len(groups[0]) != 2 || used[0][0].Commit != sha("a") {
		t.Errorf("groups %v; want one, commit a's two readable runs", used)
	}
	if len(warnings) != 2 || !strings.Contains(warnings[0].Error(), lone.Path) || !strings.Contains(warnings[1].Error(), bad.Path) {
		t.Errorf("warnings %v; want one naming each truncated rerun", warnings)
	}
}

// TestExpandCommit checks abbreviated commits against the index: a unique prefix of 7 or more
// hex digits names its commit, a shorter one or a non-hex one is refused, one no stored commit
// starts with is ErrNotFound, and one of several commits is an *AmbiguousCommitError.
func TestExpandCommit(t *testing.T) {
	s := store.NewDir(t.TempDir())
	a := "944a2849b932" + strings.Repeat("0", 28)
	b := "944a2849b932" + strings.Repeat("1", 28)
	c := "12345678" + strings.Repeat("a", 32)
	for i, commit := range []string{a, b, c} {
		if _, err := s.Put(ctx(t), at(commit, i), runFile(t)); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		prefix, want string
		check        func(error) bool
	}{
		{c, c, nil},
		{"1234567", c, nil},
		{"12345678AAA", c, nil},
		{"944a2849b9320", a, nil},
		{"944a2849b932", "", func(err error) bool {
			var ae *store.AmbiguousCommitError
			return errors.As(err, &ae) && len(ae.Commits) == 2
		}},
		{"abcdef0", "", func(err error) bool { return errors.Is(err, store.ErrNotFound) }},
		{"123456", "", func(err error) bool { return err != nil && !errors.Is(err, store.ErrNotFound) }},
		{"HEAD~1", "", func(err error) bool { return err != nil && !errors.Is(err, store.ErrNotFound) }},
	} {
		got, err := store.ExpandCommit(ctx(t), s, tc.prefix)
		if tc.check == nil && (err != nil || got != tc.want) || tc.check != nil && !tc.check(err) {
			t.Errorf("ExpandCommit(%q) = %q, %v; want %q", tc.prefix, got, err, tc.want)
		}
	}
}
