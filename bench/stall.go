package bench

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/speedmatrix/speedmatrix/bench/telemetry"
)

// defaultStall is Timeouts.Stall when left at 0.
const defaultStall = 5 * time.Second

// stallSpan is how long a wait may see no sign of progress before the server is probed.
func (s *session) stallSpan() time.Duration {
	if s.cfg.Timeouts.Stall > 0 {
		return s.cfg.Timeouts.Stall
	}
	return defaultStall
}

// stallWatch tells a server that is working from one that hangs, from its /metrics and the
// client's own streams, so that a wait (drain, readiness, a scout) need not run to its timeout
// on a hung server, while a slow one is never judged by time alone. Progress is any of: the
// requests it holds (running + waiting) falling to a new low, a counter moving (generated or
// prompt tokens, prefix-cache lookups, preemptions), the KV cache usage changing (it changes
// with every prefill chunk, so a long prefill is progress), or the client's streams receiving
// tokens. When none of these happened for the span, the caller probes the server (one 2-token
// request, session.probe): only a server that does not answer it hangs. Only vLLM's /metrics
// are watched, and only with the KV cache usage: vLLM allocates KV blocks chunk by chunk, so the
// usage moves through a long prefill while its counters stand still; for other servers that is
// not known, and a probe queued behind a long prefill would wrongly find them hung.
type stallWatch struct {
	span time.Duration
	last time.Time // the last sign of progress
	seen bool
	low  float64 // the fewest requests held so far
	sig  progressSignature
	own  int64
}

// progressSignature is what of a scrape changes while a server works.
type progressSignature struct {
	gen, prompt, queries, preempt, kv float64
}

// newStallWatch returns a watch that starts counting at now.
func newStallWatch(span time.Duration, now time.Time) *stallWatch {
	return &stallWatch{span: span, last: now}
}

// observe takes one scrape and the client's own token count (0 when it has no streams) and
// reports whether nothing progressed for the span.
func (w *stallWatch) observe(at time.Time, sm Sample, own int64) bool {
	if !sm.HasQueue || !sm.HasKVUsage || sm.Kind != telemetry.FlavorVLLM {
		w.last = at // nothing to judge by
		return false
	}
	c := sm.Counters
	sig := progressSignature{gen: c.GenerationTokens.V, prompt: c.PromptTokens.V, queries: c.PrefixQueries.V, preempt: c.Preemptions.V, kv: sm.KVUsage}
	held := sm.Running + sm.Waiting
	progress := !w.seen || sig != w.sig || own != w.own || held < w.low
	if !w.seen || held < w.low {
		w.low = held
	}
	w.seen, w.sig, w.own = true, sig, own
	if progress {
		w.last = at
		return false
	}
	return at.Sub(w.last) >= w.span
}

// restart starts the span again (after a probe that the server answered).
func (w *stallWatch) restart(at time.Time) { w.last = at }

// watchRequest watches the server while one request of the caller (a warm-up or a scout)
// waits for its answer: it scrapes /metrics every poll period, and when nothing progressed for
// the stall span it probes the server; if the probe gets no answer (the server hangs) it
// cancels the returned context. done stops the watch and returns the probe's error
// (ErrServerDead, wrapped) when it ended the request, nil otherwise.
func (s *session) watchRequest(ctx context.Context, what string) (wctx context.Context, done func() error) {
	if s.r.Metrics == nil || !s.hasQueue {
		return ctx, func() error { return nil }
	}
	wctx, cancel := context.WithCancelCause(ctx)
	stop := make(chan struct{})
	var (
		wg   sync.WaitGroup
		dead error
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		w := newStallWatch(s.stallSpan(), s.now())
		tick := time.NewTicker(s.watchPeriod())
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-wctx.Done():
				return
			case <-tick.C:
			}
			sm, err := s.scrape(wctx)
			if err != nil || !w.observe(s.now(), sm, 0) {
				continue
			}
			s.log.Debug("nothing moved on the server for the stall span; probing it", "during", what, "span", s.stallSpan())
			err = s.probe(wctx, what)
			select {
			case <-stop:
				return // the request ended meanwhile: whatever the probe says, it is not needed
			default:
			}
			if errors.Is(err, ErrServerDead) {
				dead = err
				cancel(err)
				return
			}
			w.restart(s.now())
		}
	}()
	return wctx, func() error {
		close(stop)
		wg.Wait()
		cancel(nil)
		return dead
	}
}

// watchPeriod is how often a request's watch reads /metrics: every poll period, at least
// every 250 ms (a scout may take minutes; its watch need not scrape ten times a second).
func (s *session) watchPeriod() time.Duration {
	return max(s.cfg.Timeouts.Poll, min(250*time.Millisecond, s.stallSpan()/4))
}
