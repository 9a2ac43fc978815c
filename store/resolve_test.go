package store_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/speedmatrix/speedmatrix/store"
)

// resolveGraph is the synthetic history of the resolution tests:
//
//	old0 ← old1 ← old2                         the default branch before a force push (refs/heads/old)
//	m0 ← m1 ← m2 ← m3 ← m4 ← m5 ← deep0 … deep249   main, first parents (m3 merges f0 from m1)
//	      ↖ f0 ↙
//	pr-a: m5 ← a0   pr-b: m2 ← b0   pr-deep: deep249 ← d0
func resolveGraph() graph {
	var nodes []node
	nodes = append(nodes, chain("old", 3, "")...)
	nodes = append(nodes, chain("m", 3, "")...)
	nodes = append(nodes, node{"f0", []string{"m1"}}, node{"m3", []string{"m2", "f0"}}, node{"m4", []string{"m3"}}, node{"m5", []string{"m4"}})
	nodes = append(nodes, chain("deep", 250, "m5")...)
	nodes = append(nodes, node{"a0", []string{"m5"}}, node{"b0", []string{"m2"}}, node{"d0", []string{"deep249"}})
	return graph{nodes: nodes, refs: map[string]string{"main": "deep249", "old": "old2", "pr-a": "a0", "pr-b": "b0", "pr-deep": "d0"}}
}

func TestResolve(t *testing.T) {
	type stored struct {
		commit string
		hours  int
		kind   store.Kind
	}
	type want struct {
		commit   string // "" for none
		distance int
		reason   string // a substring of the reason when none
	}
	cases := []struct {
		name   string
		head   string
		depth  int
		stored []stored
		want   want
	}{
		{name: "merge-base with results", head: "a0",
			stored: []stored{{"m2", 1, ""}, {"m5", 2, ""}},
			want:   want{commit: "m5"}},
		{name: "merge-base without: nearest first-parent ancestor", head: "a0",
			// f0 is newer and an ancestor, but not on the first-parent line of main.
			stored: []stored{{"m1", 1, ""}, {"m2", 2, ""}, {"f0", 3, ""}},
			want:   want{commit: "m2", distance: 3}},
		{name: "PR results are never baselines", head: "a0",
			stored: []stored{{"m1", 1, ""}, {"m5", 2, store.KindPR}},
			want:   want{commit: "m1", distance: 4}},
		{name: "deep ancestry within the bound", head: "d0",
			stored: []stored{{"deep99", 1, ""}},
			want:   want{commit: "deep99", distance: 150}},
		{name: "deep ancestry beyond the bound", head: "d0",
			stored: []stored{{"m4", 1, ""}},
			want:   want{reason: "none of the merge-base"}},
		{name: "deep ancestry, a larger bound", head: "d0", depth: 300,
			stored: []stored{{"m4", 1, ""}},
			want:   want{commit: "m4", distance: 251}},
		{name: "force-pushed default branch: old history is not picked", head: "a0",
			stored: []stored{{"m0", 1, ""}, {"old2", 9, ""}, {"old1", 8, ""}},
			want:   want{commit: "m0", distance: 5}},
		{name: "force-pushed default branch: only old history has results", head: "b0",
			stored: []stored{{"old2", 9, ""}},
			want:   want{reason: "force push"}},
		{name: "no results at all", head: "a0",
			want: want{reason: "holds no default-branch results"}},
	}
	for _, impl := range []struct {
		name string
		make func(*testing.T, graph) commitGraph
	}{{"github", onGitHub}, {"git", onGit}} {
		g := impl.make(t, resolveGraph())
		for _, tc := range cases {
			t.Run(impl.name+"/"+tc.name, func(t *testing.T) {
				s := store.NewDir(t.TempDir())
				f := runFile(t)
				for _, st := range tc.stored {
					e := at(g.ids[st.commit], st.hours)
					if st.kind == store.KindPR {
						e.Kind, e.PR = store.KindPR, 7
					}
					if _, err := s.Put(ctx(t), e, f); err != nil {
						t.Fatal(err)
					}
				}
				b, err := store.Resolve(ctx(t), g.commits, s, store.Query{ConfigID: store.ConfigID(f), Head: g.ids[tc.head], Base: "main", MaxDepth: tc.depth})
				if err != nil {
					t.Fatal(err)
				}
				names := map[string]string{"": ""}
				for n, id := range g.ids {
					names[id] = n
				}
				got := want{commit: names[b.Commit], distance: b.Distance, reason: tc.want.reason}
				if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); diff != "" {
					t.Errorf("Resolve: -want +got\n%s\n%s", diff, b.Describe())
				}
				if b.Found() != (b.File != nil) || b.Found() != (b.Reason == "") {
					t.Errorf("Found %v, File %v, Reason %q: inconsistent", b.Found(), b.File != nil, b.Reason)
				}
				if !b.Found() && !strings.Contains(b.Reason, tc.want.reason) {
					t.Errorf("reason %q does not say %q", b.Reason, tc.want.reason)
				}
				if b.Found() && b.Distance > 0 && !strings.Contains(b.Describe(), "before the merge-base") {
					t.Errorf("Describe %q does not say how far back it went", b.Describe())
				}
			})
		}
	}
}
