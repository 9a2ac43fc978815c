package compare_test

import (
	"math"
	"testing"

	"github.com/speedmatrix/speedmatrix/compare"
	"github.com/speedmatrix/speedmatrix/compare/stats"
	"github.com/speedmatrix/speedmatrix/results"
)

// TestAdviceFamilyCountsAcceptance checks that the second look's family, over which the rerun
// advice splits its level, counts speculative acceptance length in the cells where it is
// compared: decode/8K/8 compares 5 metrics, so each is planned at level2/5, not level2/4. δ is
// chosen so that the two give different trials.
func TestAdviceFamilyCountsAcceptance(t *testing.T) {
	withAcceptance := func(f *results.File) *results.File {
		for i := range f.Decode {
			f.Decode[i].Telemetry = &results.Telemetry{Source: "server", SpecAcceptanceLength: f64(2.5)}
		}
		return f
	}
	base := withAcceptance(summaryFile("m", map[int]float64{8: 600}, nil))
	head := withAcceptance(summaryFile("m", map[int]float64{8: 594}, nil))
	th := compare.DefaultThresholds()
	if err := th.SetThreshold("throughput=2.13"); err != nil {
		t.Fatal(err)
	}
	c, err := compare.Compare(compare.Input{Base: []*results.File{base}, Head: []*results.File{head}}, th)
	if err != nil {
		t.Fatal(err)
	}
	if len(cellOf(t, c, "decode/8K/8").Metrics) != 5 {
		t.Fatalf("decode/8K/8 compares %d metrics, want 5 with acceptance", len(cellOf(t, c, "decode/8K/8").Metrics))
	}
	plan, err := th.Plan()
	if err != nil {
		t.Fatal(err)
	}
	// Prior 1 % a side at concurrency 8, one run each: SE after k more trials a side √(2·10⁻⁴/(1+k)).
	trials := func(family int) int {
		z := stats.NormalQuantile(1-plan.Level2/float64(family)/2) + stats.NormalQuantile(th.Power)
		target := math.Log1p(2*0.0213) / z
		for k := 1; k <= th.MaxFurtherTrials; k++ {
			if math.Sqrt(2e-4/float64(1+k)) <= target {
				return k
			}
		}
		return 0
	}
	if trials(4) == trials(5) {
		t.Fatalf("δ does not separate the families: %d trials either way", trials(4))
	}
	var got int
	for _, it := range c.Rerun.Items {
		if it.Cell == "decode/8K/8" {
			got = it.FurtherTrials
		}
	}
	if got != trials(5) {
		t.Errorf("decode/8K/8 advised %d further trials, want %d (family of 5 metrics; %d would be a family of 4)", got, trials(5), trials(4))
	}
}
