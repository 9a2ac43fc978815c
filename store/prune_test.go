package store_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/speedmatrix/speedmatrix/results"
	"github.com/speedmatrix/speedmatrix/store"
)

// TestPlan checks retention: what each policy keeps, and that the current baseline (the newest
// default-branch result of each config id) and protected commits are never removed.
func TestPlan(t *testing.T) {
	now := t0.Add(1000 * time.Hour)
	cites := func(x store.Entry, base string) store.Entry { x.Base = sha(base); return x }
	e := func(name string, kind store.Kind, config string, hours int) store.Entry {
		x := store.Entry{Commit: sha(name), Kind: kind, ConfigID: config, Time: t0.Add(time.Duration(hours) * time.Hour), Path: name}
		if kind == store.KindPR {
			x.PR = 1
		}
		return x
	}
	all := []store.Entry{
		e("a1", store.KindDefault, "aaaaaaaaaaaaaaaa", 1),
		e("a2", store.KindDefault, "aaaaaaaaaaaaaaaa", 2),
		e("a3", store.KindDefault, "aaaaaaaaaaaaaaaa", 3),
		e("b1", store.KindDefault, "bbbbbbbbbbbbbbbb", 0), // the only, so the current baseline, of its config
		e("p-old", store.KindPR, "aaaaaaaaaaaaaaaa", 1),
		e("p-new", store.KindPR, "aaaaaaaaaaaaaaaa", 999),
		cites(e("p-cites-a1", store.KindPR, "aaaaaaaaaaaaaaaa", 998), "a1"), // a recent PR compared with a1
		cites(e("p-cited-a2", store.KindPR, "aaaaaaaaaaaaaaaa", 2), "a2"),   // an old PR compared with a2
		e("aa1", store.KindAA, "aaaaaaaaaaaaaaaa", 1),
		e("aa2", store.KindAA, "aaaaaaaaaaaaaaaa", 2),
	}
	for _, tc := range []struct {
		name   string
		policy store.Policy
		remove []string
	}{
		{"keep all", store.Policy{Now: now}, nil},
		{"keep 2 (a1 and a2 cited by PR results kept forever)", store.Policy{Keep: 2, Now: now}, nil},
		{"keep 1, PRs kept forever", store.Policy{Keep: 1, Now: now}, nil},
		{"keep 1, a1 protected (an open PR's baseline)", store.Policy{Keep: 1, Now: now, Protect: []string{sha("a1")}}, nil},
		{"PR results for 30 days", store.Policy{PRAge: 30 * 24 * time.Hour, Now: now}, []string{"p-old", "p-cited-a2"}},
		{"keep 1, PR results for 30 days: a1 stays for the recent PR that cites it", store.Policy{Keep: 1, PRAge: 30 * 24 * time.Hour, Now: now}, []string{"p-old", "a2", "p-cited-a2"}},
		{"1 A/A rerun", store.Policy{KeepAA: 1, Now: now}, []string{"aa1"}},
		{"everything at once", store.Policy{Keep: 1, KeepAA: 1, PRAge: time.Hour, Now: now}, []string{"a1", "aa1", "p-old", "a2", "p-cited-a2", "p-cites-a1"}}, // oldest first,
	} {
		t.Run(tc.name, func(t *testing.T) {
			keep, remove := store.Plan(all, tc.policy)
			var got []string
			for _, r := range remove {
				got = append(got, r.Path)
			}
			if diff := cmp.Diff(tc.remove, got); diff != "" {
				t.Errorf("removed: -want +got\n%s", diff)
			}
			if len(keep)+len(remove) != len(all) {
				t.Errorf("kept %d + removed %d != %d", len(keep), len(remove), len(all))
			}
			for _, cur := range []string{"a3", "b1"} {
				for _, r := range remove {
					if r.Path == cur {
						t.Errorf("removed %s, the current baseline of its config", cur)
					}
				}
			}
		})
	}
}

// TestDirPruneKeepsCurrentBaseline prunes a directory store to its bound and checks that the
// baseline Resolve picks is still there, files and index alike.
func TestDirPruneKeepsCurrentBaseline(t *testing.T) {
	root := t.TempDir()
	s := store.NewDir(root)
	f := runFile(t)
	other := runFile(t, func(f *results.File) { f.Hardware.GPU = "H100" })
	for i := range 5 {
		if _, err := s.Put(ctx(t), at(sha(fmt.Sprint("c", i)), i), f); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Put(ctx(t), at(sha("x"), 0), other); err != nil {
		t.Fatal(err)
	}
	dry, err := s.Prune(ctx(t), store.Policy{Keep: 1, DryRun: true})
	if err != nil || len(dry) != 4 {
		t.Fatalf("dry run: %d to remove (%v), want 4", len(dry), err)
	}
	if n := len(dirFiles(t, root)); n != 7 {
		t.Errorf("a dry run changed the store: %d files, want 7", n)
	}
	removed, err := s.Prune(ctx(t), store.Policy{Keep: 1})
	if err != nil || len(removed) != 4 {
		t.Fatalf("Prune: %d removed (%v), want 4", len(removed), err)
	}
	for _, c := range []struct {
		commit string
		f      *results.File
	}{{sha("c4"), f}, {sha("x"), other}} {
		if _, _, err := s.Get(ctx(t), c.commit, store.ConfigID(c.f)); err != nil {
			t.Errorf("the current baseline %s is gone: %v", c.commit[:7], err)
		}
	}
	files := dirFiles(t, root)
	if len(files) != 3 { // two results and the index; emptied directories removed too
		t.Errorf("files after pruning: %d, want 3: %v", len(files), keys(files))
	}
}

// TestHistory checks that History hands compare the newest default-branch results only, and
// none when there are fewer than the minimum.
func TestHistory(t *testing.T) {
	s := store.NewDir(t.TempDir())
	f := runFile(t)
	id := store.ConfigID(f)
	put := func(e store.Entry, runID string) {
		t.Helper()
		g := runFile(t, func(f *results.File) { f.Run.ID = runID })
		if _, err := s.Put(ctx(t), e, g); err != nil {
			t.Fatal(err)
		}
	}
	put(at(sha("c0"), 0), "r0")
	put(at(sha("c1"), 1), "r1")
	put(store.Entry{Commit: sha("c1"), Kind: store.KindPR, PR: 2, Time: t0.Add(5 * time.Hour)}, "pr")
	if files, _, note, _, err := store.History(ctx(t), s, id, store.HistoryOptions{Min: 3}); err != nil || files != nil || note == "" {
		t.Errorf("History of 2 results: %d files, note %q, %v; want none and a note", len(files), note, err)
	}
	put(store.Entry{Commit: sha("c2"), Kind: store.KindAA, Time: t0.Add(6 * time.Hour)}, "aa")
	put(at(sha("c2"), 2), "r2")
	put(at(sha("c3"), 3), "r3")
	files, entries, _, _, err := store.History(ctx(t), s, id, store.HistoryOptions{Max: 3, Min: 3, Exclude: []string{sha("c3")}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for i, f := range files {
		got = append(got, f.Run.ID)
		if entries[i].Kind != store.KindDefault {
			t.Errorf("history entry of kind %s", entries[i].Kind)
		}
	}
	if diff := cmp.Diff([]string{"r2", "r1", "r0"}, got); diff != "" {
		t.Errorf("History run ids: -want +got\n%s", diff)
	}
}

func keys(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// lineageGraph is the synthetic history of the retention tests:
//
//	c0 ← c1 ← … ← c12        main, first parents (c6 merges f0, a branch from c4)
//	c4 ← f0
//	c8 ← gone0               a commit force-pushed away from main (refs/heads/gone)
func lineageGraph() graph {
	nodes := chain("c", 5, "")
	nodes = append(nodes, node{"f0", []string{"c4"}}, node{"c5", []string{"c4"}}, node{"c6", []string{"c5", "f0"}})
	nodes = append(nodes, node{"c7", []string{"c6"}}, node{"c8", []string{"c7"}}, node{"gone0", []string{"c8"}})
	for i := 9; i <= 12; i++ {
		nodes = append(nodes, node{fmt.Sprint("c", i), []string{fmt.Sprint("c", i-1)}})
	}
	return graph{nodes: nodes, refs: map[string]string{"main": "c12", "gone": "gone0"}}
}

// TestPlanAlongLineage checks retention along the default branch's first parents: a baseline
// of an old commit measured last (speedmatrix baseline --commit c3) does not push the tip's
// result out, results of a commit force-pushed away or only on a merged branch rank after every
// result on the line, by time, and so do those beyond the commits walked. Without a lineage,
// recency is the measurement time, as before.
func TestPlanAlongLineage(t *testing.T) {
	stored := []struct {
		name  string
		hours int
	}{{"f0", 5}, {"c10", 10}, {"c11", 11}, {"c12", 12}, {"gone0", 15}, {"c3", 20}} // c3 backfilled last
	for _, impl := range []struct {
		name string
		make func(*testing.T, graph) commitGraph
	}{{"github", onGitHub}, {"git", onGit}} {
		g := impl.make(t, lineageGraph())
		names := map[string]string{}
		for n, id := range g.ids {
			names[id] = n
		}
		var all []store.Entry
		for _, s := range stored {
			e := at(g.ids[s.name], s.hours)
			e.Kind, e.ConfigID, e.Path = store.KindDefault, "aaaaaaaaaaaaaaaa", s.name
			all = append(all, e)
		}
		lineage, err := g.commits.Ancestors(ctx(t), "main", store.LineageDepth(1))
		if err != nil || len(lineage) != 13 { // c0 … c12, not f0
			t.Fatalf("%s: Ancestors of main: %d commits, %v", impl.name, len(lineage), err)
		}
		cites := func(base string) []store.Entry {
			pr := store.Entry{Commit: sha("pr-head"), Kind: store.KindPR, PR: 4, ConfigID: "aaaaaaaaaaaaaaaa", Time: t0.Add(30 * time.Hour), Path: "pr", Base: g.ids[base]}
			return append(append([]store.Entry(nil), all...), pr)
		}
		for _, tc := range []struct {
			name    string
			entries []store.Entry
			policy  store.Policy
			remove  []string // oldest measured first
		}{
			{"by time (no lineage): the backfill is the newest", all, store.Policy{Keep: 1}, []string{"f0", "c10", "c11", "c12", "gone0"}},
			{"keep 1: the tip's result", all, store.Policy{Keep: 1, Lineage: lineage}, []string{"f0", "c10", "c11", "gone0", "c3"}},
			{"keep 3: the tip and its parents", all, store.Policy{Keep: 3, Lineage: lineage}, []string{"f0", "gone0", "c3"}},
			{"keep 4: then the backfilled c3", all, store.Policy{Keep: 4, Lineage: lineage}, []string{"f0", "gone0"}},
			{"keep 5: then off the line, newest measured first", all, store.Policy{Keep: 5, Lineage: lineage}, []string{"f0"}},
			{"beyond the walk: by time after the walked ones", all, store.Policy{Keep: 4, Lineage: lineage[:3]}, []string{"f0", "gone0"}},
			{"a kept PR result's baseline stays", cites("c10"), store.Policy{Keep: 1, Lineage: lineage}, []string{"f0", "c11", "gone0", "c3"}},
			{"a protected commit stays", all, store.Policy{Keep: 1, Lineage: lineage, Protect: []string{g.ids["c3"]}}, []string{"f0", "c10", "c11", "gone0"}},
		} {
			t.Run(impl.name+"/"+tc.name, func(t *testing.T) {
				keep, remove := store.Plan(tc.entries, tc.policy)
				var got []string
				for _, r := range remove {
					got = append(got, names[r.Commit])
				}
				if diff := cmp.Diff(tc.remove, got); diff != "" {
					t.Errorf("removed: -want +got\n%s", diff)
				}
				if len(keep)+len(remove) != len(tc.entries) {
					t.Errorf("kept %d + removed %d != %d", len(keep), len(remove), len(tc.entries))
				}
			})
		}
		t.Run(impl.name+"/off the lineage", func(t *testing.T) {
			var got []string
			for _, e := range (store.Policy{Lineage: lineage}).OffLineage(all) {
				got = append(got, names[e.Commit])
			}
			if diff := cmp.Diff([]string{"f0", "gone0"}, got); diff != "" {
				t.Errorf("OffLineage: -want +got\n%s", diff)
			}
			if r := (store.Policy{Lineage: lineage}).Recency("main"); !strings.Contains(r, "first parents of main (13 commits walked)") {
				t.Errorf("Recency %q", r)
			}
		})
	}
}

// TestDirPruneAlongLineage prunes a directory store along a lineage: the tip's result stays and
// the backfilled old commit's goes, files and index alike.
func TestDirPruneAlongLineage(t *testing.T) {
	root := t.TempDir()
	s := store.NewDir(root)
	f := runFile(t)
	for i, c := range []string{"c10", "c11", "c12", "c3"} { // c3 measured last
		if _, err := s.Put(ctx(t), at(sha(c), i), f); err != nil {
			t.Fatal(err)
		}
	}
	lineage := []string{sha("c12"), sha("c11"), sha("c10")} // c3 beyond the walk
	removed, err := s.Prune(ctx(t), store.Policy{Keep: 2, Lineage: lineage})
	if err != nil || len(removed) != 2 {
		t.Fatalf("Prune: %d removed (%v), want 2", len(removed), err)
	}
	for _, c := range []string{"c12", "c11"} {
		if _, _, err := s.Get(ctx(t), sha(c), store.ConfigID(f)); err != nil {
			t.Errorf("%s's result is gone: %v", c, err)
		}
	}
	for _, c := range []string{"c10", "c3"} {
		if _, _, err := s.Get(ctx(t), sha(c), store.ConfigID(f)); err == nil {
			t.Errorf("%s's result is still there", c)
		}
	}
}
