package compare_test

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/speedmatrix/speedmatrix/calibrate"
	"github.com/speedmatrix/speedmatrix/compare"
	"github.com/speedmatrix/speedmatrix/results"
)

// TestHeavyTailsAtSecondLook checks that a comparison of a few cells (the budgeted job's second
// look, compare --look 2 --cells) judges the history's tails on the whole matrix's history, as
// the first look does: the cells' tests keep the heavy-tail degrees of freedom. Scored on its own
// three cells, the history was too short to show its tails, and the second look tested the
// re-measured cells as if the noise were normal (3 of the 8 A/A false blocks of 300 budgeted
// jobs under t₃ noise).
func TestHeavyTailsAtSecondLook(t *testing.T) {
	const heavy = "heavier tails than normal"
	m := calibrate.NewMatrix(11, 1)
	r := rand.New(rand.NewPCG(11, 3))
	var hist []*results.File
	for i := range 10 {
		hist = append(hist, m.WorldRun(r, calibrate.WorldT3, "hist-"+string(rune('a'+i)), 1, ""))
	}
	base := m.WorldRun(r, calibrate.WorldT3, "base", 1, "")
	head := m.WorldRun(r, calibrate.WorldT3, "head", 1, "")
	rerun := m.WorldRun(r, calibrate.WorldT3, "head-rerun", 1, "")
	th := compare.DefaultThresholds()
	in := compare.Input{Base: []*results.File{base}, Head: []*results.File{head}, History: hist}
	first, err := compare.Compare(in, th)
	if err != nil {
		t.Fatal(err)
	}
	if !hasWarning(first, heavy) {
		t.Fatalf("first look: no heavy-tail warning on a t₃ history; warnings: %q", first.Warnings)
	}
	cells := []results.CellID{base.Prefill[2].ID(), base.Decode[5].ID(), base.Decode[20].ID()}
	var keep []results.CellID
	in.Head = append(in.Head, onlyCells(rerun, cells))
	in.Cells = append(keep, cells...)
	th.Look = 2
	second, err := compare.Compare(in, th)
	if err != nil {
		t.Fatal(err)
	}
	if !hasWarning(second, heavy) {
		t.Errorf("second look of %d cells: no heavy-tail warning; warnings: %q", len(cells), second.Warnings)
	}
	for _, c := range second.Cells {
		for _, mc := range c.Metrics {
			if mc.Metric != results.DecidingMetric(c.Phase) || mc.Noise == nil || mc.Noise.Source != results.NoiseHistory {
				continue
			}
			if mc.Noise.DF == nil || *mc.Noise.DF > 3 {
				t.Errorf("second look, %s %s: noise %+v, want the heavy-tail 3 degrees of freedom", c.Cell, mc.Metric, *mc.Noise)
			}
		}
	}
}

func hasWarning(c *results.Comparison, s string) bool {
	for _, w := range c.Warnings {
		if strings.Contains(w, s) {
			return true
		}
	}
	return false
}

// onlyCells returns f holding only the cells of keep.
func onlyCells(f *results.File, keep []results.CellID) *results.File {
	out := *f
	out.Prefill, out.Decode = nil, nil
	for _, c := range f.Prefill {
		for _, id := range keep {
			if c.ID() == id {
				out.Prefill = append(out.Prefill, c)
			}
		}
	}
	for _, c := range f.Decode {
		for _, id := range keep {
			if c.ID() == id {
				out.Decode = append(out.Decode, c)
			}
		}
	}
	return &out
}
