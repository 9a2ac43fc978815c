package cli

import (
	"math"
	"path/filepath"
	"testing"

	"github.com/speedmatrix/speedmatrix/results"
	"github.com/speedmatrix/speedmatrix/sim/profile"
)

// TestRunRecordsAcceptance: sim → run → results: every decode cell and trial of a run against the
// simulator records the speculative acceptance its spec-decode counters gave (tokens per draft
// step, and the accepted share of drafted tokens), close to the profile's.
func TestRunRecordsAcceptance(t *testing.T) {
	if testing.Short() {
		t.Skip("measures the simulator for several seconds")
	}
	p, err := profile.Load(profile.Default, nil)
	if err != nil {
		t.Fatal(err)
	}
	ecfg, err := p.EngineConfig(0, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := ecfg.MeanTokensPerStep()
	out := filepath.Join(t.TempDir(), "r.json")
	if _, stderr, err := runSimTime(t, nil, simRun(out, "--sim-noise", "0")...); err != nil {
		t.Fatalf("run: %v\n%s", err, stderr)
	}
	f := readResults(t, out)
	check := func(what string, tel *results.Telemetry) {
		if tel == nil || tel.SpecAcceptanceLength == nil || tel.SpecAcceptancePct == nil {
			t.Errorf("%s: no acceptance recorded: %+v", what, tel)
			return
		}
		if got := *tel.SpecAcceptanceLength; math.Abs(got/want-1) > 0.1 {
			t.Errorf("%s: acceptance length %.3f, want the profile's %.3f", what, got, want)
		}
		k := float64(ecfg.NumSpecTokens)
		if got, pct := *tel.SpecAcceptancePct, 100*(*tel.SpecAcceptanceLength-1)/k; math.Abs(got-pct) > 0.5 {
			t.Errorf("%s: acceptance %.2f %% disagrees with length %.3f over %g drafts", what, got, *tel.SpecAcceptanceLength, k)
		}
	}
	for _, c := range f.Decode {
		check(c.ID().String(), c.Telemetry)
		for i := range c.Trials {
			check(c.ID().String()+" trial", c.Trials[i].Telemetry)
		}
	}
}
