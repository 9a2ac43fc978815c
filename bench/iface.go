package bench

import (
	"context"
	"errors"
	"time"

	"github.com/speedmatrix/speedmatrix/bench/stream"
	"github.com/speedmatrix/speedmatrix/bench/telemetry"
	"github.com/speedmatrix/speedmatrix/results"
)

// The endpoints a Streamer can send to.
const (
	EndpointCompletions = stream.EndpointCompletions
	EndpointChat        = stream.EndpointChat
)

// StreamRequest is one streaming completion request; the stream client's own type, so that
// requests and results pass between the layers without copying.
type StreamRequest = stream.Request

// StreamEvent is one chunk that added output tokens, time-stamped at arrival.
type StreamEvent = stream.Event

// StreamResult is what one request produced, filled as far as the stream got: Queued (time
// inside the client before sending), Sent, FirstToken, Last, Events (every token-bearing chunk,
// their Tokens summing to OutputTokens), PromptTokens, OutputTokens, Chunks, FinishReason and
// UsageSource.
type StreamResult = stream.Result

// ErrBadOutput marks a Streamer error about the output itself (a repeating loop): it
// invalidates the cell even when it is reported for a stream that the window's end cancelled.
var ErrBadOutput = errors.New("bad output")

// Streamer sends one streaming request and calls onEvent, from the calling goroutine, for every
// chunk that added output tokens. It returns when the stream ends; a cancelled ctx ends it early.
// A Streamer must be safe for concurrent use.
type Streamer interface {
	Stream(ctx context.Context, req StreamRequest, onEvent func(StreamEvent)) (StreamResult, error)
}

// Model is one entry of the server's /v1/models.
type Model struct {
	ID          string
	MaxModelLen int // 0 when the server does not say
}

// ServerInfo reads the server's facts.
type ServerInfo interface {
	// Models lists /v1/models.
	Models(ctx context.Context) ([]Model, error)
	// Health returns nil when the server answers /health (or, lacking one, answers at all) and
	// an error when it is dead: connection refused, or a status saying the engine is down.
	Health(ctx context.Context) error
	// Version returns the server's version, or "" when it has no /version.
	Version(ctx context.Context) (string, error)
}

// ErrNoMetrics is returned by a Scraper when the server has no /metrics endpoint.
var ErrNoMetrics = errors.New("the server has no /metrics")

// Sample is one scrape of the server's /metrics. A Has flag is false where the server lacks the
// metric.
type Sample struct {
	At time.Time
	// Kind is "vllm" or "llamacpp": whose metric names were found.
	Kind string

	HasQueue bool
	Running  float64 // requests being decoded now
	Waiting  float64 // requests queued

	HasKVUsage bool
	KVUsage    float64 // 0..1

	// Counters is the whole scrape: a window's preemptions, prefix-cache hits and speculative
	// acceptance are telemetry.Delta of its first and last scrape.
	Counters telemetry.Snapshot

	// KVCacheTokens is the KV-cache capacity in tokens (block size × blocks), 0 when unknown.
	KVCacheTokens int
	BlockSize     int
	NumGPUBlocks  int
}

// Scraper reads the server's /metrics once. It returns ErrNoMetrics (wrapped or not) when the
// server has none.
type Scraper interface {
	Scrape(ctx context.Context) (Sample, error)
}

// Prompt is a prompt of a measured length.
type Prompt struct {
	Text   string
	Tokens int // the length the server's tokenizer gives it (or the estimate)
	// Estimated is set when no /tokenize was available and Tokens is a chars-per-token estimate.
	Estimated bool
	// Note says what a reader must know about how the prompt was sized; "" when nothing.
	Note string
}

// Prompter builds a natural-language prompt of exactly tokens tokens for model. label names the
// prompt uniquely within the run; the Prompter starts the prompt with a prefix unique to the run
// and the label, so that prompts of different labels, or of another run, share no cached prefix.
type Prompter interface {
	Build(ctx context.Context, model string, tokens int, label string) (Prompt, error)
}

// PlannedCell is one cell of the plan as Progress sees it.
type PlannedCell struct {
	ID     results.CellID
	Trials int
}

// CellOutcome is what Progress hears when a cell is done.
type CellOutcome struct {
	ID     results.CellID
	Status results.Status
	Error  string
	// TokPerS is the total tok/s of a decode cell, the prompt tok/s of a prefill cell, 0 when
	// not measured.
	TokPerS float64
	TTFTMs  float64
	// Elapsed is the cell's whole time; Window, Readiness and Drain the parts of it spent in
	// its windows, waiting for readiness, and stopping streams and draining the server.
	Elapsed                  time.Duration
	Window, Readiness, Drain time.Duration
}

// The phases of a decode trial, as PhaseProgress hears them.
const (
	PhaseReadiness = "readiness"
	PhaseWindow    = "window"
	PhaseDrain     = "drain"
)

// PhaseProgress is a Progress that also hears which phase a decode trial is in (readiness,
// window, drain), so that it can show waiting as waiting. Calls come from the runner's
// goroutine.
type PhaseProgress interface {
	Phase(id results.CellID, phase string)
}

// Progress hears what the runner does. Calls come from one goroutine, except Tokens, which
// worker goroutines call concurrently.
type Progress interface {
	// Start announces the plan and its estimated duration.
	Start(cells []PlannedCell, estimate time.Duration)
	// CellStart announces that a cell (trial counted from 1) begins.
	CellStart(id results.CellID, trial int)
	// Tokens reports n output tokens that arrived just now.
	Tokens(n int)
	// CellDone reports a finished cell.
	CellDone(o CellOutcome)
	// Finish ends the progress display.
	Finish()
}

// noProgress is the Progress that shows nothing.
type noProgress struct{}

func (noProgress) Start([]PlannedCell, time.Duration) {}
func (noProgress) CellStart(results.CellID, int)      {}
func (noProgress) Tokens(int)                         {}
func (noProgress) CellDone(CellOutcome)               {}
func (noProgress) Finish()                            {}
