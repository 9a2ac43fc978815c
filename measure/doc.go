// Package measure runs a measurement: `speedmatrix run` and the GitHub Action's measuring job
// both call it. Run measures the server a run's settings name, the server engine.serve builds
// and starts, or the built-in simulator, and writes everything it did to a results file; Plan
// splits the matrix of the same settings into shards for several runners.
//
// # Method
//
// Settings are the settings of one run (config.Config and the few that only a flag sets); Deps
// is the outside world a run uses (the logger, the environment, the progress writer, the
// network, the clock, the tool's version). Run checks the settings before anything is
// measured, and a setting that cannot work is a *SettingsError, which the command line maps to
// its usage status. A run's state (the simulator's time scale, the shard's rows, what the
// server said of itself) is an unexported session, never a setting.
//
// The paths of a run, one file each: a server at a URL (run.go), the built-in simulator in
// process (runsim.go), a server engine.serve builds and starts (runengine*.go), a pinned
// speculative-decoding run (runengine_pinned.go), a paired A/B run (run_paired*.go) and one
// shard of a plan (run_shard.go, plan.go). With a baseline and a budget, the cells the
// comparison leaves inconclusive are measured again within the budget (run_adaptive.go,
// package adaptive).
//
// It must not parse flags or read a configuration file (the callers do), and it decides no
// exit status.
package measure
