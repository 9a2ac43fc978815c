package calibrate

import (
	"math/rand/v2"

	"github.com/speedmatrix/speedmatrix/results"
)

// SlowedRun draws one server run of truth m under model w, as WorldRun does, of the cells of
// only (every cell when empty), the decode rates of each cell multiplied by slow(cell) (1:
// unchanged): a commit of a scripted history whose speed differs from the truth's. runID
// names it.
func (m *Matrix) SlowedRun(r *rand.Rand, w WorldModel, runID string, only []results.CellID, slow func(results.CellID) float64) *results.File {
	f := m.worldRunFactor(r, w, runID, 1, func(id results.CellID, _ int) float64 { return slow(id) }, w.runFactor(r))
	if len(only) == 0 {
		return f
	}
	return onlyCells(f, only)
}

// NewRate returns the share k/n with its 95 % Wilson interval.
func NewRate(k, n int) Rate { return rate(k, n) }
