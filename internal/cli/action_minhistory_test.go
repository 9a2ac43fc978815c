package cli

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/speedmatrix/speedmatrix/results"
	"github.com/speedmatrix/speedmatrix/store"
)

// TestActionStoreMinHistoryDefault: without store.min_history in the configuration the bot
// takes a PR's noise from history only with 10 default-branch results of the config stored (the
// documented default, config.Default and store.DefaultMinHistory), not with 9 — unlike `compare
// --history`, whose own threshold is 3.
func TestActionStoreMinHistoryDefault(t *testing.T) {
	for _, n := range []int{9, 10} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			e := newStoreEnv(t, 8)
			e.writeConfig(actionConfig("") + "store: {dir: " + filepath.Join(e.dir, "store") + "}\n")
			e.put(prBase)
			e.put(e.a1)
			for i, sha := range e.older[:n-2] {
				e.putScaled(sha, 1+0.03*float64(i+1))
			}
			_, cmp, body := e.runPR()
			if cmp == nil {
				t.Fatalf("no comparison:\n%s", body)
			}
			src := noiseSources(cmp)
			if got := src[results.NoiseHistory] > 0; got != (n >= store.DefaultMinHistory) {
				t.Errorf("%d results stored: noise sources %v", n, src)
			}
		})
	}
}
