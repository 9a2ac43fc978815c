package results

import (
	"fmt"
	"time"
)

// SchemaV1 is the value of the schema field of a version 1 results file.
const SchemaV1 = "speedmatrix/results/v1"

// File is one matrix run: where it ran, what ran, how, and every cell it measured.
type File struct {
	Schema   string        `json:"schema"`
	Hardware Hardware      `json:"hardware"`
	Engine   Engine        `json:"engine"`
	Run      Run           `json:"run"`
	Server   *Server       `json:"server,omitempty"`
	Prefill  []PrefillCell `json:"prefill"`
	Decode   []DecodeCell  `json:"decode"`
	// SpecDecode, when set, says the matrix was served with speculative acceptance pinned and
	// holds the separate acceptance pass (specdecode.go).
	SpecDecode *SpecDecode `json:"spec_decode,omitempty"`
	// Notes are things a reader must know to trust the numbers (a missing /tokenize, a metric
	// estimated client-side, an import that kept only summaries).
	Notes []string `json:"notes,omitempty"`
}

// KV is one key and value kept in order, for facts a report carried that have no field here.
type KV struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// Hardware describes the machine that served the model.
type Hardware struct {
	Type         string  `json:"type,omitempty"` // e.g. "Discrete GPU"
	GPU          string  `json:"gpu,omitempty"`  // e.g. "H200 NVL"
	GPUCount     int     `json:"gpu_count,omitempty"`
	VRAMPerGPUGB float64 `json:"vram_per_gpu_gb,omitempty"` // decimal gigabytes per GPU
	Driver       string  `json:"driver,omitempty"`
	Clocks       string  `json:"clocks,omitempty"`
	OS           string  `json:"os,omitempty"`
	// The fingerprint speedmatrix takes of the machine it served the engine on (nvidia-smi,
	// /proc/cpuinfo), so that compare can tell whether two runs are comparable.
	PowerLimitW     float64 `json:"power_limit_w,omitempty"`    // enforced board power limit per GPU
	PersistenceMode string  `json:"persistence_mode,omitempty"` // "Enabled" or "Disabled"
	ClocksLocked    bool    `json:"clocks_locked,omitempty"`    // SM and memory clocks locked for the run (gpu.lock_clocks)
	CPUModel        string  `json:"cpu_model,omitempty"`
	CUDA            string  `json:"cuda,omitempty"` // the driver's CUDA version
	// OtherGPUProcesses are processes that held a GPU before the server started ("pid 123
	// python (2048 MiB)"); a measurement beside one is suspect.
	OtherGPUProcesses []string `json:"other_gpu_processes,omitempty"`
	Extra             []KV     `json:"extra,omitempty"`
}

// Engine describes the inference engine under test.
type Engine struct {
	Name         string `json:"name,omitempty"` // e.g. "vllm"
	Version      string `json:"version,omitempty"`
	Commit       string `json:"commit,omitempty"`
	Quantization string `json:"quantization,omitempty"`
	Backend      string `json:"backend,omitempty"`
	Repository   string `json:"repository,omitempty"`
	Build        string `json:"build,omitempty"`
	MergeBase    string `json:"merge_base,omitempty"` // the commit's merge-base with main, when built from a commit
	Extra        []KV   `json:"extra,omitempty"`
}

// Tool names the program that measured the run.
type Tool struct {
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
}

// Decode test modes and prefill modes known by name; other values are kept verbatim.
const (
	DecodeFixedDuration = "fixed_duration"
	PrefillDecodeWarmup = "decode_warmup"
)

// Sources of a results file.
const (
	SourceMeasured = "measured"
	SourceImported = "imported"
)

// Run describes how the matrix was measured.
type Run struct {
	ID          string `json:"id,omitempty"` // unique per run; prefixes every prompt
	Source      string `json:"source"`       // SourceMeasured or SourceImported
	ServedModel string `json:"served_model,omitempty"`
	Revision    string `json:"revision,omitempty"`
	Tool        Tool   `json:"tool"`
	// DecodeTest is DecodeFixedDuration or a mode this version does not know, verbatim.
	DecodeTest string `json:"decode_test,omitempty"`
	// PrefillMode is PrefillDecodeWarmup or a mode this version does not know, verbatim.
	PrefillMode           string  `json:"prefill_mode,omitempty"`
	SecondsPerMeasurement float64 `json:"seconds_per_measurement,omitempty"`
	MaxOutputTokens       int     `json:"max_output_tokens,omitempty"`
	// LaunchCommand is the server's command line with secrets replaced by <redacted>.
	LaunchCommand string    `json:"launch_command,omitempty"`
	Start         time.Time `json:"start,omitzero"`
	End           time.Time `json:"end,omitzero"`
	// Partial is set when the run ended before every planned cell was measured.
	Partial       bool   `json:"partial,omitempty"`
	PartialReason string `json:"partial_reason,omitempty"`
	// ImportedFrom names the report an imported file came from.
	ImportedFrom string    `json:"imported_from,omitempty"`
	Settings     *Settings `json:"settings,omitempty"`
	// Budget says where a measured run's wall-clock time went; nil for imported files.
	Budget *Budget `json:"budget,omitempty"`
	// GPUTime is the whole job's GPU time by phase (build, load, measurement, reruns) and the
	// cost of deciding what it left undecided; nil for imported files.
	GPUTime *GPUTime `json:"gpu_time,omitempty"`
	Extra   []KV     `json:"extra,omitempty"`
	// Shard is set when the file holds one shard of a sharded run (shard.go).
	Shard *Shard `json:"shard,omitempty"`
	// Pairing is set when the run is one side of a paired A/B run (`run --paired`).
	Pairing *Pairing `json:"pairing,omitempty"`
}

// Paired schemes: the order in which `run --paired` served base (A) and head (B) blocks.
const (
	// PairingABBA serves A B B A A B B A …: pair k is blocks 2k−1 and 2k, and the pairs
	// alternate their order, so a drift linear in time cancels.
	PairingABBA = "ABBA"
	// PairingSequential serves every base block, then every head block (what two separate runs
	// do); compare does not pair it.
	PairingSequential = "sequential"
)

// Pairing describes one side of a paired A/B run: base and head served alternately in blocks on
// one machine, each block the whole matrix once. Every trial carries its Block and Pair.
type Pairing struct {
	// ID is shared by the base and head files of one paired run.
	ID     string `json:"id"`
	Scheme string `json:"scheme"` // PairingABBA or PairingSequential
	// Blocks is how many blocks each side got (the number of pairs).
	Blocks int `json:"blocks"`
	// Side is "base" or "head"; Order the sequence served, e.g. "ABBAABBA" (A base, B head).
	Side  string `json:"side"`
	Order string `json:"order,omitempty"`
}

// Budget is where a measured run's wall-clock time went, in seconds, and the CPU time the
// measuring process used. Setup, Prefill, Readiness, Windows and Drain do not overlap; Other
// is the rest of Wall (warm-up excluded: it counts as setup).
type Budget struct {
	WallSeconds float64 `json:"wall_seconds"`
	// SetupSeconds: the server's facts, the prompts (tokenizer calls) and the warm-up requests.
	SetupSeconds float64 `json:"setup_seconds"`
	// WarmupSeconds: the part of SetupSeconds spent in the hidden warm-up requests of each
	// context (Settings.ContextWarmup): a prefill each, measured nowhere.
	WarmupSeconds float64 `json:"warmup_seconds,omitempty"`
	// PrefillSeconds: the scout and prefill requests (their TTFT, plus their sending).
	PrefillSeconds float64 `json:"prefill_seconds"`
	// ReadinessSeconds: from a decode trial's first request to its window's opening.
	ReadinessSeconds float64 `json:"readiness_seconds"`
	// AdmissionSeconds: the part of ReadinessSeconds the server took to start the trials'
	// requests: until the last of C streams produced its first token (a valid trial), or until
	// the server's running count last rose (a queued one). No client can open a window sooner;
	// the rest of the readiness is the client deciding that the window may open.
	AdmissionSeconds float64 `json:"admission_seconds,omitempty"`
	// WindowSeconds: the decode windows themselves.
	WindowSeconds float64 `json:"window_seconds"`
	// DrainSeconds: stopping a window's streams and waiting for an idle server between cells.
	DrainSeconds float64 `json:"drain_seconds"`
	// OtherSeconds: the rest of the wall time (checkpoints, bookkeeping).
	OtherSeconds float64 `json:"other_seconds"`
	// RemeasureSeconds is the part of the wall time spent measuring disturbed decode windows
	// again (their drains, readiness and windows, which the fields above count too), and
	// Remeasures how many windows were measured again (DecodeCell.Disturbed).
	RemeasureSeconds float64 `json:"remeasure_seconds,omitempty"`
	Remeasures       int     `json:"remeasures,omitempty"`
	// WallPerMeasured is WallSeconds ÷ (WindowSeconds + PrefillSeconds); 1 is a run that spent
	// no time outside its measurements.
	WallPerMeasured float64 `json:"wall_per_measured,omitempty"`
	// WallPerServerBound is WallSeconds ÷ (WindowSeconds + PrefillSeconds + WarmupSeconds +
	// AdmissionSeconds): the same ratio with the time the server itself imposed (its admission
	// of requests, and the warm-up prefills the settings asked for) counted as spent, so that
	// what is left above 1 is the client's own overhead.
	WallPerServerBound float64 `json:"wall_per_server_bound,omitempty"`
	// CPUSeconds is the user + system CPU time of the measuring process during the run (nil
	// where the platform does not say); CPUIncludesServer is set when the server measured ran
	// inside that process (the built-in simulator without --url).
	CPUSeconds        *float64 `json:"cpu_seconds,omitempty"`
	CPUIncludesServer bool     `json:"cpu_includes_server,omitempty"`
}

// Settings are the benchmark settings a measured run used, so that it can be repeated.
type Settings struct {
	URL             string   `json:"url,omitempty"` // never holds credentials
	Endpoint        string   `json:"endpoint,omitempty"`
	Matrix          string   `json:"matrix,omitempty"`
	Contexts        []string `json:"contexts,omitempty"`
	Concurrency     []int    `json:"concurrency,omitempty"`
	PrefillContexts []string `json:"prefill_contexts,omitempty"`
	DurationSeconds float64  `json:"duration_seconds,omitempty"`
	MaxTokens       int      `json:"max_tokens,omitempty"`
	Trials          int      `json:"trials,omitempty"`
	Cells           []string `json:"cells,omitempty"`
	Seed            int64    `json:"seed,omitempty"`
	// Order is how the cells were ordered: OrderShuffled (contexts, and the decode cells of
	// each, in a random order drawn from OrderSeed) or OrderMatrix (contexts ascending, then
	// concurrency ascending). Every cell's Order and Started say where it fell.
	Order     string `json:"order,omitempty"`
	OrderSeed uint64 `json:"order_seed,omitempty"`
	// Remeasures is the most disturbed decode windows the run would measure again
	// (DecodeCell.Disturbed); 0: none.
	Remeasures int `json:"remeasures,omitempty"`
	// ReadinessTimeoutSeconds is how long a window waited for all C streams before the cell was
	// marked queued; DrainTimeoutSeconds how long the run waited between cells for an idle
	// server; WarmupRequests the hidden warm-up requests before the first cell.
	ReadinessTimeoutSeconds float64 `json:"readiness_timeout_seconds,omitempty"`
	DrainTimeoutSeconds     float64 `json:"drain_timeout_seconds,omitempty"`
	WarmupRequests          int     `json:"warmup_requests,omitempty"`
	// ContextWarmup is set when each context's scout followed a hidden request of the same
	// length (so the prefill measurement excludes first-request costs).
	ContextWarmup bool `json:"context_warmup,omitempty"`
	// Simulator describes the built-in simulator when the run measured it: in-process (run
	// without --url, demo) or a `speedmatrix sim` that said so in its /version.
	Simulator *SimulatorSettings `json:"simulator,omitempty"`
}

// SimulatorSettings describe the built-in simulator a run measured. Noise, Slowdown, Fault and
// Seed are known only for an in-process simulator.
type SimulatorSettings struct {
	Profile string `json:"profile"`
	// Speedup is how many times faster than its profile the simulator ran: the file's numbers
	// are as measured (rates Speedup× the profile's, times 1/Speedup), and reports show them in
	// the profile's time (File.TimeScale).
	Speedup  float64 `json:"speedup,omitempty"`
	Noise    float64 `json:"noise,omitempty"`
	Slowdown string  `json:"slowdown,omitempty"`
	Fault    string  `json:"fault,omitempty"`
	Seed     int64   `json:"seed,omitempty"`
}

// Measuring orders (Settings.Order).
const (
	OrderMatrix   = "matrix"
	OrderShuffled = "shuffled"
)

// The server's endpoints a run measures (Settings.Endpoint).
const (
	EndpointCompletions = "completions" // POST /v1/completions with "prompt"
	EndpointChat        = "chat"        // POST /v1/chat/completions with "messages"
)

// The matrices known by name (Settings.Matrix): the reference matrix and the smoke matrix, which
// package bench lays out (bench.MatrixByName).
const (
	MatrixFull  = "full"
	MatrixQuick = "quick"
)

// CheckMatrixName returns an error unless name is a matrix known by name; "" stands for
// MatrixFull.
func CheckMatrixName(name string) error {
	switch name {
	case MatrixFull, MatrixQuick, "":
		return nil
	}
	return fmt.Errorf("matrix %q unknown: want %s or %s", name, MatrixFull, MatrixQuick)
}

// Server holds facts the benchmark read from the server.
type Server struct {
	MaxModelLen   int    `json:"max_model_len,omitempty"`
	KVCacheTokens int    `json:"kv_cache_tokens,omitempty"`
	BlockSize     int    `json:"block_size,omitempty"`
	NumGPUBlocks  int    `json:"num_gpu_blocks,omitempty"`
	MaxNumSeqs    int    `json:"max_num_seqs,omitempty"`
	Version       string `json:"version,omitempty"`
	// Tokenizer is "server" when prompts were sized with /tokenize, "estimate" when a measured
	// characters-per-token ratio was used.
	Tokenizer string `json:"tokenizer,omitempty"`
	Metrics   string `json:"metrics,omitempty"` // "vllm", "llamacpp" or "none"
}

// Status is the outcome of one cell.
type Status string

// The cell statuses.
const (
	StatusValid        Status = "valid"
	StatusQueued       Status = "queued"        // "Requests queued": measured, but not all C ran at once
	StatusOverCapacity Status = "over_capacity" // not run: C·(context+max_tokens) exceeds the KV cache
	StatusError        Status = "error"         // streams failed; Error says why
	StatusSkipped      Status = "skipped"       // not run for another reason (Error may say why)
)

// Measured reports whether a cell with this status carries numbers.
func (s Status) Measured() bool { return s == StatusValid || s == StatusQueued }

// PrefillCell is one prefill measurement: one request of a context length.
type PrefillCell struct {
	Context      int    `json:"context"`       // nominal context in tokens
	ContextLabel string `json:"context_label"` // e.g. "8K", "1019K" (K = 1024 tokens)
	Status       Status `json:"status"`
	Error        string `json:"error,omitempty"`
	// PromptTokPerS is prompt tokens ÷ TTFT.
	PromptTokPerS *float64 `json:"prompt_tok_per_s"`
	TTFTMs        *float64 `json:"ttft_ms"`
	// PromptTokens is usage.prompt_tokens the server reported; null when unknown (imports).
	PromptTokens      *int `json:"prompt_tokens"`
	CompletedRequests *int `json:"completed_requests"`
	// SummaryOnly marks a cell without raw samples (imported): compare must use a noise prior.
	SummaryOnly bool           `json:"summary_only,omitempty"`
	Trials      []PrefillTrial `json:"trials,omitempty"`
	// Order and Started: the cell's place in the run's measuring order and when it was started
	// (as DecodeCell's).
	Order   int       `json:"order,omitempty"`
	Started time.Time `json:"started,omitzero"`
}

// PrefillTrial is one prefill request's raw measurement.
type PrefillTrial struct {
	// Start is when the request was sent: with the decode windows' starts, the run's measuring
	// order (zero when not recorded).
	Start time.Time `json:"start,omitzero"`
	// Block and Pair are, in a paired run (Run.Pairing), the block (1-based, in the order
	// served, both sides counted) and the pair (1-based) this trial was measured in.
	Block         int     `json:"block,omitempty"`
	Pair          int     `json:"pair,omitempty"`
	TTFTMs        float64 `json:"ttft_ms"`
	PromptTokens  int     `json:"prompt_tokens"`
	PromptTokPerS float64 `json:"prompt_tok_per_s"`
	// ClientQueueMs is how long the request waited inside the client before it was sent.
	ClientQueueMs float64 `json:"client_queue_ms,omitempty"`
	// PrefixCacheHitTokens is how many of the prompt's tokens the server's prefix cache served
	// (its hit counter's growth over the request, nothing else running); null when the server
	// has no such counter. A prefill measurement needs 0.
	PrefixCacheHitTokens *int `json:"prefix_cache_hit_tokens,omitempty"`
}

// DecodeMetrics are the summary numbers of a decode cell or of one of its trials (medians over
// requests for latencies). All are null when the cell was not measured.
type DecodeMetrics struct {
	TotalTokPerS      *float64 `json:"total_tok_per_s"`
	PerRequestTokPerS *float64 `json:"per_request_tok_per_s"`
	TTFTMs            *float64 `json:"ttft_ms"`
	TBTMs             *float64 `json:"tbt_ms"`
	AvgActiveRequests *float64 `json:"avg_active_requests"`
	CompletedRequests *int     `json:"completed_requests"`
	OutputTokens      *int     `json:"output_tokens"`
	MeasuredSeconds   *float64 `json:"measured_seconds"`
	// InterChunkMs is the median gap between chunks, a secondary metric (chunks ≠ tokens).
	InterChunkMs *float64 `json:"inter_chunk_ms,omitempty"`
	// ClientQueueMs is the median time requests waited inside the client before being sent.
	ClientQueueMs *float64   `json:"client_queue_ms,omitempty"`
	Telemetry     *Telemetry `json:"telemetry,omitempty"`
}

// Telemetry is what the server's /metrics said during a window.
type Telemetry struct {
	MaxRunning        *float64 `json:"max_running,omitempty"`
	MaxWaiting        *float64 `json:"max_waiting,omitempty"`
	MaxKVCacheUsage   *float64 `json:"max_kv_cache_usage,omitempty"` // 0..1
	Preemptions       *float64 `json:"preemptions,omitempty"`
	PrefixCacheHitPct *float64 `json:"prefix_cache_hit_pct,omitempty"`
	SpecAcceptancePct *float64 `json:"spec_acceptance_pct,omitempty"`
	// SpecAcceptanceLength is mean tokens per draft step (accepted + 1).
	SpecAcceptanceLength *float64 `json:"spec_acceptance_length,omitempty"`
	// Source is "server" when read from /metrics, "client" when estimated by the client.
	Source string `json:"source,omitempty"`
}

// DecodeCell is one sustained-decode measurement: Concurrency streams at one context.
type DecodeCell struct {
	Context      int    `json:"context"`
	ContextLabel string `json:"context_label"`
	Concurrency  int    `json:"concurrency"`
	Status       Status `json:"status"`
	Error        string `json:"error,omitempty"`
	DecodeMetrics
	SummaryOnly bool          `json:"summary_only,omitempty"`
	Trials      []DecodeTrial `json:"trials,omitempty"`
	// Order is the cell's place in the run's measuring order (1-based, prefill and decode
	// cells counted together; 0 when not measured, e.g. over capacity, or unknown, e.g.
	// imported) and Started when its first window was started: a drift or a step along the order (warm-up, a throttle, a co-tenant) shows
	// against them, whatever row or column the cells belong to (Settings.Order).
	Order   int       `json:"order,omitempty"`
	Started time.Time `json:"started,omitzero"`
	// Disturbed holds the windows of this cell whose bins showed a stall or two levels
	// (DetectDisturbance), each with what the run did instead; they are not in Trials.
	Disturbed []DisturbedTrial `json:"disturbed,omitempty"`
}

// DisturbedTrial is a decode window that its own bins showed disturbed, kept out of the cell's
// trials, and what the run used instead (Used).
type DisturbedTrial struct {
	Disturbance Disturbance `json:"disturbance"`
	// Used is UsedRemeasure, UsedUndisturbedBins or UsedDisturbed; Why says why in words.
	Used string `json:"used"`
	Why  string `json:"why"`
	// Trial is the disturbed window as measured.
	Trial DecodeTrial `json:"trial"`
}

// DecodeTrial is one measurement window of a decode cell, with its raw samples.
type DecodeTrial struct {
	Start time.Time `json:"start,omitzero"`
	// Block and Pair are, in a paired run (Run.Pairing), the block (1-based, in the order
	// served, both sides counted) and the pair (1-based) this trial was measured in.
	Block int `json:"block,omitempty"`
	Pair  int `json:"pair,omitempty"`
	DecodeMetrics
	// BinSeconds is the width of the output-token bins (1 s); the last bin may be shorter, as
	// WindowSeconds tells.
	BinSeconds      float64 `json:"bin_seconds"`
	WindowSeconds   float64 `json:"window_seconds"`
	BinOutputTokens []int   `json:"bin_output_tokens"`
	// Requests holds every request that produced a token inside the window.
	Requests []RequestSample `json:"requests"`
	// RunningSamples and WaitingSamples are ~1 s samples of the server's running and waiting
	// request counts during the window.
	RunningSamples []float64 `json:"running_samples,omitempty"`
	WaitingSamples []float64 `json:"waiting_samples,omitempty"`
	// SampleSeconds holds when each running/waiting sample was taken, in seconds from the
	// window's start: a sample holds until the next one (the last until the window's end), and
	// mean running is weighted by that time.
	SampleSeconds []float64 `json:"sample_seconds,omitempty"`
	// AwaitingSamples holds, at each sample, the client's requests in flight that had not yet
	// produced their first token: inside a valid window, streams between one request and the
	// next, which the queued rules do not count against the server.
	AwaitingSamples []float64 `json:"awaiting_samples,omitempty"`
}

// RequestSample is one request's raw timing.
type RequestSample struct {
	// TTFTMs is from sending the request to its first content token. It is null when the
	// request started before the window, unless no request started inside the window: then the
	// requests that opened the window carry theirs, and the cell says so in a note.
	TTFTMs *float64 `json:"ttft_ms,omitempty"`
	// TBTMs is (t_last − t_first)/(tokens − 1) over the request's tokens inside the window;
	// null with fewer than two tokens.
	TBTMs         *float64 `json:"tbt_ms,omitempty"`
	OutputTokens  int      `json:"output_tokens"` // tokens inside the window
	Chunks        int      `json:"chunks"`
	ClientQueueMs float64  `json:"client_queue_ms,omitempty"`
	Completed     bool     `json:"completed,omitempty"` // finished inside the window
}
