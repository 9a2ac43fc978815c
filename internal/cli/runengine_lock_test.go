package cli

import (
	"context"
	"strings"
	"testing"
)

// TestClockRestoreFailureIsReported: when gpu.lock_clocks cannot restore the clocks after the
// run, the run fails saying so and what to do, for a served run and for a paired run with
// engine.serve alike (the clocks would otherwise stay locked unnoticed).
func TestClockRestoreFailureIsReported(t *testing.T) {
	if testing.Short() {
		t.Skip("starts simulator processes (five for the paired case)")
	}
	matrix := "cells: [decode/1K/1]\nduration: 300ms\nmax_tokens: 16\nwarmup: 0\nreadiness_timeout: 5s\nquiet: true\n"
	for _, tc := range []struct{ name, extra string }{
		{"served", "gpu: {lock_clocks: true}\n"},
		{"paired", "gpu: {lock_clocks: true}\npaired: {enabled: true, blocks: 2, base_source: ., allow_same_engine: true}\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fakeSMI(t, false)
			t.Setenv("FAKE_SMI_NORESET", "1")
			c := newEngineCase(t, matrix, simCommand("--sim-speedup", "20"), tc.extra)
			_, stderr, err := c.run(context.Background(), t)
			if err == nil || !strings.Contains(err.Error(), "restoring the clocks") || !strings.Contains(err.Error(), "nvidia-smi -rgc") {
				t.Fatalf("run = %v, want an error saying the clocks were not restored and how to restore them; stderr:\n%s", err, stderr)
			}
		})
	}
}
