package compare

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/speedmatrix/speedmatrix/results"
)

// TestSpecDecodePriorNeverLowers checks that the speculative-decoding prior raises the
// decode-rate prior where it is larger and keeps a larger configured one elsewhere.
func TestSpecDecodePriorNeverLowers(t *testing.T) {
	th := DefaultThresholds()
	th.Prior.DecodeRate = []ConcurrencyCV{{UpTo: 2, CV: 0.30}, {UpTo: 0, CV: 0.02}} // a noisier server
	got := withSpecDecodePrior(th, results.SpecDecodeUnpinned).Prior
	for c, want := range map[int]float64{1: 0.30, 2: 0.30, 4: 0.09, 8: 0.02, 128: 0.02} {
		if cv := got.CV(results.CellID{Phase: results.PhaseDecode, Concurrency: c}, results.MetricTotalTokPerS); cv != want {
			t.Errorf("concurrency %d: CV %g, want %g", c, cv, want)
		}
	}
	def := withSpecDecodePrior(DefaultThresholds(), results.SpecDecodeUnknown).Prior.DecodeRate
	if diff := cmp.Diff([]ConcurrencyCV{{1, 0.20}, {2, 0.24}, {4, 0.09}, {0, 0.01}}, def); diff != "" {
		t.Errorf("default with speculative decoding unknown (-want +got):\n%s", diff)
	}
}
