package bench

import (
	"context"
	"errors"
	"fmt"
	"slices"
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
	// Dead is set (ErrServerDead, wrapped) when nothing moved during readiness for the stall
	// span and the probe got no answer: the server hangs and the run ends (ErrHostStarved,
	// wrapped, when the probe went unanswered because the machine starved this client).
	Dead error
	// recs and win are what Analysis was computed from, so that part of the window can be
	// analyzed again (cutAround).
	recs []record
	win  window
	// Starved says why the machine, not the engine, decided this window (starve.go): the
	// client ran late or the simulator skipped model time. "" when it did not.
	Starved string
}

// errInterrupted marks a trial ended by the caller's context.
var errInterrupted = errors.New("interrupted")

// measureDecode runs one window of a decode cell: C workers each keep one stream of prompt in
// flight, the window opens at readiness (readiness.go) and lasts d; tokens are counted only
// inside it.
func (s *session) measureDecode(ctx context.Context, id results.CellID, prompt string, c int) (trialResult, error) {
	cellCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	req := StreamRequest{Endpoint: s.cfg.Endpoint, Model: s.model, Prompt: prompt, MaxTokens: s.cfg.MaxTokens}
	useServer := s.r.Metrics != nil && s.hasQueue

	var (
		mu         sync.Mutex
		recs       []record
		firstErr   error
		failed     int
		producing  = make([]atomic.Bool, c)
		nProd      atomic.Int64
		inflight   atomic.Int64
		received   atomic.Int64 // tokens received by all streams, for the stall watch
		awaiting   atomic.Int64 // requests in flight without their first token
		ended      atomic.Int64 // requests whose stream the client has seen end
		usageOther string       // a usage source other than continuous, seen on some request
		errOnce    sync.Once
		failCh     = make(chan struct{})
		allProd    = make(chan struct{}) // closed when every stream has produced a token
		wg         sync.WaitGroup
	)
	for i := range c {
		wg.Add(1)
		go func() {
			defer wg.Done()
			gotFirst := false
			onEvent := func(ev StreamEvent) {
				if !gotFirst {
					gotFirst = true
					awaiting.Add(-1)
					if !producing[i].Load() {
						producing[i].Store(true)
						if nProd.Add(1) == int64(c) {
							close(allProd)
						}
					}
				}
				received.Add(int64(ev.Tokens))
				s.progress.Tokens(ev.Tokens)
			}
			for cellCtx.Err() == nil {
				gotFirst = false
				inflight.Add(1)
				awaiting.Add(1)
				res, err := s.r.Stream.Stream(cellCtx, req, onEvent)
				if !gotFirst {
					awaiting.Add(-1)
				}
				ended.Add(1)
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
	// stop ends the workers and waits for them, at most Timeouts.Stop; the time counts as drain.
	stop := func() bool {
		defer s.since(&s.budget.drain, s.now())
		cancel()
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		t := time.NewTimer(s.cfg.Timeouts.Stop)
		defer t.Stop()
		select {
		case <-done:
			return false
		case <-t.C:
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

	// Readiness.
	s.phase(id, PhaseReadiness)
	start := s.now()
	stopLag := s.lagMeter().Start()
	var late Lateness
	lagging := true
	endLag := func() {
		if lagging {
			lagging, late = false, stopLag()
		}
	}
	defer endLag()
	judge := newReadiness(c, s.cfg.Timeouts.Poll, useServer)
	deadline := time.NewTimer(s.cfg.Timeouts.Readiness)
	defer deadline.Stop()
	poll := time.NewTicker(s.cfg.Timeouts.Poll)
	defer poll.Stop()
	timedOut, queued := false, false
	watch := newStallWatch(s.stallSpan(), start)
	prodCh := allProd
	var allProdAt time.Time // when the last stream produced its first token
ready:
	for {
		select {
		case <-ctx.Done():
			s.since(&s.budget.readiness, start)
			stop()
			return trialResult{}, errInterrupted
		case <-failCh:
			s.since(&s.budget.readiness, start)
			return failedResult()
		case <-deadline.C:
			timedOut = true
			s.log.Debug("readiness timed out", "concurrency", c, "producing", nProd.Load(), "after", s.now().Sub(start))
			break ready
		case <-prodCh:
			prodCh, allProdAt = nil, s.now() // checked once at once, then at every poll
		case <-poll.C:
		}
		v := readyView{Produced: int(nProd.Load()), InFlight: int(inflight.Load()), Awaiting: int(awaiting.Load())}
		if v.Produced >= c && allProdAt.IsZero() {
			allProdAt = s.now() // a poll saw it before the channel's case was picked
		}
		// Scrape when the answer can decide: every stream has produced (valid), or the
		// streams have had two polls to reach the server and some still wait (queued).
		if useServer && (v.Produced >= c || s.now().Sub(start) >= 2*s.cfg.Timeouts.Poll) {
			if sm, err := s.scrape(ctx); err == nil && sm.HasQueue {
				v.HasQueue, v.Running, v.Waiting = true, sm.Running, sm.Waiting
				if watch.observe(s.now(), sm, received.Load()) {
					// Nothing moved, on the server or the streams: a hung server or a slow one?
					s.log.Debug("nothing moved on the server or the streams for the stall span; probing it", "cell", id.String(), "span", s.stallSpan())
					if err := s.probe(ctx, "waiting for "+id.String()+" to be ready"); err != nil {
						s.since(&s.budget.readiness, start)
						st := stop()
						if errors.Is(err, ErrServerDead) {
							return trialResult{Status: results.StatusError, Err: err, Dead: err, StopTimedOut: st}, nil
						}
						return trialResult{}, errInterrupted
					}
					watch.restart(s.now())
				}
			}
		}
		v.At = s.now()
		switch judge.observe(v) {
		case readyValid:
			break ready
		case readyQueued:
			queued = true
			s.log.Debug("readiness: requests wait while running stopped rising", "concurrency", c, "running", v.Running, "waiting", v.Waiting, "after", v.At.Sub(start))
			break ready
		}
	}

	// The window.
	w := window{Start: s.now(), Bin: s.cfg.Timeouts.Bin}
	s.budget.readiness += w.Start.Sub(start)
	s.budget.admission += admission(start, w.Start, allProdAt, judge, queued)
	s.phase(id, PhaseWindow)
	end := w.Start.Add(s.cfg.Duration)
	samplerDone := make(chan struct{})
	samplerCtx, stopSampler := context.WithCancel(ctx)
	go func() {
		defer close(samplerDone)
		s.sampleWindow(samplerCtx, &w, end, clientCounts{inflight: &inflight, awaiting: &awaiting, ended: &ended})
	}()
	timer := time.NewTimer(time.Until(end))
	defer timer.Stop()
	closeWindow := func() {
		w.End = s.now()
		endLag()
		s.budget.windows += w.End.Sub(w.Start)
		stopSampler()
		<-samplerDone
	}
	select {
	case <-ctx.Done():
		closeWindow()
		stop()
		return trialResult{}, errInterrupted
	case <-failCh:
		closeWindow()
		return failedResult()
	case <-timer.C:
	}
	closeWindow()
	s.phase(id, PhaseDrain)
	if useServer {
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
	in := statusInput{Concurrency: c, ReadinessTimedOut: timedOut, ReadinessQueued: queued, Window: w.End.Sub(w.Start)}
	if w.Running != nil {
		in.Running, in.Waiting, in.At, in.Awaiting, in.Unseen = w.Running, w.Waiting, w.At, w.Awaiting, w.Unseen
	}
	st, why := decodeStatus(in)
	switch usageOther {
	case "final":
		s.note("the server sends usage only at the end of a stream (no continuous_usage_stats): a request's tokens are spread evenly over its chunks, and a request cut at a window's end counts one token per chunk")
	case "chunks":
		s.note("the server sends no usage: output tokens were counted as one per chunk, which undercounts multi-token chunks (speculative decoding)")
	}
	starvedWhy := starved(w.End.Sub(start), late, simLost(w.First, w.Last))
	if starvedWhy == "" {
		starvedWhy = starvedEdges(w.Start, end, w.End, late)
	}
	s.log.Debug("the machine while measuring a window", "cell", id.String(), "span", w.End.Sub(start), "late_total", late.Total, "late_worst", late.Worst, "sim_lost_s", simLost(w.First, w.Last), "starved", starvedWhy)
	return trialResult{Analysis: analyze(recs, w), Status: st, Why: why, StopTimedOut: stopTimedOut, Starved: starvedWhy, recs: slices.Clone(recs), win: w}, nil
}

// Sampling inside a window: at least samplesPerWindow samples whatever the window's length,
// and at most one per Timeouts.Sample, but never more often than minSamplePeriod.
const (
	samplesPerWindow = 30
	minSamplePeriod  = 20 * time.Millisecond
)

// samplePeriod returns the period of the running/waiting samples inside a window:
// min(Timeouts.Sample, Duration / samplesPerWindow), at least minSamplePeriod.
func (c *Config) samplePeriod() time.Duration {
	return max(min(c.Timeouts.Sample, c.Duration/samplesPerWindow), minSamplePeriod)
}

// clientCounts are a decode trial's counters of its own requests: in flight, in flight
// without their first token, and ended (the client has read the end of their stream).
type clientCounts struct{ inflight, awaiting, ended *atomic.Int64 }

// clientReading is one reading of clientCounts.
type clientReading struct{ inflight, awaiting, ended float64 }

// read reads the counts.
func (cc clientCounts) read() clientReading {
	return clientReading{float64(cc.inflight.Load()), float64(cc.awaiting.Load()), float64(cc.ended.Load())}
}

// sampleWindow samples the server's running and waiting counts (and the client's count of
// requests in flight, of those awaiting their first token, and of those the server has ended
// but whose end the client has not read yet: window.Unseen) every samplePeriod from the
// window's start until end, recording when each sample was taken.
func (s *session) sampleWindow(ctx context.Context, w *window, end time.Time, cc clientCounts) {
	tick := time.NewTicker(s.cfg.samplePeriod())
	defer tick.Stop()
	useServer := s.r.Metrics != nil && s.hasQueue
	if useServer {
		w.Running, w.Waiting, w.Awaiting = []float64{}, []float64{}, []float64{}
	}
	var finished0, ended0 float64 // the server's and the client's count of ended requests at the first sample
	for {
		at := s.now()
		if !at.Before(end) {
			return
		}
		if !useServer {
			w.Client = append(w.Client, float64(cc.inflight.Load()))
			w.At = append(w.At, at.Sub(w.Start))
		} else {
			// The client's counts are read on both sides of the scrape they are compared with:
			// the server took its snapshot at some instant in between, which on a loaded
			// machine can be tens of milliseconds before the answer arrives (the Python server
			// renders /metrics, the client waits for a CPU). A request between two requests
			// (no first token yet, or ended by the server and not yet read) at either side
			// may have been so at the server's instant; one already running on both sides was
			// running then too, and the server's waiting count still shows a real queue.
			before := cc.read()
			sm, err := s.scrape(ctx)
			after := cc.read()
			switch {
			case err == nil && sm.HasQueue:
				w.Client = append(w.Client, after.inflight)
				w.Awaiting = append(w.Awaiting, max(before.awaiting, after.awaiting))
				w.At = append(w.At, at.Sub(w.Start))
				if w.First == nil {
					w.First = &sm
					finished0, ended0 = sm.Counters.Finished.V, before.ended
				}
				if f := sm.Counters.Finished; f.OK {
					producing := max(before.inflight-before.awaiting, after.inflight-after.awaiting)
					w.Unseen = append(w.Unseen, unseen(f.V-finished0, before.ended-ended0, producing))
				}
				w.Running = append(w.Running, sm.Running)
				w.Waiting = append(w.Waiting, sm.Waiting)
				if sm.HasKVUsage {
					w.KVUsage = append(w.KVUsage, sm.KVUsage)
				}
			case ctx.Err() == nil:
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

// unseen returns how many of the client's requests the server had ended at a scrape while the
// client had not yet read their end: the requests the server ended since the window's first
// scrape less those whose end the client read since then, at least 0 and at most the client's
// requests in flight past their first token (producing). The server no longer counts them as
// running, yet they are not its queue: a client kept off the CPU reads the last chunk late and
// restarts late, which on a loaded machine (and magnified by a simulator's speedup) looked like
// a server running fewer than C.
func unseen(serverEnded, clientEnded, producing float64) float64 {
	return max(0, min(serverEnded-clientEnded, producing))
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

// admission returns the part of a trial's readiness (start to open) the server took to start
// its requests: until the last stream's first token when every stream produced (also when the
// readiness then timed out, for want of metrics that say so), until the running count last rose
// when the trial was judged queued, and none when the readiness timed out before every stream
// produced (that wait is the client's last resort, not the server's pace).
func admission(start, open, allProdAt time.Time, judge *readiness, queued bool) time.Duration {
	at := allProdAt
	if queued {
		at = judge.since
	}
	if at.IsZero() || at.Before(start) {
		return 0
	}
	if open.Before(at) {
		at = open
	}
	return at.Sub(start)
}
