package report

import (
	"testing"

	"github.com/speedmatrix/speedmatrix/results"
)

// TestChangesWords: the headline's change of several cells is their range wherever it is not
// one figure: cells that moved −21.7 to −23.1 % read as that range, not as a median no cell
// has (the demo's headline said "decode −22.8 %" above a table of −21.7, −22.6, −23.1, −23.1).
func TestChangesWords(t *testing.T) {
	views := func(chs ...float64) []cellView {
		var vs []cellView
		for _, ch := range chs {
			vs = append(vs, cellView{by: &results.MetricComparison{Metric: results.MetricTotalTokPerS, Change: &results.Change{Change: ch}}})
		}
		return vs
	}
	for _, tc := range []struct {
		chs  []float64
		want string
	}{
		{[]float64{-0.231, -0.2311, -0.226, -0.217}, "−21.7 to −23.1 %"},
		{[]float64{-0.2281, -0.2284}, "−22.8 %"},
		{[]float64{-0.233}, "−23.3 %"},
		{[]float64{-0.196, -0.257, -0.22}, "−19.6 to −25.7 %"},
		{nil, ""},
	} {
		if got := changesWords(views(tc.chs...)); got != tc.want {
			t.Errorf("changesWords(%v) = %q, want %q", tc.chs, got, tc.want)
		}
	}
}
