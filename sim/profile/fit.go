package profile

import (
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
//     smallest of an over-capacity cell; the profile takes the middle, in whole blocks;
//   - a running ceiling below max_num_seqs is the median average-active count of the queued
//     cells that ran clearly fewer requests than their concurrency, when that median is under
//     0.95·max_num_seqs;
//   - a measurement of the built-in simulator is first brought back to model speed (rates
//     divided, times multiplied by its speedup);
//   - a least-squares line through the TTFT of the concurrency-1 decode cells (whose prompt
//     hits the prefix cache) against context gives the frontend's time per request (the
//     constant) and the engine's work per cached token to take up the prefix (the slope; the
//     request counts as running meanwhile, as the reference's running counts show);
//   - prefill compute time is each prefill cell's TTFT minus the frontend time;
//   - decode step time per batch size is fitted by least squares, step = a_B + c·B·context,
//     one a per batch size and one c, from the time between tokens at C = 1 and from total
//     tok/s at C ≥ 2 (and at steady queued cells, with the average active count as batch).
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
	p.MaxNumSeqs = firstPositive(srv.MaxNumSeqs, atoi(args["--max-num-seqs"]))
	if p.MaxNumSeqs == 0 {
		p.MaxNumSeqs = 256
		note("max_num_seqs unknown: vLLM's default 256")
	}
	p.MaxNumBatchedTokens = atoi(args["--max-num-batched-tokens"])
	if p.MaxNumBatchedTokens == 0 {
		p.MaxNumBatchedTokens = 8192
		note("max_num_batched_tokens unknown: 8192")
	}
	p.SpecDecode.NumSpeculativeTokens = specTokens(args["--speculative-config"])
	p.KVCache.Dtype = firstNonEmpty(args["--kv-cache-dtype"], "auto")

	// KV cache.
	bs := firstPositive(srv.BlockSize, o.BlockSize)
	p.KVCache.BlockSize = bs
	kv := srv.KVCacheTokens
	if kv == 0 {
		lo, hi := 0, math.MaxInt
		for _, c := range f.Decode {
			need := c.Concurrency * (c.Context + maxTokens)
			switch {
			case c.Status.Measured():
				lo = max(lo, need)
			case c.Status == results.StatusOverCapacity:
				hi = min(hi, need-1)
			}
		}
		switch {
		case lo == 0 && hi == math.MaxInt:
			return nil, errors.New("fit: no decode cells to bound the KV cache")
		case lo > hi:
			return nil, fmt.Errorf("fit: the over-capacity pattern is inconsistent: a measured cell needs %d KV tokens but an over-capacity cell needs only %d", lo, hi+1)
		case hi == math.MaxInt:
			kv = lo + lo/4
			note("no over-capacity cell: KV cache set 25%% above the largest measured need, %d tokens", kv)
		case lo == 0:
			kv = hi
		default:
			kv = lo + (hi-lo)/2
			note("KV cache tokens between %d (largest measured C·(context+max_tokens)) and %d (smallest over capacity): %d", lo, hi, kv)
		}
	}
	p.KVCache.NumGPUBlocks = max(1, kv/bs)

	// Running ceiling: queued cells that ran clearly fewer requests than their concurrency.
	var actives []float64
	for _, c := range f.Decode {
		if c.Status == results.StatusQueued && c.AvgActiveRequests != nil && float64(c.Concurrency) > 1.05**c.AvgActiveRequests {
			actives = append(actives, *c.AvgActiveRequests)
		}
	}
	if len(actives) > 0 {
		slices.Sort(actives)
		med := stat.Quantile(0.5, stat.Empirical, actives, nil)
		if med < 0.95*float64(p.MaxNumSeqs) {
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
	switch {
	case len(xs) >= 2:
		alpha, beta := stat.LinearRegression(xs, ys, nil, false)
		p.Frontend.BaseMs, p.Prefill.USPerCachedToken = round(math.Max(alpha, 0), 1), round(math.Max(beta*1e3, 0), 4)
		note("TTFT at concurrency 1 (cached prompt) = %.0f ms + %.3f µs per prompt token (least squares over %d cells): the constant is the frontend's, the slope the engine's work to take up the cached prefix", p.Frontend.BaseMs, p.Prefill.USPerCachedToken, len(xs))
	case len(xs) == 1:
		p.Frontend.BaseMs = ys[0]
	}
	frontendMs := func(tokens int) float64 {
		return p.Frontend.BaseMs + p.Frontend.USPerPromptToken*float64(tokens)/1e3
	}

	// Prefill.
	for _, c := range f.Prefill {
		if c.Status != results.StatusValid || c.TTFTMs == nil {
			continue
		}
		tokens := c.Context
		if c.PromptTokens != nil {
			tokens = *c.PromptTokens
		}
		compute := *c.TTFTMs - frontendMs(tokens)
		if compute <= 0 {
			note("prefill %s: TTFT %.0f ms is below the frontend time; skipped", c.ContextLabel, *c.TTFTMs)
			continue
		}
		p.Prefill.Points = append(p.Prefill.Points, PrefillPoint{Tokens: tokens, TokPerS: round(float64(tokens)/(compute/1e3), 1)})
	}
	if len(p.Prefill.Points) == 0 {
		return nil, errors.New("fit: no valid prefill cell with a TTFT")
	}
	slices.SortFunc(p.Prefill.Points, func(a, b PrefillPoint) int { return a.Tokens - b.Tokens })

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
	steps, c, err := fitDecode(f.Decode, m)
	if err != nil {
		return nil, err
	}
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
// sizes rounded to whole numbers form groups) and one c ≥ 0.
func fitDecode(cells []results.DecodeCell, m float64) ([]DecodePoint, float64, error) {
	var obs []decodeObs
	for _, c := range cells {
		if c.TotalTokPerS == nil || *c.TotalTokPerS <= 0 {
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
			if tbt > 0 {
				obs = append(obs, decodeObs{float64(c.Concurrency), float64(c.Context), m * tbt, false})
			}
		case c.Status == results.StatusValid:
			b := float64(c.Concurrency)
			obs = append(obs, decodeObs{b, float64(c.Context), b * m * 1e3 / total, false})
		case c.Status == results.StatusQueued && c.AvgActiveRequests != nil && c.PerRequestTokPerS != nil:
			// A queued cell is a steady batch of the average active size when the streams'
			// own rates add up to the total; otherwise (preemption, prefill interference) it
			// says nothing clean about a step.
			b := *c.AvgActiveRequests
			if b >= 1 && math.Abs(b**c.PerRequestTokPerS-total)/total < 0.15 {
				obs = append(obs, decodeObs{b, float64(c.Context), b * m * 1e3 / total, true})
			}
		}
	}
	if len(obs) == 0 {
		return nil, 0, errors.New("fit: no measured decode cell")
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
	coef, c := solve(true)
	if coef == nil || c < 0 {
		coef, c = solve(false)
	}
	if coef == nil {
		return nil, 0, errors.New("fit: decode least squares failed")
	}
	var pts []DecodePoint
	for i, k := range keys {
		sum, n := 0.0, 0.0
		for _, o := range obs {
			if key(o) == k {
				sum += o.batch
				n++
			}
		}
		if coef[i] <= 0 {
			return nil, 0, fmt.Errorf("fit: decode step time at batch %.1f came out non-positive; the decode cells are inconsistent", sum/n)
		}
		pts = append(pts, DecodePoint{Batch: round(sum/n, 2), StepMs: round(coef[i], 3)})
	}
	return pts, c, nil
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
