package calibrate

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"

	"github.com/speedmatrix/speedmatrix/internal/quantile"
	"github.com/speedmatrix/speedmatrix/merge"
	"github.com/speedmatrix/speedmatrix/results"
)

// The world's noise: models of run-to-run noise that compare was not built around (heavy
// tails, a factor shared by a whole server run, runs that fall into a slower mode, speculative
// decoding with and without its counters), the procedures that measure the two sides, and the
// slowdowns a comparison should find. docs/calibration.md says where each magnitude comes from.

// WorldModel names a noise model of the world calibration (its CLI value).
type WorldModel string

// The world's noise models.
const (
	// WorldGaussian: independent log-normal noise per cell per trial, CV 1 %, on every metric.
	WorldGaussian WorldModel = "gaussian"
	// WorldT3: Student-t noise with 3 degrees of freedom on the log scale, SD 2 %, per cell
	// per trial (heavy tails).
	WorldT3 WorldModel = "t3"
	// WorldSpec: speculative decoding's acceptance noise on decode rates, CV 10/20/7.5/0.5 % at
	// concurrency 1/2/4/≥8, per cell per trial, the window's spec-decode counters carrying the
	// same draw (acceptance length ∝ the rate); TTFT and prefill get WorldGaussian's 1 %.
	WorldSpec WorldModel = "spec"
	// WorldSpecNoCounters: WorldSpec's noise, with telemetry that holds no spec-decode counter.
	WorldSpecNoCounters WorldModel = "spec-nocounters"
	// WorldDrift: a factor per run (one server lifetime), log-normal CV 2 %, on every cell and
	// metric (rates × f, latencies ÷ f), plus 0.5 % per cell per trial.
	WorldDrift WorldModel = "drift"
	// WorldBimodal: 20 % of runs 6 % slower on every cell (another kernel pick), plus 1 % per
	// cell per trial.
	WorldBimodal WorldModel = "bimodal"
)

// WorldModels are every model, in the table's order.
var worldModels = []WorldModel{WorldGaussian, WorldT3, WorldSpec, WorldSpecNoCounters, WorldDrift, WorldBimodal,
	WorldStall, WorldThrottle, WorldOrderDrift, WorldLoadNoise}

// WorldModels returns every noise model of the world calibration, in the table's order.
func WorldModels() []WorldModel { return append([]WorldModel(nil), worldModels...) }

// Procedure names how the two sides of a comparison are measured (its CLI value).
type Procedure string

// The procedures.
const (
	// ProcOne: one run a side, no history.
	ProcOne Procedure = "one"
	// ProcHistory: one run a side and 10 separate history runs of the base.
	ProcHistory Procedure = "history"
	// ProcTrials3: one file a side holding 3 trials of one server run.
	ProcTrials3 Procedure = "trials3"
	// ProcRuns3: 3 separate runs a side, pooled as compare's comma-separated sides are.
	ProcRuns3 Procedure = "runs3"
	// ProcPaired: one paired A/B run (run --paired): 4 pairs served ABBA ABBA, each block its
	// own server run.
	ProcPaired Procedure = "paired"
	// ProcBudget: the bot's adaptive job (package adaptive) with a stored baseline: ProcHistory's
	// files, then head-only reruns that budgetMinutes of GPU time buys (compare.PlanRerunsFor,
	// priced by DefaultCosts), each rerun its own server run, and the second look.
	ProcBudget Procedure = "budget"
)

var procedures = []Procedure{ProcOne, ProcHistory, ProcTrials3, ProcRuns3, ProcPaired, ProcBudget}

// Procedures returns every procedure, in the table's order.
func Procedures() []Procedure { return append([]Procedure(nil), procedures...) }

// historyRuns is ProcHistory's number of history runs; pairedBlocks the pairs of ProcPaired.
const (
	historyRuns  = 10
	pairedBlocks = 4
	runsPerSide  = 3
	// budgetMinutes is ProcBudget's GPU time for reruns: the bot's stored-baseline default.
	budgetMinutes = 15
)

// Shape names a slowdown injected into the head (its CLI value).
type Shape string

// The slowdown shapes.
const (
	// ShapeRowsFrom32K: decode rows at 32K and longer 10 % slower.
	ShapeRowsFrom32K Shape = "rows>=32K"
	// ShapeRow32K: the 32K decode row 10 % slower.
	ShapeRow32K Shape = "row32K"
	// ShapeColumn8: the concurrency-8 column 10 % slower.
	ShapeColumn8 Shape = "column8"
	// ShapeColumn1: the single-request column 20 % slower.
	ShapeColumn1 Shape = "column1"
	// ShapeMatrix: every decode cell 10 % slower.
	ShapeMatrix Shape = "matrix"
	// ShapeDecode5: every decode cell 5 % slower (δ itself: it must not pass, issue 33).
	ShapeDecode5 Shape = "decode5"
)

var shapes = []Shape{ShapeRowsFrom32K, ShapeRow32K, ShapeColumn8, ShapeColumn1, ShapeMatrix, ShapeDecode5}

// Shapes returns every slowdown shape, in the table's order.
func Shapes() []Shape { return append([]Shape(nil), shapes...) }

// Factor returns the factor the shape multiplies cell id's decode rates by (total and
// per-request tok/s; time between tokens moves by its inverse): 1 outside the shape.
func (s Shape) Factor(id results.CellID, context int) float64 {
	if id.Phase != results.PhaseDecode {
		return 1
	}
	switch s {
	case ShapeRowsFrom32K:
		if context >= 32<<10 {
			return 0.9
		}
	case ShapeRow32K:
		if id.ContextLabel == "32K" {
			return 0.9
		}
	case ShapeColumn8:
		if id.Concurrency == 8 {
			return 0.9
		}
	case ShapeColumn1:
		if id.Concurrency == 1 {
			return 0.8
		}
	case ShapeMatrix:
		return 0.9
	case ShapeDecode5:
		return 0.95
	}
	return 1
}

// ParseWorldModels, ParseProcedures and ParseShapes read comma-separated CLI lists; an empty
// list is every value.
func ParseWorldModels(list string) ([]WorldModel, error) {
	return parseList(list, worldModels, "model")
}

// ParseProcedures reads a comma-separated list of procedures (empty: all).
func ParseProcedures(list string) ([]Procedure, error) {
	return parseList(list, procedures, "procedure")
}

// ParseShapes reads a comma-separated list of slowdown shapes (empty: all).
func ParseShapes(list string) ([]Shape, error) { return parseList(list, shapes, "shape") }

func parseList[T ~string](list string, known []T, what string) ([]T, error) {
	if strings.TrimSpace(list) == "" {
		return append([]T(nil), known...), nil
	}
	var out []T
	seen := map[T]bool{}
	for _, s := range strings.Split(list, ",") {
		v := T(strings.TrimSpace(s))
		ok := false
		for _, k := range known {
			ok = ok || k == v
		}
		if !ok {
			names := make([]string, len(known))
			for i, k := range known {
				names[i] = string(k)
			}
			return nil, fmt.Errorf("%s %q unknown: want one of %s", what, v, strings.Join(names, ", "))
		}
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out, nil
}

// Spec-decode counters of the synthetic server: drafts of specTokens tokens a step, a mean
// acceptance length of specLength tokens a step (accepted + 1) at the run's typical acceptance.
const (
	specTokens = 4
	specLength = 2.0
)

// t3Clip bounds a t₃ draw on the log scale (±0.5: a 1.6× change), so that one draw in 10⁵
// cannot make a rate overflow; at SD 2 % it cuts draws beyond 43 SDs.
const t3Clip = 0.5

// logNormal returns exp(σ·z) for a log-normal factor of coefficient of variation cv.
func logNormal(r *rand.Rand, cv float64) float64 {
	return math.Exp(math.Sqrt(math.Log1p(cv*cv)) * r.NormFloat64())
}

// studentT3 draws Student's t with 3 degrees of freedom.
func studentT3(r *rand.Rand) float64 {
	var v float64
	for range 3 {
		z := r.NormFloat64()
		v += z * z
	}
	return r.NormFloat64() / math.Sqrt(v/3)
}

// specCV is WorldSpec's CV of decode rates at concurrency c (vLLM issue 53436).
func specCV(c int) float64 {
	switch {
	case c <= 1:
		return 0.10
	case c <= 2:
		return 0.20
	case c <= 4:
		return 0.075
	}
	return 0.005
}

// runFactor draws the speed factor one server run shares across its cells and trials.
func (w WorldModel) runFactor(r *rand.Rand) float64 {
	switch w {
	case WorldDrift:
		return logNormal(r, 0.02)
	case WorldBimodal:
		if r.Float64() < 0.2 {
			return 0.94
		}
	}
	return 1
}

// cellFactor draws one cell's own speed factor in one trial; decode says whether it moves a
// decode rate (WorldSpec's acceptance noise moves only those).
func (w WorldModel) cellFactor(r *rand.Rand, concurrency int, decode bool) float64 {
	return w.cellFactorAt(r, 8<<10, concurrency, decode)
}

// cellFactorAt is cellFactor for a cell of context tokens (WorldLoadNoise's noise grows with
// the load).
func (w WorldModel) cellFactorAt(r *rand.Rand, context, concurrency int, decode bool) float64 {
	switch w {
	case WorldLoadNoise:
		return logNormal(r, loadCV(context, concurrency, decode))
	case WorldT3:
		return math.Exp(max(-t3Clip, min(t3Clip, 0.02/math.Sqrt(3)*studentT3(r))))
	case WorldSpec, WorldSpecNoCounters:
		if decode {
			return logNormal(r, specCV(concurrency))
		}
		return logNormal(r, 0.01)
	case WorldDrift:
		return logNormal(r, 0.005)
	}
	return logNormal(r, 0.01)
}

// cellSD is the log-scale SD of cellFactor, which sizes the jitter inside one window.
func (w WorldModel) cellSD(concurrency int, decode bool) float64 {
	return w.cellSDAt(8<<10, concurrency, decode)
}

// cellSDAt is cellSD for a cell of context tokens.
func (w WorldModel) cellSDAt(context, concurrency int, decode bool) float64 {
	switch w {
	case WorldLoadNoise:
		return loadCV(context, concurrency, decode)
	case WorldT3:
		return 0.02
	case WorldSpec, WorldSpecNoCounters:
		if decode {
			return specCV(concurrency)
		}
	case WorldDrift:
		return 0.005
	}
	return 0.01
}

// withinShare is the share of a cell's own SD that shows inside its window (bins and
// requests): our assumption, half the SD (a quarter of the variance), the rest a level the
// window holds throughout (cache state, a kernel's tile choice, the acceptance of that window).
const withinShare = 0.5

// levelShare is the rest: the window's level moves by levelShare of the cell's own draw (on
// the log scale), so that level and jitter together have the model's SD.
const levelShare = 0.8660254037844386 // √(1 − withinShare²)

// WorldRun draws one server run of truth m under model w: trials windows of every cell, each
// trial its own per-cell noise, all sharing the run's factor (drawn here) and, for decode
// cells, slowed by shape (nil: none). runID names it.
func (m *Matrix) WorldRun(r *rand.Rand, w WorldModel, runID string, trials int, shape Shape) *results.File {
	return m.WorldRunAt(r, w, runID, trials, shape, w.runFactor(r))
}

// WorldRunAt is WorldRun with the run's factor f given instead of drawn (1: a usual run;
// 0.94: the bimodal model's slower kernel pick).
func (m *Matrix) WorldRunAt(r *rand.Rand, w WorldModel, runID string, trials int, shape Shape, f float64) *results.File {
	return m.worldRunFactor(r, w, runID, trials, shape.Factor, f)
}

// worldRunFactor is WorldRunAt with the decode rates multiplied by slow(cell, context) in
// place of a shape's factor.
func (m *Matrix) worldRunFactor(r *rand.Rand, w WorldModel, runID string, trials int, slow func(results.CellID, int) float64, f float64) *results.File {
	trials = max(1, trials)
	return m.worldRunWith(r, w, runID, trials, slow, f, m.drawDisturbance(r, w, trials))
}

// worldRunWith is worldRunFactor with the run's disturbance d given (nil: none).
func (m *Matrix) worldRunWith(r *rand.Rand, w WorldModel, runID string, trials int, slow func(results.CellID, int) float64, f float64, d *disturbance) *results.File {
	windows := make([]*results.File, trials)
	nums := make([]int, trials)
	for t := range trials {
		windows[t] = m.worldWindow(r, w, runID, slow, f, d, t)
		nums[t] = t + 1
	}
	if trials == 1 {
		return windows[0]
	}
	out := mergeTrials(windows, nums)
	for i := range out.Decode {
		for j := range out.Decode[i].Trials {
			out.Decode[i].Trials[j].Block, out.Decode[i].Trials[j].Pair = 0, 0
		}
	}
	for i := range out.Prefill {
		for j := range out.Prefill[i].Trials {
			out.Prefill[i].Trials[j].Block, out.Prefill[i].Trials[j].Pair = 0, 0
		}
	}
	return out
}

// mergeTrials joins windows of the matrix into one file as the runner does (merge.Blocks
// derives the summaries from the trials, as results.Validate checks them).
func mergeTrials(files []*results.File, nums []int) *results.File {
	out, err := merge.Blocks(files, nums)
	if err != nil { // only for mismatched arguments, which the callers never pass
		panic(err)
	}
	return out
}

// WorldPaired draws one paired A/B run (`run --paired`, scheme ABBA, pairedBlocks pairs): 2 ×
// pairedBlocks blocks served A B B A A B B A, each block a server run of its own (its own run
// factor), the head's blocks slowed by shape. It returns the base and head files.
func (m *Matrix) WorldPaired(r *rand.Rand, w WorldModel, id string, shape Shape) (base, head *results.File) {
	order := strings.Repeat("ABBA", pairedBlocks/2)
	var bf, hf []*results.File
	var bn, hn []int
	for i, side := range order {
		if side == 'A' {
			bf = append(bf, m.WorldRun(r, w, fmt.Sprintf("%s-base%d", id, len(bf)+1), 1, ""))
			bn = append(bn, i+1)
			continue
		}
		hf = append(hf, m.WorldRun(r, w, fmt.Sprintf("%s-head%d", id, len(hf)+1), 1, shape))
		hn = append(hn, i+1)
	}
	base, head = mergeTrials(bf, bn), mergeTrials(hf, hn)
	base.Run.ID, head.Run.ID = id+"-base", id+"-head"
	base.Run.Pairing = &results.Pairing{ID: id, Scheme: results.PairingABBA, Blocks: pairedBlocks, Side: "base", Order: order}
	head.Run.Pairing = &results.Pairing{ID: id, Scheme: results.PairingABBA, Blocks: pairedBlocks, Side: "head", Order: order}
	return base, head
}

// worldWindow draws one window of every cell of the matrix: one trial (the trial-th of the
// run), run factor f, disturbed by d (nil: no disturbance).
func (m *Matrix) worldWindow(r *rand.Rand, w WorldModel, runID string, slow func(results.CellID, int) float64, f float64, d *disturbance, trial int) *results.File {
	file := m.syntheticFile(runID)
	for _, tc := range m.Cells {
		if tc.ID.Phase == results.PhasePrefill {
			rate := tc.Rate * f * w.cellFactorAt(r, tc.Context, 0, false) * math.Exp(d.logFactor(tc.ID, trial))
			ttft := float64(tc.Context) / rate * 1000
			one, tokens := 1, tc.Context
			file.Prefill = append(file.Prefill, results.PrefillCell{
				Context: tc.Context, ContextLabel: tc.ID.ContextLabel, Status: results.StatusValid,
				PromptTokPerS: &rate, TTFTMs: &ttft, PromptTokens: &tokens, CompletedRequests: &one,
				Trials: []results.PrefillTrial{{Start: d.startOf(tc.ID, trial), TTFTMs: ttft, PromptTokens: tokens, PromptTokPerS: rate}},
			})
			continue
		}
		file.Decode = append(file.Decode, m.worldDecode(r, w, tc, slow, f, d, trial))
	}
	return file
}

// worldDecode draws one window of decode cell tc: the window's speed is the run's factor f ×
// the cell's own draw × the shape's slowdown; output-token bins jitter around it as an AR(1)
// series and requests' times between tokens around its per-request pace, both sized so that
// the window's mean shows withinShare of the cell's own SD and its level the rest; TTFT gets
// its own draw (÷ f).
func (m *Matrix) worldDecode(r *rand.Rand, w WorldModel, tc TrueCell, slow func(results.CellID, int) float64, f float64, d *disturbance, trial int) results.DecodeCell {
	cell := results.DecodeCell{Context: tc.Context, ContextLabel: tc.ID.ContextLabel, Concurrency: tc.ID.Concurrency, Status: tc.Status}
	if !tc.Status.Measured() {
		return cell
	}
	c := tc.ID.Concurrency
	accept := math.Pow(w.cellFactorAt(r, tc.Context, c, true), levelShare)
	order := math.Exp(d.logFactor(tc.ID, trial))
	speed := f * accept * slow(tc.ID, tc.Context) * order
	ttft := tc.TTFT / (f * order) * math.Pow(w.cellFactorAt(r, tc.Context, c, false), levelShare)
	sw := withinShare * w.cellSDAt(tc.Context, c, true)
	n := m.Windows
	const phi = 0.3
	sBin := sw * math.Sqrt(float64(n)*(1-phi)/(1+phi))
	bins := make([]int, n)
	level := stall{}.binLevels(n) // the stall's factor per bin (1 without one)
	binSpeed := speed
	if s, ok := d.stallOf(tc.ID); ok {
		level = s.binLevels(n)
		speed *= 1 - s.depth // the requests' pace below: the window's mean
	}
	var total int
	e := r.NormFloat64() * sBin
	for i := range n {
		if i > 0 {
			e = phi*e + math.Sqrt(1-phi*phi)*sBin*r.NormFloat64()
		}
		tok := max(1, int(math.Round(tc.Rate*binSpeed*level[i]*math.Exp(e-sBin*sBin/2))))
		bins[i] = tok
		total += tok
	}
	perReq := tc.Rate * speed / float64(c)
	dur := maxTokens / perReq
	nReq := c + int(math.Ceil(float64(c)*float64(n)/dur))
	sReq := sw * math.Sqrt(float64(nReq)/(math.Pi/2))
	started := max(1, nReq-c)
	sTTFT := withinShare * w.cellSDAt(tc.Context, c, false) * math.Sqrt(float64(started)/(math.Pi/2))
	reqs := make([]results.RequestSample, nReq)
	var tbts, rates, ttfts []float64
	for i := range reqs {
		tbt := 1000 / perReq * math.Exp(sReq*r.NormFloat64())
		reqs[i] = results.RequestSample{TBTMs: &tbt, OutputTokens: int(float64(n) * 1000 / tbt / 2), Chunks: 1}
		tbts = append(tbts, tbt)
		rates = append(rates, 1000/tbt)
		if i >= c {
			v := ttft * math.Exp(sTTFT*r.NormFloat64())
			reqs[i].TTFTMs = &v
			ttfts = append(ttfts, v)
		}
	}
	win := float64(n)
	totalRate := float64(total) / win
	tbtMed, prRate, ttftMed := quantile.Median(tbts), quantile.Median(rates), quantile.Median(ttfts)
	active := float64(c)
	completed := nReq - c
	met := results.DecodeMetrics{
		TotalTokPerS: &totalRate, PerRequestTokPerS: &prRate, TTFTMs: &ttftMed, TBTMs: &tbtMed,
		AvgActiveRequests: &active, CompletedRequests: &completed, OutputTokens: &total, MeasuredSeconds: &win,
		Telemetry: w.telemetry(accept),
	}
	cell.DecodeMetrics = met
	cell.Trials = []results.DecodeTrial{{Start: d.startOf(tc.ID, trial), DecodeMetrics: met, BinSeconds: 1, WindowSeconds: win, BinOutputTokens: bins, Requests: reqs}}
	return cell
}

// telemetry returns the window's server counters: under WorldSpec the spec-decode counters'
// acceptance length (accepted + 1 per step) carries the window's acceptance draw, as a real
// server's decode rate is proportional to its accepted tokens per step at low concurrency;
// every other model reads the server's counters and finds no speculative draft.
func (w WorldModel) telemetry(accept float64) *results.Telemetry {
	zero := 0.0
	t := &results.Telemetry{Source: "server", Preemptions: &zero}
	if w == WorldSpec {
		length := max(1, min(specTokens+1, specLength*accept))
		pct := (length - 1) / specTokens * 100
		t.SpecAcceptanceLength, t.SpecAcceptancePct = &length, &pct
	}
	return t
}

// ScalePrefill makes every prefill cell of f rate(cell) times as fast, its trials included (its
// rates times the factor, its TTFTs over it): a change of the code's prefill path, which the
// world's shapes (decode cells only) do not make.
func ScalePrefill(f *results.File, rate func(results.CellID) float64) {
	for i := range f.Prefill {
		c := &f.Prefill[i]
		k := rate(c.ID())
		for j := range c.Trials {
			c.Trials[j].PromptTokPerS *= k
			c.Trials[j].TTFTMs /= k
		}
		if c.PromptTokPerS != nil {
			v := *c.PromptTokPerS * k
			c.PromptTokPerS = &v
		}
		if c.TTFTMs != nil {
			v := *c.TTFTMs / k
			c.TTFTMs = &v
		}
	}
}
