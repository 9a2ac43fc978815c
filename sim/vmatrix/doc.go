// Package vmatrix measures the speed matrix of a simulated engine in virtual time: it replays
// the reference tool's protocol (a prefill scout per context, then C workers streaming
// requests back to back, a readiness check, a fixed window, ~1 s samples of the running and
// waiting counts, the over-capacity rule) directly against sim/engine, with no HTTP and no
// wall clock, so that a whole matrix takes a second and is exactly repeatable. It is the
// calibration check of a profile, not the benchmark client: the real client lives in package
// bench and measures the simulator over HTTP like any server. It does no I/O.
//
// # Method
//
// Run drives a fresh engine with cfg through Options: ReferenceOptions for the reference
// report's matrix, OptionsFor to repeat the matrix of a given results file within a server's
// max_model_len. Compare pairs the cells of a measured (or reference) file with the replayed
// ones by identity, and WriteTable prints their differences, which is how a profile is checked
// against what it was fitted to.
package vmatrix
