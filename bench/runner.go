package bench

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/speedmatrix/speedmatrix/results"
)

// ToolName is the name recorded as the measuring tool.
const ToolName = "speedmatrix"

// ErrServerDead is returned (wrapped) when the server stopped answering during a run; the
// returned file holds the cells measured until then and is marked partial.
var ErrServerDead = errors.New("the server stopped answering")

// ErrInterrupted is returned (wrapped) when the caller cancelled the run; the returned file holds
// the cells measured until then and is marked partial.
var ErrInterrupted = errors.New("run interrupted")

// Runner measures a matrix through the layers it is given.
type Runner struct {
	Stream  Streamer   // required
	Server  ServerInfo // required
	Prompts Prompter   // required
	// Metrics reads /metrics; nil when the server has none (client-side estimates are used).
	Metrics Scraper
	// Progress hears about cells; nil shows nothing.
	Progress Progress
	// Log receives diagnostics; nil discards them.
	Log *slog.Logger
	// Now returns the time; nil is time.Now. Streams time-stamp chunks with the same clock.
	Now func() time.Time
	// Lag measures how late this process runs while it measures (starve.go); nil ticks a
	// goroutine. A measurement made while the machine starved the client or the simulator is
	// made again, and the run ends with ErrHostStarved when it stays starved.
	Lag LagMeter
	// Checkpoint, when set, is called with the results so far after every cell, so that a crash
	// of this process loses at most one cell. Its error is logged, not fatal.
	Checkpoint func(*results.File) error
}

// session is the state of one run.
type session struct {
	r        *Runner
	cfg      Config
	log      *slog.Logger
	progress Progress
	now      func() time.Time

	file     *results.File
	model    string
	hasQueue bool // /metrics reports running and waiting
	rampTTFT bool // some cell took TTFT from the requests that opened its window
	budget   budget
	// order counts the cells started so far (their Order); rank is the results file's order
	// of the cells (matrixRank), nil until planned; remeasures is how many disturbed windows
	// the run may still measure again.
	order      int
	rank       map[results.CellID]int
	remeasures int
	// scoutLate is how late the client ran during the last scout request (starve.go);
	// starvedKept counts the measurements kept although starved (Config.KeepStarved).
	scoutLate   Lateness
	starvedKept int
	// timeScale is the built-in simulator's speedup, read from its /metrics
	// (speedmatrix_sim_speedup) when the run starts; 0 for every other server.
	timeScale float64
}

// Run measures the matrix cfg describes and returns the results file. When the run cannot start
// (bad settings, server unreachable) it returns a nil file and the error. When it ends early
// (interrupted, ErrInterrupted; server dead, ErrServerDead) it returns the cells measured so far,
// marked partial, together with the error. A failed cell never ends the run.
func (r *Runner) Run(ctx context.Context, cfg Config) (*results.File, error) {
	if err := cfg.Check(); err != nil {
		return nil, err
	}
	if r.Stream == nil || r.Server == nil || r.Prompts == nil {
		return nil, errors.New("bench: Runner needs Stream, Server and Prompts")
	}
	s := &session{r: r, cfg: cfg, log: r.Log, progress: r.Progress, now: r.Now}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.progress == nil {
		s.progress = noProgress{}
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.cfg.RunID == "" {
		s.cfg.RunID = fmt.Sprintf("sm-%x", s.now().UnixNano())
	}
	return s.run(ctx)
}

// run is Run after the checks.
func (s *session) run(ctx context.Context) (*results.File, error) {
	cfg := &s.cfg
	s.budget.begin(s.now())
	s.file = &results.File{
		Schema:   results.SchemaV1,
		Hardware: cfg.Hardware,
		Engine:   cfg.Engine,
		Run: results.Run{
			ID:                    cfg.RunID,
			Source:                results.SourceMeasured,
			Revision:              cfg.Revision,
			Tool:                  results.Tool{Name: ToolName, Version: cfg.ToolVersion},
			DecodeTest:            results.DecodeFixedDuration,
			PrefillMode:           results.PrefillDecodeWarmup,
			SecondsPerMeasurement: cfg.Duration.Seconds(),
			MaxOutputTokens:       cfg.MaxTokens,
			LaunchCommand:         cfg.LaunchCommand,
			Start:                 s.now().UTC(),
		},
		Prefill: []results.PrefillCell{},
		Decode:  []results.DecodeCell{},
	}
	for _, n := range cfg.Notes {
		s.note("%s", n)
	}
	began := s.now()
	plan, err := s.setup(ctx)
	s.since(&s.budget.setup, began)
	if err != nil {
		return nil, err
	}
	s.rank = matrixRank(plan)
	s.remeasures = cfg.Remeasures
	s.file.Run.Settings.Remeasures = cfg.Remeasures
	s.file.Run.Settings.Order = results.OrderMatrix
	if cfg.Order == results.OrderShuffled {
		seed := orderSeed(cfg)
		shufflePlan(plan, seed)
		s.file.Run.Settings.Order, s.file.Run.Settings.OrderSeed = results.OrderShuffled, seed
	}
	cells := plannedCells(plan, cfg.Trials)
	s.progress.Start(cells, s.estimate(plan))
	defer s.progress.Finish()

	began = s.now()
	err = s.warmup(ctx)
	s.since(&s.budget.setup, began)
	if err != nil {
		return s.end(err)
	}
	for _, p := range plan {
		if err := s.runContext(ctx, p); err != nil {
			return s.end(err)
		}
	}
	return s.end(nil)
}

// end finishes the file; err (interrupted or dead server) marks it partial.
func (s *session) end(err error) (*results.File, error) {
	f := s.file
	end := s.now()
	f.Run.End = end.UTC()
	f.Run.Budget = s.budget.result(end)
	s.noteStarved()
	if s.rank != nil {
		sortByRank(f, s.rank)
	}
	if s.rampTTFT {
		s.note("TTFT of a decode cell in which no request started inside the window is the median over the requests that opened the window (as llm-inference-bench reports it); those requests' samples carry it")
	}
	if err != nil {
		f.Run.Partial = true
		switch {
		case errors.Is(err, ErrInterrupted):
			f.Run.PartialReason = "interrupted before every cell was measured"
		default:
			f.Run.PartialReason = err.Error()
		}
	}
	return f, err
}

// note adds a note to the results file once.
func (s *session) note(format string, args ...any) {
	n := fmt.Sprintf(format, args...)
	for _, have := range s.file.Notes {
		if have == n {
			return
		}
	}
	s.file.Notes = append(s.file.Notes, n)
}

// checkpoint hands the results so far to Runner.Checkpoint.
func (s *session) checkpoint() {
	if s.r.Checkpoint == nil {
		return
	}
	f := *s.file
	f.Run.Partial, f.Run.PartialReason = true, "run in progress"
	if err := s.r.Checkpoint(&f); err != nil {
		s.log.Warn("could not save the results so far", "err", err)
	}
}

// setup reads the server's facts, resolves the model and builds the plan.
func (s *session) setup(ctx context.Context) ([]*ctxPlan, error) {
	cfg := &s.cfg
	sctx, cancel := context.WithTimeout(ctx, cfg.Timeouts.Setup)
	defer cancel()
	if err := s.health(sctx); err != nil {
		if unreachable(err) { // hints.go
			return nil, fmt.Errorf("server %s: %w; %s", cfg.URL, err, unreachHint)
		}
		return nil, fmt.Errorf("server %s: %w", cfg.URL, err)
	}
	models, err := s.r.Server.Models(sctx)
	switch {
	case refusedAuth(err): // hints.go
		return nil, fmt.Errorf("list models (GET /v1/models): %w; %s", err, authHint)
	case err != nil && cfg.Model == "":
		return nil, fmt.Errorf("list models (GET /v1/models): %w; name the model with --model", err)
	case err != nil:
		s.note("could not list models (%v): measured %q as asked, without max_model_len", err, cfg.Model)
		models = nil
	}
	server := &results.Server{}
	s.file.Server = server
	var chosen *Model
	for i := range models {
		if cfg.Model == "" || models[i].ID == cfg.Model {
			chosen = &models[i]
			break
		}
	}
	switch {
	case chosen != nil:
		s.model = chosen.ID
		server.MaxModelLen = chosen.MaxModelLen
	case cfg.Model != "":
		ids := make([]string, len(models))
		for i, m := range models {
			ids[i] = m.ID
		}
		if len(models) > 0 {
			return nil, fmt.Errorf("model %q is not served; /v1/models lists %s", cfg.Model, strings.Join(ids, ", "))
		}
		s.model = cfg.Model
		if err == nil {
			s.note("/v1/models listed no model; measured %q as asked", cfg.Model)
		}
	default:
		return nil, errors.New("/v1/models lists no model; name one with --model")
	}
	s.file.Run.ServedModel = s.model
	if server.MaxModelLen == 0 {
		s.note("the server did not report max_model_len; contexts were not trimmed to fit")
	}
	if v, err := s.r.Server.Version(sctx); err == nil && v != "" {
		server.Version = v
		if s.file.Engine.Version == "" {
			s.file.Engine.Version = v
		}
	}

	server.Metrics = "none"
	if s.r.Metrics != nil {
		sm, err := s.r.Metrics.Scrape(sctx)
		switch {
		case err != nil:
			s.note("no server metrics (%v): average active requests are the client's count of requests in flight, and the queued rules use readiness only", err)
			s.r = withoutMetrics(s.r)
		case !sm.HasQueue:
			s.note("/metrics has no running/waiting counts: average active requests are the client's count of requests in flight, and the queued rules use readiness only")
			server.Metrics = sm.Kind
		default:
			s.hasQueue = true
			server.Metrics = sm.Kind
		}
		if err == nil {
			server.KVCacheTokens, server.BlockSize, server.NumGPUBlocks = sm.KVCacheTokens, sm.BlockSize, sm.NumGPUBlocks
			if v := sm.Counters.SimSpeedup; v.OK && v.V > 0 {
				s.timeScale = v.V
			}
		}
	} else {
		s.note("no server metrics: average active requests are the client's count of requests in flight, and the queued rules use readiness only")
	}
	if server.KVCacheTokens == 0 {
		s.note("KV-cache capacity unknown (no vllm:cache_config_info): no cell was skipped as over capacity")
	}

	m := cfg.Matrix
	plan, notes := buildPlan(planInput{
		Matrix:            m,
		PrefillFromDecode: cfg.PrefillFromDecode,
		Cells:             cfg.Cells,
		MaxModelLen:       server.MaxModelLen,
		MaxTokens:         cfg.MaxTokens,
		KVCacheTokens:     server.KVCacheTokens,
	})
	for _, n := range notes {
		s.note("%s", n)
	}
	st := &results.Settings{
		URL:             cfg.URL,
		Endpoint:        cfg.Endpoint,
		Matrix:          cfg.MatrixName,
		DurationSeconds: cfg.Duration.Seconds(),
		MaxTokens:       cfg.MaxTokens,
		Trials:          cfg.Trials,
		Seed:            cfg.Seed,

		ReadinessTimeoutSeconds: cfg.Timeouts.Readiness.Seconds(),
		DrainTimeoutSeconds:     cfg.Timeouts.Drain.Seconds(),
		WarmupRequests:          cfg.Warmup,
		ContextWarmup:           cfg.ContextWarmup,
	}
	for _, n := range m.Contexts {
		st.Contexts = append(st.Contexts, results.ContextLabel(n))
	}
	st.Concurrency = append(st.Concurrency, m.Concurrency...)
	for _, p := range plan {
		if p.Prefill {
			st.PrefillContexts = append(st.PrefillContexts, p.Label)
		}
	}
	for _, id := range cfg.Cells {
		st.Cells = append(st.Cells, id.String())
	}
	if len(cfg.Cells) > 0 {
		st.Contexts, st.Concurrency, st.PrefillContexts = nil, nil, nil
	}
	s.file.Run.Settings = st
	if cfg.Shard != nil {
		plan = shardPlan(plan, cfg.Shard)
		s.file.Run.Shard = shardRecord(cfg.Shard)
	}
	return plan, nil
}

// withoutMetrics returns a copy of r without its Scraper.
func withoutMetrics(r *Runner) *Runner {
	c := *r
	c.Metrics = nil
	return &c
}

// estimate returns a rough duration of the plan: windows, readiness and drains.
func (s *session) estimate(plan []*ctxPlan) time.Duration {
	return planEstimate(s.cfg, plan, s.timeScale)
}

// planEstimate returns the expected wall time of the plan on cfg's server, by the cost model of
// PlanShards (so that run's first line and plan's expected_minutes agree): every decode trial its
// window and 2 s, every prefill (the context warm-up, the scout, the further trials) at the
// reference server's prompt tok/s, divided by timeScale against a simulator that runs that much
// faster (0 or 1: a real server). Unlike plan, it knows which cells the server's KV cache holds:
// over-capacity cells cost nothing.
func planEstimate(cfg Config, plan []*ctxPlan, timeScale float64) time.Duration {
	scale := max(timeScale, 1)
	var d time.Duration
	for _, p := range plan {
		d += time.Duration(float64(rowPrefillCost(cfg, p))/scale) + rowDecodeCost(cfg, p)
	}
	return d
}

// healthTries is how many times health asks /health before it gives up.
const healthTries = 3

// health checks the server, retrying briefly so one slow answer does not end a run. When every
// try timed out it says so, with the timeout and the number of tries.
func (s *session) health(ctx context.Context) error {
	var err error
	late := 0
	for attempt := 1; attempt <= healthTries; attempt++ {
		hctx, cancel := context.WithTimeout(ctx, s.cfg.Timeouts.Health)
		err = s.r.Server.Health(hctx)
		if err != nil && errors.Is(hctx.Err(), context.DeadlineExceeded) {
			late++
		}
		cancel()
		if err == nil || ctx.Err() != nil {
			return err
		}
		s.log.Debug("health check failed", "try", attempt, "err", err)
		if attempt < healthTries {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(s.cfg.Timeouts.Poll):
			}
		}
	}
	if late == healthTries {
		return fmt.Errorf("/health did not answer within %v (%d tries); if the server is only slow to answer, raise --health-timeout", s.cfg.Timeouts.Health, healthTries)
	}
	return fmt.Errorf("%w (%d tries)", err, healthTries)
}

// probeTimeout is how long the probe request after a stall may take.
func (s *session) probeTimeout() time.Duration {
	if s.cfg.Timeouts.Probe > 0 {
		return s.cfg.Timeouts.Probe
	}
	return 3 * s.cfg.Timeouts.Health
}

// probe tells a hung server from a cell that merely produced nothing: after checkAlive, it sends
// one short request (max_tokens 2) bounded by the probe timeout. A server that answers /health
// but not that request hangs, and the run ends as for a dead server (ErrServerDead).
func (s *session) probe(ctx context.Context, after string) error {
	if err := s.checkAlive(ctx, after); err != nil {
		return err
	}
	limit := s.probeTimeout()
	pctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	req := StreamRequest{Endpoint: s.cfg.Endpoint, Model: s.model, Prompt: fmt.Sprintf("run %s probe: say hello.", s.cfg.RunID), MaxTokens: 2}
	stopLag := s.lagMeter().Start()
	_, err := s.r.Stream.Stream(pctx, req, nil)
	late := stopLag()
	switch {
	case ctx.Err() != nil:
		return fmt.Errorf("%w: %w", ErrInterrupted, ctx.Err())
	case err != nil && errors.Is(pctx.Err(), context.DeadlineExceeded) && !s.cfg.KeepStarved && starved(limit, late, -1) != "":
		// Not a hung server: this process could not run to read the answer.
		why := starved(limit, late, -1)
		s.log.Warn("a short request got no answer, but the machine starved this client meanwhile", "after", after, "why", why)
		return s.hostStarved("a short request during "+after+" got no answer within "+limit.String(), why)
	case err != nil && errors.Is(pctx.Err(), context.DeadlineExceeded):
		s.log.Warn("the server hangs: /health answers but a short request does not", "after", after, "timeout", limit)
		return fmt.Errorf("%w during %s: /health answers, but a 2-token request got no answer within %v (the server hangs)", ErrServerDead, after, limit)
	case err != nil:
		s.log.Debug("probe request failed, but the server answered", "err", err)
	}
	return nil
}

// checkAlive turns a failure into ErrServerDead when the server no longer answers, and into
// ErrInterrupted when the caller cancelled.
func (s *session) checkAlive(ctx context.Context, after string) error {
	if ctx.Err() != nil {
		return fmt.Errorf("%w: %w", ErrInterrupted, ctx.Err())
	}
	stopLag := s.lagMeter().Start()
	began := s.now()
	err := s.health(ctx)
	late := stopLag()
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("%w: %w", ErrInterrupted, ctx.Err())
		}
		if why := starved(s.now().Sub(began), late, -1); why != "" && !s.cfg.KeepStarved {
			return s.hostStarved("/health did not answer during "+after, why)
		}
		return fmt.Errorf("%w during %s: %w", ErrServerDead, after, err)
	}
	return nil
}

// warmup sends the hidden warm-up requests: a short prompt, a few tokens each. A failure is
// noted, not fatal, unless the server is dead.
func (s *session) warmup(ctx context.Context) error {
	if s.cfg.Warmup == 0 {
		return nil
	}
	pctx, cancel := context.WithTimeout(ctx, s.cfg.Timeouts.Setup)
	p, err := s.r.Prompts.Build(pctx, s.model, 256, "warm-up")
	cancel()
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("%w: %w", ErrInterrupted, ctx.Err())
		}
		s.note("warm-up skipped: could not build its prompt: %v", err)
		return s.checkAlive(ctx, "the warm-up prompt")
	}
	req := StreamRequest{Endpoint: s.cfg.Endpoint, Model: s.model, Prompt: p.Text, MaxTokens: min(64, s.cfg.MaxTokens)}
	for range s.cfg.Warmup {
		rctx, cancel := context.WithTimeout(ctx, s.cfg.Timeouts.Scout)
		wctx, watched := s.watchRequest(rctx, "a warm-up request")
		_, err := s.r.Stream.Stream(wctx, req, nil)
		dead := watched()
		cancel()
		if dead != nil {
			return dead
		}
		if err != nil {
			if e := s.checkAlive(ctx, "a warm-up request"); e != nil {
				return e
			}
			s.note("a warm-up request failed: %v", err)
		}
	}
	return nil
}

// runContext measures one context: its scout (the prefill cell), then its decode cells.
func (s *session) runContext(ctx context.Context, p *ctxPlan) error {
	if p.Skip != "" {
		if p.Prefill {
			s.addPrefill(results.PrefillCell{Context: p.Context, ContextLabel: p.Label, Status: results.StatusSkipped, Error: p.Skip})
		}
		for _, c := range p.Decode {
			s.addDecode(results.DecodeCell{Context: p.Context, ContextLabel: p.Label, Concurrency: c, Status: results.StatusSkipped, Error: p.Skip})
		}
		return nil
	}
	for _, c := range p.OverCap {
		s.addDecode(results.DecodeCell{Context: p.Context, ContextLabel: p.Label, Concurrency: c, Status: results.StatusOverCapacity})
		s.progress.CellDone(CellOutcome{ID: results.CellID{Phase: results.PhaseDecode, ContextLabel: p.Label, Concurrency: c}, Status: results.StatusOverCapacity})
	}
	if !p.Prefill && len(p.Decode) == 0 {
		return nil
	}
	failAll := func(reason string) {
		if p.Prefill {
			s.addPrefill(results.PrefillCell{Context: p.Context, ContextLabel: p.Label, Status: results.StatusError, Error: reason})
			s.progress.CellDone(CellOutcome{ID: results.CellID{Phase: results.PhasePrefill, ContextLabel: p.Label}, Status: results.StatusError, Error: reason})
		}
		for _, c := range p.Decode {
			s.addDecode(results.DecodeCell{Context: p.Context, ContextLabel: p.Label, Concurrency: c, Status: results.StatusError, Error: reason})
			s.progress.CellDone(CellOutcome{ID: results.CellID{Phase: results.PhaseDecode, ContextLabel: p.Label, Concurrency: c}, Status: results.StatusError, Error: reason})
		}
		s.checkpoint()
	}
	if err := s.drain(ctx, "before context "+p.Label); err != nil {
		return err
	}
	label := fmt.Sprintf("%s (%d tokens)", p.Label, p.Tokens)
	prompt, err := s.buildPrompt(ctx, p.Tokens, label)
	if err != nil {
		if e := s.checkAlive(ctx, "building the prompt of "+p.Label); e != nil {
			return e
		}
		failAll(fmt.Sprintf("could not build a %d-token prompt: %v", p.Tokens, err))
		return nil
	}

	if err := s.contextWarmup(ctx, p, prompt.Text); err != nil {
		return err
	}

	// The scout: measures prefill and warms the prefix cache for the decode cells.
	pid := results.CellID{Phase: results.PhasePrefill, ContextLabel: p.Label}
	var (
		prefillOrder   int
		prefillStarted time.Time
	)
	if p.Prefill {
		prefillOrder, prefillStarted = s.nextOrder()
		s.progress.CellStart(pid, 1)
	}
	began := s.now()
	trial, err := s.scoutOnTime(ctx, p, prompt, label)
	if errors.Is(err, ErrHostStarved) {
		if p.Prefill {
			s.addPrefill(results.PrefillCell{Context: p.Context, ContextLabel: p.Label, Status: results.StatusError, Error: "not measured: " + err.Error()})
			s.checkpoint()
		}
		return err
	}
	if errors.Is(err, ErrServerDead) {
		return err // its watch found the server hung
	}
	if err != nil {
		// A scout that got no answer may have met a hung server: probe it.
		if e := s.probe(ctx, "the scout request of "+p.Label); e != nil {
			return e
		}
		failAll("scout request failed: " + err.Error())
		return nil
	}
	if p.Prefill {
		trials := []results.PrefillTrial{trial}
		var cellErr string
		for t := 2; t <= s.cfg.Trials; t++ {
			s.progress.CellStart(pid, t)
			if err := s.drain(ctx, "between prefill trials of "+p.Label); err != nil {
				return err
			}
			// Every further trial needs a prompt no cache holds.
			pr, err := s.buildPrompt(ctx, p.Tokens, fmt.Sprintf("%s trial %d", label, t))
			if err == nil {
				var tr results.PrefillTrial
				tr, err = s.scoutOnTime(ctx, p, pr, fmt.Sprintf("%s trial %d", label, t))
				if err == nil {
					trials = append(trials, tr)
					continue
				}
			}
			if errors.Is(err, ErrHostStarved) {
				s.addPrefill(results.PrefillCell{Context: p.Context, ContextLabel: p.Label, Status: results.StatusError, Error: "not measured: " + err.Error()})
				s.checkpoint()
				return err
			}
			if errors.Is(err, ErrServerDead) {
				return err
			}
			if e := s.checkAlive(ctx, "a prefill trial of "+p.Label); e != nil {
				return e
			}
			cellErr = fmt.Sprintf("prefill trial %d failed: %v", t, err)
			break
		}
		cell := prefillCell(p, trials, cellErr)
		cell.Order, cell.Started = prefillOrder, prefillStarted
		s.addPrefill(cell)
		s.progress.CellDone(CellOutcome{ID: pid, Status: cell.Status, Error: cell.Error, TokPerS: deref(cell.PromptTokPerS), TTFTMs: deref(cell.TTFTMs), Elapsed: s.now().Sub(began)})
		s.checkpoint()
	}
	for _, c := range p.Decode {
		if err := s.decodeCell(ctx, p, prompt.Text, c); err != nil {
			return err
		}
	}
	return nil
}

// contextWarmup sends the hidden warm-up request of a context (Config.ContextWarmup), max_tokens 1:
// the context's measured prompt with warmupMarker in front, so that it has the context's length
// (a few tokens more) and shares no prefix, and so no cached block, with any measured request.
// It needs no tokenizer calls of its own. Its time counts as setup. A failure is noted, not
// fatal, unless the server no longer answers.
func (s *session) contextWarmup(ctx context.Context, p *ctxPlan, prompt string) error {
	if !s.cfg.ContextWarmup {
		return nil
	}
	began := s.now()
	defer s.since(&s.budget.setup, began)
	defer s.since(&s.budget.warmup, began)
	sctx, cancel := context.WithTimeout(ctx, s.cfg.Timeouts.Scout)
	wctx, watched := s.watchRequest(sctx, "the warm-up request of "+p.Label)
	_, err := s.r.Stream.Stream(wctx, StreamRequest{Endpoint: s.cfg.Endpoint, Model: s.model, Prompt: warmupMarker + prompt, MaxTokens: 1}, nil)
	dead := watched()
	cancel()
	if dead != nil {
		return dead
	}
	if err != nil {
		if e := s.probe(ctx, "the warm-up request of "+p.Label); e != nil {
			return e
		}
		s.note("the warm-up request of %s failed: %v", p.Label, err)
	}
	return nil
}

// buildPrompt builds a prompt of tokens tokens, noting how it was sized.
func (s *session) buildPrompt(ctx context.Context, tokens int, label string) (Prompt, error) {
	defer s.since(&s.budget.setup, s.now())
	pctx, cancel := context.WithTimeout(ctx, s.cfg.Timeouts.Setup)
	defer cancel()
	p, err := s.r.Prompts.Build(pctx, s.model, tokens, label)
	if err != nil {
		return Prompt{}, err
	}
	if s.file.Server.Tokenizer == "" || p.Estimated {
		s.file.Server.Tokenizer = "server"
		if p.Estimated {
			s.file.Server.Tokenizer = "estimate"
		}
	}
	if p.Note != "" {
		s.note("%s", p.Note)
	}
	return p, nil
}

// scout sends one streaming request with max_tokens 1 and returns its prefill measurement and
// what the simulator reported meanwhile (starvedScout's account; negative where the server
// reports nothing of it). One scrape before the request serves both the prefix-cache counters
// and the simulator's clocks, and the last one after it too.
func (s *session) scout(ctx context.Context, p Prompt) (results.PrefillTrial, simClock, error) {
	defer s.since(&s.budget.scouts, s.now())
	sctx, cancel := context.WithTimeout(ctx, s.cfg.Timeouts.Scout)
	defer cancel()
	before := s.readMeters(sctx)
	tr, after, err := s.scoutRequest(ctx, sctx, p, before)
	if err != nil {
		return tr, simClock{lost: -1, late: -1}, err
	}
	return tr, after.sim.since(before.sim), nil
}

// scoutRequest sends the scout and reads the prefix cache's share of its prompt; after is the
// last reading of the meters, taken once the response ended.
func (s *session) scoutRequest(ctx, sctx context.Context, p Prompt, before meterReading) (results.PrefillTrial, meterReading, error) {
	wctx, watched := s.watchRequest(sctx, "a scout request")
	stopLag := s.lagMeter().Start()
	res, err := s.r.Stream.Stream(wctx, StreamRequest{Endpoint: s.cfg.Endpoint, Model: s.model, Prompt: p.Text, MaxTokens: 1}, nil)
	s.scoutLate = stopLag()
	if dead := watched(); dead != nil {
		return results.PrefillTrial{}, meterReading{}, dead
	}
	if err != nil {
		return results.PrefillTrial{}, meterReading{}, err
	}
	if res.FirstToken.IsZero() {
		return results.PrefillTrial{}, meterReading{}, errors.New("the response carried no token")
	}
	ttft := res.FirstToken.Sub(res.Sent)
	if ttft <= 0 {
		return results.PrefillTrial{}, meterReading{}, fmt.Errorf("first token before the request was sent (%v); clock trouble", ttft)
	}
	pt := res.PromptTokens
	if pt == 0 {
		pt = p.Tokens
	}
	hits, after := s.scoutHits(ctx, before, pt)
	return results.PrefillTrial{
		TTFTMs:               ms(ttft),
		PromptTokens:         pt,
		PromptTokPerS:        float64(pt) / ttft.Seconds(),
		ClientQueueMs:        ms(res.Queued),
		PrefixCacheHitTokens: hits,
	}, after, nil
}

// readMeters reads, in one scrape, the server's prefix-cache counters
// (vllm:prefix_cache_queries_total and _hits_total, in tokens; ok false without them) and the
// simulator's lost and late seconds (-1 each where the server reports none).
func (s *session) readMeters(ctx context.Context) meterReading {
	m := meterReading{sim: simClock{lost: -1, late: -1}}
	if s.r.Metrics == nil {
		return m
	}
	sm, err := s.scrape(ctx)
	if err != nil {
		return m
	}
	if c := sm.Counters; c.PrefixQueries.OK && c.PrefixHits.OK {
		m.prefix = prefixReading{queries: c.PrefixQueries.V, hits: c.PrefixHits.V, ok: true}
	}
	if sm.Counters.SimLost.OK {
		m.sim.lost = sm.Counters.SimLost.V
	}
	if sm.Counters.SimLate.OK {
		m.sim.late = sm.Counters.SimLate.V
	}
	return m
}

// meterReading is one scrape's reading of what a scout is judged by.
type meterReading struct {
	prefix prefixReading
	sim    simClock
}

// scoutHits returns how many of a scout's prompt tokens the prefix cache served: the growth of
// the hit counter since before (the counters read just before the scout was sent, nothing else
// running), once the query counter has counted the scout's prompt (vLLM publishes its counters
// a moment after the response; read for up to 20 polls). Nil when the server has no such
// counters or they never counted the scout: nothing is then proven either way. It returns the
// last reading of the meters too: where it polled none, one taken now if the server reports the
// simulator's clocks, else before itself (nothing to account for).
func (s *session) scoutHits(ctx context.Context, before meterReading, promptTokens int) (*int, meterReading) {
	if !before.prefix.ok {
		if before.sim.lost < 0 && before.sim.late < 0 {
			return nil, before
		}
		return nil, s.readMeters(ctx)
	}
	var now meterReading
	for i := 0; i < 20; i++ {
		now = s.readMeters(ctx)
		if !now.prefix.ok {
			return nil, now
		}
		if now.prefix.queries-before.prefix.queries >= float64(promptTokens) {
			n := int(now.prefix.hits - before.prefix.hits)
			return &n, now
		}
		select {
		case <-ctx.Done():
			return nil, now
		case <-time.After(s.cfg.Timeouts.Poll):
		}
	}
	return nil, now
}

// prefixReading is one reading of the prefix-cache counters (ok false without them).
type prefixReading struct {
	queries, hits float64
	ok            bool
}

// prefillCell summarizes the trials of a prefill cell: medians of TTFT and prompt tok/s.
func prefillCell(p *ctxPlan, trials []results.PrefillTrial, cellErr string) results.PrefillCell {
	c := results.PrefillCell{Context: p.Context, ContextLabel: p.Label, Status: results.StatusValid, Trials: trials}
	if cellErr != "" {
		c.Status, c.Error = results.StatusError, cellErr
		return c
	}
	for i, t := range trials {
		if t.PrefixCacheHitTokens != nil && *t.PrefixCacheHitTokens > 0 {
			c.Status = results.StatusError
			c.Error = fmt.Sprintf("trial %d: the prefix cache served %d of its %d prompt tokens, so its TTFT is not a prefill; the server kept a prompt of this run (its unique prefix) or ignores it", i+1, *t.PrefixCacheHitTokens, t.PromptTokens)
			return c
		}
	}
	c.Summarize()
	return c
}

// decodeCell measures one decode cell, all its trials.
func (s *session) decodeCell(ctx context.Context, p *ctxPlan, prompt string, c int) error {
	id := results.CellID{Phase: results.PhaseDecode, ContextLabel: p.Label, Concurrency: c}
	cell := results.DecodeCell{Context: p.Context, ContextLabel: p.Label, Concurrency: c, Status: results.StatusValid}
	cell.Order, cell.Started = s.nextOrder()
	began := s.now()
	before := s.budget
	var (
		whys       []string
		remeasured int       // this cell's windows measured again
		again      time.Time // when the re-measure now under way began; zero when none is
	)
	starvedTries := 0 // windows measured again because the machine starved them
	for t := 1; t <= s.cfg.Trials; t++ {
		s.progress.CellStart(id, t)
		if err := s.drain(ctx, "before "+id.String()); err != nil {
			return err
		}
		tr, err := s.measureDecode(ctx, id, prompt, c)
		if !again.IsZero() {
			s.since(&s.budget.remeasure, again)
			again = time.Time{}
		}
		if err != nil {
			return fmt.Errorf("%w: %w", ErrInterrupted, ctx.Err())
		}
		if tr.Dead != nil {
			cell.Status, cell.Error = results.StatusError, "no token arrived and nothing moved on the server while waiting for readiness (the server hangs)"
			if errors.Is(tr.Dead, ErrHostStarved) {
				cell.Error = "not measured: " + tr.Dead.Error()
			}
			s.addDecode(cell)
			return tr.Dead
		}
		if tr.Starved != "" && s.cfg.KeepStarved {
			s.keptStarved(id.String(), tr.Starved)
			tr.Starved = ""
		}
		if tr.Starved != "" {
			// The machine's load, not the engine: measure the window again once it settles,
			// and give up on the machine (never on the engine) when it stays starved.
			if starvedTries < starveRetries {
				starvedTries++
				s.log.Warn("the machine starved this window: measuring it again once the machine settles", "cell", id.String(), "why", tr.Starved, "try", starvedTries+1)
				if err := s.settle(ctx); err != nil {
					return err
				}
				t--
				continue
			}
			err := s.hostStarved("the window of "+id.String(), tr.Starved)
			cell.Status, cell.Error = results.StatusError, "not measured: "+err.Error()
			cell.Trials = nil
			s.addDecode(cell)
			s.progress.CellDone(CellOutcome{ID: id, Status: cell.Status, Error: cell.Error, Elapsed: s.now().Sub(began)})
			s.checkpoint()
			return err
		}
		if tr.StopTimedOut {
			s.note("%s: streams took longer than %v to stop after the window", id, s.cfg.Timeouts.Stop)
		}
		if tr.Status == results.StatusError {
			cell.Status = results.StatusError
			cell.Error = fmt.Sprintf("%d stream(s) failed: %v", tr.Failed, tr.Err)
			if tr.Failed == 1 {
				cell.Error = fmt.Sprintf("a stream failed: %v", tr.Err)
			}
			if e := s.checkAlive(ctx, id.String()); e != nil {
				s.addDecode(cell)
				return e
			}
			break
		}
		if deref(tr.Analysis.Trial.OutputTokens) == 0 {
			cell.Status = results.StatusError
			cell.Error = fmt.Sprintf("no output token arrived during the %v window (the server stalled)", s.cfg.Duration)
			if e := s.probe(ctx, id.String()); e != nil {
				s.addDecode(cell)
				return e
			}
			break
		}
		trial := tr.Analysis.Trial
		if d := disturbance(&trial); d != nil {
			dt := results.DisturbedTrial{Disturbance: *d, Trial: trial}
			if remeasured < maxRemeasuresPerCell && s.remeasures > 0 {
				remeasured++
				s.remeasures--
				s.budget.remeasures++
				dt.Used = results.UsedRemeasure
				dt.Why = fmt.Sprintf("%s: measured again in the same run while the engine was up (%d of at most %d for a cell; %d left to the run)", describeDisturbance(*d, len(trial.BinOutputTokens)), remeasured, maxRemeasuresPerCell, s.remeasures)
				cell.Disturbed = append(cell.Disturbed, dt)
				s.log.Info("disturbed window measured again", "cell", id.String(), "kind", d.Kind, "bins", fmt.Sprintf("%d-%d", d.FirstBin, d.LastBin), "level", d.Level)
				again = s.now()
				t-- // the same trial, once more
				continue
			}
			why := "no re-measure left to the run"
			switch {
			case s.cfg.Remeasures == 0:
				why = "re-measures are off"
			case remeasured >= maxRemeasuresPerCell:
				why = fmt.Sprintf("the cell was measured again %d times, every time disturbed", remeasured)
			}
			why = describeDisturbance(*d, len(trial.BinOutputTokens)) + "; " + why
			if cut, how, ok := cutAround(tr, *d); ok {
				dt.Used, dt.Why = results.UsedUndisturbedBins, why+"; decided from "+how
				trial = cut
			} else {
				dt.Used, dt.Why = results.UsedDisturbed, why+"; kept as measured: "+how
			}
			cell.Disturbed = append(cell.Disturbed, dt)
			s.note("decode %s: a window was disturbed (%s) and %s", id, d.Kind, map[string]string{
				results.UsedUndisturbedBins: "decided from its undisturbed bins",
				results.UsedDisturbed:       "kept as measured; its number is not the engine's alone",
			}[dt.Used])
		}
		if tr.Analysis.RampTTFT {
			s.rampTTFT = true
		}
		if tr.Status == results.StatusQueued {
			cell.Status = results.StatusQueued
			whys = append(whys, tr.Why)
		}
		cell.Trials = append(cell.Trials, trial)
	}
	if cell.Status != results.StatusError {
		cell.DecodeMetrics = results.SummarizeDecode(cell.Trials)
		if cell.Status == results.StatusQueued {
			s.log.Debug("cell queued", "cell", id.String(), "rules", strings.Join(whys, "; "))
		}
	}
	s.addDecode(cell)
	s.progress.CellDone(CellOutcome{ID: id, Status: cell.Status, Error: cell.Error, TokPerS: deref(cell.TotalTokPerS), TTFTMs: deref(cell.TTFTMs), Elapsed: s.now().Sub(began),
		Window: s.budget.windows - before.windows, Readiness: s.budget.readiness - before.readiness, Drain: s.budget.drain - before.drain})
	s.checkpoint()
	return nil
}

// drain waits until the server runs and queues nothing, at most Timeouts.Drain. Without
// metrics it returns at once. It scrapes at once, then again after 5 ms, doubling the wait up to
// Timeouts.Poll, so that it returns within a few milliseconds of the server's last request
// ending. A timeout is noted; a dead server ends the run, and so does a hung one: when nothing
// moves for the stall span (stall.go) it probes the server, and only a server that answers the
// probe is waited for further.
func (s *session) drain(ctx context.Context, where string) error {
	if s.r.Metrics == nil || !s.hasQueue {
		return ctx.Err()
	}
	defer s.since(&s.budget.drain, s.now())
	deadline := time.NewTimer(s.cfg.Timeouts.Drain)
	defer deadline.Stop()
	wait := min(drainFirstWait, s.cfg.Timeouts.Poll)
	tick := time.NewTimer(wait)
	defer tick.Stop()
	fails := 0
	watch := newStallWatch(s.stallSpan(), s.now())
	for {
		sm, err := s.scrape(ctx)
		switch {
		case err == nil && sm.Running == 0 && sm.Waiting == 0:
			return nil
		case err == nil && watch.observe(s.now(), sm, 0):
			s.log.Debug("nothing moved on the server for the stall span; probing it", "during", "the drain "+where, "span", s.stallSpan())
			if e := s.probe(ctx, "the drain "+where); e != nil {
				return e
			}
			watch.restart(s.now())
		case err != nil:
			if ctx.Err() != nil {
				return fmt.Errorf("%w: %w", ErrInterrupted, ctx.Err())
			}
			if fails++; fails >= 3 {
				if e := s.checkAlive(ctx, "the drain "+where); e != nil {
					return e
				}
				fails = 0
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w: %w", ErrInterrupted, ctx.Err())
		case <-deadline.C:
			s.note("the server was not drained (running = 0, waiting = 0) within %v %s; measured anyway", s.cfg.Timeouts.Drain, where)
			s.log.Warn("server not drained", "where", where, "timeout", s.cfg.Timeouts.Drain)
			return nil
		case <-tick.C:
		}
		wait = min(2*wait, s.cfg.Timeouts.Poll)
		tick.Reset(wait)
	}
}

// drainFirstWait is the first wait between two scrapes of a drain.
const drainFirstWait = 5 * time.Millisecond

// addPrefill appends a prefill cell unless one with the same identity is there.
func (s *session) addPrefill(c results.PrefillCell) {
	for _, have := range s.file.Prefill {
		if have.ID() == c.ID() {
			s.note("prefill cell %s was planned twice; measured once", c.ContextLabel)
			return
		}
	}
	s.file.Prefill = append(s.file.Prefill, c)
}

// addDecode appends a decode cell unless one with the same identity is there.
func (s *session) addDecode(c results.DecodeCell) {
	for _, have := range s.file.Decode {
		if have.ID() == c.ID() {
			s.note("decode cell %s×%d was planned twice; measured once", c.ContextLabel, c.Concurrency)
			return
		}
	}
	s.file.Decode = append(s.file.Decode, c)
}

// warmupMarker starts a context warm-up's prompt: a measured prompt begins with its run prefix,
// so a prompt that begins otherwise shares no cached prefix with it.
const warmupMarker = "warm-up. "
