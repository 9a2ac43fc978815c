package cli

import (
	"context"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/speedmatrix/speedmatrix/compare"
	"github.com/speedmatrix/speedmatrix/results"
)

// pinnedMatrix is a served run with spec_decode: pinned, two contexts at concurrency 1 and 2.
const pinnedMatrix = `contexts: [1K, 4K]
concurrency: [1, 2]
prefill_contexts: none
duration: 400ms
max_tokens: 256
warmup: 0
readiness_timeout: 5s
quiet: true
spec_decode: {mode: pinned, acceptance_trials: 4, acceptance_duration: 1s}
`

// TestRunEnginePinned: with spec_decode: pinned, run serves the simulator twice: an unpinned
// acceptance pass (the smallest and largest context at concurrency 1, four windows each, its
// acceptance recorded in spec_decode.acceptance_pass and OUTPUT.acceptance.json), then the
// matrix with --speculative-config pinning acceptance at the pass's mean length, which the
// matrix's telemetry then shows. Comparing two such runs compares the passes' acceptance: two
// runs of the same server are not an acceptance regression, a head whose pass accepted half as
// much is.
func TestRunEnginePinned(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server process four times and measures it for seconds")
	}
	run := func(seed string) *results.File {
		c := newEngineCase(t, pinnedMatrix, simCommand("--sim-speedup", "20", "--noise", "0.15", "--seed", seed), "")
		_, stderr, err := c.run(context.Background(), t)
		if err != nil {
			t.Fatalf("run: %v\n%s", err, stderr)
		}
		f, err := results.ReadFile(c.out)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(c.out + ".acceptance.json"); err != nil {
			t.Errorf("the acceptance pass's file: %v", err)
		}
		c.assertGroupGone(t)
		return f
	}
	base := run("11")
	sd := base.SpecDecode
	if sd == nil || sd.Mode != results.SpecDecodePinned || sd.PinnedFrom != results.PinnedFromAcceptance {
		t.Fatalf("spec_decode = %+v, want pinned from the acceptance pass", sd)
	}
	var passCells []string
	var sum float64
	for _, c := range sd.AcceptancePass {
		passCells = append(passCells, c.ID().String())
		if len(c.Trials) != 4 {
			t.Errorf("%s: %d trials, want 4", c.ID(), len(c.Trials))
		}
		if c.Telemetry == nil || c.Telemetry.SpecAcceptanceLength == nil {
			t.Fatalf("%s: no acceptance measured", c.ID())
		}
		sum += *c.Telemetry.SpecAcceptanceLength
	}
	if diff := cmp.Diff([]string{"decode/1K/1", "decode/4K/1"}, passCells); diff != "" {
		t.Errorf("acceptance pass cells (-want +got):\n%s", diff)
	}
	if want := math.Round(sum/2*100) / 100; sd.PinnedAcceptanceLength != want {
		t.Errorf("pinned at %g, want the pass's mean %g", sd.PinnedAcceptanceLength, want)
	}
	if !strings.Contains(base.Run.LaunchCommand, `"rejection_sample_method":"synthetic","synthetic_acceptance_length":`) {
		t.Errorf("the recorded launch command is not pinned: %s", base.Run.LaunchCommand)
	}
	for _, c := range base.Decode {
		if c.Telemetry == nil || c.Telemetry.SpecAcceptanceLength == nil {
			t.Errorf("%s: no acceptance telemetry", c.ID())
			continue
		}
		if got := *c.Telemetry.SpecAcceptanceLength; math.Abs(got/sd.PinnedAcceptanceLength-1) > 0.03 {
			t.Errorf("%s: the pinned matrix accepted %.3f tokens per step, want the pinned %.3f", c.ID(), got, sd.PinnedAcceptanceLength)
		}
	}

	head := run("12")
	cmpOf := func(h *results.File) *results.Comparison {
		c, err := compare.Compare(compare.Input{Base: []*results.File{base}, Head: []*results.File{h}, Force: true}, compare.DefaultThresholds())
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	accVerdicts := func(c *results.Comparison) map[string]results.Verdict {
		out := map[string]results.Verdict{}
		for _, cell := range c.Cells {
			for _, m := range cell.Metrics {
				if m.Metric == results.MetricSpecAcceptance && m.Change != nil {
					out[cell.Cell] = m.Verdict
				}
			}
		}
		return out
	}
	// Acceptance is compared in the matrix's cell of each pass cell, where that cell's status is
	// the same on both sides (a status change is a verdict of its own, and its metrics are not
	// compared): normally both; on a loaded machine a concurrency-1 window can come out queued
	// (the client late to send the next request), which is not what this test is about.
	status := map[string]results.Status{}
	for _, c := range base.Decode {
		status[c.ID().String()] = c.Status
	}
	comparable := 0
	for _, c := range head.Decode {
		if st, ok := status[c.ID().String()]; ok && st == c.Status && c.Status.Measured() && head.AcceptanceCell(c.ID()) != nil {
			comparable++
		}
	}
	aa := accVerdicts(cmpOf(head))
	if len(aa) != comparable || comparable == 0 {
		t.Errorf("A/A compared acceptance in %v, want the %d pass cells of the same status on both sides (at least one)", aa, comparable)
		for _, f := range []*results.File{base, head} {
			for _, c := range f.SpecDecode.AcceptancePass {
				acc := "none"
				if c.Telemetry != nil && c.Telemetry.SpecAcceptanceLength != nil {
					acc = fmt.Sprint(*c.Telemetry.SpecAcceptanceLength)
				}
				var per []string
				for _, tr := range c.Trials {
					if tr.Telemetry != nil && tr.Telemetry.SpecAcceptanceLength != nil {
						per = append(per, fmt.Sprint(*tr.Telemetry.SpecAcceptanceLength))
					} else {
						per = append(per, "none")
					}
				}
				t.Logf("pass cell %s: %s %s acceptance %s, trials %v", c.ID(), c.Status, c.Error, acc, per)
			}
		}
	}
	for cell, v := range aa {
		if v == results.VerdictRegression || v == results.VerdictImprovement {
			t.Errorf("A/A: %s acceptance %s", cell, v)
		}
	}
	// The head's pass accepting half as much shows in both pass cells: a change of about −50 %,
	// never unchanged. Four windows of one run a side are replicates within the run, not
	// run-to-run noise (issue 21), so at concurrency 1 the prior (20 %) bounds it and it is not
	// proven there: unproven or inconclusive, for a paired run or the store's history to decide.
	for i := range head.SpecDecode.AcceptancePass {
		c := &head.SpecDecode.AcceptancePass[i]
		scale := func(t *results.Telemetry) {
			if t != nil && t.SpecAcceptanceLength != nil {
				v := *t.SpecAcceptanceLength * 0.5
				t.SpecAcceptanceLength = &v
			}
		}
		scale(c.Telemetry)
		for j := range c.Trials {
			scale(c.Trials[j].Telemetry)
		}
	}
	hc := cmpOf(head)
	for cell, v := range accVerdicts(hc) {
		var ch *results.Change
		for _, cc := range hc.Cells {
			if m := metricOfCell(cc, results.MetricSpecAcceptance); cc.Cell == cell && m != nil {
				ch = m.Change
			}
		}
		if (v != results.VerdictUnproven && v != results.VerdictInconclusive && v != results.VerdictRegression) || ch == nil || ch.Change > -0.3 {
			t.Errorf("a 50 %% acceptance drop: %s %s (change %+v), want it shown (about −50 %%) and not passed as unchanged", cell, v, ch)
			for _, cc := range cmpOf(head).Cells {
				if m := metricOfCell(cc, results.MetricSpecAcceptance); cc.Cell == cell && m != nil {
					t.Logf("%s: %s (noise %+v)", cell, m.Reason, *m.Noise)
				}
			}
		}
	}
}

func metricOfCell(c results.CellComparison, m results.Metric) *results.MetricComparison {
	for i := range c.Metrics {
		if c.Metrics[i].Metric == m {
			return &c.Metrics[i]
		}
	}
	return nil
}
