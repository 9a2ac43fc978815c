package bench

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/speedmatrix/speedmatrix/results"
)

// DefaultRemeasures is how many disturbed decode windows a run measures again by default.
const DefaultRemeasures = 4

// maxRemeasuresPerCell is how many times one cell is measured again: a cell whose every window
// is disturbed is the engine's behaviour, or a machine no re-measure will fix.
const maxRemeasuresPerCell = 2

// orderSeed returns the seed of a shuffled measuring order: cfg.OrderSeed, or one drawn from the
// run's ID (unique per run, so that two runs' orders differ); the shards of one plan share the
// plan's (their files merge into one run, whose settings must agree).
func orderSeed(cfg *Config) uint64 {
	switch {
	case cfg.OrderSeed != 0:
		return cfg.OrderSeed
	case cfg.Shard != nil && cfg.Shard.Plan != "":
		return OrderSeedOf("plan " + cfg.Shard.Plan)
	}
	return OrderSeedOf(cfg.RunID)
}

// OrderSeedOf returns the measuring order's seed drawn from id (never 0): runs that must measure
// in one order (the blocks of a paired run, so that a cell sits at the same place in every
// block and a drift cancels between a pair's blocks) set Config.OrderSeed to it.
func OrderSeedOf(id string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(id))
	return max(h.Sum64(), 1)
}

// shufflePlan puts the contexts of plan, and the decode cells of each, in a random order drawn
// from seed. A context's cells stay together after its scout: the scout fills the prefix cache
// with the context's prompt and its decode cells read it (measurement.md), and the KV cache
// need hold one context's prompt at a time.
func shufflePlan(plan []*ctxPlan, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	rng.Shuffle(len(plan), func(i, j int) { plan[i], plan[j] = plan[j], plan[i] })
	for _, p := range plan {
		rng.Shuffle(len(p.Decode), func(i, j int) { p.Decode[i], p.Decode[j] = p.Decode[j], p.Decode[i] })
	}
}

// matrixRank returns, for each cell of plan (by its ID), its place in the results file's order:
// contexts ascending, each context's over-capacity cells, its prefill cell, then its decode cells
// by concurrency, as a run in matrix order appends them. The file keeps this order whatever
// order the cells were measured in.
func matrixRank(plan []*ctxPlan) map[results.CellID]int {
	sorted := slices.Clone(plan)
	slices.SortStableFunc(sorted, func(a, b *ctxPlan) int {
		if a.Context != b.Context {
			return a.Context - b.Context
		}
		return a.Tokens - b.Tokens
	})
	rank := map[results.CellID]int{}
	add := func(id results.CellID) {
		if _, ok := rank[id]; !ok {
			rank[id] = len(rank)
		}
	}
	for _, p := range sorted {
		for _, c := range p.OverCap {
			add(results.CellID{Phase: results.PhaseDecode, ContextLabel: p.Label, Concurrency: c})
		}
		if p.Prefill {
			add(results.CellID{Phase: results.PhasePrefill, ContextLabel: p.Label})
		}
		for _, c := range slices.Sorted(slices.Values(p.Decode)) {
			add(results.CellID{Phase: results.PhaseDecode, ContextLabel: p.Label, Concurrency: c})
		}
	}
	return rank
}

// sortByRank puts the file's cells in matrix order (matrixRank); cells not ranked keep their
// place after the ranked ones.
func sortByRank(f *results.File, rank map[results.CellID]int) {
	at := func(id results.CellID) int {
		if r, ok := rank[id]; ok {
			return r
		}
		return len(rank)
	}
	slices.SortStableFunc(f.Prefill, func(a, b results.PrefillCell) int { return at(a.ID()) - at(b.ID()) })
	slices.SortStableFunc(f.Decode, func(a, b results.DecodeCell) int { return at(a.ID()) - at(b.ID()) })
}

// nextOrder returns the next cell's place in the measuring order and the time it starts.
func (s *session) nextOrder() (int, time.Time) {
	s.order++
	return s.order, s.now().UTC()
}

// disturbance returns the disturbance of a measured trial's window, or nil.
func disturbance(t *results.DecodeTrial) *results.Disturbance {
	return results.DetectDisturbance(t.BinOutputTokens, t.BinSeconds, t.WindowSeconds)
}

// cutAround returns the trial of the longest undisturbed part of a stalled window: the bins
// before the stall or those after it, analyzed as a window of their own. ok is false, with the
// reason, when the disturbance is a step (neither level is known to be the engine's) or the
// part is too short (fewer than results.DisturbMinBins bins, or less than a third of the
// window).
func cutAround(tr trialResult, d results.Disturbance) (results.DecodeTrial, string, bool) {
	t := tr.Analysis.Trial
	n := len(t.BinOutputTokens)
	if d.Kind != results.DisturbStall {
		return results.DecodeTrial{}, "the window changed level and stayed (a step): neither level is known to be the engine's", false
	}
	from, to := 0, d.FirstBin // bins [from, to)
	if after := n - 1 - d.LastBin; after > to {
		from, to = d.LastBin+1, n
	}
	full := time.Duration(t.BinSeconds * float64(time.Second))
	start := tr.win.Start.Add(time.Duration(from) * full)
	end := tr.win.Start.Add(time.Duration(to) * full)
	if end.After(tr.win.End) {
		end = tr.win.End
	}
	bins := to - from
	if bins < results.DisturbMinBins || 3*bins < n {
		return results.DecodeTrial{}, fmt.Sprintf("the longest undisturbed part of the window holds %d of its %d bins: too few to decide from", bins, n), false
	}
	sub := subWindow(tr.win, start, end)
	a := analyze(tr.recs, sub)
	if deref(a.Trial.OutputTokens) == 0 {
		return results.DecodeTrial{}, "no token arrived in the undisturbed part of the window", false
	}
	return a.Trial, fmt.Sprintf("bins %d–%d of %d, outside the stall (bins %d–%d), analyzed as a window of their own", from, to-1, n, d.FirstBin, d.LastBin), true
}

// subWindow returns the part [from, to) of w, with the samples taken inside it.
func subWindow(w window, from, to time.Time) window {
	sub := window{Start: from, End: to, Bin: w.Bin}
	lo, hi := from.Sub(w.Start), to.Sub(w.Start)
	for i, at := range w.At {
		if at < lo || at >= hi {
			continue
		}
		sub.At = append(sub.At, at-lo)
		pick := func(dst *[]float64, src []float64) {
			if i < len(src) {
				*dst = append(*dst, src[i])
			}
		}
		pick(&sub.Running, w.Running)
		pick(&sub.Waiting, w.Waiting)
		pick(&sub.Client, w.Client)
		pick(&sub.Awaiting, w.Awaiting)
		pick(&sub.Unseen, w.Unseen)
	}
	if w.Running != nil && sub.Running == nil {
		sub.Running, sub.Waiting, sub.Awaiting = []float64{}, []float64{}, []float64{}
	}
	sub.KVUsage = w.KVUsage
	return sub
}

// describeDisturbance says in words what a window's bins showed.
func describeDisturbance(d results.Disturbance, bins int) string {
	what := "a stall"
	if d.Kind == results.DisturbStep {
		what = "two levels"
	}
	return fmt.Sprintf("%s: bins %d–%d of %d at %.0f %% of the rest (%.1f %% of the window's tokens)", what, d.FirstBin, d.LastBin, bins, 100*d.Level, 100*d.Impact)
}
