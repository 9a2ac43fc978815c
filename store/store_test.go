package store_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/speedmatrix/speedmatrix/ghbot/ghtest"
	"github.com/speedmatrix/speedmatrix/results"
	"github.com/speedmatrix/speedmatrix/store"
)

// impls returns each implementation of Store, fresh, with a function that returns the files it
// holds (path → content) as the outside world sees them: the directory, or the data branch.
func impls() []struct {
	name string
	make func(t *testing.T) (store.Store, func() map[string][]byte)
} {
	return []struct {
		name string
		make func(t *testing.T) (store.Store, func() map[string][]byte)
	}{
		{"dir", func(t *testing.T) (store.Store, func() map[string][]byte) {
			root := t.TempDir()
			return store.NewDir(root), func() map[string][]byte { return dirFiles(t, root) }
		}},
		{"branch", func(t *testing.T) (store.Store, func() map[string][]byte) {
			s, gh := fakeGitHub(t)
			s.AddCommit("o/r", ghtest.GitCommit{Message: "code"}, map[string][]byte{"README": []byte("code")})
			b := store.NewBranch(gh, "o", "r", store.WithBranchClock(time.Now, noSleep))
			return b, func() map[string][]byte { return s.Files("o/r", "heads/"+store.DefaultBranch) }
		}},
	}
}

func dirFiles(t *testing.T, root string) map[string][]byte {
	out := map[string][]byte{}
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		data, _ := os.ReadFile(p)
		out[filepath.ToSlash(rel)] = data
		return nil
	})
	return out
}

// TestStoreRoundTrip puts default-branch, PR and A/A results and reads them back, checking the
// layout the store ends up holding.
func TestStoreRoundTrip(t *testing.T) {
	for _, impl := range impls() {
		t.Run(impl.name, func(t *testing.T) {
			s, files := impl.make(t)
			f := runFile(t)
			id := store.ConfigID(f)
			c1, c2 := sha("c1"), sha("c2")
			put := func(e store.Entry) store.Entry {
				t.Helper()
				got, err := s.Put(ctx(t), e, f)
				if err != nil {
					t.Fatal(err)
				}
				return got
			}
			e1 := put(at(c1, 1))
			put(at(c2, 2))
			put(store.Entry{Commit: c2, Kind: store.KindPR, PR: 42, Time: t0.Add(3 * time.Hour)})
			put(store.Entry{Commit: c1, Kind: store.KindAA, RunID: "rerun-1", Time: t0.Add(4 * time.Hour)})
			if e1.ConfigID != id || e1.RunID != f.Run.ID || e1.Path != "results/"+c1+"/"+id+".json" {
				t.Errorf("Put returned %+v; want config id %s, run id %s, path results/%s/%s.json", e1, id, f.Run.ID, c1, id)
			}

			want := []string{"aa/" + c1 + "/" + id + "/rerun-1.json", "index.json", "pr/42/" + c2 + "/" + id + ".json",
				"results/" + c1 + "/" + id + ".json", "results/" + c2 + "/" + id + ".json"}
			held := files()
			var got []string
			for p := range held {
				got = append(got, p)
			}
			if diff := cmp.Diff(want, got, cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
				t.Errorf("files held: -want +got\n%s", diff)
			}
			var ix store.Index
			if err := json.Unmarshal(held["index.json"], &ix); err != nil || ix.Schema != store.IndexSchema || len(ix.Entries) != 4 {
				t.Errorf("index.json: %v, %d entries, schema %q; want 4 entries of %s", err, len(ix.Entries), ix.Schema, store.IndexSchema)
			}
			if stored, err := results.Decode(held["results/"+c1+"/"+id+".json"]); err != nil || stored.Run.ID != f.Run.ID {
				t.Errorf("stored file: %v", err)
			}

			got1, e, err := s.Get(ctx(t), c1, id)
			if err != nil || e.Path != e1.Path {
				t.Fatalf("Get: %v, entry %+v", err, e)
			}
			if diff := cmp.Diff(f, got1); diff != "" {
				t.Errorf("Get returned another file: -put +got\n%s", diff)
			}
			if _, _, err := s.Get(ctx(t), sha("none"), id); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("Get of a commit without results: %v, want ErrNotFound", err)
			}

			list := func(f store.Filter) []string {
				es, err := s.List(ctx(t), f)
				if err != nil {
					t.Fatal(err)
				}
				var out []string
				for _, e := range es {
					out = append(out, string(e.Kind)+":"+e.Commit[:4])
				}
				return out
			}
			for _, tc := range []struct {
				f    store.Filter
				want []string
			}{
				{store.Filter{}, []string{"aa:" + c1[:4], "pr:" + c2[:4], "default-branch:" + c2[:4], "default-branch:" + c1[:4]}},
				{store.Filter{Kind: store.KindDefault, ConfigID: id}, []string{"default-branch:" + c2[:4], "default-branch:" + c1[:4]}},
				{store.Filter{Kind: store.KindDefault, Limit: 1}, []string{"default-branch:" + c2[:4]}},
				{store.Filter{PR: 42}, []string{"pr:" + c2[:4]}},
				{store.Filter{Commit: c1}, []string{"aa:" + c1[:4], "default-branch:" + c1[:4]}},
				{store.Filter{ConfigID: "0000000000000000"}, nil},
			} {
				if diff := cmp.Diff(tc.want, list(tc.f)); diff != "" {
					t.Errorf("List(%+v): -want +got\n%s", tc.f, diff)
				}
			}
			pr, err := s.List(ctx(t), store.Filter{Kind: store.KindPR})
			if err != nil || len(pr) != 1 {
				t.Fatalf("List PR: %v %v", pr, err)
			}
			if g, err := s.Open(ctx(t), pr[0]); err != nil || g.Run.ID != f.Run.ID {
				t.Errorf("Open(PR entry): %v", err)
			}

			// A second result of the same commit and config replaces the first.
			f2 := runFile(t, func(f *results.File) { f.Run.ID = "second" })
			if _, err := s.Put(ctx(t), at(c1, 5), f2); err != nil {
				t.Fatal(err)
			}
			if g, _, err := s.Get(ctx(t), c1, id); err != nil || g.Run.ID != "second" {
				t.Errorf("Get after a replacing Put: run id %v (%v), want second", g.Run.ID, err)
			}
			if n := len(list(store.Filter{Kind: store.KindDefault})); n != 2 {
				t.Errorf("%d default-branch entries after replacing one, want 2", n)
			}
		})
	}
}

// TestStorePutRejects checks the entries Put refuses before writing anything.
func TestStorePutRejects(t *testing.T) {
	for _, impl := range impls() {
		t.Run(impl.name, func(t *testing.T) {
			s, files := impl.make(t)
			f := runFile(t)
			for _, tc := range []struct {
				e    store.Entry
				want string
			}{
				{store.Entry{Commit: "abc123"}, "not a full commit id"},
				{store.Entry{Commit: "../../etc/passwd"}, "not a full commit id"},
				{store.Entry{Commit: sha("x"), Kind: store.KindPR}, "pull request's number"},
				{store.Entry{Commit: sha("x"), Kind: "nightly"}, "kind"},
				{store.Entry{Commit: sha("x"), ConfigID: "0123456789abcdef"}, "does not match"},
				{store.Entry{Commit: sha("x"), Kind: store.KindAA, RunID: "../x"}, "cannot name a file"},
			} {
				if _, err := s.Put(ctx(t), tc.e, f); err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("Put(%+v): %v, want an error saying %q", tc.e, err, tc.want)
				}
			}
			if held := files(); len(held) > 0 && impl.name == "dir" {
				t.Errorf("a refused Put wrote %d files", len(held))
			}
		})
	}
}

// TestDirConcurrentPuts checks that concurrent writers of one directory lose no index entry.
func TestDirConcurrentPuts(t *testing.T) {
	s := store.NewDir(t.TempDir())
	f := runFile(t)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := s.Put(ctx(t), at(sha(string(rune('a'+i))), i), f); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	es, err := s.List(ctx(t), store.Filter{})
	if err != nil || len(es) != 8 {
		t.Errorf("List after 8 concurrent Puts: %d entries (%v), want 8", len(es), err)
	}
}
