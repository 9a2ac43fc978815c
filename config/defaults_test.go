package config

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/speedmatrix/speedmatrix/bench"
	"github.com/speedmatrix/speedmatrix/results"
)

// TestDefaultsAgreeWithBench holds the defaults that config and bench both state together: a
// run's settings from the file's defaults are bench's defaults, and the endpoint and matrix
// names config accepts are the ones bench measures.
func TestDefaultsAgreeWithBench(t *testing.T) {
	type shared struct {
		Endpoint, Matrix               string
		Duration                       Duration
		MaxTokens, Trials, Warmup      int
		Ready, Drain, Health           Duration
		Completions, Chat, Full, Quick string
	}
	r, b, bt := Default().Run, bench.DefaultConfig(), bench.DefaultTimeouts()
	got := shared{r.Endpoint, r.Matrix, r.Duration, r.MaxTokens, r.Trials, r.Warmup, r.ReadyTimeout, r.DrainTimeout, r.HealthTimeout,
		results.EndpointCompletions, results.EndpointChat, results.MatrixFull, results.MatrixQuick}
	want := shared{b.Endpoint, b.MatrixName, b.Duration, b.MaxTokens, b.Trials, b.Warmup, bt.Readiness, bt.Drain, bt.Health,
		bench.EndpointCompletions, bench.EndpointChat, bench.MatrixFull, bench.MatrixQuick}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("config's defaults and names (+) differ from bench's (-):\n%s", diff)
	}
	for _, name := range []string{results.MatrixFull, results.MatrixQuick, ""} {
		if _, err := bench.MatrixByName(name); err != nil {
			t.Errorf("config accepts matrix %q; bench: %v", name, err)
		}
	}
}
