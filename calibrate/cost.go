package calibrate

import (
	"math"
	"time"

	"github.com/speedmatrix/speedmatrix/results"
)

// Costs are the GPU-time figures of measuring on the reference server (GLM-5.3-Flash on 2×
// H200, as the simulator models it and `speedmatrix run` measured it: README, "Measured
// figures"). GPU time is the wall time the server is busy for the measurement; building and
// loading the server are left out (the same for every procedure compared here).
type Costs struct {
	// Window is a decode trial's measurement window (30 s).
	Window time.Duration
	// Handover is the time the server's front end takes to pass one request to the engine
	// (0.58 s on the reference): a decode trial at concurrency C cannot open its window before
	// C of them, so its readiness is C·Handover plus the cell's TTFT.
	Handover time.Duration
	// Drain is the wait after each decode trial for the server to empty (0.1 s).
	Drain time.Duration
	// ContextWarmup says that each context measured in a run first sends one hidden request of
	// its length (run's default), a second prefill besides the scout.
	ContextWarmup bool
}

// DefaultCosts are the reference server's figures.
func DefaultCosts() Costs {
	return Costs{Window: windowSeconds * time.Second, Handover: 580 * time.Millisecond, Drain: 100 * time.Millisecond, ContextWarmup: true}
}

// prefillTime returns the GPU time of one prefill of the matrix's context label (the scout, the
// warm-up, or a prefill trial): its tokens at the cell's true prompt rate.
func (m *Matrix) prefillTime(label string) time.Duration {
	for _, tc := range m.Cells {
		if tc.ID.Phase == results.PhasePrefill && tc.ID.ContextLabel == label && tc.Rate > 0 {
			return seconds(float64(tc.Context) / tc.Rate)
		}
	}
	return 0
}

// decodeTrialTime returns the GPU time of one decode trial of tc: readiness (C hand-overs and
// the cell's TTFT), the window and the drain; 0 for a cell that is not measured.
func (c Costs) decodeTrialTime(tc TrueCell) time.Duration {
	if !tc.Status.Measured() {
		return 0
	}
	return time.Duration(tc.ID.Concurrency)*c.Handover + seconds(tc.TTFT/1000) + c.Window + c.Drain
}

// contextTime returns the GPU time a run pays once per context it measures anything of: the
// scout and, with ContextWarmup, the hidden warm-up request.
func (m *Matrix) contextTime(c Costs, label string) time.Duration {
	d := m.prefillTime(label)
	if c.ContextWarmup {
		d *= 2
	}
	return d
}

// RunCost returns the GPU time of one side's `speedmatrix run` of the listed cells (every cell
// when cells is nil), trials[cell] trials each (default trials when a cell has no entry, 1 when
// that is 0): per context it touches, the warm-up and scout (which is the prefill cell's first
// trial); then each further prefill trial, and each decode trial of a measured cell. Over-
// capacity cells cost nothing.
func (m *Matrix) RunCost(c Costs, cells []results.CellID, trials map[results.CellID]int, defaultTrials int) time.Duration {
	want := map[results.CellID]bool{}
	for _, id := range cells {
		want[id] = true
	}
	n := func(id results.CellID) int {
		if k, ok := trials[id]; ok {
			return k
		}
		return max(1, defaultTrials)
	}
	touched := map[string]bool{}
	var d time.Duration
	for _, tc := range m.Cells {
		if len(want) > 0 && !want[tc.ID] {
			continue
		}
		k := n(tc.ID)
		if k <= 0 {
			continue
		}
		if tc.ID.Phase == results.PhasePrefill {
			d += time.Duration(k-1) * m.prefillTime(tc.ID.ContextLabel)
		} else {
			if !tc.Status.Measured() {
				continue
			}
			d += time.Duration(k) * c.decodeTrialTime(tc)
		}
		if !touched[tc.ID.ContextLabel] {
			touched[tc.ID.ContextLabel] = true
			d += m.contextTime(c, tc.ID.ContextLabel)
		}
	}
	return d
}

// CellCost returns the GPU time of measuring one cell trials more times on sides sides (2: base
// and head; 1: the head against a stored baseline), as the rerun budget charges it: the trials, plus its context's warm-up and scout as if no other
// cell of that context were measured (an upper bound: a rerun that measures several cells of a
// context pays those once, so it costs at most the sum of its cells' costs).
func (m *Matrix) CellCost(c Costs, cell string, trials, sides int) time.Duration {
	id, err := results.ParseCellID(cell)
	if err != nil || trials <= 0 {
		return 0
	}
	return time.Duration(sides) * m.RunCost(c, []results.CellID{id}, map[results.CellID]int{id: trials}, trials)
}

func seconds(s float64) time.Duration {
	if !(s > 0) || math.IsInf(s, 0) {
		return 0
	}
	return time.Duration(s * float64(time.Second))
}
