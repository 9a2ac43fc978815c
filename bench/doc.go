// Package bench is the matrix runner: it measures the speed matrix of an OpenAI-compatible
// server as the README's "What the numbers mean" defines it and returns a results file
// (package results). It plans the cells (contexts trimmed to max_model_len, over-capacity cells
// skipped before any request), sends one scout request per context that measures prefill and
// warms the prefix cache, keeps C streams in flight for each decode window, opens the window at
// readiness as soon as the outcome (valid or queued) is known (readiness.go), counts only the
// tokens that arrive inside it, decides each cell's status by the contract's rules with no
// single sample deciding (status.go), keeps the raw samples of every trial, drains the server
// between cells, accounts for where the run's time went (budget.go), and turns faults into cell
// errors or a partial run. A server that produced no token in a window
// (or none for a scout) is probed with one short request; when /health answers but that request
// does not, the server hangs and the run ends as for a dead one (ErrServerDead).
//
// The layers it stands on are consumed through small interfaces defined here (Streamer,
// Scraper, ServerInfo, Prompter, Progress); subpackages bench/stream, bench/telemetry and
// bench/prompt (and the adapters in adapt.go) provide the real ones. Package bench does no
// rendering, statistics across runs or file I/O of its own, and it must not know about GitHub:
// the CLI picks the Progress implementation and writes the file.
package bench
