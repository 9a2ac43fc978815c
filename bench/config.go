package bench

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/speedmatrix/speedmatrix/results"
)

// The matrices known by name (results.MatrixFull, results.MatrixQuick).
const (
	MatrixFull  = results.MatrixFull
	MatrixQuick = results.MatrixQuick
)

// Matrix is a set of contexts and concurrency levels.
type Matrix struct {
	Contexts        []int // decode contexts, nominal tokens
	Concurrency     []int
	PrefillContexts []int // nominal tokens
}

// k is 1024 tokens.
const k = 1024

// FullMatrix returns the reference matrix: decode at 8K … 1024K × concurrency 1 … 128. With
// Config.PrefillFromDecode (the default) prefill is measured at the same contexts by their
// scouts; 1024K is trimmed to fit max_model_len (1019K on a 1M server) and, having been
// trimmed, is also measured at its full length (capped at max_model_len − 1), as the reference
// measures both 1019K and 1024K.
func FullMatrix() Matrix {
	ctx := []int{8 * k, 16 * k, 32 * k, 64 * k, 128 * k, 256 * k, 512 * k, 1024 * k}
	return Matrix{
		Contexts:    ctx,
		Concurrency: []int{1, 2, 4, 8, 16, 32, 64, 128},
	}
}

// QuickMatrix returns the smoke matrix: decode at 8K and 32K × concurrency 1, 8 and 32, and
// (by their scouts) prefill at 8K and 32K: 6 decode cells, about 4 minutes with 30 s windows.
func QuickMatrix() Matrix {
	return Matrix{
		Contexts:    []int{8 * k, 32 * k},
		Concurrency: []int{1, 8, 32},
	}
}

// MatrixByName returns the matrix called name ("" is the full one); an unknown name is an error
// (results.CheckMatrixName).
func MatrixByName(name string) (Matrix, error) {
	if err := results.CheckMatrixName(name); err != nil {
		return Matrix{}, err
	}
	if name == MatrixQuick {
		return QuickMatrix(), nil
	}
	return FullMatrix(), nil
}

// Timeouts bound every wait of a run, and set the sampling periods.
type Timeouts struct {
	// Readiness is the longest a decode window waits for its outcome to be known (readiness.go):
	// the last resort for servers without running/waiting metrics. When it passes, the cell is
	// marked queued and measured anyway.
	Readiness time.Duration
	// Drain is how long the runner waits between cells for running = 0 and waiting = 0.
	Drain time.Duration
	// Scout bounds one scout or prefill request (a 1M-token prefill takes minutes).
	Scout time.Duration
	// Stop bounds how long workers may take to stop after a window closes.
	Stop time.Duration
	// Health bounds one health check (each check tries three times).
	Health time.Duration
	// Probe bounds the one short request (max_tokens 2) sent after a cell in which no token
	// arrived, to tell a hung server from a slow cell; 0 is three times Health.
	Probe time.Duration
	// Stall is how long a wait (drain, readiness, a scout or warm-up request) may see no sign
	// of progress in /metrics or on the client's streams before the server is probed with one
	// short request (stall.go); 0 is 5 s. Only a probe that gets no answer ends the run.
	Stall time.Duration
	// Setup bounds each start-up call (models, version, first scrape, prompt building).
	Setup time.Duration
	// Sample is the longest period of the running/waiting samples inside a window (~1 s); a
	// short window samples faster, so that it gets at least samplesPerWindow (decode.go).
	Sample time.Duration
	// Poll is the period of readiness checks and the longest wait between two drain checks; a
	// queued plateau must hold plateauPolls of them.
	Poll time.Duration
	// Bin is the width of the output-token bins of a trial.
	Bin time.Duration
}

// DefaultTimeouts returns the timeouts of a real run.
func DefaultTimeouts() Timeouts {
	return Timeouts{
		Readiness: 60 * time.Second,
		Drain:     120 * time.Second,
		Scout:     30 * time.Minute,
		Stop:      30 * time.Second,
		Health:    10 * time.Second,
		Stall:     defaultStall,
		Setup:     10 * time.Minute,
		Sample:    time.Second,
		Poll:      100 * time.Millisecond,
		Bin:       time.Second,
	}
}

// Config is what a run measures and how.
type Config struct {
	// URL is the server's base URL, recorded in the settings (it must hold no credentials).
	URL string
	// Model is the served model; "" takes the first of /v1/models.
	Model    string
	Endpoint string // EndpointCompletions or EndpointChat
	// MatrixName names the matrix the lists came from ("full", "quick"), for the record.
	MatrixName string
	// Matrix holds the contexts and concurrency levels to measure.
	Matrix Matrix
	// PrefillFromDecode records every decode context's scout as a prefill cell and measures a
	// context that had to be trimmed also at its full length (the reference's 1019K and 1024K).
	// Matrix.PrefillContexts are measured in addition, at their full length.
	PrefillFromDecode bool
	// Cells, when not empty, restricts the run to these cells.
	Cells     []results.CellID
	Duration  time.Duration // decode window length
	MaxTokens int           // max_tokens of every decode request
	Trials    int           // windows per cell
	// Warmup is the number of hidden warm-up requests before the first cell (0: none).
	Warmup int
	// ContextWarmup sends, before each context's scout, one hidden request of the same length
	// with a prompt of its own (max_tokens 1): the first request at a new length pays one-time
	// costs (allocations, kernel selection, graph capture) that would otherwise inflate the
	// scout's TTFT, the prefill measurement. It costs one more prefill per context.
	ContextWarmup bool
	RunID         string // unique; prefixes every prompt
	Timeouts      Timeouts
	// KeepStarved keeps a measurement the machine starved (starve.go), with a note in the
	// file, instead of measuring it again and ending the run with ErrHostStarved: for test
	// suites of other behaviour on a shared machine (SPEEDMATRIX_KEEP_STARVED=1 sets it in
	// DefaultConfig).
	KeepStarved bool

	// Provenance, copied into the results file.
	Hardware      results.Hardware
	Engine        results.Engine
	LaunchCommand string // secrets already redacted
	Revision      string
	ToolVersion   string
	Seed          int64

	// Order is the measuring order: results.OrderShuffled draws the order of the contexts and
	// of each context's decode cells from OrderSeed (0: one drawn from RunID), so that a drift
	// or a step along the run cannot line up with a row or a column; results.OrderMatrix or ""
	// measures contexts ascending, concurrency ascending. Each context's scout still comes
	// before its decode cells (it fills the prefix cache they read).
	Order     string
	OrderSeed uint64
	// Remeasures is the most decode windows a run measures again because their bins showed a
	// stall or two levels (results.DetectDisturbance), at most maxRemeasuresPerCell a cell;
	// each costs about one window, its readiness and a drain. 0: none.
	Remeasures int

	// Shard, when set, restricts the run to one shard's context rows (shard.go).
	Shard *Shard

	// Notes are recorded in the results file's notes, before the run's own (e.g. why the
	// client's repetition check is off).
	Notes []string
}

// DefaultConfig returns a full-matrix configuration with the contract's defaults.
func DefaultConfig() Config {
	return Config{
		Endpoint:          EndpointCompletions,
		MatrixName:        MatrixFull,
		Matrix:            FullMatrix(),
		PrefillFromDecode: true,
		Duration:          results.DefaultWindow,
		MaxTokens:         4096,
		Trials:            1,
		Warmup:            2,
		ContextWarmup:     true,
		Timeouts:          DefaultTimeouts(),
		Order:             results.OrderShuffled,
		Remeasures:        DefaultRemeasures,
		KeepStarved:       keepStarvedFromEnv(), // starve.go
	}
}

// MinContext is the shortest context Check accepts, in tokens: a prompt must hold its run prefix
// ("run <id> context <label>: ", a few dozen tokens) and some prose after it.
const MinContext = 256

// Check returns an error naming every setting that cannot work.
func (c *Config) Check() error {
	var errs []string
	if c.Endpoint != EndpointCompletions && c.Endpoint != EndpointChat {
		errs = append(errs, fmt.Sprintf("endpoint %q: want %s or %s", c.Endpoint, EndpointCompletions, EndpointChat))
	}
	if err := results.CheckWindow(c.Duration); err != nil {
		errs = append(errs, "duration "+err.Error())
	}
	if c.MaxTokens < 2 {
		errs = append(errs, fmt.Sprintf("max tokens %d: must be at least 2 (a request needs two tokens for a time between tokens)", c.MaxTokens))
	}
	if c.Trials < 1 {
		errs = append(errs, fmt.Sprintf("trials %d: must be at least 1", c.Trials))
	}
	if c.Order != "" && c.Order != results.OrderMatrix && c.Order != results.OrderShuffled {
		errs = append(errs, fmt.Sprintf("order %q: want %s or %s", c.Order, results.OrderShuffled, results.OrderMatrix))
	}
	if c.Remeasures < 0 {
		errs = append(errs, fmt.Sprintf("re-measures %d: must not be negative (0: none)", c.Remeasures))
	}
	if c.Warmup < 0 {
		errs = append(errs, fmt.Sprintf("warm-up requests %d: must not be negative", c.Warmup))
	}
	for _, n := range c.Matrix.Concurrency {
		if n < 1 {
			errs = append(errs, fmt.Sprintf("concurrency %d: must be at least 1", n))
		}
	}
	for _, n := range append(append([]int(nil), c.Matrix.Contexts...), c.Matrix.PrefillContexts...) {
		if n < MinContext {
			errs = append(errs, fmt.Sprintf("context %d: must be at least %d tokens (e.g. 1K, 8K, 32K)", n, MinContext))
		}
	}
	if len(c.Cells) == 0 && len(c.Matrix.PrefillContexts) == 0 && (len(c.Matrix.Contexts) == 0 || (len(c.Matrix.Concurrency) == 0 && !c.PrefillFromDecode)) {
		errs = append(errs, "nothing to measure: give contexts and concurrency levels, prefill contexts, or cells")
	}
	t := c.Timeouts
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"readiness", t.Readiness}, {"drain", t.Drain}, {"scout", t.Scout}, {"stop", t.Stop}, {"health", t.Health}, {"setup", t.Setup}, {"sample", t.Sample}, {"poll", t.Poll}, {"bin", t.Bin}} {
		if d.v <= 0 {
			errs = append(errs, fmt.Sprintf("%s timeout %v: must be positive", d.name, d.v))
		}
	}
	if t.Stall < 0 {
		errs = append(errs, fmt.Sprintf("stall span %v: must not be negative (0: 5 s)", t.Stall))
	}
	if t.Probe < 0 {
		errs = append(errs, fmt.Sprintf("probe timeout %v: must not be negative (0: three times the health timeout)", t.Probe))
	}
	if strings.ContainsAny(c.URL, "@") {
		errs = append(errs, "url holds credentials (user:password@); pass the key with --api-key-env instead")
	}
	if len(errs) > 0 {
		return errors.New(strings.Join(errs, "; "))
	}
	return nil
}
