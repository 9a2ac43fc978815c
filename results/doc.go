// Package results defines the speedmatrix results file (schema speedmatrix/results/v1): the
// contract every stage reads and writes. It validates, reads and writes that file atomically, and
// imports llm-inference-bench "Speed test matrix" reports. It must not depend on any other
// package of this module except the leaves internal/numfmt (how numbers print) and
// internal/quantile (the medians a summary is checked against).
//
// Validate rejects what no measurement can produce: a summary that disagrees with the trials it
// summarizes, or a trial with the raw samples it was computed from (within rounding: 0.1 % or
// 0.05); a measured (valid or queued) decode window in which no output token arrived; and
// implausible values: a rate above 10^7 tok/s, a latency above a day (8.64·10^7 ms), a window
// or measurement longer than a day, anything negative or not finite.
//
// # Method
//
// The Go types (types.go) are the schema: schema/results-v1.schema.json is checked against
// them in tests, and Decode validates every file it reads (validate.go, agree.go), so no stage
// sees a file that contradicts itself. A cell's summary is derived from its trials in one place
// (summary.go), which the runner and merge.Blocks use and Validate checks. Comparison files
// (comparison.go) hold what package compare concluded, and Outcomes one table of what each
// verdict means for the exit code, the check and the comment.
//
// Files are read and written in io.go (atomically); the rest of the package does no I/O.
package results
