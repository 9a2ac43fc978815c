package config

import (
	"time"

	"github.com/speedmatrix/speedmatrix/results"
)

// Default returns the defaults of every setting; they are set here and nowhere else. Those that
// bench.DefaultConfig also holds (the endpoint, matrix, window, tokens, trials, warm-up and the
// timeouts) are the same there: a test holds the two together.
func Default() Config {
	return Config{
		Run: Run{
			Endpoint:      results.EndpointCompletions,
			Matrix:        results.MatrixFull,
			Duration:      results.DefaultWindow,
			MaxTokens:     4096,
			Trials:        1,
			Warmup:        2,
			ReadyTimeout:  60 * time.Second,
			DrainTimeout:  120 * time.Second,
			HealthTimeout: 10 * time.Second,
			Output:        "results.json",
			Engine:        Engine{Keep: 3},
			Paired:        Paired{Blocks: 4, Scheme: PairedABBA, Mode: PairedModeAuto},
		},
		GitHub: GitHub{CheckName: "speedmatrix", Comment: CommentAlways, FailOnRegression: true,
			Undecided: UndecidedFailure, MergeQueue: MergeQueueReuse, NoBaseline: NoBaselineNeutral},
		Store: Store{Branch: "speedmatrix-data", MinHistory: 10,
			Retention: Retention{Keep: 100, KeepAA: 20, PRDays: 30}},
		Bisect: Bisect{Steps: 12, Runners: 2},
	}
}

// DefaultServe returns the defaults of engine.serve, used when the file has that section.
func DefaultServe() Serve {
	return Serve{ReadyTimeout: 20 * time.Minute, StopGrace: 30 * time.Second}
}

// When the bot comments on a pull request (github.comment).
const (
	CommentAlways     = "always"
	CommentRegression = "regression"
	CommentNever      = "never"
)

// The check's conclusion of an unproven matrix (github.undecided).
const (
	UndecidedFailure = "failure"
	UndecidedNeutral = "neutral"
	UndecidedSuccess = "success"
)

// The check's conclusion of a pull request's run without a baseline (github.no_baseline).
const (
	NoBaselineNeutral = "neutral"
	NoBaselineFailure = "failure"
)

// What a merge queue's merge_group event gets (github.merge_queue).
const (
	MergeQueueReuse = "reuse"
	MergeQueueRun   = "run"
)

// BuildMode returns the build mode in effect: Build.Mode, or when it is empty, auto for an
// engine with a source and none for one without.
func (e Engine) BuildMode() string {
	switch {
	case e.Build.Mode != "":
		return e.Build.Mode
	case e.Source != "":
		return BuildAuto
	}
	return BuildNone
}

// String returns the build as written: the mode, or "command: ..." for a command.
func (b Build) String() string {
	if b.Mode == BuildCommand {
		return "command: " + b.Command
	}
	return b.Mode
}
