package config

import "time"

// Duration is a Go duration, written in the file as a Go duration string ("30s", "60m",
// "1h30m"). It is time.Duration itself, so a flag can point at it.
type Duration = time.Duration

// Config is the whole speedmatrix.yaml: the settings of `speedmatrix run` at its top level,
// then one section per later stage.
type Config struct {
	Run `yaml:",inline"`
	// GPU holds what is done to the GPUs around a run.
	GPU GPU `yaml:"gpu"`
	// GitHub holds the bot's settings (check run, comment, label).
	GitHub GitHub `yaml:"github"`
	// Compare holds the comparison's error budget and practical thresholds.
	Compare Compare `yaml:"compare"`
	// Store holds where results are kept between runs.
	Store Store `yaml:"store"`
	// Bisect holds the bot's bisection of a default-branch regression (bisect.go).
	Bisect Bisect `yaml:"bisect"`

	// file and where are the file Parse read and the position of each setting it gave, so
	// that Validate can point at the line of a bad value.
	file  string
	where map[string]position
}

// Run is the settings of `speedmatrix run` (a flag of the same name with dashes overrides each).
type Run struct {
	URL             string   `yaml:"url"`
	APIKeyEnv       string   `yaml:"api_key_env"`
	Model           string   `yaml:"model"`
	Endpoint        string   `yaml:"endpoint"`
	Matrix          string   `yaml:"matrix"`
	Contexts        List     `yaml:"contexts"`
	Concurrency     List     `yaml:"concurrency"`
	PrefillContexts List     `yaml:"prefill_contexts"`
	Cells           List     `yaml:"cells"`
	Duration        Duration `yaml:"duration"`
	MaxTokens       int      `yaml:"max_tokens"`
	Trials          int      `yaml:"trials"`
	Warmup          int      `yaml:"warmup"`
	ContextWarmup   *bool    `yaml:"context_warmup"`
	ReadyTimeout    Duration `yaml:"readiness_timeout"`
	DrainTimeout    Duration `yaml:"drain_timeout"`
	HealthTimeout   Duration `yaml:"health_timeout"`
	Output          string   `yaml:"output"`
	Quiet           bool     `yaml:"quiet"`
	LaunchCommand   string   `yaml:"launch_command"`
	Revision        string   `yaml:"revision"`
	// Budget is the GPU wall time the whole job may take (build, load, first pass and the
	// adaptive reruns); 0 is no budget and no reruns.
	Budget   Duration `yaml:"budget"`
	Engine   Engine   `yaml:"engine"`
	Hardware Hardware `yaml:"hardware"`
	// Sim configures the built-in simulator measured when there is no URL and no engine.serve.
	Sim Sim `yaml:"sim"`
	// SpecDecode is how speculative decoding is served for the matrix (spec_decode: pinned).
	SpecDecode SpecDecode `yaml:"spec_decode"`
	// Paired configures paired A/B runs (run --paired).
	Paired Paired `yaml:"paired"`
}

// Paired schemes (paired.scheme).
const (
	PairedABBA       = "ABBA"
	PairedSequential = "sequential"
)

// When the GitHub Action runs paired (paired.mode).
const (
	PairedModeOff    = "off"    // only on /bench paired
	PairedModeAuto   = "auto"   // also when the stored baseline cannot decide (internal/action)
	PairedModeAlways = "always" // every pull-request run
)

// Paired is a paired A/B run (run --paired): the base and head servers served alternately in
// blocks, each block the whole matrix once, so that a drift of the machine cancels.
type Paired struct {
	// Enabled runs paired (--paired).
	Enabled bool `yaml:"enabled"`
	// Blocks is how many blocks each side gets (--blocks).
	Blocks int `yaml:"blocks"`
	// Scheme is ABBA, or sequential (every base block, then every head block: what two
	// separate runs do, for comparison) (--paired-scheme).
	Scheme string `yaml:"scheme"`
	// BaseURL is the base's server; the head's is url (--base-url). Without either, two
	// built-in simulators of the sim section are measured.
	BaseURL string `yaml:"base_url"`
	// BaseOutput is the base's results file; the head's is output (--base-output; default:
	// output with .base before its extension).
	BaseOutput string `yaml:"base_output"`
	// BaseSource is, with engine.serve, a checkout of the base commit: built like
	// engine.source, and served in turn with it, one engine at a time (--base-source).
	BaseSource string `yaml:"base_source"`
	// KeepServing, with engine.serve, starts each side's engine once and keeps both up for the
	// whole paired run, measured one at a time, instead of starting each before every block of
	// its side and stopping it after (--keep-serving). Only where both engines fit the machine
	// at once (a CPU server, a small model); the pairs then share each side's server lifetime,
	// so a difference between two starts of the same code is not sampled (measure it with an
	// A/A run).
	KeepServing bool `yaml:"keep_serving"`
	// AllowSameEngine measures two commits with engine.build: none and a serve command that
	// names no file of the checkout, which serve the same installed engine
	// (--allow-same-engine); without it such a run is refused.
	AllowSameEngine bool `yaml:"allow_same_engine"`
	// Mode is when the GitHub Action measures paired instead of against the stored baseline:
	// off (only on a maintainer's /bench paired), auto (also when the stored baseline cannot
	// decide: none at the merge-base, fewer than store.min_history results, or regressions or
	// inconclusive cells after the first comparison) or always.
	Mode string `yaml:"mode"`
}

// List is a list given as a YAML sequence ([8K, 16K]) or as one comma-separated string
// ("8K,16K"); a flag gives the string form. Items are trimmed and never empty.
type List []string

// Engine is the inference engine under test: its provenance (recorded in the results) and,
// when measured from a commit, how to build and serve it.
type Engine struct {
	// Provenance, recorded in the results file.
	Name         string `yaml:"name"`
	Version      string `yaml:"version"`
	Commit       string `yaml:"commit"`
	Quantization string `yaml:"quantization"`
	Backend      string `yaml:"backend"`
	Repository   string `yaml:"repository"`
	// Lifecycle.
	// Source is the engine's checkout (a directory), built at its checked-out commit.
	Source string `yaml:"source"`
	// Build says how to build Source (empty: auto when Source is set, else none).
	Build Build `yaml:"build"`
	// Serve, when set, is how to start the server that run measures when no URL is given.
	Serve *Serve `yaml:"serve"`
	// Keep is how many built environments (one per commit) the cache keeps.
	Keep int `yaml:"keep"`
	// CacheDir is where built environments are kept (empty: the user's cache directory).
	CacheDir string `yaml:"cache_dir"`
	// PrecompiledEnv is a Python environment with the engine's wheel of the merge-base
	// installed: precompiled builds then take its compiled files and dependencies, offline
	// (engine.BuildSpec.PrecompiledEnv). Empty: vLLM's networked VLLM_USE_PRECOMPILED=1 build.
	PrecompiledEnv string `yaml:"precompiled_env"`
	// Sandbox is how the build and the server are confined: "namespaces" (the default, also
	// when empty) or "none" (engine.SandboxMode).
	Sandbox string `yaml:"sandbox"`
	// Trust is the trust level of the job measuring ("trusted" for a push to the default
	// branch, "untrusted" for any run of a pull request's code; empty outside the action):
	// builds are cached per level (engine.BuildSpec.Trust). The action sets it; no file can.
	Trust string `yaml:"-"`
}

// Build modes of engine.build.
const (
	BuildAuto        = "auto"        // precompiled when no compiled source changed, else full
	BuildPrecompiled = "precompiled" // editable install on the nearest main commit's kernels
	BuildFull        = "full"        // compile everything
	BuildDocker      = "docker"      // the repository's Dockerfile, served with docker run
	BuildNone        = "none"        // use what is installed
	BuildCommand     = "command"     // a shell command of the user's (Command)
)

// BuildModes lists the modes engine.build accepts as a string.
var BuildModes = []string{BuildAuto, BuildPrecompiled, BuildFull, BuildDocker, BuildNone}

// Build is engine.build: a mode ("auto", "precompiled", "full", "docker", "none") or a mapping
// {command: "..."}, a shell command run in the source directory (Mode is then "command").
type Build struct {
	Mode    string
	Command string
}

// Serve is engine.serve: the server's launch command, run without a shell. ${NAME} in Command
// and Env is expanded (Expand) from the environment and PORT when the server starts, not when
// the file is read, so a secret never enters the configuration.
type Serve struct {
	// Command is the program and its arguments.
	Command []string `yaml:"command"`
	// Env is added to the server's environment.
	Env map[string]string `yaml:"env"`
	// Port is the port the server listens on; 0 picks a free one. ${PORT} is replaced by it.
	Port int `yaml:"port"`
	// ReadyTimeout is how long the server may take to answer /health and list its model.
	ReadyTimeout Duration `yaml:"ready_timeout"`
	// StopGrace is how long the server has to exit after SIGTERM before SIGKILL.
	StopGrace Duration `yaml:"stop_grace"`
}

// Hardware is the machine under test, recorded in the results file.
type Hardware struct {
	Type     string  `yaml:"type"`
	GPU      string  `yaml:"gpu"`
	GPUCount int     `yaml:"gpu_count"`
	VRAMGB   float64 `yaml:"vram_per_gpu_gb"`
	Driver   string  `yaml:"driver"`
	Clocks   string  `yaml:"clocks"`
	OS       string  `yaml:"os"`
}

// Sim is the built-in simulator that run measures when there is no URL (sim: {profile,
// speedup, seed, noise, slowdown, fault}; see speedmatrix sim --help).
type Sim struct {
	Profile  string   `yaml:"profile"`
	Speedup  float64  `yaml:"speedup"`
	Seed     uint64   `yaml:"seed"`
	Noise    *float64 `yaml:"noise"`
	Slowdown string   `yaml:"slowdown"`
	Fault    string   `yaml:"fault"`
	// HeadSlowdown is added to Slowdown for the head's simulator of a paired run of two
	// built-in simulators (run --paired without URLs; the Action's paired runs of the
	// simulator): a change the head makes, so that a paired run has one to find.
	HeadSlowdown string `yaml:"head_slowdown"`
}

// GPU is what is done to the GPUs around a run.
type GPU struct {
	// LockClocks locks SM and memory clocks for the run and restores them afterwards.
	LockClocks bool `yaml:"lock_clocks"`
}

// GitHub is the bot's settings.
type GitHub struct {
	// CheckName is the name of the check run.
	CheckName string `yaml:"check_name"`
	// Comment is when to comment on the pull request: always, regression or never.
	Comment string `yaml:"comment"`
	// Label, when set, is the pull-request label that asks for a benchmark.
	Label string `yaml:"label"`
	// FailOnRegression fails the check when a regression is found (unless it was accepted with
	// /bench accept at that commit); off, a regression completes the check neutral.
	FailOnRegression bool `yaml:"fail_on_regression"`
	// Undecided is the check's conclusion of an unproven matrix (results.VerdictUnproven: a
	// slowdown beyond δ that only the prior bounds, neither shown nor ruled out): failure
	// (default), neutral or success. A required check passes on neutral and success, so only
	// failure keeps an undecided slowdown from merging; history or a paired run decides it.
	Undecided string `yaml:"undecided"`
	// MergeQueue is what a merge_group event gets: reuse (default; the PR's success on its head
	// is reported on the group's head, else it is measured) or run (always measure).
	MergeQueue string `yaml:"merge_queue"`
	// NoBaseline is the check's conclusion of a pull request's run that found nothing to compare
	// with: neutral (default) or failure. A required check passes on neutral, so failure keeps a
	// pull request that changes the measured setup (or lands before any baseline) from merging
	// unmeasured.
	NoBaseline string `yaml:"no_baseline"`
}

// Compare is the comparison's error budget and practical thresholds.
type Compare struct {
	// FDR is the false discovery rate over all cell-metrics.
	FDR float64 `yaml:"fdr"`
	// FalseAlarm is the whole-matrix false-alarm rate of two runs of the same server.
	FalseAlarm float64 `yaml:"false_alarm"`
	// Thresholds is the practical floor per metric as a fraction (decode_tps: 0.03).
	Thresholds map[string]float64 `yaml:"thresholds"`
}

// Store is where results are kept between runs (package store).
type Store struct {
	// Branch is the data branch the bot commits results to (created as an orphan on first
	// use; exclude it from the workflow's on.push.branches).
	Branch string `yaml:"branch"`
	// Dir is a local directory used as the store by the CLI (baseline, store, compare
	// --store) when neither --store nor --branch is given; empty: none.
	Dir string `yaml:"dir"`
	// Retention bounds the history kept.
	Retention Retention `yaml:"retention"`
	// AAEvery, when positive, re-measures one default-branch commit every AAEvery pushes (an
	// A/A rerun, stored under aa/): the push whose result is the AAEvery-th of its config is
	// measured twice, in the action's one-job mode and in the split workflow (the decide job's
	// aa output tells the measure job); 0 turns A/A reruns off.
	AAEvery int `yaml:"aa_every"`
	// MinHistory is the fewest default-branch results of a config that make the bot's
	// comparisons take their noise from history instead of the prior (default 10, as
	// store.DefaultMinHistory: fewer detect less at the first look than the prior). The CLI's
	// `compare --history/--store` keeps compare's own Thresholds.MinHistory, 3: its user asked
	// for history.
	MinHistory int `yaml:"min_history"`
}

// Retention is how much history pruning keeps. The newest default-branch result of each
// config (the current baseline) is kept whatever it says.
type Retention struct {
	// Keep is how many default-branch results to keep per config; 0 keeps all.
	Keep int `yaml:"keep"`
	// KeepAA is how many A/A reruns to keep per config; 0 keeps all.
	KeepAA int `yaml:"keep_aa"`
	// PRDays is how many days PR results are kept; 0 keeps them all.
	PRDays int `yaml:"pr_days"`
}
