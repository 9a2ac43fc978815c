package engine

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"
)

// Phase names the two kinds of work in a step, for slow-down rules.
type Phase int

// The phases of a step.
const (
	PhasePrefill Phase = iota
	PhaseDecode
)

// String returns "prefill" or "decode".
func (p Phase) String() string {
	if p == PhasePrefill {
		return "prefill"
	}
	return "decode"
}

// FinishReason says why a request ended.
type FinishReason int

// The reasons a request ends.
const (
	NotFinished  FinishReason = iota
	FinishLength              // max_tokens reached
	FinishStop                // the model stopped on its own (only without ignore_eos)
	FinishAbort               // the client went away or the caller aborted it
)

// String returns vLLM's finish_reason text.
func (f FinishReason) String() string {
	switch f {
	case FinishLength:
		return "length"
	case FinishStop:
		return "stop"
	case FinishAbort:
		return "abort"
	}
	return ""
}

// MaxBlocks bounds the KV cache size the simulator accepts (its bookkeeping is ~21 bytes a
// block); real servers have tens to hundreds of thousands of blocks.
const MaxBlocks = 1 << 22

// Config is the engine's fixed configuration, vLLM's engine arguments plus the hardware's speed.
type Config struct {
	MaxNumSeqs int // vLLM --max-num-seqs
	// MaxRunning caps running requests below MaxNumSeqs when the modelled server showed such a
	// ceiling (see the profile documentation); 0 means MaxNumSeqs.
	MaxRunning          int
	MaxNumBatchedTokens int // vLLM --max-num-batched-tokens: tokens per step
	BlockSize           int // KV cache block size in tokens
	NumBlocks           int // KV cache blocks (num_gpu_blocks)
	MaxModelLen         int
	// NumSpecTokens is the number of draft tokens per step (0: no speculative decoding), and
	// Acceptance[j] the probability that exactly j of them are accepted (len NumSpecTokens+1).
	NumSpecTokens int
	Acceptance    []float64
	// PinnedAcceptanceLength, when above 0, pins the mean tokens per draft step (1 + accepted)
	// as vLLM's synthetic rejection sampling does (see accept.go): no run-to-run acceptance
	// noise, Acceptance is not used.
	PinnedAcceptanceLength float64
	// MeanNaturalOutput is the mean output length of a request that may stop on its own (no
	// ignore_eos); 0 means requests only stop at max_tokens.
	MeanNaturalOutput float64
	Timing            Timing
	// NoiseCV is the coefficient of variation of the injected noise: run-to-run factors fixed per
	// seed and regime (CV at batch 1, CV/batch at larger batches; CV/2 for prefill) and
	// step-level jitter (CV/2). 0 disables noise.
	NoiseCV float64
	Seed    uint64
	// Slowdown, when set, returns a multiplier on the time of the given phase for a context (the
	// prompt length for prefill, the mean context per sequence for decode) and batch size.
	Slowdown func(p Phase, ctx float64, batch int) float64
}

// Validate checks the configuration.
func (c *Config) Validate() error {
	switch {
	case c.MaxNumSeqs < 1:
		return fmt.Errorf("engine: max_num_seqs must be at least 1")
	case c.MaxRunning < 0:
		return fmt.Errorf("engine: max_running must not be negative")
	case c.MaxNumBatchedTokens < 1+c.NumSpecTokens:
		return fmt.Errorf("engine: max_num_batched_tokens must hold at least one decode step (%d tokens)", 1+c.NumSpecTokens)
	case c.BlockSize < 1:
		return fmt.Errorf("engine: block_size must be at least 1")
	case c.NumBlocks < 1 || c.NumBlocks > MaxBlocks:
		return fmt.Errorf("engine: num_gpu_blocks must be between 1 and %d", MaxBlocks)
	case c.MaxModelLen < 1:
		return fmt.Errorf("engine: max_model_len must be at least 1")
	case c.NumSpecTokens < 0:
		return fmt.Errorf("engine: num_speculative_tokens must not be negative")
	case c.PinnedAcceptanceLength != 0 && (c.NumSpecTokens == 0 || c.PinnedAcceptanceLength < 1 || c.PinnedAcceptanceLength > float64(1+c.NumSpecTokens) || math.IsNaN(c.PinnedAcceptanceLength)):
		return fmt.Errorf("engine: pinned acceptance length %g needs speculative decoding and must lie in 1..%d (1 + num_speculative_tokens)", c.PinnedAcceptanceLength, 1+c.NumSpecTokens)
	case c.NoiseCV < 0 || c.NoiseCV > 1:
		return fmt.Errorf("engine: noise CV %g out of range 0..1", c.NoiseCV)
	case c.MeanNaturalOutput < 0:
		return fmt.Errorf("engine: mean natural output must not be negative")
	}
	if c.NumSpecTokens > 0 {
		if len(c.Acceptance) != c.NumSpecTokens+1 {
			return fmt.Errorf("engine: acceptance distribution needs %d entries (0..%d accepted), has %d", c.NumSpecTokens+1, c.NumSpecTokens, len(c.Acceptance))
		}
		sum := 0.0
		for _, p := range c.Acceptance {
			if p < 0 || math.IsNaN(p) {
				return fmt.Errorf("engine: acceptance probabilities must not be negative")
			}
			sum += p
		}
		if math.Abs(sum-1) > 1e-6 {
			return fmt.Errorf("engine: acceptance probabilities sum to %g, want 1", sum)
		}
	}
	return c.Timing.Validate()
}

// KVTokens returns the KV cache capacity in tokens.
func (c Config) KVTokens() int { return c.BlockSize * c.NumBlocks }

// MeanTokensPerStep returns the expected tokens a sequence gains per decode step: 1 + the mean
// number of accepted draft tokens.
func (c Config) MeanTokensPerStep() float64 {
	m := 1.0
	for j, p := range c.Acceptance {
		m += float64(j) * p
	}
	return m
}

type reqState int

const (
	stateFrontend reqState = iota
	stateWaiting
	stateRunning
	stateDone
)

// Request is one generation request. The caller fills the exported input fields; the engine owns
// the rest.
type Request struct {
	PromptLen int
	// Hashes[i] identifies the prompt's first (i+1)·BlockSize tokens (a hash chain over token
	// ids); equal prompts prefixes have equal hashes, so their blocks are shared.
	Hashes    []uint64
	MaxTokens int
	IgnoreEOS bool
	// Tag is the caller's own data (the sim server's stream).
	Tag any

	id         uint64
	state      reqState
	tokenized  time.Duration // when the request joins the frontend's one-at-a-time stage
	served     time.Duration // when that stage starts on it
	readyAt    time.Duration // when it reaches the scheduler
	limit      int           // output tokens at which the request ends
	stopReason FinishReason
	generated  int
	computed   int // tokens whose KV is computed
	prefilling bool
	target     int // tokens to compute before sampling, while prefilling
	blocks     []int32
	registered int // prompt blocks registered in the prefix cache
	started    bool
	finish     FinishReason
}

// ID returns the engine's number for the request (from 1, in submission order).
func (r *Request) ID() uint64 { return r.id }

// Generated returns the output tokens produced so far.
func (r *Request) Generated() int { return r.generated }

// Output is what one request got from one step.
type Output struct {
	Req      *Request
	Tokens   int          // new output tokens
	Finished FinishReason // NotFinished unless the request ended in this step
}

// StepResult is one engine step.
type StepResult struct {
	// Duration is the step's length in virtual time; 0 when nothing could run.
	Duration time.Duration
	// Outputs are the tokens the step produced; they are valid until the next call of Step.
	Outputs []Output
	// NextReady is, when nothing could run but requests are still in the frontend, the time
	// the first of them reaches the scheduler; -1 otherwise.
	NextReady time.Duration
}

// Stats are the engine's gauges and counters, vLLM's /metrics.
type Stats struct {
	Running, Waiting, Frontend int
	UsedBlocks, NumBlocks      int
	Steps                      uint64
	Preemptions                uint64
	PromptTokens               uint64 // prompt tokens of requests whose prefill finished
	GenerationTokens           uint64
	PrefixQueries, PrefixHits  uint64 // prompt tokens looked up in / found in the prefix cache
	SpecDrafts                 uint64 // sequence-steps with a draft
	SpecDraftTokens            uint64
	SpecAccepted               uint64
	SpecAcceptedPerPos         []uint64
	FinishedLength             uint64
	FinishedStop               uint64
	Aborted                    uint64
}

// KVUsage returns the fraction of KV blocks in use, 0..1.
func (s *Stats) KVUsage() float64 {
	if s.NumBlocks == 0 {
		return 0
	}
	return float64(s.UsedBlocks) / float64(s.NumBlocks)
}

// Engine is the scheduler and its KV cache. It is not safe for concurrent use.
type Engine struct {
	cfg       Config
	pool      *blockPool
	rng       *rand.Rand
	cumAccept []float64
	// meanAccept is the mean of Acceptance; stepAccept the run-to-run factor on it for the step
	// being applied (accept.go).
	meanAccept float64
	stepAccept float64
	limit      int // running cap

	nextID    uint64
	frontend  []*Request // FIFO, readyAt ascending
	frontFree time.Duration
	now       time.Duration // the latest time Submit, Step or AbortAt was given
	busy      time.Duration // when the frontend finishes the aborted requests it was serving
	waiting   []*Request
	running   []*Request

	stats Stats
	outs  []Output
	plan  []planned
}

type planned struct {
	r        *Request
	from, to int // prefill chunk, or decode with to == -1
	cached   int // prefix-cache hit tokens taken up in this step
}

// New returns an engine with an empty KV cache.
func New(cfg Config) (*Engine, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	e := &Engine{
		cfg:   cfg,
		pool:  newBlockPool(cfg.NumBlocks, cfg.BlockSize),
		rng:   rand.New(rand.NewPCG(cfg.Seed, 0x5eed5eed)),
		limit: cfg.MaxNumSeqs,
	}
	if cfg.MaxRunning > 0 && cfg.MaxRunning < e.limit {
		e.limit = cfg.MaxRunning
	}
	acc := 0.0
	for j, p := range cfg.Acceptance {
		acc += p
		e.cumAccept = append(e.cumAccept, acc)
		e.meanAccept += float64(j) * p
	}
	e.stats.NumBlocks = cfg.NumBlocks
	e.stats.SpecAcceptedPerPos = make([]uint64, cfg.NumSpecTokens)
	return e, nil
}

// Config returns the engine's configuration.
func (e *Engine) Config() Config { return e.cfg }

// Submit hands a request to the engine at virtual time now. The request first passes the
// frontend (tokenizing, Timing.FrontendPerToken per prompt token, in parallel; then
// Timing.FrontendBase, one request at a time), then waits for the scheduler.
func (e *Engine) Submit(r *Request, now time.Duration) error {
	switch {
	case r.PromptLen < 1:
		return fmt.Errorf("engine: empty prompt")
	case r.MaxTokens < 1:
		return fmt.Errorf("engine: max_tokens must be at least 1")
	case r.PromptLen+r.MaxTokens > e.cfg.MaxModelLen:
		return fmt.Errorf("engine: %d prompt + %d output tokens exceed max_model_len %d", r.PromptLen, r.MaxTokens, e.cfg.MaxModelLen)
	}
	e.nextID++
	e.now = max(e.now, now)
	r.id = e.nextID
	r.state = stateFrontend
	// Tokenizing runs in parallel for all requests; the rest of the frontend's work is done one
	// request at a time.
	t := &e.cfg.Timing
	r.tokenized = now + seconds(t.FrontendPerToken*float64(r.PromptLen))
	r.served = max(r.tokenized, e.frontFree)
	r.readyAt = r.served + seconds(t.FrontendBase)
	e.frontFree = r.readyAt
	r.limit, r.stopReason = r.MaxTokens, FinishLength
	if !r.IgnoreEOS && e.cfg.MeanNaturalOutput > 0 {
		// Geometric length with the configured mean, from the engine's seeded stream.
		u := e.rng.Float64()
		n := 1 + int(math.Floor(math.Log1p(-u)/math.Log1p(-1/math.Max(e.cfg.MeanNaturalOutput, 1.0001))))
		if n < r.limit {
			r.limit, r.stopReason = n, FinishStop
		}
	}
	i := len(e.frontend)
	for i > 0 && e.frontend[i-1].readyAt > r.readyAt {
		i--
	}
	e.frontend = slices.Insert(e.frontend, i, r)
	return nil
}

// Abort ends a request wherever it is and frees its blocks, at the latest time the engine was
// given (AbortAt says when). It reports whether the request was still live.
func (e *Engine) Abort(r *Request) bool { return e.AbortAt(r, e.now) }

// AbortAt ends a request at virtual time now wherever it is and frees its blocks. A request
// still waiting for its turn in the frontend's one-at-a-time stage gives the turn up, so the
// requests behind it move up (as a vLLM API server drops a disconnected request's queued
// work); one the stage is already serving keeps it busy until done. It reports whether the
// request was still live.
func (e *Engine) AbortAt(r *Request, now time.Duration) bool {
	e.now = max(e.now, now)
	switch r.state {
	case stateFrontend:
		e.frontend = remove(e.frontend, r)
		if r.served <= e.now {
			e.busy = max(e.busy, r.readyAt) // its work goes on; the stage stays busy
		} else {
			e.requeueFrontend()
		}
	case stateWaiting:
		e.waiting = remove(e.waiting, r)
	case stateRunning:
		e.running = remove(e.running, r)
		e.freeBlocks(r)
	default:
		return false
	}
	r.state, r.finish = stateDone, FinishAbort
	e.stats.Aborted++
	return true
}

// requeueFrontend recomputes the frontend's one-at-a-time schedule after a request left it: the
// requests it already serves (or has served) keep their times, the others are served in
// submission order as soon as the stage and they are ready, not before now.
func (e *Engine) requeueFrontend() {
	base := seconds(e.cfg.Timing.FrontendBase)
	free := max(e.now, e.busy)
	for _, q := range e.frontend { // submission order: the stage serves first come, first served
		if q.served <= e.now {
			free = max(free, q.readyAt)
			continue
		}
		q.served = max(q.tokenized, free)
		q.readyAt = q.served + base
		free = q.readyAt
	}
	e.frontFree = free
}

func remove(list []*Request, r *Request) []*Request {
	if i := slices.Index(list, r); i >= 0 {
		return slices.Delete(list, i, i+1)
	}
	return list
}

// Stats returns the current gauges and counters.
func (e *Engine) Stats() Stats {
	s := e.stats
	s.Running, s.Waiting, s.Frontend = len(e.running), len(e.waiting), len(e.frontend)
	s.UsedBlocks = e.pool.used()
	s.SpecAcceptedPerPos = slices.Clone(e.stats.SpecAcceptedPerPos)
	return s
}

// Gauges returns the running, waiting and frontend request counts and the KV blocks in use,
// without copying the counters.
func (e *Engine) Gauges() (running, waiting, frontend, usedBlocks int) {
	return len(e.running), len(e.waiting), len(e.frontend), e.pool.used()
}

// Idle reports whether the engine holds no request at all.
func (e *Engine) Idle() bool {
	return len(e.frontend) == 0 && len(e.waiting) == 0 && len(e.running) == 0
}

// Step plans and executes one engine step starting at virtual time now.
func (e *Engine) Step(now time.Duration) StepResult {
	e.now = max(e.now, now)
	e.outs = e.outs[:0]
	e.plan = e.plan[:0]
	for len(e.frontend) > 0 && e.frontend[0].readyAt <= now {
		r := e.frontend[0]
		e.frontend = e.frontend[1:]
		r.state = stateWaiting
		e.waiting = append(e.waiting, r)
	}
	if len(e.running) == 0 && len(e.waiting) == 0 {
		next := time.Duration(-1)
		if len(e.frontend) > 0 {
			next = e.frontend[0].readyAt
		}
		return StepResult{NextReady: next}
	}
	budget := e.cfg.MaxNumBatchedTokens
	preempted := false
	decodeN := 1 + e.cfg.NumSpecTokens

	// Running requests first, decodes before prefill chunks: decoding sequences get their
	// tokens in every step, as with vLLM's chunked prefill.
	for pass := 0; pass < 2; pass++ {
		for i := 0; i < len(e.running); i++ {
			r := e.running[i]
			if r.prefilling != (pass == 1) {
				continue
			}
			n := decodeN
			if r.prefilling {
				n = min(r.target-r.computed, budget)
			}
			if n <= 0 || n > budget {
				continue
			}
			ok := e.ensureBlocks(r, r.computed+n)
			for !ok {
				victim := e.running[len(e.running)-1]
				e.preempt(victim)
				preempted = true
				if victim == r {
					break
				}
				ok = e.ensureBlocks(r, r.computed+n)
			}
			if !ok {
				break // r itself was preempted; it was the last running request
			}
			budget -= n
			if r.prefilling {
				e.plan = append(e.plan, planned{r: r, from: r.computed, to: r.computed + n})
			} else {
				e.plan = append(e.plan, planned{r: r, from: r.computed, to: -1})
			}
		}
	}

	// A preemption may have taken a request planned earlier in this step.
	if preempted {
		e.plan = slices.DeleteFunc(e.plan, func(p planned) bool { return p.r.state != stateRunning })
	}

	// Admit waiting requests (first come, first served) while seats, tokens and blocks last. A
	// step that had to preempt admits nobody, as in vLLM.
	for !preempted && len(e.waiting) > 0 && len(e.running) < e.limit && budget > 0 {
		r := e.waiting[0]
		target := r.PromptLen + r.generated
		bs := e.cfg.BlockSize
		hit := e.pool.lookup(r.Hashes, (target-1)/bs)
		hitTokens := len(hit) * bs
		n := min(target-hitTokens, budget)
		need := (hitTokens+n+bs-1)/bs - len(hit)
		idleHits := 0
		for _, b := range hit {
			if e.pool.ref[b] == 0 {
				idleHits++
			}
		}
		if need > e.pool.nfree-idleHits {
			break
		}
		for _, b := range hit {
			e.pool.touch(b)
		}
		r.blocks = append(r.blocks[:0], hit...)
		r.registered = len(hit)
		for range need {
			r.blocks = append(r.blocks, e.pool.alloc())
		}
		r.computed, r.target, r.prefilling = hitTokens, target, true
		if !r.started {
			r.started = true
			e.stats.PrefixQueries += uint64(r.PromptLen)
			e.stats.PrefixHits += uint64(hitTokens)
		}
		e.waiting = e.waiting[1:]
		r.state = stateRunning
		e.running = append(e.running, r)
		budget -= n
		e.plan = append(e.plan, planned{r: r, from: hitTokens, to: hitTokens + n, cached: hitTokens})
	}

	if len(e.plan) == 0 {
		return StepResult{NextReady: -1}
	}
	d := max(e.stepSeconds(), 1e-6) // a step that did work always takes time
	e.apply()
	e.stats.Steps++
	return StepResult{Duration: seconds(d), Outputs: e.outs, NextReady: -1}
}

// stepSeconds prices the planned step.
func (e *Engine) stepSeconds() float64 {
	t := &e.cfg.Timing
	batch := 0
	var ctx int64
	prefill := 0.0
	for _, p := range e.plan {
		if p.to < 0 {
			batch++
			ctx += int64(p.from)
			continue
		}
		s := t.PrefillSeconds(p.to) - t.PrefillSeconds(p.from) + t.CachedPerToken*float64(p.cached)
		if e.cfg.Slowdown != nil {
			s *= e.cfg.Slowdown(PhasePrefill, float64(p.r.PromptLen), 1)
		}
		s *= runFactor(e.cfg.Seed, e.cfg.NoiseCV, 2, noisePrefill, 0, ctxBucket(float64(p.r.PromptLen)))
		prefill += s
	}
	decode := 0.0
	if batch > 0 {
		decode = t.DecodeSeconds(batch, ctx)
		mean := float64(ctx) / float64(batch)
		if e.cfg.Slowdown != nil {
			decode *= e.cfg.Slowdown(PhaseDecode, mean, batch)
		}
		decode *= runFactor(e.cfg.Seed, e.decodeRunCV(), float64(batch), noiseDecode, uint64(batch), ctxBucket(mean))
	}
	d := decode + prefill
	if e.cfg.NoiseCV > 0 {
		d *= clamp(1+e.rng.NormFloat64()*e.cfg.NoiseCV/2, 0.5, 2)
	}
	return d
}

// apply executes the planned step: computes KV, samples tokens, finishes requests.
func (e *Engine) apply() {
	finished := false
	e.stepAccept = e.acceptFactor()
	for _, p := range e.plan {
		r := p.r
		if r.state != stateRunning {
			continue
		}
		emit := 0
		if p.to < 0 {
			j := e.drawAccepted()
			if e.cfg.NumSpecTokens > 0 {
				e.stats.SpecDrafts++
				e.stats.SpecDraftTokens += uint64(e.cfg.NumSpecTokens)
				e.stats.SpecAccepted += uint64(j)
				for k := range j {
					e.stats.SpecAcceptedPerPos[k]++
				}
			}
			emit = min(1+j, r.limit-r.generated)
		} else {
			r.computed = p.to
			e.registerPrompt(r)
			if r.computed >= r.target {
				r.prefilling = false
				if r.generated == 0 {
					e.stats.PromptTokens += uint64(r.PromptLen)
				}
				emit = 1
			}
		}
		if emit == 0 {
			continue
		}
		r.generated += emit
		r.computed = r.PromptLen + r.generated - 1
		e.stats.GenerationTokens += uint64(emit)
		out := Output{Req: r, Tokens: emit}
		if r.generated >= r.limit {
			out.Finished, r.finish = r.stopReason, r.stopReason
			r.state = stateDone
			e.freeBlocks(r)
			finished = true
			if r.stopReason == FinishStop {
				e.stats.FinishedStop++
			} else {
				e.stats.FinishedLength++
			}
		}
		e.outs = append(e.outs, out)
	}
	if finished {
		e.running = slices.DeleteFunc(e.running, func(r *Request) bool { return r.state == stateDone })
	}
}

// drawAccepted draws the number of accepted draft tokens of one sequence-step (accept.go says
// how run-to-run noise and pinning change the draw).
func (e *Engine) drawAccepted() int {
	if e.cfg.NumSpecTokens == 0 {
		return 0
	}
	return e.acceptedFrom(e.rng.Float64())
}

// fromDistribution maps a uniform u in [0, 1) onto the acceptance distribution.
func (e *Engine) fromDistribution(u float64) int {
	u *= e.cumAccept[len(e.cumAccept)-1]
	for j, c := range e.cumAccept {
		if u < c {
			return j
		}
	}
	return len(e.cumAccept) - 1
}

// registerPrompt enters r's newly completed prompt blocks into the prefix cache.
func (e *Engine) registerPrompt(r *Request) {
	full := min(r.computed/e.cfg.BlockSize, len(r.Hashes), len(r.blocks))
	for ; r.registered < full; r.registered++ {
		e.pool.register(r.blocks[r.registered], r.Hashes[r.registered])
	}
}

// ensureBlocks gives r enough blocks for tokens KV entries; false when the pool is short.
func (e *Engine) ensureBlocks(r *Request, tokens int) bool {
	need := (tokens+e.cfg.BlockSize-1)/e.cfg.BlockSize - len(r.blocks)
	if need <= 0 {
		return true
	}
	if need > e.pool.nfree {
		return false
	}
	for range need {
		r.blocks = append(r.blocks, e.pool.alloc())
	}
	return true
}

// preempt sends the running request r back to the front of the queue and frees its KV; it will
// recompute its prompt and output so far when it runs again (vLLM's recompute preemption).
func (e *Engine) preempt(r *Request) {
	e.running = remove(e.running, r)
	e.freeBlocks(r)
	r.computed, r.prefilling, r.registered = 0, false, 0
	r.state = stateWaiting
	e.waiting = slices.Insert(e.waiting, 0, r)
	e.stats.Preemptions++
}

// freeBlocks releases r's blocks, last block first, so that a prompt's tail is evicted before
// its head.
func (e *Engine) freeBlocks(r *Request) {
	for i := len(r.blocks) - 1; i >= 0; i-- {
		e.pool.release(r.blocks[i])
	}
	r.blocks = r.blocks[:0]
}

// seconds converts seconds to a Duration.
func seconds(s float64) time.Duration { return time.Duration(math.Round(s * 1e9)) }

// Seconds converts seconds to a Duration, rounding to the nanosecond.
func Seconds(s float64) time.Duration { return seconds(s) }
