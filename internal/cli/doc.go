// Package cli holds the speedmatrix subcommands (run, plan, compare, report, history, store,
// calibrate, bisect, demo, sim and the rest): flag parsing and the wiring of the library packages
// that do the work. cmd/speedmatrix calls Run and ExitCode and nothing else.
//
// # Method
//
// Run builds the root command (root.go) with one constructor per subcommand; each parses its
// flags, loads the configuration (package config), calls the library packages — measure to
// measure (`run`, `plan` and the action), compare to decide, report and history to render, store and merge for
// results files — and writes to the streams and files it was given. Errors are typed where the
// exit code depends on them, and ExitCode decides every exit status in one place.
//
// It holds no measurement, statistics or rendering logic of its own; it must not be imported by
// any package of this module but cmd/speedmatrix.
package cli
