package compare_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/speedmatrix/speedmatrix/compare"
	"github.com/speedmatrix/speedmatrix/results"
)

// TestPriorReason checks that a cell-metric whose noise is the prior alone says why: no raw
// samples, raw samples too few (how many, how many needed), one prefill request per run, or
// identical repetitions; never "no raw samples" where raw samples exist.
func TestPriorReason(t *testing.T) {
	ten := []int{1000, 1010, 990, 1000, 1005, 995, 1000, 1000, 1002, 998}
	prefill := func() *results.File {
		f := summaryFile("m", nil, nil)
		f.Prefill = []results.PrefillCell{{Context: 8192, ContextLabel: "8K", Status: results.StatusValid,
			PromptTokPerS: f64(12000), TTFTMs: f64(682.7),
			Trials: []results.PrefillTrial{{TTFTMs: 682.7, PromptTokens: 8192, PromptTokPerS: 12000}}}}
		return f
	}
	twice := func() *results.File {
		f := oneTrialFile(ten)
		f.Decode[0].Trials = append(f.Decode[0].Trials, f.Decode[0].Trials[0])
		return f
	}
	tests := []struct {
		name       string
		base, head *results.File
		cell       string
		metric     results.Metric
		want       results.Noise
	}{
		{"summary only", summaryFile("m", map[int]float64{16: 1000}, nil), summaryFile("m", map[int]float64{16: 1000}, nil),
			"decode/8K/16", results.MetricTotalTokPerS, results.Noise{PriorReason: results.PriorSummaryOnly}},
		{"ten bins", oneTrialFile(ten), oneTrialFile(ten), "decode/8K/16", results.MetricTotalTokPerS,
			results.Noise{PriorReason: results.PriorFewSamples, Samples: intp(10), SamplesNeeded: 25}},
		{"ten bins against a summary", summaryFile("m", map[int]float64{16: 1000}, nil), oneTrialFile(ten), "decode/8K/16", results.MetricTotalTokPerS,
			results.Noise{PriorReason: results.PriorFewSamples, Samples: intp(10), SamplesNeeded: 25}},
		{"prefill", prefill(), prefill(), "prefill/8K", results.MetricPromptTokPerS, results.Noise{PriorReason: results.PriorPrefill}},
		{"identical trials", twice(), twice(), "decode/8K/16", results.MetricTotalTokPerS, results.Noise{PriorReason: results.PriorNoSpread}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := compare.Compare(compare.Input{Base: []*results.File{tt.base}, Head: []*results.File{tt.head}}, compare.DefaultThresholds())
			if err != nil {
				t.Fatal(err)
			}
			m := find(t, c, tt.cell, tt.metric)
			if m.Noise == nil || m.Noise.Source != results.NoisePrior {
				t.Fatalf("noise %+v, want the prior", m.Noise)
			}
			got := results.Noise{PriorReason: m.Noise.PriorReason, Samples: m.Noise.Samples, SamplesNeeded: m.Noise.SamplesNeeded}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

func intp(v int) *int { return &v }
