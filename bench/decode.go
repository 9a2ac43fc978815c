package bench

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/speedmatrix/speedmatrix/results"
)

// trialResult is the outcome of one decode window.
type trialResult struct {
	Analysis analysis
	Status   results.Status
	Why      string // which queued rule fired
	// Err is set when streams failed: the cell is an error. Failed counts them.
	Err    error
	Failed int
	// StopTimedOut is set when workers did not stop within Timeouts.Stop.
	StopTimedOut bool
}

// errInterrupted marks a trial ended by the caller's context.
var errInterrupted = errors.New("interrupted")

// measureDecode runs one window of a decode cell: C workers each keep one stream of prompt in
// flight, the window opens at readiness and lasts d; tokens are counted only inside it.
func (s *session) measureDecode(ctx context.Context, prompt string, c int) (trialResult, error) {
	cellCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	req := StreamRequest{Endpoint: s.cfg.Endpoint, Model: s.model, Prompt: prompt, MaxTokens: s.cfg.MaxTokens}

	var (
		mu         sync.Mutex
		recs       []record
		firstErr   error
		failed     int
		producing  = make([]atomic.Bool, c)
		nProd      atomic.Int64
		inflight   atomic.Int64
		usageOther string // a usage source other than continuous, seen on some request
		errOnce    sync.Once
		failCh     = make(chan struct{})
		wg         sync.WaitGroup
	)
	for i := range c {
		wg.Add(1)
		go func() {
			defer wg.Done()
			onEvent := func(ev StreamEvent) {
				if !producing[i].Load() {
					producing[i].Store(true)
					nProd.Add(1)
				}
				s.progress.Tokens(ev.Tokens)
			}
			for cellCtx.Err() == nil {
				inflight.Add(1)
				res, err := s.r.Stream.Stream(cellCtx, req, onEvent)
				inflight.Add(-1)
				stopped := cellCtx.Err() != nil && !errors.Is(err, ErrBadOutput)
				mu.Lock()
				if err != nil && !stopped {
					failed++
					if firstErr == nil {
						firstErr = err
					}
				}
				recs = append(recs, record{Res: res, Done: err == nil})
				if res.UsageSource != "" && res.UsageSource != "continuous" && res.OutputTokens > 0 && usageOther != "final" {
					usageOther = res.UsageSource // "final" wins: streams cut at the window's end never saw their usage
				}
				mu.Unlock()
				if err != nil && !stopped {
					errOnce.Do(func() { close(failCh) })
					return
				}
			}
		}()
	}
	// stop ends the workers and waits for them, at most Timeouts.Stop.
	stop := func() bool {
		cancel()
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		select {
		case <-done:
			return false
		case <-time.After(s.cfg.Timeouts.Stop):
			s.log.Warn("streams did not stop after the window closed", "timeout", s.cfg.Timeouts.Stop)
			return true
		}
	}
	failedResult := func() (trialResult, error) {
		st := stop()
		mu.Lock()
		defer mu.Unlock()
		return trialResult{Status: results.StatusError, Err: firstErr, Failed: failed, StopTimedOut: st}, nil
	}

	// Readiness: every stream has produced a token, and the server runs C with none waiting.
	start := s.now()
	deadline := time.NewTimer(s.cfg.Timeouts.Readiness)
	defer deadline.Stop()
	poll := time.NewTicker(s.cfg.Timeouts.Poll)
	defer poll.Stop()
	timedOut := false
ready:
	for {
		select {
		case <-ctx.Done():
			stop()
			return trialResult{}, errInterrupted
		case <-failCh:
			return failedResult()
		case <-deadline.C:
			timedOut = true
			s.log.Debug("readiness timed out", "concurrency", c, "producing", nProd.Load(), "after", s.now().Sub(start))
			break ready
		case <-poll.C:
			if nProd.Load() < int64(c) {
				continue
			}
			if s.r.Metrics == nil || !s.hasQueue {
				break ready
			}
			sm, err := s.scrape(ctx)
			if err != nil || !sm.HasQueue {
				continue
			}
			if sm.Running >= float64(c) && sm.Waiting == 0 {
				break ready
			}
		}
	}

	// The window.
	w := window{Start: s.now(), Bin: s.cfg.Timeouts.Bin}
	end := w.Start.Add(s.cfg.Duration)
	samplerDone := make(chan struct{})
	samplerCtx, stopSampler := context.WithCancel(ctx)
	go func() {
		defer close(samplerDone)
		s.sampleWindow(samplerCtx, &w, end, &inflight)
	}()
	timer := time.NewTimer(time.Until(end))
	defer timer.Stop()
	select {
	case <-ctx.Done():
		stopSampler()
		<-samplerDone
		stop()
		return trialResult{}, errInterrupted
	case <-failCh:
		stopSampler()
		<-samplerDone
		return failedResult()
	case <-timer.C:
	}
	w.End = s.now()
	stopSampler()
	<-samplerDone
	if s.r.Metrics != nil && s.hasQueue {
		if sm, err := s.scrape(ctx); err == nil {
			w.Last = &sm
		}
	}
	stopTimedOut := stop()
	mu.Lock()
	defer mu.Unlock()
	if firstErr != nil {
		return trialResult{Status: results.StatusError, Err: firstErr, Failed: failed, StopTimedOut: stopTimedOut}, nil
	}
	in := statusInput{Concurrency: c, ReadinessTimedOut: timedOut}
	if w.Running != nil {
		in.Running, in.Waiting = w.Running, w.Waiting
	}
	st, why := decodeStatus(in)
	switch usageOther {
	case "final":
		s.note("the server sends usage only at the end of a stream (no continuous_usage_stats): a request's tokens are spread evenly over its chunks, and a request cut at a window's end counts one token per chunk")
	case "chunks":
		s.note("the server sends no usage: output tokens were counted as one per chunk, which undercounts multi-token chunks (speculative decoding)")
	}
	return trialResult{Analysis: analyze(recs, w), Status: st, Why: why, StopTimedOut: stopTimedOut}, nil
}

// sampleWindow samples the server's running and waiting counts (and the client's count of
// requests in flight) every Timeouts.Sample from the window's start until end.
func (s *session) sampleWindow(ctx context.Context, w *window, end time.Time, inflight *atomic.Int64) {
	tick := time.NewTicker(s.cfg.Timeouts.Sample)
	defer tick.Stop()
	useServer := s.r.Metrics != nil && s.hasQueue
	if useServer {
		w.Running, w.Waiting = []float64{}, []float64{}
	}
	for {
		at := s.now()
		if !at.Before(end) {
			return
		}
		w.Client = append(w.Client, float64(inflight.Load()))
		if useServer {
			if sm, err := s.scrape(ctx); err == nil && sm.HasQueue {
				if w.First == nil {
					w.First = &sm
				}
				w.Running = append(w.Running, sm.Running)
				w.Waiting = append(w.Waiting, sm.Waiting)
				if sm.HasKVUsage {
					w.KVUsage = append(w.KVUsage, sm.KVUsage)
				}
			} else if ctx.Err() == nil {
				s.log.Debug("metrics scrape failed inside a window", "err", err)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// scrape reads /metrics once, bounded by the poll period's budget.
func (s *session) scrape(ctx context.Context) (Sample, error) {
	sctx, cancel := context.WithTimeout(ctx, s.cfg.Timeouts.Health)
	defer cancel()
	sm, err := s.r.Metrics.Scrape(sctx)
	if err != nil {
		return Sample{}, fmt.Errorf("scrape /metrics: %w", err)
	}
	return sm, nil
}
