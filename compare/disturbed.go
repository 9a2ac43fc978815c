package compare

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/speedmatrix/speedmatrix/internal/quantile"
	"github.com/speedmatrix/speedmatrix/internal/textout"
	"github.com/speedmatrix/speedmatrix/results"
)

// A run can be disturbed in ways that are not noise around a level and not a change of the
// code (issue 33): a window whose bins show a stretch at a much lower level (a stalled request,
// a GC pause), and a step or a drift along the run's measuring order (a power cap hit mid-run,
// warm-up, a co-tenant). undisturbed takes both out before the comparison, on copies of the
// files, and says what it took out in the comparison's warnings:
//
//   - a decode window whose output-token bins show a stall (results.DetectDisturbance, the
//     runner's rule: a stretch of bins well below the rest that the window recovered from),
//     with no empty bin in it (an empty stretch is a stalled server, which fails closed), is
//     decided from the rest of its bins: its rates are those of the undisturbed bins, and the
//     stretch's bins are set to the rest's mean. Two levels (a step) are a run effect, left to
//     the order test below;
//   - the measuring order is each cell's trials' start times (the cell's Started where its
//     trials carry none; its Order where the run records no times at all). Where the base side
//     (base files and history) holds at least three runs, each run's cells are set against the
//     base side's per-cell medians, and the deviations (deciding metric, log scale, centred
//     per phase, weighted by each cell's noise, winsorised at orderWinsor robust SDs so that a
//     stalled window does not pull the fit) are tested for a step at one position of the order (the
//     supremum of the F statistic over the splits that leave orderTrim of the cells, and at
//     least orderMinSide, on each side; its size is the two sides' weighted medians apart) and
//     for a linear trend along it. A step or trend that is significant (orderStepF,
//     orderTrendF) and at least orderMinEffect is a run effect: it is removed from the run's
//     cells (rates and latencies alike), as the run's factor shared by all its cells is, and
//     compare goes on within the run. The order must be random in each run (a runner that
//     randomizes it), so that a change of rows or columns of the code does not line up with
//     it: a run whose order is rank-correlated with context or concurrency by more than
//     orderMaxAligned (row after row, as the runner measured before) is left alone.
//
// A paired file's blocks are runs of their own and left alone.

// Thresholds of the order tests.
const (
	orderTrim      = 0.05
	orderStepF     = 30
	orderTrendF    = 25
	orderMinEffect = 0.015
	orderMinCells  = 12
	orderMinSide   = 4
	orderWinsor    = 6
	// orderMaxAligned is the largest rank correlation of the order with the decode cells'
	// context or concurrency at which the order tests run.
	orderMaxAligned = 0.5
)

// undisturbed returns in with its runs' dips and order effects taken out (copies of the files
// it changed; in's files are not modified), and a warning for each run it changed.
func undisturbed(in Input, th Thresholds) (Input, []string) {
	var warns []string
	out := in
	sides := []*[]*results.File{&out.Base, &out.Head, &out.History}
	names := []string{"base", "head", "history"}
	for s, side := range sides {
		files := slices.Clone(*side)
		for i, f := range files {
			if f == nil || f.Run.Pairing != nil {
				continue
			}
			if g, cells := repairDips(f); g != nil {
				files[i] = g
				warns = append(warns, fmt.Sprintf("%s run %s: %s showed a stall inside the window (a stretch of bins far below the rest): decided from the rest of the window", names[s], runName(f, i), listCells(cells)))
			}
		}
		*side = files
	}
	baseSide := append(slices.Clone(out.Base), out.History...)
	if len(baseSide) < 3 {
		return out, warns
	}
	for _, f := range baseSide {
		if f == nil || f.Run.Pairing != nil {
			return out, warns
		}
	}
	ref := newOrderRef(baseSide, th)
	for s, side := range sides {
		files := slices.Clone(*side)
		for i, f := range files {
			if f == nil || f.Run.Pairing != nil {
				continue
			}
			if g, what := ref.removeOrderEffect(f); g != nil {
				files[i] = g
				warns = append(warns, fmt.Sprintf("%s run %s: %s along its measuring order, a disturbance of the run (throttling, warm-up, a co-tenant) rather than a change of the code: taken out before comparing", names[s], runName(f, i), what))
			}
		}
		*side = files
	}
	return out, warns
}

// runName names run f, the i-th of its side.
func runName(f *results.File, i int) string {
	if f.Run.ID != "" {
		return f.Run.ID
	}
	return fmt.Sprintf("%d", i+1)
}

// listCells lists up to four cells.
func listCells(ids []results.CellID) string {
	var s []string
	for i, id := range ids {
		if i == 4 {
			s = append(s, fmt.Sprintf("and %d more", len(ids)-4))
			break
		}
		s = append(s, id.String())
	}
	if len(ids) == 1 {
		return "cell " + s[0]
	}
	return "cells " + strings.Join(s, ", ")
}

// cloneFile returns a deep copy of f.
func cloneFile(f *results.File) *results.File {
	data, err := json.Marshal(f)
	if err != nil {
		panic(err) // a results.File always marshals
	}
	var g results.File
	if err := json.Unmarshal(data, &g); err != nil {
		panic(err)
	}
	return &g
}

// stallOf returns the stall DetectDisturbance finds in trial t's bins (the runner's rule) and
// the mean of the window's other full bins; nil when the window shows none, when what it shows
// is a step (two levels: a run effect, left to the order test), or when the stall holds an
// empty bin (a stalled server, which fails closed: failclosed.go's stalledWindow).
func stallOf(t *results.DecodeTrial) (*results.Disturbance, float64) {
	d := results.DetectDisturbance(t.BinOutputTokens, t.BinSeconds, t.WindowSeconds)
	if d == nil || d.Kind != results.DisturbStall {
		return nil, 0
	}
	bins := t.BinOutputTokens
	full := len(bins)
	if t.WindowSeconds < float64(full)*t.BinSeconds*(1-1e-9) {
		full-- // the last bin is short: not a level
	}
	var others []float64
	for i, b := range bins[:full] {
		if i >= d.FirstBin && i <= d.LastBin {
			if b == 0 {
				return nil, 0
			}
			continue
		}
		others = append(others, float64(b))
	}
	if d.LastBin >= full || len(others) == 0 {
		return nil, 0
	}
	rest := meanOf(others)
	if !(rest > 0) {
		return nil, 0
	}
	return d, rest
}

// repairDips returns a copy of f whose stalled decode windows are decided from the rest of
// their bins, and the cells it repaired; nil when no window holds a dip.
func repairDips(f *results.File) (*results.File, []results.CellID) {
	var hit []int
	for i := range f.Decode {
		for k := range f.Decode[i].Trials {
			if d, _ := stallOf(&f.Decode[i].Trials[k]); d != nil {
				hit = append(hit, i)
				break
			}
		}
	}
	if len(hit) == 0 {
		return nil, nil
	}
	g := cloneFile(f)
	var ids []results.CellID
	for _, i := range hit {
		c := &g.Decode[i]
		ids = append(ids, c.ID())
		var gs []float64
		for k := range c.Trials {
			t := &c.Trials[k]
			d, rest := stallOf(t)
			if d == nil {
				gs = append(gs, 1)
				continue
			}
			var before, after int
			for j, b := range t.BinOutputTokens {
				before += b
				if j >= d.FirstBin && j <= d.LastBin {
					t.BinOutputTokens[j] = int(math.Round(rest))
				}
				after += t.BinOutputTokens[j]
			}
			ratio := float64(after) / float64(max(1, before))
			gs = append(gs, ratio)
			scaleDecode(&t.DecodeMetrics, math.Log(ratio))
			if t.OutputTokens != nil {
				v := after
				t.OutputTokens = &v
			}
			for r := range t.Requests {
				if v := t.Requests[r].TBTMs; v != nil {
					x := *v / ratio
					t.Requests[r].TBTMs = &x
				}
			}
		}
		scaleDecode(&c.DecodeMetrics, math.Log(meanOf(gs)))
	}
	return g, ids
}

// scaleDecode makes d's speed exp(l) times faster: rates × exp(l), times between tokens ÷ (TTFT
// is left: a stall inside the window does not move the requests' first tokens before it).
func scaleDecode(d *results.DecodeMetrics, l float64) {
	mul := func(p **float64, k float64) {
		if *p != nil {
			v := **p * k
			*p = &v
		}
	}
	mul(&d.TotalTokPerS, math.Exp(l))
	mul(&d.PerRequestTokPerS, math.Exp(l))
	mul(&d.TBTMs, math.Exp(-l))
}

// orderRef is the base side's per-cell reference for the order tests: each cell's median log
// value of its deciding metric over the base side's runs, and its noise.
type orderRef struct {
	ref, sd map[results.CellID]float64
}

// newOrderRef computes the references from the base side's runs: each cell's median, and its
// noise as the runs' robust spread around it (after each run's median deviation, per phase)
// where there are at least five runs, floored at 0.3 %, else the prior.
func newOrderRef(runs []*results.File, th Thresholds) *orderRef {
	o := &orderRef{ref: map[results.CellID]float64{}, sd: map[results.CellID]float64{}}
	for _, p := range []results.Phase{results.PhasePrefill, results.PhaseDecode} {
		vals := make([]map[results.CellID]float64, len(runs))
		all := map[results.CellID][]float64{}
		for j, f := range runs {
			vals[j] = runValues(f, p)
			for id, x := range vals[j] {
				all[id] = append(all[id], x)
			}
		}
		for id, xs := range all {
			o.ref[id] = quantile.Median(xs)
			o.sd[id] = th.Prior.CV(id, results.DecidingMetric(p))
		}
		if len(runs) < 5 {
			continue
		}
		shift := make([]float64, len(runs))
		for j := range runs {
			var ds []float64
			for id, x := range vals[j] {
				ds = append(ds, x-o.ref[id])
			}
			if len(ds) > 0 { // a run without cells of the phase has no shift (and no residual below)
				shift[j] = quantile.Median(ds)
			}
		}
		res := map[results.CellID][]float64{}
		for j := range runs {
			for id, x := range vals[j] {
				res[id] = append(res[id], math.Abs(x-o.ref[id]-shift[j]))
			}
		}
		for id, rs := range res {
			if len(rs) >= 5 {
				o.sd[id] = math.Max(1.4826*quantile.Median(rs), 0.003)
			}
		}
	}
	return o
}

// orderPoint is one cell of a run in the order tests.
type orderPoint struct {
	id    results.CellID
	t     float64 // its position in the order: startOf
	e, w  float64 // deviation from the reference (centred per phase), weight 1/sd²
	u     float64 // rank in the order, 0..1
	phase results.Phase
}

// removeOrderEffect returns a copy of f with its step or trend along the measuring order taken
// out, and what it took out in words; nil when the run shows none (or cannot tell: too few
// cells with a place in the order and a reference).
func (o *orderRef) removeOrderEffect(f *results.File) (*results.File, string) {
	pts := o.points(f)
	if len(pts) < orderMinCells || alignedOrder(pts) {
		return nil, ""
	}
	adj := make([]float64, len(pts))
	var what []string
	for range 2 { // a step, then a trend left beside it (or the other way round)
		e := make([]float64, len(pts))
		for i, p := range pts {
			e[i] = p.e - adj[i]
		}
		kind, k, size := fitOrder(pts, e)
		if kind == "" {
			break
		}
		switch kind {
		case "step":
			for i := k; i < len(pts); i++ {
				adj[i] += size
			}
			what = append(what, fmt.Sprintf("from its %d%s cell in measuring order on (%d of %d cells), every cell %s", k+1, textout.Ordinal(k+1), len(pts)-k, len(pts), signedPct(size)))
		case "trend":
			for i, p := range pts {
				adj[i] += size * (p.u - 0.5)
			}
			what = append(what, fmt.Sprintf("a drift of %s from its first cell in measuring order to its last", signedPct(size)))
		}
	}
	if len(what) == 0 {
		return nil, ""
	}
	g := cloneFile(f)
	by := map[results.CellID]float64{}
	for i, p := range pts {
		by[p.id] = adj[i]
	}
	for i := range g.Decode {
		c := &g.Decode[i]
		l, ok := by[c.ID()]
		if !ok || l == 0 {
			continue
		}
		scaleDecodeAll(&c.DecodeMetrics, -l)
		for k := range c.Trials {
			t := &c.Trials[k]
			scaleDecodeAll(&t.DecodeMetrics, -l)
			for b := range t.BinOutputTokens {
				t.BinOutputTokens[b] = max(0, int(math.Round(float64(t.BinOutputTokens[b])*math.Exp(-l))))
			}
			for r := range t.Requests {
				q := &t.Requests[r]
				if q.TBTMs != nil {
					v := *q.TBTMs * math.Exp(l)
					q.TBTMs = &v
				}
				if q.TTFTMs != nil {
					v := *q.TTFTMs * math.Exp(l)
					q.TTFTMs = &v
				}
			}
		}
	}
	for i := range g.Prefill {
		c := &g.Prefill[i]
		l, ok := by[c.ID()]
		if !ok || l == 0 {
			continue
		}
		if c.PromptTokPerS != nil {
			v := *c.PromptTokPerS * math.Exp(-l)
			c.PromptTokPerS = &v
		}
		if c.TTFTMs != nil {
			v := *c.TTFTMs * math.Exp(l)
			c.TTFTMs = &v
		}
		for k := range c.Trials {
			c.Trials[k].PromptTokPerS *= math.Exp(-l)
			c.Trials[k].TTFTMs *= math.Exp(l)
		}
	}
	return g, strings.Join(what, ", and ")
}

// alignedOrder reports whether the run measured its cells in an order that lines up with the
// matrix (the decode cells' positions rank-correlated with their context or their concurrency
// by more than orderMaxAligned, as a runner that measures row after row does): there a step or
// drift along the order cannot be told from a change of rows or columns, and is left alone.
func alignedOrder(pts []orderPoint) bool {
	var pos, ctx, conc []float64
	for _, p := range pts {
		if p.id.Phase == results.PhaseDecode {
			pos = append(pos, p.u)
			c, err := results.ParseContext(p.id.ContextLabel)
			if err != nil {
				return false
			}
			ctx = append(ctx, float64(c))
			conc = append(conc, float64(p.id.Concurrency))
		}
	}
	if len(pos) < 4 {
		return false
	}
	return math.Abs(spearman(pos, ctx)) > orderMaxAligned || math.Abs(spearman(pos, conc)) > orderMaxAligned
}

// spearman returns the rank correlation of xs and ys (ties take their mean rank).
func spearman(xs, ys []float64) float64 {
	rx, ry := ranks(xs), ranks(ys)
	mx, my := meanOf(rx), meanOf(ry)
	var sxy, sxx, syy float64
	for i := range rx {
		sxy += (rx[i] - mx) * (ry[i] - my)
		sxx += (rx[i] - mx) * (rx[i] - mx)
		syy += (ry[i] - my) * (ry[i] - my)
	}
	if sxx == 0 || syy == 0 {
		return 0
	}
	return sxy / math.Sqrt(sxx*syy)
}

// ranks returns the ranks of xs, ties at their mean rank.
func ranks(xs []float64) []float64 {
	idx := argsort(xs)
	out := make([]float64, len(xs))
	for i := 0; i < len(idx); {
		j := i
		for j < len(idx) && xs[idx[j]] == xs[idx[i]] {
			j++
		}
		for k := i; k < j; k++ {
			out[idx[k]] = float64(i+j-1) / 2
		}
		i = j
	}
	return out
}

// scaleDecodeAll makes d's speed exp(l) times faster: rates × exp(l), latencies ÷ exp(l).
func scaleDecodeAll(d *results.DecodeMetrics, l float64) {
	scaleDecode(d, l)
	if d.TTFTMs != nil {
		v := *d.TTFTMs * math.Exp(-l)
		d.TTFTMs = &v
	}
}

// points returns f's cells that have a place in the measuring order (startOf) and a reference, in measuring order, with
// their deviations centred per phase (weighted median) and winsorised.
func (o *orderRef) points(f *results.File) []orderPoint {
	var pts []orderPoint
	byOrder := !fileTimed(f)
	for _, p := range []results.Phase{results.PhasePrefill, results.PhaseDecode} {
		vals := runValues(f, p)
		var ph []orderPoint
		for id, x := range vals {
			r, ok := o.ref[id]
			if !ok {
				continue
			}
			t, ok := startOf(f, id, byOrder)
			if !ok {
				continue
			}
			sd := o.sd[id]
			ph = append(ph, orderPoint{id: id, t: t, e: x - r, w: 1 / (sd * sd), phase: p})
		}
		if len(ph) == 0 {
			continue
		}
		es, ws := make([]float64, len(ph)), make([]float64, len(ph))
		for i, q := range ph {
			es[i], ws[i] = q.e, q.w
		}
		c := weightedMedian(es, ws)
		for i := range ph {
			ph[i].e -= c
		}
		pts = append(pts, ph...)
	}
	if len(pts) == 0 {
		return nil
	}
	// Winsorise the standardised deviations at orderWinsor robust SDs (at least orderWinsor).
	zs := make([]float64, len(pts))
	for i, q := range pts {
		zs[i] = math.Abs(q.e * math.Sqrt(q.w))
	}
	lim := orderWinsor * math.Max(1, 1.4826*quantile.Median(zs))
	for i := range pts {
		s := math.Sqrt(pts[i].w)
		pts[i].e = math.Max(-lim, math.Min(lim, pts[i].e*s)) / s
	}
	sortOrder(pts)
	return pts
}

// startOf returns cell id's position in f's measuring order: the mean start of its trials
// (Unix seconds), else, for trials that carry no start, the cell's Started; byOrder (a file
// whose cells carry no time at all, fileTimed false) takes the cell's Order instead. ok false
// when the cell has none of them.
func startOf(f *results.File, id results.CellID, byOrder bool) (float64, bool) {
	var starts []time.Time
	var started time.Time
	var order int
	if id.Phase == results.PhasePrefill {
		if c := f.FindPrefill(id); c != nil {
			for _, t := range c.Trials {
				starts = append(starts, t.Start)
			}
			started, order = c.Started, c.Order
		}
	} else if c := f.FindDecode(id); c != nil {
		for _, t := range c.Trials {
			starts = append(starts, t.Start)
		}
		started, order = c.Started, c.Order
	}
	var ts []float64
	for _, t := range starts {
		if !t.IsZero() {
			ts = append(ts, float64(t.UnixNano())/1e9)
		}
	}
	switch {
	case byOrder:
		return float64(order), order > 0
	case len(ts) > 0:
		return meanOf(ts), true
	case !started.IsZero():
		return float64(started.UnixNano()) / 1e9, true
	}
	return 0, false
}

// fileTimed reports whether any cell of f carries a time (a trial's Start or the cell's
// Started): then the order tests place cells by time, else by their Order.
func fileTimed(f *results.File) bool {
	for i := range f.Prefill {
		if !f.Prefill[i].Started.IsZero() || slices.ContainsFunc(f.Prefill[i].Trials, func(t results.PrefillTrial) bool { return !t.Start.IsZero() }) {
			return true
		}
	}
	for i := range f.Decode {
		if !f.Decode[i].Started.IsZero() || slices.ContainsFunc(f.Decode[i].Trials, func(t results.DecodeTrial) bool { return !t.Start.IsZero() }) {
			return true
		}
	}
	return false
}

// fitOrder tests deviations e of pts (in measuring order) for a step and for a linear trend
// and returns the one that explains more, when it is significant and at least orderMinEffect:
// kind "step" with the first position after it and its size (log), or "trend" with its change
// from the first position to the last; kind "" for none.
func fitOrder(pts []orderPoint, e []float64) (kind string, k int, size float64) {
	n := len(pts)
	var W, mean float64
	for i, p := range pts {
		W += p.w
		mean += p.w * e[i]
	}
	mean /= W
	var sse0 float64
	for i, p := range pts {
		sse0 += p.w * (e[i] - mean) * (e[i] - mean)
	}
	if !(sse0 > 0) {
		return "", 0, 0
	}
	bestF := 0.0
	// Steps: prefix sums of weight and weighted deviation.
	trim := max(orderMinSide, int(math.Ceil(orderTrim*float64(n))))
	var wb, sb float64
	for i := 0; i < n-trim; i++ {
		wb += pts[i].w
		sb += pts[i].w * e[i]
		split := i + 1
		if split < trim {
			continue
		}
		wa, sa := W-wb, mean*W-sb
		d := sa/wa - sb/wb
		dss := d * d * wb * wa / W
		f := dss / ((sse0 - dss) / float64(n-2))
		if f > orderStepF && f > bestF && math.Abs(d) >= orderMinEffect {
			// The step is the segments' medians apart, so that one stalled window near an end
			// cannot make one: the cells on each side must agree.
			if m := medianStep(pts, e, split); m*d > 0 && math.Abs(m) >= orderMinEffect {
				bestF, kind, k, size = f, "step", split, m
			}
		}
	}
	// The trend.
	var uw, uu, ue float64
	for _, p := range pts {
		uw += p.w * p.u
	}
	uw /= W
	for i, p := range pts {
		uu += p.w * (p.u - uw) * (p.u - uw)
		ue += p.w * (p.u - uw) * (e[i] - mean)
	}
	if uu > 0 {
		b := ue / uu
		dss := b * b * uu
		f := dss / ((sse0 - dss) / float64(n-2))
		if f > orderTrendF && f > bestF && math.Abs(b) >= orderMinEffect {
			kind, k, size = "trend", 0, b
		}
	}
	return kind, k, size
}

// medianStep returns the weighted median of the deviations from split on minus that of those
// before it.
func medianStep(pts []orderPoint, e []float64, split int) float64 {
	ws := make([]float64, len(pts))
	for i, p := range pts {
		ws[i] = p.w
	}
	return weightedMedian(e[split:], ws[split:]) - weightedMedian(e[:split], ws[:split])
}

// signedPct formats a log change as a signed percentage: "−5.1 % slower" or "+2.0 % faster".
func signedPct(l float64) string {
	p := (math.Exp(l) - 1) * 100
	if p < 0 {
		return fmt.Sprintf("%.1f %% slower", -p)
	}
	return fmt.Sprintf("%.1f %% faster", p)
}

// sortOrder sorts pts into measuring order (by place, ties by cell id) and sets each one's
// rank u (0 to 1).
func sortOrder(pts []orderPoint) {
	slices.SortFunc(pts, func(a, b orderPoint) int {
		switch {
		case a.t < b.t:
			return -1
		case a.t > b.t:
			return 1
		}
		return strings.Compare(a.id.String(), b.id.String())
	})
	for i := range pts {
		pts[i].u = float64(i) / float64(max(1, len(pts)-1))
	}
}
