package cli

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/speedmatrix/speedmatrix/results"
	"github.com/speedmatrix/speedmatrix/store"
)

// TestActionRerunPoolsWithEarlierHead: `/bench rerun` after a pull request's comparison is its
// second look: the head's cells measured again pool with the first pass stored at this head
// (look 2, compare.MergeLooks), the store keeps the first pass as the pull request's result,
// and the comment says it was the second look. Without an earlier run in the store, the rerun
// is compared alone as a first look and the comparison says so.
func TestActionRerunPoolsWithEarlierHead(t *testing.T) {
	for _, tc := range []struct {
		name      string
		firstPass bool
	}{{"after the first pass", true}, {"no earlier run stored", false}} {
		t.Run(tc.name, func(t *testing.T) {
			se := newStoreEnv(t, 0)
			se.put(prBase)
			var firstRun string
			if tc.firstPass {
				_, cmp, _ := se.runPR()
				if cmp == nil {
					t.Fatal("the first pass made no comparison")
				}
				if cmp.Settings.Look != 1 {
					t.Fatalf("first pass at look %d", cmp.Settings.Look)
				}
				firstRun = cmp.Head.RunID
			}
			se.benchComment("/bench rerun decode/8K/8")
			mustRun(t, se.actEnv)
			cmp, err := results.ReadComparisonFile(filepath.Join(se.dir, "artifact", "comparison.json"))
			if err != nil {
				t.Fatal(err)
			}
			pooled := false
			for _, w := range cmp.Warnings {
				pooled = pooled || strings.Contains(w, "second look: the rerun's 1 cell pooled with the earlier run of this head (run "+firstRun+")")
			}
			alone := strings.Contains(strings.Join(cmp.Warnings, "\n"), "no earlier run of this head")
			entries, err := se.st.List(context.Background(), store.Filter{Kind: store.KindPR, Commit: prHead})
			if err != nil {
				t.Fatal(err)
			}
			if !tc.firstPass {
				if cmp.Settings.Look != 1 || pooled || !alone {
					t.Errorf("a rerun with no earlier run: look %d, warnings %q; want look 1 and the warning that it was compared alone", cmp.Settings.Look, cmp.Warnings)
				}
				if len(entries) != 1 {
					t.Errorf("%d PR results stored, want the rerun's", len(entries))
				}
				return
			}
			if cmp.Settings.Look != 2 || !pooled || alone {
				t.Errorf("the rerun after the first pass: look %d, warnings %q; want look 2 pooled with run %s", cmp.Settings.Look, cmp.Warnings, firstRun)
			}
			if len(entries) != 1 || entries[0].RunID != firstRun {
				t.Errorf("the store's PR results %+v, want the first pass (run %s) kept", entries, firstRun)
			}
			if b := oneComment(t, se.srv.State()); !strings.Contains(b, "second look") {
				t.Errorf("the comment does not say it was the second look:\n%s", b)
			}
		})
	}
}
