package calibrate_test

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/speedmatrix/speedmatrix/calibrate"
	"github.com/speedmatrix/speedmatrix/compare"
	"github.com/speedmatrix/speedmatrix/store"
)

// snakeKeys returns the object keys in the JSON value v that are not snake_case.
func snakeKeys(v any, at string) []string {
	snake := regexp.MustCompile(`^[a-z][a-z0-9_]*$`)
	var bad []string
	switch x := v.(type) {
	case map[string]any:
		for k, y := range x {
			if !snake.MatchString(k) {
				bad = append(bad, at+"."+k)
			}
			bad = append(bad, snakeKeys(y, at+"."+k)...)
		}
	case []any:
		for _, y := range x {
			bad = append(bad, snakeKeys(y, at+"[]")...)
		}
	}
	return bad
}

// aaStore returns a store with two runs of commit c1 (default-branch and A/A) of one simulated
// matrix and a third, an A/A rerun, and the path of that third.
func aaStore(t *testing.T) (*store.Dir, string, string) {
	t.Helper()
	ctx := context.Background()
	root := t.TempDir()
	s := store.NewDir(root)
	const c1 = "1111111111111111111111111111111111111111"
	m := calibrate.NewMatrix(1, 3)
	r := rand.New(rand.NewPCG(1, 2))
	at := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	var last store.Entry
	for i, id := range []string{"a", "b", "c"} {
		e := store.Entry{Commit: c1, Time: at.Add(time.Duration(i) * time.Hour)}
		if i > 0 {
			e.Kind, e.RunID = store.KindAA, id
		}
		var err error
		if last, err = s.Put(ctx, e, m.Run(r, id, nil)); err != nil {
			t.Fatal(err)
		}
	}
	return s, root, last.Path
}

// TestStoreReportJSON checks that every key calibrate --store --format json writes is
// snake_case, the false-alarm rate's too (it was "K", "N", "P", "Low", "High").
func TestStoreReportJSON(t *testing.T) {
	s, _, _ := aaStore(t)
	rep, err := calibrate.StoreAA(context.Background(), s, "", compare.DefaultThresholds())
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := rep.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal([]byte(b.String()), &v); err != nil {
		t.Fatal(err)
	}
	if bad := snakeKeys(v, ""); len(bad) > 0 {
		t.Errorf("keys not in snake_case: %v\n%s", bad, b.String())
	}
	fa, _ := v["false_alarm"].(map[string]any)
	for _, k := range []string{"k", "n", "p", "low", "high"} {
		if _, ok := fa[k]; !ok {
			t.Errorf("false_alarm lacks %q: %v", k, fa)
		}
	}
}

// TestStoreAAUnreadable checks that a truncated A/A rerun is left out of the real A/A
// calibration with a warning naming it (it made calibrate --store fail), and that the other two
// runs of the commit still make a pair.
func TestStoreAAUnreadable(t *testing.T) {
	s, root, bad := aaStore(t)
	if err := os.WriteFile(filepath.Join(root, filepath.FromSlash(bad)), []byte(`{"schema": "speedmatrix/results/v1", "run": {"id": "c"`), 0o644); err != nil {
		t.Fatal(err)
	}
	rep, err := calibrate.StoreAA(context.Background(), s, "", compare.DefaultThresholds())
	if err != nil {
		t.Fatalf("StoreAA with a truncated A/A rerun: %v", err)
	}
	if rep.Runs != 2 || rep.FalseAlarm.N != 1 || len(rep.Warnings) != 1 || !strings.Contains(rep.Warnings[0], bad) {
		t.Errorf("runs %d, pairs %d, warnings %q; want 2 runs, 1 pair and a warning naming %s", rep.Runs, rep.FalseAlarm.N, rep.Warnings, bad)
	}
}

// TestStoreAAUnknownConfig checks that a config id the store holds no runs of is "no such
// config in the store", naming the ones it holds (it said no commit of it had two runs).
func TestStoreAAUnknownConfig(t *testing.T) {
	ctx := context.Background()
	s, _, _ := aaStore(t)
	es, _ := s.List(ctx, store.Filter{})
	_, err := calibrate.StoreAA(ctx, s, "deadbeefdeadbeef", compare.DefaultThresholds())
	if err == nil || !strings.Contains(err.Error(), "no such config in the store: deadbeefdeadbeef") || !strings.Contains(err.Error(), es[0].ConfigID+" (3 runs)") {
		t.Errorf("StoreAA of an unknown config id: %v; want no such config, naming %s", err, es[0].ConfigID)
	}
}
