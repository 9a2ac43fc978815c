package calibrate

import (
	"math"
	"math/rand/v2"

	"github.com/speedmatrix/speedmatrix/internal/quantile"
	"github.com/speedmatrix/speedmatrix/results"
)

// Matrix is the true behaviour of a synthetic server: every cell's true values and run-to-run
// noise, from which runs are drawn.
type Matrix struct {
	Cells []TrueCell
	// Noise is the model the decode rates' noise was drawn from; the runs' telemetry says what a
	// server of that model would (telemetry below).
	Noise Noise
	// NoiseScale multiplies every CV (1 = the realistic ranges).
	NoiseScale float64
	// Windows is the number of 1 s bins per decode window (30).
	Windows int
}

// TrueCell is one cell's truth.
type TrueCell struct {
	ID      results.CellID
	Context int
	Status  results.Status
	// Rate is the true decode total tok/s (prefill: prompt tok/s); TTFT the true median TTFT.
	Rate, TTFT float64
	// RateCV and TTFTCV are the total run-to-run CVs of one run's value; WithinShare is the part
	// of the variance that shows within a run (the rest varies only between runs).
	RateCV, TTFTCV float64
	WithinShare    float64
}

// Contexts are the default decode contexts, concurrency levels and prefill contexts.
var (
	contexts    = []int{8 << 10, 16 << 10, 32 << 10, 64 << 10, 128 << 10, 256 << 10, 512 << 10, 1019 << 10}
	concurrency = []int{1, 2, 4, 8, 16, 32, 64, 128}
	prefillCtx  = []int{8 << 10, 16 << 10, 32 << 10, 64 << 10, 128 << 10, 256 << 10, 512 << 10, 1019 << 10, 1024 << 10}
)

// kvTokens is the synthetic server's KV cache: 8K fits at 128 streams, 1019K at 2 (as in the
// reference report), 43 decode cells measured and 21 over capacity.
const kvTokens = 3_000_000

// maxTokens is the requests' max_tokens.
const maxTokens = 4096

// uniform draws from [lo, hi).
func uniform(r *rand.Rand, lo, hi float64) float64 { return lo + (hi-lo)*r.Float64() }

// Noise names a model of the decode rates' run-to-run noise.
type Noise string

const (
	// NoiseDefault is the calibration's first model: 10–20 % at concurrency 1, 5–10 % at 2,
	// 2–5 % at 4, 0.5–1 % from 8 up.
	NoiseDefault Noise = ""
	// NoiseSpec is speculative decoding (MTP/EAGLE) whose acceptance rate changes from run to
	// run, as vLLM issue 53436 measured it: CV ≈ 10 % at concurrency 1, 20 % at 2, 7.5 % at 4
	// and 0.5 % from 8 up (each drawn within ±20 % of that).
	NoiseSpec Noise = "spec"
	// NoiseNoSpec is a server without speculative decoding (or with its acceptance pinned):
	// 0.5–2 % at concurrency 1–4, 0.1–1 % from 8 up, within one server process.
	NoiseNoSpec Noise = "nospec"
)

// rateCVRange is the realistic run-to-run CV range of decode rates by concurrency (published:
// 10–20 % at concurrency 1 with speculative decoding, under 1 % from 8 up).
func rateCVRange(c int) (lo, hi float64) { return NoiseDefault.rateCVRange(c) }

// rateCVRange is the run-to-run CV range of decode rates at concurrency c under noise model n.
func (n Noise) rateCVRange(c int) (lo, hi float64) {
	switch n {
	case NoiseSpec:
		center := 0.005
		switch {
		case c <= 1:
			center = 0.10
		case c <= 2:
			center = 0.20
		case c <= 4:
			center = 0.075
		}
		return 0.8 * center, 1.2 * center
	case NoiseNoSpec:
		if c <= 4 {
			return 0.005, 0.02
		}
		return 0.001, 0.01
	}
	switch {
	case c <= 1:
		return 0.10, 0.20
	case c <= 2:
		return 0.05, 0.10
	case c <= 4:
		return 0.02, 0.05
	}
	return 0.005, 0.01
}

// NewMatrix draws a synthetic server's truth: the reference's matrix shape, throughput that
// grows with concurrency, TTFT that grows with concurrency and context, and per-cell CVs drawn
// from the realistic ranges times noiseScale.
func NewMatrix(seed uint64, noiseScale float64) *Matrix {
	return NewMatrixNoise(seed, noiseScale, NoiseDefault)
}

// NewMatrixNoise is NewMatrix with the decode rates' noise drawn from model noise; prefill and
// TTFT noise are the same in every model.
func NewMatrixNoise(seed uint64, noiseScale float64, noise Noise) *Matrix {
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	m := &Matrix{NoiseScale: noiseScale, Windows: 30, Noise: noise}
	for _, ctx := range prefillCtx {
		rate := 12500 * (1 - 0.2*float64(ctx)/float64(1<<20)) * uniform(r, 0.95, 1.05)
		cv := uniform(r, 0.01, 0.05) * noiseScale
		m.Cells = append(m.Cells, TrueCell{
			ID: results.CellID{Phase: results.PhasePrefill, ContextLabel: results.ContextLabel(ctx)}, Context: ctx,
			Status: results.StatusValid, Rate: rate, TTFT: float64(ctx) / rate * 1000, RateCV: cv, TTFTCV: cv, WithinShare: 0,
		})
	}
	for _, ctx := range contexts {
		for _, c := range concurrency {
			id := results.CellID{Phase: results.PhaseDecode, ContextLabel: results.ContextLabel(ctx), Concurrency: c}
			tc := TrueCell{ID: id, Context: ctx, Status: results.StatusValid}
			switch {
			case c*(ctx+maxTokens) > kvTokens:
				tc.Status = results.StatusOverCapacity
			case c >= 32:
				tc.Status = results.StatusQueued
			}
			if tc.Status.Measured() {
				lo, hi := noise.rateCVRange(c)
				tc.Rate = 155 * math.Pow(float64(c), 0.58) * (1 - 0.05*float64(ctx)/float64(1<<20)) * uniform(r, 0.95, 1.05)
				tc.TTFT = 600 * math.Pow(float64(c), 0.6) * (1 + float64(ctx)/float64(256<<10)) * uniform(r, 0.9, 1.1)
				tc.RateCV = uniform(r, lo, hi) * noiseScale
				tc.TTFTCV = uniform(r, 0.10, 0.20) * noiseScale
				tc.WithinShare = uniform(r, 0.2, 0.6)
			}
			m.Cells = append(m.Cells, tc)
		}
	}
	return m
}

// Slowdown is a change injected into one context row of the decode matrix, or one
// concurrency column, or the prefill cells.
type Slowdown struct {
	// ContextLabel names the row ("" with Concurrency set: every context).
	ContextLabel string
	// Concurrency, when set, keeps the change to the decode cells of that concurrency.
	Concurrency int
	// Prefill moves the prefill cell of ContextLabel instead (its rate by RateFactor).
	Prefill bool
	// RateFactor multiplies decode total and per-request tok/s (0.94 for a 6 % slowdown; time
	// between tokens moves by its inverse); TTFTFactor multiplies TTFT.
	RateFactor, TTFTFactor float64
}

// syntheticFile returns the header of a synthetic run of the matrix, without cells: the
// hardware, engine and run that every file calibrate draws claims (two H200 NVL, vLLM
// "synthetic", fixed-duration windows of m.Windows seconds).
func (m *Matrix) syntheticFile(runID string) *results.File {
	return &results.File{
		Schema:   results.SchemaV1,
		Hardware: results.Hardware{Type: "Discrete GPU", GPU: "H200 NVL", GPUCount: 2},
		Engine:   results.Engine{Name: "vllm", Version: "synthetic"},
		Run: results.Run{ID: runID, Source: results.SourceMeasured, ServedModel: "synthetic/model",
			Tool: results.Tool{Name: "speedmatrix calibrate"}, DecodeTest: results.DecodeFixedDuration,
			SecondsPerMeasurement: float64(m.Windows), MaxOutputTokens: maxTokens},
	}
}

// Run draws one run of the matrix (one trial per cell), with slowdown applied when it is not nil.
func (m *Matrix) Run(r *rand.Rand, runID string, slow *Slowdown) *results.File {
	return m.RunCells(r, runID, slow, nil)
}

// RunCells draws one run of the listed cells only (all cells when only is empty), as
// `speedmatrix run --cells` measures them.
func (m *Matrix) RunCells(r *rand.Rand, runID string, slow *Slowdown, only []results.CellID) *results.File {
	want := map[results.CellID]bool{}
	for _, id := range only {
		want[id] = true
	}
	f := m.syntheticFile(runID)
	for _, tc := range m.Cells {
		if len(want) > 0 && !want[tc.ID] {
			continue
		}
		rate, ttft := tc.Rate, tc.TTFT
		if slow.applies(tc.ID) {
			rate *= slow.RateFactor
			ttft *= slow.TTFTFactor
		}
		if tc.ID.Phase == results.PhasePrefill {
			f.Prefill = append(f.Prefill, m.prefill(r, tc, rate))
			continue
		}
		f.Decode = append(f.Decode, m.decode(r, tc, rate, ttft))
	}
	return f
}

// prefill draws one prefill request.
func (m *Matrix) prefill(r *rand.Rand, tc TrueCell, rate float64) results.PrefillCell {
	got := rate * math.Exp(tc.RateCV*r.NormFloat64())
	ttft := float64(tc.Context) / got * 1000
	one := 1
	tokens := tc.Context
	return results.PrefillCell{
		Context: tc.Context, ContextLabel: tc.ID.ContextLabel, Status: results.StatusValid,
		PromptTokPerS: &got, TTFTMs: &ttft, PromptTokens: &tokens, CompletedRequests: &one,
		Trials: []results.PrefillTrial{{TTFTMs: ttft, PromptTokens: tokens, PromptTokPerS: got}},
	}
}

// decode draws one decode window: a run-level speed and TTFT level (the between-run part of
// the noise), then 1 s output-token bins around that speed as an AR(1) series, and per-request
// time-between-tokens and TTFT samples, with within-run noise sized so that the window's mean
// (bins) and median (requests) vary by the within-run share of the cell's CV.
func (m *Matrix) decode(r *rand.Rand, tc TrueCell, rate, ttft float64) results.DecodeCell {
	cell := results.DecodeCell{Context: tc.Context, ContextLabel: tc.ID.ContextLabel, Concurrency: tc.ID.Concurrency, Status: tc.Status}
	if !tc.Status.Measured() {
		return cell
	}
	c := tc.ID.Concurrency
	sw := math.Sqrt(tc.WithinShare) * tc.RateCV        // within-run SD of the window's log rate
	sb := math.Sqrt(1-tc.WithinShare) * tc.RateCV      // between-run SD
	twb := math.Sqrt(1-tc.WithinShare) * tc.TTFTCV     // between-run SD of TTFT
	tww := math.Sqrt(tc.WithinShare) * tc.TTFTCV       // within-run SD of the median TTFT
	speed := math.Exp(sb*r.NormFloat64() - sb*sb/2)    // run-level speed factor
	level := math.Exp(twb*r.NormFloat64() - twb*twb/2) // run-level TTFT factor
	n := m.Windows
	const phi = 0.3
	sBin := sw * math.Sqrt(float64(n)*(1-phi)/(1+phi))
	bins := make([]int, n)
	var total int
	e := r.NormFloat64() * sBin
	for i := range n {
		if i > 0 {
			e = phi*e + math.Sqrt(1-phi*phi)*sBin*r.NormFloat64()
		}
		tok := int(math.Round(rate * speed * math.Exp(e-sBin*sBin/2)))
		tok = max(tok, 0)
		bins[i] = tok
		total += tok
	}
	perReq := rate * speed / float64(c)
	tbtCenter := 1000 / perReq
	// Requests: every stream runs ~4096-token requests; about C·(1 + window/duration) of them
	// produce tokens inside the window, and those started inside it have a TTFT sample.
	dur := maxTokens / perReq
	nReq := c + int(math.Ceil(float64(c)*float64(n)/dur))
	sReq := sw * math.Sqrt(float64(nReq)/(math.Pi/2))
	started := max(1, nReq-c)
	sTTFT := tww * math.Sqrt(float64(started)/(math.Pi/2))
	reqs := make([]results.RequestSample, nReq)
	var tbts, rates, ttfts []float64
	for i := range reqs {
		tbt := tbtCenter * math.Exp(sReq*r.NormFloat64())
		reqs[i] = results.RequestSample{TBTMs: &tbt, OutputTokens: int(float64(n) * 1000 / tbt / 2), Chunks: 1}
		tbts = append(tbts, tbt)
		rates = append(rates, 1000/tbt)
		if i >= c {
			v := ttft * level * math.Exp(sTTFT*r.NormFloat64())
			reqs[i].TTFTMs = &v
			ttfts = append(ttfts, v)
		}
	}
	totalRate := float64(total) / float64(n)
	tbtMed := quantile.Median(tbts)
	prRate := quantile.Median(rates) // the median of the requests' rates, as the runner takes it
	ttftMed := quantile.Median(ttfts)
	win := float64(n)
	active := float64(c)
	completed := nReq - c
	met := results.DecodeMetrics{
		TotalTokPerS: &totalRate, PerRequestTokPerS: &prRate, TTFTMs: &ttftMed, TBTMs: &tbtMed,
		AvgActiveRequests: &active, CompletedRequests: &completed, OutputTokens: &total, MeasuredSeconds: &win,
	}
	met.Telemetry = m.telemetry()
	cell.DecodeMetrics = met
	cell.Trials = []results.DecodeTrial{{
		DecodeMetrics: met, BinSeconds: 1, WindowSeconds: win, BinOutputTokens: bins, Requests: reqs,
	}}
	return cell
}

// telemetry returns what the server's counters say in a window, which is what compare learns
// about speculative decoding from (results.File.SpecDecodeState): under NoiseSpec they count
// drafts (an acceptance rate; its length is not drawn, so acceptance is not a compared metric
// here), so compare takes the prior of speculative decoding; under NoiseNoSpec and NoiseDefault
// they are read and count none, so compare keeps the lower prior, which covers both models'
// ranges (NoiseDefault is the model that prior was calibrated on: 10–20 % at concurrency 1,
// 5–10 % at 2, 2–5 % at 4).
func (m *Matrix) telemetry() *results.Telemetry {
	zero := 0.0
	if m.Noise == NoiseSpec {
		pct := 60.0
		return &results.Telemetry{Source: "server", Preemptions: &zero, SpecAcceptancePct: &pct}
	}
	return &results.Telemetry{Source: "server", Preemptions: &zero}
}

// applies reports whether the slowdown moves the cell id.
func (s *Slowdown) applies(id results.CellID) bool {
	switch {
	case s == nil:
		return false
	case s.Prefill:
		return id.Phase == results.PhasePrefill && id.ContextLabel == s.ContextLabel
	case id.Phase != results.PhaseDecode:
		return false
	case s.Concurrency > 0:
		return id.Concurrency == s.Concurrency && (s.ContextLabel == "" || id.ContextLabel == s.ContextLabel)
	}
	return id.ContextLabel == s.ContextLabel
}
