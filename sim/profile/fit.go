package profile

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"

	"github.com/speedmatrix/speedmatrix/results"
	"github.com/speedmatrix/speedmatrix/sim/engine"
)

// FitOptions are the facts a report does not hold, with the defaults DefaultFitOptions gives.
type FitOptions struct {
	Name string
	// BlockSize is the KV block size when the results do not say (vLLM's default is 16; MLA
	// attention backends use 64).
	BlockSize int
	// MeanTokensPerStep is the mean tokens a sequence gains per decode step with speculative
	// decoding (1 + accepted drafts) when the results carry no acceptance telemetry. It only
	// splits the measured time between tokens into step time and tokens per chunk.
	MeanTokensPerStep float64
	// MeanNaturalTokens is the profile's mean answer length without ignore_eos.
	MeanNaturalTokens float64
	NoiseCV           float64
}

// DefaultFitOptions returns the options used for the shipped profile.
func DefaultFitOptions() FitOptions {
	return FitOptions{BlockSize: 16, MeanTokensPerStep: 3.0, MeanNaturalTokens: 512}
}

// Fit derives a profile from a results file (measured, or imported from a report). The
// method, step by step, is documented in sim/PROFILES.md; in short:
//   - engine arguments (max_model_len, max_num_seqs, max_num_batched_tokens, speculative
//     tokens, served model) come from the server facts or the launch command;
//   - KV cache tokens lie between the largest C·(context+max_tokens) of a measured cell and the
//     smallest of an over-capacity cell; the profile takes the middle, in whole blocks, or the
//     lower bound when no cell was over capacity (the block size doubles while the count would
//     pass engine.MaxBlocks);
//   - a running ceiling below max_num_seqs is the median average-active count of the queued
//     cells that ran clearly fewer requests than their concurrency, when that median is under
//     0.95·max_num_seqs and not below the concurrency of a valid cell;
//   - a measurement of the built-in simulator is first brought back to model speed (rates
//     divided, times multiplied by its speedup);
//   - a least-squares line through the TTFT of the concurrency-1 decode cells (whose prompt
//     hits the prefix cache) against context gives the frontend's time per request (the
//     constant) and the engine's work per cached token to take up the prefix (the slope; the
//     request counts as running meanwhile, as the reference's running counts show);
//   - prefill compute time is each prefill cell's TTFT minus the frontend time;
//   - decode step time per batch size is fitted by least squares, step = a_B + c·B·context,
//     one a per batch size and one c, from the time between tokens at C = 1 and from total
//     tok/s at C ≥ 2 (and at queued cells running at the seat limit, with the average active
//     count as batch); prefill compute time and decode step time are pooled where noise makes
//     them fall with length or batch.
//
// Whatever the input does not bound or give, Fit assumes and says so in the profile's
// fit.notes; it returns an error only when the input lacks what no assumption can replace
// (a measured prefill cell, a measured decode cell), and never a profile that fails Validate.
func Fit(f *results.File, o FitOptions) (*Profile, error) {
	if o.BlockSize <= 0 {
		o.BlockSize = 16
	}
	if o.MeanTokensPerStep < 1 {
		o.MeanTokensPerStep = 3
	}
	p := &Profile{Name: o.Name, Noise: Noise{CV: o.NoiseCV}, Output: Output{MeanNaturalTokens: o.MeanNaturalTokens}}
	info := &FitInfo{Source: f.Run.ImportedFrom}
	if info.Source == "" {
		info.Source = "results file"
	}
	note := func(format string, args ...any) { info.Notes = append(info.Notes, fmt.Sprintf(format, args...)) }
	p.Fit = info

	args := launchArgs(f.Run.LaunchCommand)
	p.ServedModel = firstNonEmpty(args["--served-model-name"], args["serve"], f.Run.ServedModel, "model")
	if p.Name == "" {
		p.Name = "fitted"
	}
	p.EngineVersion = firstNonEmpty(f.Engine.Version, "unknown")
	if !strings.Contains(p.EngineVersion, "(simulated)") {
		p.EngineVersion += " (simulated)"
	}
	if sim := simulatorSpeedup(f); sim != 1 {
		f = atModelSpeed(f, sim)
		note("the input measured the built-in simulator at %g× speed: its rates are divided and its times multiplied by %g", sim, sim)
	}
	maxTokens := f.Run.MaxOutputTokens
	if maxTokens <= 0 {
		maxTokens = 4096
		note("max output tokens unknown: assumed %d", maxTokens)
	}
	var srv results.Server
	if f.Server != nil {
		srv = *f.Server
	}
	p.MaxModelLen = firstPositive(srv.MaxModelLen, atoi(args["--max-model-len"]))
	if p.MaxModelLen == 0 {
		for _, c := range f.Prefill {
			p.MaxModelLen = max(p.MaxModelLen, c.Context+1)
		}
		for _, c := range f.Decode {
			p.MaxModelLen = max(p.MaxModelLen, c.Context+maxTokens)
		}
		note("max_model_len unknown: the longest prompt plus output, %d", p.MaxModelLen)
	}
	// The most requests a valid cell ran at once bounds max_num_seqs (and any running ceiling)
	// from below; a queued cell is what bounds them from above.
	maxValidC, queued := 0, 0
	for _, c := range f.Decode {
		switch c.Status {
		case results.StatusValid:
			maxValidC = max(maxValidC, c.Concurrency)
		case results.StatusQueued:
			queued++
		}
	}
	p.MaxNumSeqs = firstPositive(srv.MaxNumSeqs, atoi(args["--max-num-seqs"]))
	switch {
	case p.MaxNumSeqs == 0 && queued == 0:
		p.MaxNumSeqs = max(256, maxValidC)
		note("max_num_seqs: at least %d (a valid cell ran that many requests at once); no cell was queued, so the fit assumed %s", maxValidC, seatsAssumed(p.MaxNumSeqs))
	case p.MaxNumSeqs == 0:
		p.MaxNumSeqs = max(256, maxValidC)
		note("max_num_seqs unknown: assumed %s", seatsAssumed(p.MaxNumSeqs))
	case p.MaxNumSeqs < maxValidC:
		note("max_num_seqs %d is below the %d requests a valid cell ran at once; the profile keeps %d, so the simulator queues such cells", p.MaxNumSeqs, maxValidC, p.MaxNumSeqs)
	}
	p.MaxNumBatchedTokens = atoi(args["--max-num-batched-tokens"])
	if p.MaxNumBatchedTokens == 0 {
		p.MaxNumBatchedTokens = 8192
		note("max_num_batched_tokens unknown: 8192")
	}
	p.SpecDecode.NumSpeculativeTokens = specTokens(args["--speculative-config"])
	if step := 1 + p.SpecDecode.NumSpeculativeTokens; p.MaxNumBatchedTokens < step {
		note("max_num_batched_tokens %d cannot hold one decode step of %d tokens (1 + %d speculative): raised to %d", p.MaxNumBatchedTokens, step, p.SpecDecode.NumSpeculativeTokens, step)
		p.MaxNumBatchedTokens = step
	}
	p.KVCache.Dtype = firstNonEmpty(args["--kv-cache-dtype"], "auto")

	// KV cache.
	bs := firstPositive(srv.BlockSize, o.BlockSize)
	kv, lo := srv.KVCacheTokens, 0
	var kvNote func(tokens int) string
	if kv == 0 {
		need := func(c results.DecodeCell) int { return c.Concurrency * (c.Context + maxTokens) }
		label := func(c results.DecodeCell) string { return fmt.Sprintf("%s×%d", c.ContextLabel, c.Concurrency) }
		loCell := ""
		for _, c := range f.Decode {
			if c.Status.Measured() && need(c) > lo {
				lo, loCell = need(c), label(c)
			}
		}
		// An over-capacity cell that needs no more than a measured cell contradicts it (labels
		// round contexts to whole K; max_tokens may be assumed): the measured cell wins.
		hi := math.MaxInt
		var contradicted []string
		for _, c := range f.Decode {
			switch {
			case c.Status != results.StatusOverCapacity:
			case need(c) <= lo:
				contradicted = append(contradicted, fmt.Sprintf("%s %d", label(c), need(c)))
			default:
				hi = min(hi, need(c)-1)
			}
		}
		if len(contradicted) > 0 {
			note("over capacity although a measured cell needs more (%s needs %d tokens): %s; no KV cache size fits both, so the fit keeps every measured cell and the simulator runs %s", loCell, lo, strings.Join(contradicted, ", "), strings.Join(contradictedCells(contradicted), ", "))
		}
		switch {
		case lo == 0 && hi == math.MaxInt:
			return nil, errors.New("fit: nothing bounds the KV cache: no decode cell was measured or over capacity; the input needs sustained-decode cells")
		case hi == math.MaxInt:
			// Only bounded from below: the smallest cache consistent with every measured cell.
			kv = lo
			kvNote = func(tokens int) string {
				return fmt.Sprintf("KV cache: at least %d tokens (the largest C·(context+max_tokens) of a measured cell); no cell was over capacity, so the fit assumed %d (larger matrices may be over capacity in the simulator that were not on the server)", lo, tokens)
			}
		case lo == 0:
			kv = hi
			kvNote = func(tokens int) string {
				return fmt.Sprintf("KV cache: at most %d tokens (the smallest C·(context+max_tokens) of an over-capacity cell, less one); no decode cell was measured, so the fit assumed %d", hi, tokens)
			}
		default:
			kv = lo + (hi-lo)/2
			kvNote = func(int) string {
				return fmt.Sprintf("KV cache tokens between %d (largest measured C·(context+max_tokens)) and %d (smallest over capacity): %d", lo, hi, kv)
			}
		}
	}
	blocksOf := func(bs int) int {
		n := kv / bs
		if n*bs < lo {
			n = (lo + bs - 1) / bs // whole blocks, never below a measured cell's need
		}
		return max(1, n)
	}
	wantBS := bs
	for blocksOf(bs) > engine.MaxBlocks {
		bs *= 2
	}
	p.KVCache.BlockSize, p.KVCache.NumGPUBlocks = bs, blocksOf(bs)
	if kvNote != nil {
		note("%s", kvNote(p.KVCache.NumGPUBlocks*bs))
	}
	if bs != wantBS {
		note("KV cache: %d tokens take more than the simulator's %d blocks of %d tokens: block size %d instead", kv, engine.MaxBlocks, wantBS, bs)
	}

	// Running ceiling: queued cells that ran clearly fewer requests than their concurrency. A
	// ceiling must let every valid cell run all its requests.
	var actives []float64
	var short []string
	for _, c := range f.Decode {
		if c.Status == results.StatusQueued && c.AvgActiveRequests != nil && float64(c.Concurrency) > 1.05**c.AvgActiveRequests {
			actives = append(actives, *c.AvgActiveRequests)
			short = append(short, fmt.Sprintf("%s×%d", c.ContextLabel, c.Concurrency))
		}
	}
	if len(actives) > 0 {
		slices.Sort(actives)
		med := stat.Quantile(0.5, stat.Empirical, actives, nil)
		switch {
		case med >= 0.95*float64(p.MaxNumSeqs):
		case int(math.Round(med)) < maxValidC:
			note("queued cells (%s) ran %.1f requests on average (median), fewer than the %d a valid cell ran at once: no running ceiling fits both, and the input does not say what queued them; the profile has no running ceiling, so the simulator may run those cells valid", strings.Join(short, ", "), med, maxValidC)
		default:
			p.MaxRunning = int(math.Round(med))
			note("queued cells ran %.1f requests on average (median of %d cells), below max_num_seqs %d: running ceiling %d", med, len(actives), p.MaxNumSeqs, p.MaxRunning)
		}
	}

	// Frontend: TTFT of concurrency-1 decode cells against context.
	var xs, ys []float64
	for _, c := range f.Decode {
		if c.Concurrency == 1 && c.Status == results.StatusValid && c.TTFTMs != nil {
			xs = append(xs, float64(c.Context))
			ys = append(ys, *c.TTFTMs)
		}
	}
	alpha, beta := math.NaN(), math.NaN()
	if len(xs) >= 2 {
		alpha, beta = stat.LinearRegression(xs, ys, nil, false)
	}
	switch {
	case !math.IsNaN(alpha) && !math.IsNaN(beta) && !math.IsInf(beta, 0):
		p.Frontend.BaseMs, p.Prefill.USPerCachedToken = round(math.Max(alpha, 0), 1), round(math.Max(beta*1e3, 0), 4)
		note("TTFT at concurrency 1 (cached prompt) = %.0f ms + %.3f µs per prompt token (least squares over %d cells): the constant is the frontend's, the slope the engine's work to take up the cached prefix", p.Frontend.BaseMs, p.Prefill.USPerCachedToken, len(xs))
	case len(xs) >= 1:
		p.Frontend.BaseMs = round(stat.Mean(ys, nil), 1)
		note("TTFT at concurrency 1 known at one context only: frontend time %.0f ms per request, no cached-prefix take-up", p.Frontend.BaseMs)
	default:
		note("no valid concurrency-1 decode cell with a TTFT: the frontend time and the cached-prefix take-up are unknown, set to 0")
	}
	frontendMs := func(tokens int) float64 {
		return p.Frontend.BaseMs + p.Frontend.USPerPromptToken*float64(tokens)/1e3
	}

	// Prefill: compute time by prompt length, which must not fall with length.
	type prefillObs struct {
		tokens    int
		ms, n     float64
		label     string
		prevLabel string
	}
	var pre []prefillObs
	for _, c := range f.Prefill {
		if c.Status != results.StatusValid || c.TTFTMs == nil {
			continue
		}
		tokens := c.Context
		if c.PromptTokens != nil {
			tokens = *c.PromptTokens
		}
		compute := *c.TTFTMs - frontendMs(tokens)
		if !(compute > 0) || tokens <= 0 {
			note("prefill %s: TTFT %.0f ms is below the frontend time; skipped", c.ContextLabel, *c.TTFTMs)
			continue
		}
		pre = append(pre, prefillObs{tokens: tokens, ms: compute, n: 1, label: c.ContextLabel})
	}
	if len(pre) == 0 {
		return nil, errors.New("fit: no valid prefill cell with a TTFT above the frontend time: the input needs at least one measured prefill cell")
	}
	slices.SortStableFunc(pre, func(a, b prefillObs) int { return a.tokens - b.tokens })
	merged := pre[:1]
	for _, o := range pre[1:] {
		if last := &merged[len(merged)-1]; last.tokens == o.tokens {
			last.ms = (last.ms*last.n + o.ms*o.n) / (last.n + o.n)
			last.n += o.n
			continue
		}
		merged = append(merged, o)
	}
	ms, w := make([]float64, len(merged)), make([]float64, len(merged))
	for i, o := range merged {
		ms[i], w[i] = o.ms, o.n
	}
	if pooled := nonDecreasing(ms, w); pooled != nil {
		var which []string
		for i := range merged {
			if pooled[i] != ms[i] {
				which = append(which, merged[i].label)
			}
		}
		note("prefill compute time fell with prompt length (noise) among %s: pooled so that a longer prompt never prefills faster", strings.Join(which, ", "))
		ms = pooled
	}
	prevS := 0.0
	for i, o := range merged {
		rate := round(float64(o.tokens)/(ms[i]/1e3), 1)
		if float64(o.tokens)/rate < prevS {
			rate = math.Floor(float64(o.tokens)/prevS*10) / 10 // rounding must not make it fall
		}
		prevS = float64(o.tokens) / rate
		p.Prefill.Points = append(p.Prefill.Points, PrefillPoint{Tokens: o.tokens, TokPerS: rate})
	}

	// Decode.
	m := o.MeanTokensPerStep
	if acc := acceptanceLength(f); acc > 0 {
		m = acc
		note("tokens per decode step %.2f from the results' speculative-decoding telemetry", m)
	} else if p.SpecDecode.NumSpeculativeTokens > 0 {
		note("tokens per decode step assumed %.2f (the results carry no acceptance telemetry)", m)
	}
	if p.SpecDecode.NumSpeculativeTokens == 0 {
		m = 1
	} else {
		a := AcceptanceForMean(p.SpecDecode.NumSpeculativeTokens, m)
		for _, x := range GeometricAcceptance(p.SpecDecode.NumSpeculativeTokens, a) {
			p.SpecDecode.Acceptance = append(p.SpecDecode.Acceptance, round(x, 5))
		}
		fixSum(p.SpecDecode.Acceptance)
	}
	seats := p.MaxNumSeqs
	if p.MaxRunning > 0 {
		seats = min(seats, p.MaxRunning)
	}
	steps, c, notes, err := fitDecode(f.Decode, m, seats)
	if err != nil {
		return nil, err
	}
	info.Notes = append(info.Notes, notes...)
	p.Decode.Steps = steps
	p.Decode.MsPerMillionContextTokens = round(c, 4)
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("fit: the fitted profile is not usable: %w", err)
	}
	return p, nil
}

// decodeObs is one observation of decode step time.
type decodeObs struct {
	batch, ctx, stepMs float64
	ceiling            bool // a queued cell running at the server's ceiling
}

// fitDecode fits step_ms = a_B + c·B·context/1e6 by least squares, one a per batch size (batch
// sizes rounded to whole numbers form groups) and one c ≥ 0. Queued cells count only when they
// ran at the server's seat limit (seats): then they are a steady batch of that size. The
// points it returns ascend in batch, at least half a sequence apart, and their step time does
// not fall with batch; notes say what it had to smooth.
func fitDecode(cells []results.DecodeCell, m float64, seats int) ([]DecodePoint, float64, []string, error) {
	var notes []string
	var obs []decodeObs
	for _, c := range cells {
		if c.TotalTokPerS == nil || !(*c.TotalTokPerS > 0) || math.IsInf(*c.TotalTokPerS, 0) {
			continue
		}
		total := *c.TotalTokPerS
		switch {
		case c.Status == results.StatusValid && c.Concurrency == 1:
			tbt := 0.0
			if c.TBTMs != nil {
				tbt = *c.TBTMs
			} else if c.PerRequestTokPerS != nil && *c.PerRequestTokPerS > 0 {
				tbt = 1e3 / *c.PerRequestTokPerS
			}
			if tbt > 0 && !math.IsInf(tbt, 0) {
				obs = append(obs, decodeObs{float64(c.Concurrency), float64(c.Context), m * tbt, false})
			}
		case c.Status == results.StatusValid:
			b := float64(c.Concurrency)
			obs = append(obs, decodeObs{b, float64(c.Context), b * m * 1e3 / total, false})
		case c.Status == results.StatusQueued && c.AvgActiveRequests != nil && c.PerRequestTokPerS != nil:
			// A queued cell is a steady batch of the average active size when it ran at the
			// seat limit and the streams' own rates add up to the total; otherwise (a ramp,
			// preemption, prefill interference) it says nothing clean about a step.
			b := *c.AvgActiveRequests
			if b >= 1 && b >= 0.9*float64(seats) && math.Abs(b**c.PerRequestTokPerS-total)/total < 0.15 {
				obs = append(obs, decodeObs{b, float64(c.Context), b * m * 1e3 / total, true})
			}
		}
	}
	if len(obs) == 0 {
		return nil, 0, nil, errors.New("fit: no measured decode cell to time a decode step: the input needs valid sustained-decode cells with total tok/s (and TBT or per-request tok/s at concurrency 1)")
	}
	// Cells group by batch size; the queued cells at the ceiling form one group of their own
	// (their average active counts differ by sampling noise, not by batch).
	key := func(o decodeObs) int {
		if o.ceiling {
			return math.MaxInt
		}
		return int(math.Round(o.batch))
	}
	groups := map[int]int{}
	var keys []int
	for _, o := range obs {
		k := key(o)
		if _, ok := groups[k]; !ok {
			groups[k] = 0
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for i, k := range keys {
		groups[k] = i
	}
	g := len(keys)
	solve := func(withC bool) ([]float64, float64) {
		cols := g
		if withC {
			cols++
		}
		if len(obs) < cols {
			withC, cols = false, g
		}
		a := mat.NewDense(len(obs), cols, nil)
		b := mat.NewVecDense(len(obs), nil)
		for i, o := range obs {
			a.Set(i, groups[key(o)], 1)
			if withC {
				a.Set(i, g, o.batch*o.ctx/1e6)
			}
			b.SetVec(i, o.stepMs)
		}
		var x mat.VecDense
		if err := x.SolveVec(a, b); err != nil {
			return nil, -1
		}
		coef := make([]float64, g)
		for i := range g {
			coef[i] = x.AtVec(i)
		}
		c := 0.0
		if withC {
			c = x.AtVec(g)
		}
		return coef, c
	}
	usable := func(coef []float64, c float64) bool {
		if coef == nil || !(c >= 0) || math.IsInf(c, 0) {
			return false
		}
		for _, a := range coef {
			if !(a > 0) || math.IsInf(a, 0) {
				return false
			}
		}
		return true
	}
	coef, c := solve(true)
	if !usable(coef, c) {
		if coef != nil {
			notes = append(notes, "decode: a context term made a step time negative or non-positive; fitted without it (step time by batch only)")
		}
		coef, c = solve(false)
	}
	if !usable(coef, c) {
		return nil, 0, nil, errors.New("fit: the decode cells give no positive step time; check the input's decode numbers")
	}
	// One point per group at its mean batch, ascending; groups less than half a sequence apart
	// (the ceiling group next to a valid cell of the same concurrency) merge, weighted by
	// their cells.
	type point struct{ batch, step, n float64 }
	var pts []point
	for i, k := range keys {
		sum, n := 0.0, 0.0
		for _, o := range obs {
			if key(o) == k {
				sum += o.batch
				n++
			}
		}
		pts = append(pts, point{sum / n, coef[i], n})
	}
	slices.SortStableFunc(pts, func(a, b point) int { return cmp.Compare(a.batch, b.batch) })
	merged := pts[:1]
	for _, q := range pts[1:] {
		last := &merged[len(merged)-1]
		if q.batch-last.batch < 0.5 {
			n := last.n + q.n
			last.batch, last.step, last.n = (last.batch*last.n+q.batch*q.n)/n, (last.step*last.n+q.step*q.n)/n, n
			continue
		}
		merged = append(merged, q)
	}
	steps, w := make([]float64, len(merged)), make([]float64, len(merged))
	for i, q := range merged {
		steps[i], w[i] = q.step, q.n
	}
	if pooled := nonDecreasing(steps, w); pooled != nil {
		var which []string
		for i, q := range merged {
			if pooled[i] != steps[i] {
				which = append(which, fmt.Sprintf("%.1f ms at batch %g", steps[i], round(q.batch, 2)))
			}
		}
		notes = append(notes, fmt.Sprintf("decode step time fell with batch size (noise: %s): pooled so that a larger batch never steps faster", strings.Join(which, ", ")))
		steps = pooled
	}
	out := make([]DecodePoint, len(merged))
	for i, q := range merged {
		out[i] = DecodePoint{Batch: round(q.batch, 2), StepMs: round(steps[i], 3)}
	}
	return out, c, notes, nil
}

// nonDecreasing returns the weighted least-squares non-decreasing sequence closest to ys (pool
// adjacent violators), or nil when ys does not fall anywhere.
func nonDecreasing(ys, ws []float64) []float64 {
	if !slices.IsSortedFunc(ys, cmp.Compare[float64]) {
		type block struct {
			y, w float64
			n    int
		}
		var st []block
		for i, y := range ys {
			st = append(st, block{y, ws[i], 1})
			for len(st) >= 2 && st[len(st)-2].y > st[len(st)-1].y {
				a, b := st[len(st)-2], st[len(st)-1]
				st = append(st[:len(st)-2], block{(a.y*a.w + b.y*b.w) / (a.w + b.w), a.w + b.w, a.n + b.n})
			}
		}
		out := make([]float64, 0, len(ys))
		for _, b := range st {
			for range b.n {
				out = append(out, b.y)
			}
		}
		return out
	}
	return nil
}

// acceptanceLength returns the mean speculative acceptance length the results' telemetry
// reports, 0 when none does.
func acceptanceLength(f *results.File) float64 {
	var xs []float64
	for _, c := range f.Decode {
		if c.Telemetry != nil && c.Telemetry.SpecAcceptanceLength != nil && *c.Telemetry.SpecAcceptanceLength >= 1 {
			xs = append(xs, *c.Telemetry.SpecAcceptanceLength)
		}
	}
	if len(xs) == 0 {
		return 0
	}
	return stat.Mean(xs, nil)
}

// launchArgs reads --flag value and --flag=value pairs from a launch command, and the model
// after "serve" under the key "serve".
func launchArgs(cmd string) map[string]string {
	out := map[string]string{}
	fields := shellFields(cmd)
	for i, f := range fields {
		switch {
		case f == "serve" && i+1 < len(fields) && !strings.HasPrefix(fields[i+1], "-"):
			out["serve"] = fields[i+1]
		case strings.HasPrefix(f, "--"):
			if k, v, ok := strings.Cut(f, "="); ok {
				out[k] = v
			} else if i+1 < len(fields) && !strings.HasPrefix(fields[i+1], "--") {
				out[f] = fields[i+1]
			}
		}
	}
	return out
}

// shellFields splits a command line into words, honouring single and double quotes.
func shellFields(s string) []string {
	var out []string
	var cur strings.Builder
	in := false
	var quote rune
	for _, r := range s {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, in = r, true
		case r == ' ' || r == '\t' || r == '\n':
			if in {
				out = append(out, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	if in {
		out = append(out, cur.String())
	}
	return out
}

// specTokens reads num_speculative_tokens from a --speculative-config JSON value.
func specTokens(js string) int {
	if js == "" {
		return 0
	}
	var sc struct {
		N int `json:"num_speculative_tokens"`
	}
	if json.Unmarshal([]byte(js), &sc) != nil {
		return 0
	}
	return max(sc.N, 0)
}

// contradictedCells returns the cell names of "label×C need" entries.
func contradictedCells(entries []string) []string {
	out := make([]string, len(entries))
	for i, e := range entries {
		out[i], _, _ = strings.Cut(e, " ")
	}
	return out
}

// seatsAssumed says which max_num_seqs the fit assumed.
func seatsAssumed(n int) string {
	if n == 256 {
		return "vLLM's default 256"
	}
	return fmt.Sprintf("%d (vLLM's default 256 is below a valid cell's concurrency)", n)
}

func atoi(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return 0
	}
	return n
}

func firstPositive(xs ...int) int {
	for _, x := range xs {
		if x > 0 {
			return x
		}
	}
	return 0
}

func firstNonEmpty(xs ...string) string {
	for _, x := range xs {
		if x != "" {
			return x
		}
	}
	return ""
}

func round(x float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(x*p) / p
}

// fixSum makes rounded probabilities sum to exactly 1 by adjusting the largest.
func fixSum(ps []float64) {
	sum, imax := 0.0, 0
	for i, p := range ps {
		sum += p
		if p > ps[imax] {
			imax = i
		}
	}
	ps[imax] = round(ps[imax]+1-sum, 5)
}

// simulatorSpeedup returns the speedup of the built-in simulator the results measured, 1 for
// any other server.
func simulatorSpeedup(f *results.File) float64 {
	if f.Run.Settings != nil && f.Run.Settings.Simulator != nil && f.Run.Settings.Simulator.Speedup > 0 {
		return f.Run.Settings.Simulator.Speedup
	}
	return 1
}

// atModelSpeed returns a copy of f's cell summaries with rates divided and times multiplied by
// s (trials are dropped: the fit reads summaries only).
func atModelSpeed(f *results.File, s float64) *results.File {
	g := *f
	scale := func(p *float64, k float64) *float64 {
		if p == nil {
			return nil
		}
		v := *p * k
		return &v
	}
	g.Prefill = make([]results.PrefillCell, len(f.Prefill))
	for i, c := range f.Prefill {
		c.PromptTokPerS, c.TTFTMs, c.Trials = scale(c.PromptTokPerS, 1/s), scale(c.TTFTMs, s), nil
		g.Prefill[i] = c
	}
	g.Decode = make([]results.DecodeCell, len(f.Decode))
	for i, c := range f.Decode {
		c.TotalTokPerS, c.PerRequestTokPerS = scale(c.TotalTokPerS, 1/s), scale(c.PerRequestTokPerS, 1/s)
		c.TTFTMs, c.TBTMs, c.Trials = scale(c.TTFTMs, s), scale(c.TBTMs, s), nil
		g.Decode[i] = c
	}
	return &g
}
