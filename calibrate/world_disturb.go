package calibrate

import (
	"math"
	"math/rand/v2"
	"time"

	"github.com/speedmatrix/speedmatrix/results"
)

// The world's disturbances: what a GPU server does to one run beyond noise around a level
// (issue 33): a stalled request or GC pause in a few windows, a power cap hit mid-run, drift
// along the run's measuring order (warm-up, a co-tenant), and noise that grows with load. Each
// run measures its cells in an order of its own, a random permutation of the matrix (the
// runner randomizes its measuring order so that a drift cannot line up with a row), and the
// files carry it: every trial's Start is the run's start plus its position × the time a cell
// takes, so compare and a reader see the order the run had.

// The disturbance models.
const (
	// WorldStall: 1–3 decode cells a run 15–30 % slower (a stalled request, a GC pause), half
	// of them as a dip inside the window (a stretch of a third of the bins at the level that
	// makes the window's mean that much lower; the rest of the window at the cell's level), half
	// as a window slower throughout; plus WorldGaussian's 1 % per cell.
	WorldStall WorldModel = "stall"
	// WorldThrottle: in 15 % of runs a power cap is hit at a random position of the measuring
	// order, and from there on every cell (prefill and decode) is 4–8 % slower; plus 1 % per
	// cell.
	WorldThrottle WorldModel = "throttle"
	// WorldOrderDrift: drift within a run along its measuring order: a linear trend whose
	// change from the first cell to the last is normal with SD 3 %, and in half of the runs a
	// warm-up (the first cells up to 4 % slower, decaying with a tenth of the run); plus 1 % per
	// cell.
	WorldOrderDrift WorldModel = "orderdrift"
	// WorldLoadNoise: per-cell noise whose CV grows with the load on the KV cache: 0.5 % at one
	// 8K request, 4 % at the KV cache's edge, log-linear in the tokens held in between.
	WorldLoadNoise WorldModel = "loadnoise"
)

// Throttle, stall and drift magnitudes (the issue's, and our choice where it gave a kind).
const (
	throttleShare            = 0.15
	throttleLo, throttleHi   = 0.04, 0.08
	stallLo, stallHi         = 0.15, 0.30
	stallDipShare            = 0.5
	stallDipBins             = 1.0 / 3
	driftSD                  = 0.03
	warmupShare, warmupDepth = 0.5, 0.04
	warmupTau                = 0.1
	loadCVLow, loadCVHigh    = 0.005, 0.04
	cellSeconds              = 40 // a cell's time in the order: its window and the ramp around it
)

// disturbs reports whether w is one of the disturbance models, whose runs carry a measuring
// order and draw a disturbance per run.
func (w WorldModel) disturbs() bool {
	switch w {
	case WorldStall, WorldThrottle, WorldOrderDrift, WorldLoadNoise:
		return true
	}
	return false
}

// loadCV is WorldLoadNoise's CV of a cell holding concurrency requests of context tokens (a
// prefill request holds its prompt): loadCVLow at one 8K request, loadCVHigh at kvTokens,
// log-linear in the tokens held.
func loadCV(context, concurrency int, decode bool) float64 {
	held := float64(context)
	if decode {
		held = float64(concurrency) * float64(context+maxTokens)
	}
	lo := float64(8<<10 + maxTokens)
	u := math.Log(held/lo) / math.Log(kvTokens/lo)
	u = max(0, min(1, u))
	return loadCVLow * math.Pow(loadCVHigh/loadCVLow, u)
}

// stall is one stalled window: its mean is depth lower; dip says the stall shows as a stretch
// of bins (else the whole window is that much slower).
type stall struct {
	depth float64
	dip   bool
	// at is the first bin of the dip, as a share of the window.
	at float64
}

// disturbance is what one run of a disturbance model holds beyond its cells' noise: the
// measuring order, and the slowdowns along it.
type disturbance struct {
	model WorldModel
	start time.Time
	// pos is each measured cell's position in the run's measuring order (0-based, trials of a
	// cell one after another), n the positions in all.
	pos map[results.CellID]int
	n   int
	// throttleAt is the first throttled position (-1: none), throttle the log factor from there.
	throttleAt int
	throttle   float64
	// slope is the drift's log change from the first position to the last; warm the warm-up's
	// log deficit at the first position.
	slope, warm float64
	stalls      map[results.CellID]stall
}

// drawDisturbance draws one run's order and disturbance under model w, for trials windows of
// every measured cell of m; nil for the models that have none.
func (m *Matrix) drawDisturbance(r *rand.Rand, w WorldModel, trials int) *disturbance {
	if !w.disturbs() {
		return nil
	}
	var cells, decode []results.CellID
	for _, tc := range m.Cells {
		if tc.Status.Measured() {
			cells = append(cells, tc.ID)
			if tc.ID.Phase == results.PhaseDecode {
				decode = append(decode, tc.ID)
			}
		}
	}
	d := &disturbance{model: w, pos: map[results.CellID]int{}, n: len(cells) * trials, throttleAt: -1,
		start: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(r.IntN(1<<20)) * time.Second)}
	for i, k := range r.Perm(len(cells)) {
		d.pos[cells[k]] = i * trials
	}
	switch w {
	case WorldThrottle:
		if r.Float64() < throttleShare {
			d.throttleAt = r.IntN(d.n)
			d.throttle = math.Log1p(-uniform(r, throttleLo, throttleHi))
		}
	case WorldOrderDrift:
		d.slope = driftSD * r.NormFloat64()
		if r.Float64() < warmupShare {
			d.warm = -uniform(r, 0, warmupDepth)
		}
	case WorldStall:
		d.stalls = map[results.CellID]stall{}
		for _, k := range r.Perm(len(decode))[:1+r.IntN(3)] {
			d.stalls[decode[k]] = stall{depth: uniform(r, stallLo, stallHi), dip: r.Float64() < stallDipShare, at: r.Float64()}
		}
	}
	return d
}

// logFactor returns the log speed factor the run's order gives the trial-th window of cell id:
// the throttle from its position on, the drift and the warm-up at its position (0 for nil).
func (d *disturbance) logFactor(id results.CellID, trial int) float64 {
	if d == nil {
		return 0
	}
	p, ok := d.pos[id]
	if !ok {
		return 0
	}
	p += trial
	var f float64
	if d.throttleAt >= 0 && p >= d.throttleAt {
		f += d.throttle
	}
	if d.n > 1 {
		u := float64(p) / float64(d.n-1)
		f += d.slope*(u-0.5) + d.warm*math.Exp(-u/warmupTau)
	}
	return f
}

// startOf returns when the trial-th window of cell id opened (zero for nil or a cell outside
// the order).
func (d *disturbance) startOf(id results.CellID, trial int) time.Time {
	if d == nil {
		return time.Time{}
	}
	p, ok := d.pos[id]
	if !ok {
		return time.Time{}
	}
	return d.start.Add(time.Duration(p+trial) * cellSeconds * time.Second)
}

// stallOf returns the stall of cell id's window (ok false when it has none).
func (d *disturbance) stallOf(id results.CellID) (stall, bool) {
	if d == nil {
		return stall{}, false
	}
	s, ok := d.stalls[id]
	return s, ok
}

// binLevels returns the factor of each of n bins of a window stalled by s: 1 throughout but
// for the dip, whose bins are at the level that makes the window's mean 1 − depth (the whole
// window at 1 − depth when s is no dip).
func (s stall) binLevels(n int) []float64 {
	out := make([]float64, n)
	if s.depth == 0 {
		for i := range out {
			out[i] = 1
		}
		return out
	}
	if !s.dip {
		for i := range out {
			out[i] = 1 - s.depth
		}
		return out
	}
	l := max(1, int(math.Round(float64(n)*stallDipBins)))
	at := min(n-l, int(s.at*float64(n-l+1)))
	level := 1 - s.depth*float64(n)/float64(l)
	for i := range out {
		out[i] = 1
		if i >= at && i < at+l {
			out[i] = max(0.02, level)
		}
	}
	return out
}
