package compare_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/speedmatrix/speedmatrix/compare"
	"github.com/speedmatrix/speedmatrix/results"
)

// TestSpecDecodePriorFollowsRun checks that the prior of decode rates follows what the files
// say about speculative decoding: served unpinned (acceptance counters in the telemetry) or
// unknown (no server counters read), the prior covers the published acceptance-driven noise
// at the top of its range (vllm issue 53436 + 20 %: 24 % at concurrency 2, 9 % at 4); pinned,
// or a server whose counters show no speculative decoding, keeps the lower prior (10 %, 5 %).
func TestSpecDecodePriorFollowsRun(t *testing.T) {
	file := func(tel *results.Telemetry, pinned bool) *results.File {
		f := summaryFile("m", map[int]float64{1: 150, 2: 260, 4: 450, 8: 600}, nil)
		for i := range f.Decode {
			f.Decode[i].Telemetry = tel
		}
		if pinned {
			f.SpecDecode = &results.SpecDecode{Mode: results.SpecDecodePinned, PinnedAcceptanceLength: 2.5}
		}
		return f
	}
	server := &results.Telemetry{Source: "server", Preemptions: f64(0), PrefixCacheHitPct: f64(0)}
	spec := &results.Telemetry{Source: "server", Preemptions: f64(0), SpecAcceptancePct: f64(60), SpecAcceptanceLength: f64(2.8)}
	client := &results.Telemetry{Source: "client", MaxRunning: f64(2)}
	type cvs struct{ C1, C2, C4, C8 float64 }
	low := cvs{0.20, 0.10, 0.05, 0.01}
	high := cvs{0.20, 0.24, 0.09, 0.01}
	tests := []struct {
		name       string
		base, head *results.File
		want       cvs
		mode       string
	}{
		{"unknown: no telemetry", file(nil, false), file(nil, false), high, results.SpecDecodeUnknown},
		{"unknown: client telemetry only", file(client, false), file(client, false), high, results.SpecDecodeUnknown},
		{"unpinned: acceptance counters", file(spec, false), file(spec, false), high, results.SpecDecodeUnpinned},
		{"off: server counters without speculative decoding", file(server, false), file(server, false), low, results.SpecDecodeOff},
		{"pinned both sides", file(nil, true), file(nil, true), low, results.SpecDecodePinned},
		{"one side unknown", file(server, false), file(nil, false), high, results.SpecDecodeUnknown},
		{"one side unpinned", file(nil, true), file(spec, false), high, results.SpecDecodeUnpinned},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := compare.Compare(compare.Input{Base: []*results.File{tt.base}, Head: []*results.File{tt.head}}, compare.DefaultThresholds())
			if err != nil {
				t.Fatal(err)
			}
			cv := func(cell string) float64 {
				m := find(t, c, cell, results.MetricTotalTokPerS)
				if m.Noise == nil || m.Noise.Source != results.NoisePrior {
					t.Fatalf("%s: noise %+v, want the prior", cell, m.Noise)
				}
				return m.Noise.CV
			}
			got := cvs{cv("decode/8K/1"), cv("decode/8K/2"), cv("decode/8K/4"), cv("decode/8K/8")}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("prior CVs (-want +got):\n%s", d)
			}
			if c.Settings.SpecDecode != tt.mode {
				t.Errorf("settings say speculative decoding %q, want %q", c.Settings.SpecDecode, tt.mode)
			}
		})
	}
}
