// Package compare decides, cell by cell and metric by metric, whether a head results file is
// slower, faster, the same as, or not distinguishable from a base results file, and how sure
// that is. It is pure: it reads no files and prints nothing (package report renders a
// comparison, internal/cli runs it, package results holds its file format).
//
// # Method
//
// Metrics: prefill prompt tok/s and TTFT; decode total tok/s, per-request tok/s, TTFT and time
// between tokens. Throughput is better higher, latency lower.
//
// Estimate: every metric is compared on the log scale. A side's value is the mean of the log
// values of its trials (one per trial; the cell's summary when it kept none), so the change is
// the ratio of geometric means, head/base − 1, and its confidence interval is the Welch t
// interval of the log difference mapped back with exp (this is the delta-method interval of a
// ratio done exactly on the log scale, and it can never cross −100 %).
//
// Noise: the run-to-run variance of one run's log value, σ², comes from the first of
//   - trials: both sides hold at least two trials (several trials in a file, or several files per
//     side pooled): Welch's t with Welch–Satterthwaite degrees of freedom; when only one side
//     holds three or more, their spread stands for both sides (k − 1 degrees of freedom) unless
//     the history holds more runs;
//   - history: at least Thresholds.MinHistory earlier base results hold the cell: their sample
//     variance, n − 1 degrees of freedom;
//   - within+prior: a side with one trial that kept its raw samples: the within-run variance of
//     the window's value by batch means (1 s output-token bins for total tok/s; per-request values
//     in order for TTFT, time between tokens and per-request tok/s, times π/2 for a median), at
//     least 4 degrees of freedom, floored by the prior (a window cannot see between-run drift, so
//     the data can only make the noise larger than the prior, never smaller);
//   - prior: the configured CV (DefaultPrior: published run-to-run noise at the upper end of its
//     range), taken as known.
//
// The output names the source of every cell-metric.
//
// Verdicts: the two-sided p-value of "no change" enters one Benjamini–Hochberg family with every
// other cell-metric tested. A cell-metric is a regression (improvement) when its BH-adjusted
// p-value is at most the look's level, the change is worse (better), its estimate is beyond δ,
// and, when both sides hold at least Thresholds.MinRankTrials trials, the Mann–Whitney test of
// the trials agrees (p ≤ q). It is unchanged when the two one-sided tests (TOST, level
// EquivalenceAlpha) show it within ±δ, that is when its 90 % interval lies inside
// (log(1 − δ), log(1 + δ)). Otherwise it is inconclusive, and the reason says what the interval
// was and the smallest change the cell could detect (MDC: (t_{1−α/2} + t_{power})·SE on the log
// scale at the Bonferroni share α = level/m, the strictest threshold BH can apply, never below δ).
// A status change valid → queued → over capacity or error is a regression by itself (the reverse
// an improvement), and is not part of the BH family. The cell's verdict is its worst metric's; the
// matrix's verdict is regression when any cell is one.
//
// Two looks: q is spent over at most two looks by Lan–DeMets alpha spending (Pocock-type by
// default, at the planned information fraction 1/2): the first comparison runs BH at
// q·ln(1 + (e − 1)/2) ≈ 0.031 for q = 0.05; the second look, on the pooled trials of the
// re-measured cells, runs BH at (q − level1)/(1 − level1) ≈ 0.0196, the level that keeps the two
// looks at q when they are independent (pooled data are positively correlated with the first look,
// which only lowers the true error, so the rule is conservative). There is no third look. The
// rerun advice asks for the fewest further trials per side that make the MDC at most 2δ with the
// configured power at the second look's Bonferroni share over every metric of the re-measured
// cells; cells needing more than MaxFurtherTrials are listed as undecidable.
//
// Calibration: package calibrate measures the false-alarm and detection rates of all this on
// synthetic matrices with realistic noise (`speedmatrix calibrate`).
package compare
