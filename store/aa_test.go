package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/speedmatrix/speedmatrix/results"
	"github.com/speedmatrix/speedmatrix/store"
)

// TestAACandidate checks that the A/A rerun picks the newest default-branch commit with exactly
// one stored run, skips commits already re-measured, and reports none when all are.
func TestAACandidate(t *testing.T) {
	ctx := context.Background()
	s := store.NewDir(t.TempDir())
	if _, ok, err := store.AACandidate(ctx, s, ""); err != nil || ok {
		t.Fatalf("empty store: ok %v, err %v; want none", ok, err)
	}
	a, b, c := sha("a"), sha("b"), sha("c")
	for i, commit := range []string{a, b, c} {
		if _, err := s.Put(ctx, at(commit, i), runFile(t)); err != nil {
			t.Fatal(err)
		}
	}
	id := store.ConfigID(runFile(t))
	want := func(commit string) {
		t.Helper()
		e, ok, err := store.AACandidate(ctx, s, id)
		if err != nil || !ok || e.Commit != commit {
			t.Fatalf("AACandidate = %s, %v, %v; want %s", e.Commit, ok, err, commit)
		}
	}
	want(c) // newest
	rerun := func(commit, run string) {
		t.Helper()
		e := store.Entry{Commit: commit, Kind: store.KindAA, RunID: run, Time: t0.Add(10 * time.Hour)}
		if _, err := s.Put(ctx, e, runFile(t, func(f *results.File) { f.Run.ID = run })); err != nil {
			t.Fatal(err)
		}
	}
	rerun(c, "r1")
	want(b)
	rerun(b, "r2")
	rerun(a, "r3")
	if e, ok, err := store.AACandidate(ctx, s, id); err != nil || ok {
		t.Fatalf("every commit re-measured: got %s, %v, %v; want none", e.Commit, ok, err)
	}
}
