package store_test

import (
	"context"
	"testing"

	"github.com/speedmatrix/speedmatrix/store"
)

// TestBisectKind: a bisection's step is stored apart from the default-branch results (its own
// path, one per run id), so that history and baselines never read it, and reindex finds it.
func TestBisectKind(t *testing.T) {
	ctx := context.Background()
	d := store.NewDir(t.TempDir())
	commit := sha("c11")
	e := at(commit, 1)
	e.Kind, e.RunID = store.KindBisect, "step-1"
	e, err := d.Put(ctx, e, runFile(t))
	if err != nil {
		t.Fatal(err)
	}
	if want := "bisect/" + commit + "/" + e.ConfigID + "/step-1.json"; e.Path != want {
		t.Errorf("path %s, want %s", e.Path, want)
	}
	if got, _ := d.List(ctx, store.Filter{Kind: store.KindDefault}); len(got) != 0 {
		t.Errorf("a bisection's step listed as default-branch history: %+v", got)
	}
	if _, _, err := d.Get(ctx, commit, e.ConfigID); err == nil {
		t.Errorf("a bisection's step is the commit's baseline")
	}
	entries, skipped, err := d.Reindex(ctx)
	if err != nil || len(skipped) != 0 || len(entries) != 1 || entries[0].Kind != store.KindBisect || entries[0].RunID != "step-1" {
		t.Errorf("reindex: %+v %v %v", entries, skipped, err)
	}
}
