package sim

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/speedmatrix/speedmatrix/sim/engine"
	"github.com/speedmatrix/speedmatrix/sim/inject"
	"github.com/speedmatrix/speedmatrix/sim/profile"
	"github.com/speedmatrix/speedmatrix/sim/tokenizer"
)

// Clock is the simulator's source of time: the scheduler loop sleeps on it between engine
// steps.
type Clock interface {
	Now() time.Time
	NewTimer(d time.Duration) Timer
}

// Timer is a stoppable, resettable timer of a Clock.
type Timer interface {
	C() <-chan time.Time
	Reset(d time.Duration)
	Stop() bool
}

// RealClock is the wall clock.
type RealClock struct{}

// Now returns time.Now().
func (RealClock) Now() time.Time { return time.Now() }

// NewTimer returns a time.Timer.
func (RealClock) NewTimer(d time.Duration) Timer { return realTimer{time.NewTimer(d)} }

type realTimer struct{ t *time.Timer }

func (t realTimer) C() <-chan time.Time   { return t.t.C }
func (t realTimer) Reset(d time.Duration) { t.t.Reset(d) }
func (t realTimer) Stop() bool            { return t.t.Stop() }

// Config configures a simulator.
type Config struct {
	// Profile is the performance profile (required).
	Profile *profile.Profile
	// Addr is the address to listen on; empty means 127.0.0.1:0 (a free loopback port).
	Addr string
	// Listener, when set, is used instead of listening on Addr.
	Listener net.Listener
	// Seed makes noise, acceptance draws, generated text and fault choices repeatable.
	Seed uint64
	// NoiseCV is the coefficient of variation of injected noise; negative means the profile's.
	NoiseCV float64
	// SpeculativeConfig is vLLM's --speculative-config JSON; with rejection_sample_method
	// "synthetic" it pins acceptance (ParseSpecConfig).
	SpeculativeConfig string
	// Slowdown and Fault are --slowdown and --fault specs (see package inject).
	Slowdown string
	Fault    string
	// Speedup runs the model this many times faster than the profile; 0 means DefaultSpeedup
	// (Speedup checks it).
	Speedup float64
	// APIKey, when set, is required as "Authorization: Bearer KEY" on every route but the
	// public ones (/health, /version, /metrics), as vLLM's --api-key; it is never logged.
	APIKey string
	Clock  Clock
	Log    *slog.Logger
}

// Server is a running simulator.
type Server struct {
	prof    *profile.Profile
	eng     *engine.Engine
	tok     *tokenizer.Tokenizer
	prompts *promptCache
	slow    *inject.Slowdown
	faults  *inject.Faults
	seed    uint64
	// cfg is the configuration it started with, its speedup defaulted (Speedup).
	cfg    Config
	apiKey [sha256.Size]byte // the hash of Config.APIKey; zero when there is none
	keyed  bool
	clock  Clock
	log    *slog.Logger
	start  time.Time

	ln   net.Listener
	http *http.Server

	mu     sync.Mutex
	inbox  []*stream
	aborts []*stream
	stats  engine.Stats
	wake   chan struct{}

	requests atomic.Uint64 // completion requests so far, the fault key
	dead     atomic.Bool
	deadCh   chan struct{}
	hung     atomic.Bool
	crashed  atomic.Bool
	// lost is the wall time, in nanoseconds, of the model time the scheduler skipped because
	// it fell too far behind the wall clock to catch up (a machine that did not give it the CPU
	// it needed), or that an injected starve fault took: the time its measurements miss.
	lost atomic.Int64
	// late is the wall time, in nanoseconds, by which steps handed out their tokens after
	// their scheduled end, summed over the steps that handed out tokens (a lag that lasts
	// several of them counts in each): what a machine that kept the loop off the CPU for a
	// moment added to the times a client measures, such as a prefill's TTFT
	// (speedmatrix_sim_late_seconds_total).
	late atomic.Int64
	// vnow is the scheduler's model time (nanoseconds) and busy whether it has work: while
	// busy, how far vnow lags the wall clock's model time is work owed, done late
	// (speedmatrix_sim_behind_seconds).
	vnow atomic.Int64
	busy atomic.Bool

	cancel    context.CancelFunc
	done      chan struct{}
	closeOnce sync.Once
	wg        sync.WaitGroup
}

// Start starts a simulator serving on cfg.Addr (or cfg.Listener) until ctx ends or Close is
// called.
func Start(ctx context.Context, cfg Config) (*Server, error) {
	if cfg.Profile == nil {
		return nil, errors.New("sim: no profile")
	}
	speedup, err := Speedup(cfg.Speedup)
	if err != nil {
		return nil, fmt.Errorf("sim: speedup %w", err)
	}
	cfg.Speedup = speedup
	slow, err := inject.ParseSlowdown(cfg.Slowdown)
	if err != nil {
		return nil, err
	}
	faults, err := inject.ParseFaults(cfg.Fault)
	if err != nil {
		return nil, err
	}
	ecfg, err := cfg.Profile.EngineConfig(cfg.Seed, cfg.NoiseCV)
	if err != nil {
		return nil, fmt.Errorf("sim: profile %s: %w", cfg.Profile.Name, err)
	}
	if err := pinAcceptance(&ecfg, cfg.SpeculativeConfig); err != nil {
		return nil, fmt.Errorf("sim: profile %s: %w", cfg.Profile.Name, err)
	}
	if cfg.Clock == nil {
		cfg.Clock = RealClock{}
	}
	start := cfg.Clock.Now()
	if len(slow.Rules) > 0 {
		clock := cfg.Clock
		ecfg.Slowdown = func(p engine.Phase, ctx float64, batch int) float64 {
			ip := inject.Decode
			if p == engine.PhasePrefill {
				ip = inject.Prefill
			}
			return slow.FactorAt(ip, ctx, batch, clock.Now().Sub(start)) // drift rules grow with wall time
		}
	}
	eng, err := engine.New(ecfg)
	if err != nil {
		return nil, err
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	ln := cfg.Listener
	if ln == nil {
		addr := cfg.Addr
		if addr == "" {
			addr = "127.0.0.1:0"
		}
		if ln, err = net.Listen("tcp", addr); err != nil {
			return nil, fmt.Errorf("sim: listen on %s: %w", addr, err)
		}
	}
	s := &Server{
		prof: cfg.Profile, eng: eng, tok: tokenizer.New(), slow: slow, faults: faults,
		seed: cfg.Seed, cfg: cfg, clock: cfg.Clock, log: cfg.Log,
		start: start, ln: ln,
		wake: make(chan struct{}, 1), deadCh: make(chan struct{}), done: make(chan struct{}),
	}
	if cfg.APIKey != "" {
		s.apiKey, s.keyed = sha256.Sum256([]byte(cfg.APIKey)), true
	}
	s.prompts = newPromptCache(s.tok, cfg.Profile.KVCache.BlockSize)
	s.stats = eng.Stats()
	lctx, cancel := context.WithCancel(ctx)
	s.cancel = cancel
	s.http = &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 30 * time.Second, BaseContext: func(net.Listener) context.Context { return lctx }}
	s.wg.Add(2)
	go s.loop(lctx)
	go func() {
		defer s.wg.Done()
		if err := s.http.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.Error("sim: serve", "err", err)
		}
	}()
	go func() {
		<-lctx.Done()
		s.shutdown()
	}()
	s.scheduleFaults(lctx)
	attrs := []any{"url", s.URL(), "profile", s.prof.Name, "speedup", s.cfg.Speedup, "seed", s.seed, "api_key", s.keyed}
	if cfg.Slowdown != "" {
		attrs = append(attrs, "slowdown", cfg.Slowdown) // an injected slow-down is what the runs will measure
	}
	if cfg.Fault != "" {
		attrs = append(attrs, "fault", cfg.Fault)
	}
	s.log.Info("simulator serving", attrs...)
	return s, nil
}

// URL returns the base URL of the server, e.g. http://127.0.0.1:40123.
func (s *Server) URL() string { return "http://" + s.ln.Addr().String() }

// Profile returns the served profile.
func (s *Server) Profile() *profile.Profile { return s.prof }

// Done is closed when the server has stopped (Close, the context, or a crash fault).
func (s *Server) Done() <-chan struct{} { return s.done }

// Crashed reports whether a crash fault stopped the server.
func (s *Server) Crashed() bool { return s.crashed.Load() }

// Close stops the server: the listener, every connection and the scheduler loop.
func (s *Server) Close() error {
	s.cancel()
	<-s.done
	return nil
}

// shutdown stops everything once.
func (s *Server) shutdown() {
	s.closeOnce.Do(func() {
		s.cancel()
		_ = s.http.Close()
		s.wg.Wait()
		close(s.done)
	})
}

// scheduleFaults arms the timed faults.
func (s *Server) scheduleFaults(ctx context.Context) {
	after := func(d time.Duration, what string, f func()) {
		if d <= 0 {
			return
		}
		go func() {
			t := s.clock.NewTimer(d)
			defer t.Stop()
			select {
			case <-t.C():
				s.log.Warn("sim: injected fault", "fault", what, "after", d)
				f()
			case <-ctx.Done():
			}
		}()
	}
	after(s.faults.Crash, "crash", func() {
		s.crashed.Store(true)
		go s.shutdown()
	})
	after(s.faults.Dead, "dead", func() {
		if s.dead.CompareAndSwap(false, true) {
			close(s.deadCh)
		}
	})
	after(s.faults.Hang, "hang", func() { s.hung.Store(true) })
}

// virtualNow returns the model time now.
func (s *Server) virtualNow() time.Duration {
	return time.Duration(float64(s.clock.Now().Sub(s.start)) * s.cfg.Speedup)
}

// behind returns the wall time the scheduler lags the wall clock while it has work (0 idle).
func (s *Server) behind() time.Duration {
	if !s.busy.Load() {
		return 0
	}
	return max(0, time.Duration(float64(s.virtualNow()-time.Duration(s.vnow.Load()))/s.cfg.Speedup))
}

// realUntil returns the wall time until model time v.
func (s *Server) realUntil(v time.Duration) time.Duration {
	at := s.start.Add(time.Duration(float64(v) / s.cfg.Speedup))
	return at.Sub(s.clock.Now())
}

// submit hands a stream to the scheduler loop.
func (s *Server) submit(st *stream) {
	s.mu.Lock()
	s.inbox = append(s.inbox, st)
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// abort tells the scheduler loop to drop a stream's request.
func (s *Server) abort(st *stream) {
	s.mu.Lock()
	s.aborts = append(s.aborts, st)
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// snapshot returns the engine's latest statistics.
func (s *Server) snapshot() engine.Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stats
}

// maxLag is how far the loop may fall behind the wall clock before it skips ahead; what it
// skips is counted lost (Server.lost, speedmatrix_sim_lost_seconds_total). Below it, the loop
// catches up, running steps back to back: a machine that kept it off the CPU for a moment
// delays tokens (speedmatrix_sim_behind_seconds says by how much) but loses none.
const maxLag = time.Second

// loop is the scheduler: it alone touches the engine. Each iteration takes in new and aborted
// requests, plans one engine step, sleeps until the step's end in scaled time and hands each
// stream its tokens in one batch.
func (s *Server) loop(ctx context.Context) {
	defer s.wg.Done()
	timer := s.clock.NewTimer(time.Hour)
	timer.Stop()
	var vnow time.Duration
	idle := true
	var subs, aborts []*stream
	for ctx.Err() == nil {
		s.mu.Lock()
		subs = append(subs[:0], s.inbox...)
		aborts = append(aborts[:0], s.aborts...)
		clear(s.inbox)
		clear(s.aborts)
		s.inbox, s.aborts = s.inbox[:0], s.aborts[:0]
		s.mu.Unlock()
		vreal := s.virtualNow()
		if idle || vreal-vnow > time.Duration(float64(maxLag)*s.cfg.Speedup) {
			if !idle && vreal > vnow {
				// Work was waiting and the loop ran too late to do it in time: that model
				// time is gone, and a client counting tokens sees the engine slower.
				s.lost.Add(int64(float64(vreal-vnow) / s.cfg.Speedup))
				s.log.Debug("sim: the step clock fell behind the wall clock and skipped ahead", "behind", time.Duration(float64(vreal-vnow)/s.cfg.Speedup))
			}
			vnow = max(vnow, vreal)
		}
		for _, st := range subs {
			if err := s.eng.Submit(&st.req, min(st.at, vnow)); err != nil {
				st.push(0, engine.FinishAbort)
			}
		}
		for _, st := range aborts {
			s.eng.AbortAt(&st.req, vnow)
		}
		if s.hung.Load() || s.dead.Load() {
			<-ctx.Done()
			return
		}
		s.vnow.Store(int64(vnow))
		res := s.eng.Step(vnow)
		s.busy.Store(res.Duration > 0)
		if res.Duration == 0 {
			idle = true
			s.publish()
			wait := time.Duration(-1)
			if res.NextReady >= 0 {
				// At least a nanosecond: realUntil truncates, so a model time less than
				// speedup ns ahead reads as 0 and the loop would spin on a clock that moves
				// only while it waits (testing/synctest's).
				wait = max(s.realUntil(res.NextReady), time.Nanosecond)
			}
			if !s.sleep(ctx, timer, wait, true) {
				return
			}
			continue
		}
		idle = false
		s.publishGauges()
		end := vnow + res.Duration
		if f := s.faults.Starve; f > 0 {
			skip := time.Duration(float64(res.Duration) * f / (1 - f))
			end += skip
			s.lost.Add(int64(float64(skip) / s.cfg.Speedup))
		}
		if d := s.realUntil(end); d > 0 {
			if !s.sleep(ctx, timer, d, false) {
				return
			}
		}
		if over := -s.realUntil(end); over > 0 && len(res.Outputs) > 0 {
			// Only a step that hands out tokens: the schedule is absolute, so a step woken late
			// that hands out nothing is caught up by the next (a prefill's first chunks), and
			// what a client sees is the lateness of the hand-out.
			s.late.Add(int64(over))
		}
		vnow = end
		s.vnow.Store(int64(vnow))
		for _, o := range res.Outputs {
			o.Req.Tag.(*stream).push(o.Tokens, o.Finished)
		}
		s.publish()
	}
}

// publishGauges stores the engine's running, waiting and KV gauges for /metrics as soon as a
// step is scheduled (vLLM counts a request as running from the step that admits it); the
// counters follow when the step's tokens are delivered.
func (s *Server) publishGauges() {
	r, w, f, u := s.eng.Gauges()
	s.mu.Lock()
	s.stats.Running, s.stats.Waiting, s.stats.Frontend, s.stats.UsedBlocks = r, w, f, u
	s.mu.Unlock()
}

// publish stores the engine's statistics for /metrics.
func (s *Server) publish() {
	st := s.eng.Stats()
	s.mu.Lock()
	s.stats = st
	s.mu.Unlock()
}

// sleep waits d (forever when d < 0), or until a new request when wakeable; false when ctx
// ended.
func (s *Server) sleep(ctx context.Context, timer Timer, d time.Duration, wakeable bool) bool {
	var tc <-chan time.Time
	if d >= 0 {
		timer.Reset(d)
		tc = timer.C()
		defer func() {
			if !timer.Stop() {
				select {
				case <-timer.C():
				default:
				}
			}
		}()
	}
	wake := s.wake
	if !wakeable {
		wake = nil
	}
	select {
	case <-tc:
	case <-wake:
	case <-ctx.Done():
		return false
	}
	return true
}
