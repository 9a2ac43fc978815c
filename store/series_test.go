package store_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/speedmatrix/speedmatrix/results"
	"github.com/speedmatrix/speedmatrix/store"
)

// TestSeries checks that a config's results are ordered along the default branch's first
// parents, whatever order they were measured in (m0 was backfilled last), that results of a
// merged branch's commit or of history a force push replaced are left out and named, that PR
// results and A/A reruns are never part of the series, and that without a commit graph the
// order is the measurement time.
func TestSeries(t *testing.T) {
	type stored struct {
		commit string
		hours  int
		kind   store.Kind
	}
	put := []stored{
		{"m2", 2, ""}, {"m4", 3, ""}, {"f0", 4, ""}, {"m5", 5, store.KindPR}, {"m5", 5, store.KindAA},
		{"old2", 6, ""}, {"deep10", 7, ""}, {"m0", 9, ""},
	}
	cases := []struct {
		name     string
		opts     store.SeriesOptions
		graph    bool
		want     []string
		off      []string
		byCommit bool
	}{
		{name: "along main", graph: true, opts: store.SeriesOptions{Tip: "main"},
			want: []string{"m0", "m2", "m4", "deep10"}, off: []string{"old2", "f0"}, byCommit: true},
		{name: "along the branch named main", graph: true, opts: store.SeriesOptions{Tip: "refs:main"},
			want: []string{"m0", "m2", "m4", "deep10"}, off: []string{"old2", "f0"}, byCommit: true},
		{name: "along main, newest 2", graph: true, opts: store.SeriesOptions{Tip: "main", Limit: 2},
			want: []string{"m4", "deep10"}, off: []string{"old2", "f0"}, byCommit: true},
		{name: "from an older tip", graph: true, opts: store.SeriesOptions{Tip: "pr-b"},
			want: []string{"m0", "m2"}, off: []string{"deep10", "old2", "f0", "m4"}, byCommit: true},
		{name: "a walk too short to reach any", graph: true, opts: store.SeriesOptions{Tip: "main", Depth: 3},
			off: []string{"m0", "deep10", "old2", "f0", "m4", "m2"}, byCommit: true},
		{name: "no commit graph: by time", opts: store.SeriesOptions{Tip: "main"},
			want: []string{"m2", "m4", "f0", "old2", "deep10", "m0"}},
	}
	for _, impl := range []struct {
		name string
		make func(*testing.T, graph) commitGraph
	}{{"github", onGitHub}, {"git", onGit}} {
		g := impl.make(t, resolveGraph())
		names := map[string]string{}
		for n, id := range g.ids {
			names[id] = n
		}
		for _, tc := range cases {
			t.Run(impl.name+"/"+tc.name, func(t *testing.T) {
				s := store.NewDir(t.TempDir())
				f := runFile(t)
				for _, st := range put {
					e := at(g.ids[st.commit], st.hours)
					switch st.kind {
					case store.KindPR:
						e.Kind, e.PR = store.KindPR, 7
					case store.KindAA:
						e.Kind, e.RunID = store.KindAA, "aa-1"
					}
					if _, err := s.Put(ctx(t), e, f); err != nil {
						t.Fatal(err)
					}
				}
				var c store.Commits
				if tc.graph {
					c = g.commits
				}
				opts := tc.opts
				if name, ok := strings.CutPrefix(opts.Tip, "refs:"); ok {
					opts.Tip = name // a branch name, resolved by the implementation
				} else if opts.Tip != "" && tc.graph {
					opts.Tip = g.ids[map[string]string{"main": "deep249", "pr-b": "b0"}[opts.Tip]]
				}
				got, err := store.Series(ctx(t), c, s, store.ConfigID(f), opts)
				if err != nil {
					t.Fatal(err)
				}
				commits := func(es []store.Entry) []string {
					var out []string
					for _, e := range es {
						out = append(out, names[e.Commit])
					}
					return out
				}
				off := tc.off
				if diff := cmp.Diff(tc.want, commits(got.Entries)); diff != "" {
					t.Errorf("entries: -want +got\n%s", diff)
				}
				if diff := cmp.Diff(off, commits(got.Off)); diff != "" {
					t.Errorf("left out: -want +got\n%s", diff)
				}
				if got.ByCommit != tc.byCommit {
					t.Errorf("ByCommit %v, want %v", got.ByCommit, tc.byCommit)
				}
			})
		}
	}
}

// TestConfigs checks that the configs are listed newest result first, with their entries.
func TestConfigs(t *testing.T) {
	s := store.NewDir(t.TempDir())
	a := runFile(t)
	b := runFile(t, func(f *results.File) { f.Run.ServedModel = "another-model" })
	for _, p := range []struct {
		f     *results.File
		c     string
		hours int
	}{{a, "m0", 1}, {b, "m1", 2}, {a, "m2", 3}} {
		if _, err := s.Put(ctx(t), at(sha(p.c), p.hours), p.f); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Put(ctx(t), store.Entry{Commit: sha("m9"), Kind: store.KindPR, PR: 3, Time: t0.AddDate(0, 0, 1)}, b); err != nil {
		t.Fatal(err)
	}
	ids, by, err := store.Configs(ctx(t), s)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{store.ConfigID(a), store.ConfigID(b)}, ids); diff != "" {
		t.Errorf("ids: -want +got\n%s", diff)
	}
	if len(by[store.ConfigID(a)]) != 2 || len(by[store.ConfigID(b)]) != 1 {
		t.Errorf("entries per config: %d and %d, want 2 and 1 (a PR result is not one)", len(by[store.ConfigID(a)]), len(by[store.ConfigID(b)]))
	}
}

// TestSeriesFilesSkipsUnreadable checks that a damaged stored file leaves the series with its
// entry and a warning naming it, instead of failing the whole trend.
func TestSeriesFilesSkipsUnreadable(t *testing.T) {
	dir := t.TempDir()
	s := store.NewDir(dir)
	f := runFile(t)
	var damaged store.Entry
	for i, c := range []string{"a", "b", "c"} {
		e, err := s.Put(ctx(t), at(sha(c), i), f)
		if err != nil {
			t.Fatal(err)
		}
		if c == "b" {
			damaged = e
		}
	}
	if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(damaged.Path)), []byte(`{"schema": `), 0o644); err != nil {
		t.Fatal(err)
	}
	ord, files, skipped, err := store.SeriesFiles(ctx(t), nil, s, store.ConfigID(f), store.SeriesOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 2 || len(ord.Entries) != 2 || ord.Entries[0].Commit != sha("a") || ord.Entries[1].Commit != sha("c") {
		t.Errorf("series %v (%d files); want a and c", ord.Entries, len(files))
	}
	if len(skipped) != 1 || !strings.Contains(skipped[0].Error(), damaged.Path) {
		t.Errorf("warnings %v; want one naming %s", skipped, damaged.Path)
	}
}

// TestHistoryAlongCommits checks that with a commit graph History is the baseline commit's and
// its nearest measured first-parent ancestors' results, newest first in commit order: a
// backfilled old commit (m0, measured last) takes its place, and neither a commit after the
// baseline (deep0), nor a merged branch's (f0), nor one a force push removed (old2) is history.
func TestHistoryAlongCommits(t *testing.T) {
	for _, impl := range []struct {
		name string
		make func(*testing.T, graph) commitGraph
	}{{"github", onGitHub}, {"git", onGit}} {
		t.Run(impl.name, func(t *testing.T) {
			g := impl.make(t, resolveGraph())
			s := store.NewDir(t.TempDir())
			names := map[string]string{}
			for _, c := range []struct {
				name  string
				hours int
			}{{"m1", 1}, {"m2", 2}, {"f0", 3}, {"m3", 4}, {"m4", 5}, {"old2", 6}, {"deep0", 7}, {"m5", 8}, {"m0", 9}} {
				f := runFile(t, func(f *results.File) { f.Run.ID = "run-" + c.name })
				names[f.Run.ID] = c.name
				if _, err := s.Put(ctx(t), at(g.ids[c.name], c.hours), f); err != nil {
					t.Fatal(err)
				}
			}
			id := store.ConfigID(runFile(t))
			files, _, note, _, err := store.History(ctx(t), s, id, store.HistoryOptions{Max: 10, Min: 3, Commits: g.commits, Tip: g.ids["m5"]})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range files {
				got = append(got, names[f.Run.ID])
			}
			if diff := cmp.Diff([]string{"m5", "m4", "m3", "m2", "m1", "m0"}, got); diff != "" {
				t.Errorf("history along m5: -want +got\n%s", diff)
			}
			if !strings.Contains(note, "along the first parents of") {
				t.Errorf("note %q does not say the history follows the commits", note)
			}
			byTime, _, _, _, err := store.History(ctx(t), s, id, store.HistoryOptions{Max: 3, Min: 3})
			if err != nil || len(byTime) != 3 || names[byTime[0].Run.ID] != "m0" {
				t.Errorf("without a graph: %d files, newest %v, %v; want the newest measured (m0 first)", len(byTime), byTime, err)
			}
		})
	}
}

// TestDirMissingIndexWithResults: a store folder that holds results but lost its index.json is
// not read as an empty store: reading it says how to rebuild the index, and reindex does.
func TestDirMissingIndexWithResults(t *testing.T) {
	dir := t.TempDir()
	s := store.NewDir(dir)
	if _, err := s.Put(ctx(t), at(sha("a"), 0), runFile(t)); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "index.json")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.List(ctx(t), store.Filter{}); err == nil || !strings.Contains(err.Error(), "store reindex") {
		t.Fatalf("List of a store without its index: %v; want an error pointing to store reindex", err)
	}
	if _, _, err := s.Reindex(ctx(t)); err != nil {
		t.Fatal(err)
	}
	if es, err := s.List(ctx(t), store.Filter{}); err != nil || len(es) != 1 {
		t.Errorf("after reindex: %d entries, %v", len(es), err)
	}
	if es, err := store.NewDir(t.TempDir()).List(ctx(t), store.Filter{}); err != nil || len(es) != 0 {
		t.Errorf("a new store: %v, %v; want empty", es, err)
	}
}

// countingCommits counts the walks its Commits makes.
type countingCommits struct {
	store.Commits
	walks int
}

func (c *countingCommits) Ancestors(ctx context.Context, from string, limit int) ([]string, error) {
	c.walks++
	return c.Commits.Ancestors(ctx, from, limit)
}

// TestMemoCommits checks that a remembered walk answers a walk from the same commit no longer
// than it, and a longer one when it already reached the root; only a longer walk of a longer line
// walks again.
func TestMemoCommits(t *testing.T) {
	g := onGit(t, resolveGraph())
	inner := &countingCommits{Commits: g.commits}
	m := store.MemoCommits(inner)
	tip := g.ids["deep249"]
	first, err := m.Ancestors(ctx(t), tip, 50)
	if err != nil || len(first) != 50 {
		t.Fatalf("walk of 50: %d commits, %v", len(first), err)
	}
	short, _ := m.Ancestors(ctx(t), tip, 10)
	if inner.walks != 1 || !slices.Equal(short, first[:10]) {
		t.Errorf("a shorter walk: %d walks, %v; want the first one's prefix from memory", inner.walks, short)
	}
	if _, err := m.Ancestors(ctx(t), tip, 100); err != nil || inner.walks != 2 {
		t.Errorf("a longer walk: %d walks, %v; want a second walk", inner.walks, err)
	}
	whole, _ := m.Ancestors(ctx(t), g.ids["m2"], 50) // m2 ← m1 ← m0: the whole line
	again, _ := m.Ancestors(ctx(t), g.ids["m2"], 500)
	if inner.walks != 3 || len(whole) != 3 || !slices.Equal(whole, again) {
		t.Errorf("a line walked to its root: %d walks, %v then %v; want one walk", inner.walks, whole, again)
	}
	if store.MemoCommits(nil) != nil {
		t.Errorf("MemoCommits(nil) is not nil")
	}
}
