// Package cli holds the speedmatrix command tree: a folder per command (internal/cli/run,
// internal/cli/plan, internal/cli/compare, …), each a flag set that builds a configuration and
// calls the library package that does the work. cmd/speedmatrix calls Run and ExitCode and
// nothing else.
//
// # Method
//
// Run builds the root command (root.go) from each command's NewCmd; a command parses its flags,
// loads the configuration (package config), calls the library packages — measure to measure
// (`run`, `baseline`, the action), plan's shards, compare to decide, report and history to
// render, store and merge for results files, demo, bisect/paired, calibrate — and writes to the
// streams and files it was given (internal/cli/cmdutil.Env). Errors are typed where the exit
// code depends on them (cmdutil's, *usage.Error, *measure.SettingsError), and ExitCode decides
// every exit status in one place.
//
// It holds no measurement, statistics or rendering logic of its own; it must not be imported by
// any package of this module but cmd/speedmatrix.
package cli
