package calibrate_test

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/speedmatrix/speedmatrix/calibrate"
	"github.com/speedmatrix/speedmatrix/results"
	"github.com/speedmatrix/speedmatrix/store"
)

// TestStoreNoise: no repeated run of the config gives no measured noise; a commit's
// default-branch result and an A/A rerun of it (two simulated runs of one matrix) give a
// positive CV, from one commit.
func TestStoreNoise(t *testing.T) {
	ctx := context.Background()
	s := store.NewDir(t.TempDir())
	const c1 = "1111111111111111111111111111111111111111"
	m := calibrate.NewMatrix(1, 3)
	r := rand.New(rand.NewPCG(1, 2))
	runs := []*results.File{m.Run(r, "a", nil), m.Run(r, "b", nil)}
	at := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	if _, err := s.Put(ctx, store.Entry{Commit: c1, Time: at}, runs[0]); err != nil {
		t.Fatal(err)
	}
	id := store.ConfigID(runs[0])
	if cv, n, _, err := calibrate.StoreNoise(ctx, s, id); err != nil || cv != nil || n != 0 {
		t.Fatalf("one run: %v, %d commits, %v; want none", cv, n, err)
	}
	if _, err := s.Put(ctx, store.Entry{Commit: c1, Kind: store.KindAA, Time: at.Add(time.Hour)}, runs[1]); err != nil {
		t.Fatal(err)
	}
	cv, n, _, err := calibrate.StoreNoise(ctx, s, id)
	if err != nil || n != 1 || len(cv) == 0 {
		t.Fatalf("two runs: %v, %d commits, %v; want the noise of one commit", cv, n, err)
	}
	for k, v := range cv {
		if !(v > 0) {
			t.Errorf("%v: CV %v, want > 0", k, v)
		}
	}
}
