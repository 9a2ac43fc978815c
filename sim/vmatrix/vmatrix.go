package vmatrix

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/speedmatrix/speedmatrix/internal/quantile"
	"github.com/speedmatrix/speedmatrix/results"
	"github.com/speedmatrix/speedmatrix/sim/engine"
)

// Options is the matrix to measure and the protocol's constants.
type Options struct {
	PrefillContexts []int // prompt lengths of the prefill cells
	Contexts        []int // prompt lengths of the decode rows
	Concurrency     []int
	MaxTokens       int
	Window          time.Duration
	// ReadinessTimeout is how long a decode cell waits for all C streams to run before it is
	// measured anyway and marked queued.
	ReadinessTimeout time.Duration
	SampleEvery      time.Duration
	// ClientRestart is the client's own time between the end of a stream and the next request
	// of the same worker (the reference tool's loses about 1 s per restart beyond TTFT; a Go
	// client loses well under a millisecond).
	ClientRestart time.Duration
	// Labels names contexts whose label is not their length rounded down to whole K, like
	// the 1024K prefill cell whose prompt is max_model_len − 1 tokens.
	Labels map[int]string
	// Salt makes the prompts of one measurement unique (like a run id).
	Salt uint64
}

// ReferenceOptions returns the reference report's matrix: prefill at 8K … 1019K and 1024K,
// decode at 8K … 1019K × 1 … 128, max_tokens 4096, 30 s windows. 1019K is
// max_model_len − max_tokens − 64 tokens, 1024K is max_model_len − 1.
func ReferenceOptions(maxModelLen int) Options {
	k := func(n int) int { return n * 1024 }
	ctx := []int{k(8), k(16), k(32), k(64), k(128), k(256), k(512), maxModelLen - 4096 - 64}
	return Options{
		PrefillContexts:  append(slices.Clone(ctx), maxModelLen-1),
		Labels:           map[int]string{maxModelLen - 1: results.ContextLabel(maxModelLen)},
		Contexts:         ctx,
		Concurrency:      []int{1, 2, 4, 8, 16, 32, 64, 128},
		MaxTokens:        4096,
		Window:           30 * time.Second,
		ReadinessTimeout: 60 * time.Second,
		SampleEvery:      time.Second,
		ClientRestart:    time.Second,
		Salt:             1,
	}
}

// runner is one matrix measurement in progress.
type runner struct {
	eng  *engine.Engine
	opts Options
	now  time.Duration
	// pending holds the times of requests the workers will send, ascending, and send.
	pending []time.Duration
	send    func(at time.Duration) error
}

// Run measures the matrix on a fresh engine with cfg and returns it as a results file.
func Run(cfg engine.Config, opts Options) (*results.File, error) {
	eng, err := engine.New(cfg)
	if err != nil {
		return nil, err
	}
	r := &runner{eng: eng, opts: opts}
	f := &results.File{
		Schema: results.SchemaV1,
		Run: results.Run{
			Source:                results.SourceMeasured,
			Tool:                  results.Tool{Name: "speedmatrix-vmatrix"},
			DecodeTest:            results.DecodeFixedDuration,
			PrefillMode:           results.PrefillDecodeWarmup,
			SecondsPerMeasurement: opts.Window.Seconds(),
			MaxOutputTokens:       opts.MaxTokens,
		},
		Server: &results.Server{MaxModelLen: cfg.MaxModelLen, KVCacheTokens: cfg.KVTokens(), BlockSize: cfg.BlockSize, NumGPUBlocks: cfg.NumBlocks, MaxNumSeqs: cfg.MaxNumSeqs, Metrics: "vllm"},
	}
	done := map[int]bool{}
	for _, ctx := range opts.Contexts {
		if slices.Contains(opts.PrefillContexts, ctx) {
			pc, err := r.prefill(ctx)
			if err != nil {
				return nil, err
			}
			f.Prefill = append(f.Prefill, pc)
			done[ctx] = true
		}
		for _, c := range opts.Concurrency {
			dc, err := r.decode(ctx, c)
			if err != nil {
				return nil, err
			}
			f.Decode = append(f.Decode, dc)
		}
	}
	for _, ctx := range opts.PrefillContexts {
		if !done[ctx] {
			pc, err := r.prefill(ctx)
			if err != nil {
				return nil, err
			}
			f.Prefill = append(f.Prefill, pc)
		}
	}
	slices.SortFunc(f.Prefill, func(a, b results.PrefillCell) int { return a.Context - b.Context })
	return f, nil
}

// prompt returns a request for the context's prompt: the same hashes every time for one context
// of one measurement, so that the decode cells hit the prefix cache the scout filled.
func (r *runner) prompt(ctx, maxTokens int) *engine.Request {
	bs := r.eng.Config().BlockSize
	hashes := make([]uint64, ctx/bs)
	h := engine.HashKey(r.opts.Salt, uint64(ctx))
	for i := range hashes {
		h = engine.HashKey(h, uint64(i))
		hashes[i] = h
	}
	return &engine.Request{PromptLen: ctx, Hashes: hashes, MaxTokens: maxTokens, IgnoreEOS: true}
}

// label returns the report's label of a context.
func (r *runner) label(ctx int) string {
	if l, ok := r.opts.Labels[ctx]; ok {
		return l
	}
	return results.ContextLabel(ctx)
}

// step advances the engine by one step, or to the next arrival when it is idle; it returns the
// step's outputs (stamped at the new r.now) and false when there is nothing left to do.
func (r *runner) step() ([]engine.Output, bool) {
	for len(r.pending) > 0 && r.pending[0] <= r.now {
		at := r.pending[0]
		r.pending = r.pending[1:]
		if err := r.send(at); err != nil {
			return nil, false
		}
	}
	res := r.eng.Step(r.now)
	if res.Duration == 0 {
		next := res.NextReady
		if len(r.pending) > 0 && (next < 0 || r.pending[0] < next) {
			next = r.pending[0]
		}
		if next < 0 {
			return nil, false
		}
		r.now = max(r.now, next)
		return nil, true
	}
	r.now += res.Duration
	return res.Outputs, true
}

// prefill measures one scout request of ctx tokens.
func (r *runner) prefill(ctx int) (results.PrefillCell, error) {
	req := r.prompt(ctx, 1)
	start := r.now
	if err := r.eng.Submit(req, start); err != nil {
		return results.PrefillCell{}, err
	}
	for {
		outs, more := r.step()
		for _, o := range outs {
			if o.Req == req && o.Tokens > 0 {
				ttft := (r.now - start).Seconds()
				r.drain()
				rate, ms, one := float64(ctx)/ttft, ttft*1e3, 1
				return results.PrefillCell{Context: ctx, ContextLabel: r.label(ctx), Status: results.StatusValid,
					PromptTokPerS: &rate, TTFTMs: &ms, PromptTokens: &ctx, CompletedRequests: &one}, nil
			}
		}
		if !more {
			return results.PrefillCell{}, fmt.Errorf("prefill %s: the engine stopped without a token", r.label(ctx))
		}
	}
}

// drain runs the engine until it holds no request.
func (r *runner) drain() {
	for !r.eng.Idle() {
		if _, more := r.step(); !more {
			return
		}
	}
}

// stream is one worker's current request.
type stream struct {
	req                 *engine.Request
	sent                time.Duration
	first               time.Duration // first token, -1 before
	winFirst, winLast   time.Duration
	winTokens           int
	completedInWindow   bool
	startedBeforeWindow bool
}

// decode measures one sustained-decode cell.
func (r *runner) decode(ctx, c int) (results.DecodeCell, error) {
	cell := results.DecodeCell{Context: ctx, ContextLabel: r.label(ctx), Concurrency: c}
	kv := r.eng.Config().KVTokens()
	if c*(ctx+r.opts.MaxTokens) > kv {
		cell.Status = results.StatusOverCapacity
		return cell, nil
	}
	t0 := r.now
	var all []*stream
	live := make(map[*engine.Request]*stream, c)
	r.send = func(at time.Duration) error {
		s := &stream{req: r.prompt(ctx, r.opts.MaxTokens), sent: at, first: -1, winFirst: -1}
		if err := r.eng.Submit(s.req, at); err != nil {
			return err
		}
		live[s.req] = s
		all = append(all, s)
		return nil
	}
	defer func() { r.pending, r.send = nil, nil }()
	submit := func() error {
		r.pending = append(r.pending, r.now+r.opts.ClientRestart)
		return nil
	}
	for range c {
		if err := r.send(r.now); err != nil {
			return cell, err
		}
	}
	// Readiness: every stream has a token, running ≥ C and nothing waits; or the timeout.
	ready, timedOut := false, false
	for !ready {
		outs, more := r.step()
		for _, o := range outs {
			s := live[o.Req]
			if s == nil {
				continue
			}
			if s.first < 0 {
				s.first = r.now
			}
			if o.Finished != engine.NotFinished {
				delete(live, o.Req)
				if err := submit(); err != nil {
					return cell, err
				}
			}
		}
		st := r.eng.Stats()
		ready = st.Running >= c && st.Waiting == 0 && st.Frontend == 0
		for _, s := range live {
			if s.first < 0 {
				ready = false
				break
			}
		}
		if !ready && r.now-t0 >= r.opts.ReadinessTimeout {
			ready, timedOut = true, true
		}
		if !more && !ready {
			return cell, fmt.Errorf("decode %s×%d: the engine stopped before readiness", r.label(ctx), c)
		}
	}
	ws := r.now
	we := ws + r.opts.Window
	for _, s := range live {
		s.startedBeforeWindow = true
	}
	var running, waiting []float64
	nextSample := ws
	total := 0
	for r.now < we {
		for nextSample <= r.now && nextSample < we {
			st := r.eng.Stats()
			running = append(running, float64(st.Running))
			waiting = append(waiting, float64(st.Waiting))
			nextSample += r.opts.SampleEvery
		}
		outs, more := r.step()
		if !more {
			return cell, fmt.Errorf("decode %s×%d: the engine stopped inside the window", r.label(ctx), c)
		}
		for _, o := range outs {
			s := live[o.Req]
			if s == nil {
				continue
			}
			if s.first < 0 {
				s.first = r.now
			}
			if r.now <= we && o.Tokens > 0 {
				if s.winFirst < 0 {
					s.winFirst = r.now
				}
				s.winLast = r.now
				s.winTokens += o.Tokens
				total += o.Tokens
			}
			if o.Finished != engine.NotFinished {
				delete(live, o.Req)
				if r.now <= we {
					s.completedInWindow = true
					if err := submit(); err != nil {
						return cell, err
					}
				}
			}
		}
	}
	// The window is over: the workers stop and cancel what is in flight.
	r.pending = nil
	for req := range live {
		r.eng.Abort(req)
	}
	r.drain()

	var ttfts, tbts, rates []float64
	completed := 0
	for _, s := range all {
		if s.first >= 0 && s.first <= we {
			ttfts = append(ttfts, (s.first-s.sent).Seconds()*1e3)
		}
		if s.winTokens >= 2 && s.winLast > s.winFirst {
			d := (s.winLast - s.winFirst).Seconds()
			tbts = append(tbts, d*1e3/float64(s.winTokens-1))
			rates = append(rates, float64(s.winTokens-1)/d)
		}
		if s.completedInWindow {
			completed++
		}
	}
	winS := r.opts.Window.Seconds()
	tps := float64(total) / winS
	avg := mean(running)
	cell.TotalTokPerS = &tps
	cell.PerRequestTokPerS = opt(quantile.Median(rates))
	cell.TTFTMs = opt(quantile.Median(ttfts))
	cell.TBTMs = opt(quantile.Median(tbts))
	cell.AvgActiveRequests = &avg
	cell.CompletedRequests = &completed
	cell.OutputTokens = &total
	cell.MeasuredSeconds = &winS
	maxRun, maxWait := slices.Max(running), slices.Max(waiting)
	// The reference tool's rule as its cells show it: its 1019K×1 cell averaged 0.9 running
	// requests and is valid, so a mean below 0.95·C alone does not make a cell queued there.
	queued := timedOut || maxRun < float64(c) || maxWait > 0
	cell.Status = results.StatusValid
	if queued {
		cell.Status = results.StatusQueued
	}
	return cell, nil
}

func opt(x float64) *float64 {
	if math.IsNaN(x) {
		return nil
	}
	return &x
}

func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}
