// Package compare decides, cell by cell and metric by metric, whether a head results file is
// slower, faster, the same as, or not distinguishable from a base results file, and how sure
// that is. It is pure: it reads no files and prints nothing (package report renders a
// comparison, internal/cli runs it, package results holds its file format).
//
// # Method
//
// Runs and what decides (issue 21): a run is one results file, one server lifetime; trials
// inside it are replicates within the run, never independent runs (a paired run's blocks are
// runs of their own). A run shares a factor across all its cells (runeffect.go): it is
// estimated per phase from the deciding metric and removed, so a cell is compared within its
// run against the other cells as controls, and the phase's shift between runs is a test of its
// own against the run-to-run spread of those factors (groups.go). A cell is decided on its
// deciding metric — decode total tok/s, prefill prompt tok/s, and speculative acceptance length
// where compared; its other metrics are notes, tested in a family of their own, shown, never a
// verdict (a lost number still is). A prior is never the only evidence for a block: a cell,
// row, column or shift beyond δ whose noise only a prior bounds (no history, no second run, no
// pairs, no noise measured on this machine: within-run samples and trials of one run are not
// run-to-run noise) is unproven, not a regression; history or a paired run decides it. A row,
// column or shift that is worse than δ and significant by itself (one-sided: a shift at 2.5 %,
// rows and columns at 1 % Bonferroni over them) but not among every test of the matrix is
// suspected: unproven too, with its cells that moved beyond δ, because inconclusive passes and
// means nothing worse was suspected.
// With
// history, the base pools the history's newest level (the pooled baseline: the base's one run
// is its newest), history variances are moderated within each noise class (moderate.go), and
// a history whose own leave-one-out scores show heavy tails makes each cell's test take a t
// distribution of 3 degrees of freedom (groups.go); rows, concurrency columns and each phase's
// shift then carry the detection with clipped scores that keep their level under heavy tails
// and mixtures. What each matrix verdict concludes is results.Outcomes. Where the sections below
// say "regression" of a test whose noise is a prior, read "unproven".
//
// Metrics: prefill prompt tok/s and TTFT; decode total tok/s, per-request tok/s, TTFT and time
// between tokens. Throughput is better higher, latency lower. Where either side measured it, a
// decode cell also has speculative acceptance length (tokens per draft step from the server's
// spec-decode counters; a run served with spec_decode: pinned takes it from its acceptance pass),
// better higher, δ = 3 %, in the same BH family but in no row test, with its own prior
// (DefaultAcceptancePrior: vLLM's acceptance-driven throughput spread, 20 % up to concurrency 2,
// 7.5 % at 4, 1 % from 8) and no within-run estimate (a window's acceptance is one counter ratio);
// a side without it is not comparable there, never a lost number. acceptance.go says why.
//
// Estimate: every metric is compared on the log scale. A side's value is the mean of the log
// values of its trials (one per trial; the cell's summary when it kept none), so the change is
// the ratio of geometric means, head/base − 1, and its confidence interval is the Welch t
// interval of the log difference mapped back with exp (this is the delta-method interval of a
// ratio done exactly on the log scale, and it can never cross −100 %).
//
// Paired: when the two sides are the base and head files of paired A/B runs (`run --paired`,
// results.Run.Pairing, scheme ABBA; every run's base file on one side and its head file on the
// other, so several files per side pool the pairs of several runs), a cell-metric whose trials
// form at least two pairs is estimated from the pairs' log-ratios instead (noise source
// "paired", before every source below): base and head served alternately in blocks on one
// machine, pair k the k-th block of each, adjacent in time. Where both orders occur among three
// or more pairs (ABBA) it is the two-period crossover analysis (stats.PairedEstimate): the change
// is the mean of the two order groups' mean log-ratios, the drift per block half their
// difference (Noise.Drift), the variance their pooled within-group variance, n − 2 degrees of
// freedom; so a drift linear in time changes neither the estimate nor its error, where two
// separate runs would call it a change. The rank check is the exact sign-flip test of the
// drift-corrected log-ratios (in place of Mann–Whitney), asked only where its smallest p-value,
// 2/2^n, reaches q (six pairs). Pairs whose log-ratios all agree exactly fall back to the
// unpaired sources. A row test (below) of a paired comparison is paired too: each pair's score
// difference (head − base, the same weights), crossover estimate in place of Welch
// (RowComparison.Pairs). The comparison records the pairing (ComparisonSettings.Pairing), and
// its rerun advice asks for one more paired run of the listed cells.
//
// Noise: the run-to-run variance of one run's log value, σ², comes from the first of
//   - trials: both sides hold at least two trials (several trials in a file, or several files per
//     side pooled): Welch's t with Welch–Satterthwaite degrees of freedom; when only one side
//     holds two or more, their spread stands for both sides (k − 1 degrees of freedom) unless
//     the history holds more runs; trials with fewer than 4 degrees of freedom together (a
//     one-trial rerun: two runs a side, or a head-only rerun's few head runs) pool with the
//     history (degrees of freedom added), or without history are floored by the prior (or by a
//     single run's within-run noise where it is larger, as the first look took it), so that a
//     rerun keeps the noise its advice assumed instead of a t quantile of 2 degrees of freedom;
//   - history: at least Thresholds.MinHistory earlier base results hold the cell: their sample
//     variance, n − 1 degrees of freedom. The history is read oldest first (in commit order when
//     Input.HistoryByCommit says the caller gave it so, else by run start), and
//     where its series has a sustained shift of at least the metric's δ (a change of the engine
//     on the default branch: E-divisive means, package changepoint, with the settings `speedmatrix
//     history` uses, permutations seeded from the cell-metric), the variance is pooled within the
//     levels between its change points, on n − levels degrees of freedom (results.Noise.Levels and
//     LevelFrom, and a warning); counted across the shift, a regression that landed would be
//     taken for noise and blind every comparison for as long as it stays in the history;
//   - within+prior: a side with one trial that kept its raw samples: the within-run variance of
//     the window's value by batch means (1 s output-token bins for total tok/s; per-request values
//     in order for TTFT, time between tokens and per-request tok/s, times π/2 for a median), at
//     least 4 degrees of freedom, floored by the prior (a window cannot see between-run drift, so
//     the data can only make the noise larger than the prior, never smaller);
//   - prior: the configured CV (DefaultPrior: published run-to-run noise at the upper end of its
//     range), taken as known. The prior of decode rates follows what the files say of
//     speculative decoding (results.File.SpecDecodeState, recorded in the comparison's
//     settings.spec_decode): where a side served it unpinned (acceptance counters in its
//     telemetry) or cannot tell (no server counters read: any engine may serve it), the
//     acceptance-driven noise of vllm issue 53436 at the top of its ±20 % range
//     (Prior.SpecDecodeRate: 20 % at concurrency 1, 24 % at 2, 9 % at 4, 1 % from 8); where every
//     side was pinned or its counters showed no speculative draft, Prior.DecodeRate (20, 10, 5,
//     1 %).
//
// Measured noise: Input.MeasuredNoise holds the run-to-run CV of cell-metrics measured on the
// user's own machine: the within-commit spread of repeated runs of one commit (default-branch
// results and A/A reruns in the store, config store.aa_every), pooled across commits
// (MeasuredNoise; `speedmatrix calibrate --store` computes and reports it with the real A/A
// false-alarm rate). Where it exceeds the prior of a cell-metric, it replaces the prior: as the
// floor of within+prior, and where the prior alone would have applied, or the window saw less
// than it, the noise source is "measured" (results.NoiseMeasured, taken as known) and
// results.Noise records the prior's CV and the measured one, so that the rendered comparison says
// "measured noise above the prior". Measured noise below the prior changes nothing: the prior
// stays the floor. Trials and history, which measure the cell directly, take precedence.
//
// The output names the source of every cell-metric and, where it is the prior, why nothing better
// was there (results.Noise.PriorReason): no raw samples (summary only); raw samples too few for
// batch means (fewer than 25 requests, or full 1 s bins for total tok/s, in the window — the
// count is given; at concurrency 1 a 30 s window holds two or three requests); one request per
// prefill run; or repeated trials that all agree exactly.
//
// Comparing a run with itself (one file on both sides, files of one run id, or identical
// contents) is allowed but warned about: it measures nothing.
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
// an improvement), and is not part of the BH family. So is a lost number: a metric of a cell
// measured in both runs whose head value is missing, zero, negative or not finite where the base
// has a usable one is a regression by itself (a rate of 0 tok/s is a 100 % drop; a latency without
// a value cannot be bounded), never a pass; the reverse, a base without a usable value, is not
// comparable (nothing bounds how much better the head is). Results files rarely carry such a cell:
// results.Validate rejects a valid or queued window without an output token, a summary that
// disagrees with its trials or raw samples, and non-finite numbers; what remains are imported
// reports (summary numbers only, such as a "Valid" row of 0.0 tok/s) and files built in memory.
// The cell's verdict is its worst metric's; the matrix's verdict is regression when any cell or
// any row test is one.
//
// Row tests: a decode context row whose tested cell-metrics are all present in at least two runs
// (a file and a trial in it) of each side also gets one pooled test, which joins the same BH
// family as one member (in addition to its cells). Each run gets the score Σ w·log(value) over
// the row's cell-metrics, with w ∝ log(1 + δ)/σ² (σ² the cell-metric's per-run variance; fixed
// from variances only, never from the changes), oriented so that worse raises the score, and
// scaled so that every metric worse by exactly δ moves it by 1. The two sides' scores are compared
// by Welch's t. Because the variance is measured across runs, the correlation of the metrics of a
// cell (total tok/s, per-request tok/s and time between tokens are nearly one measurement) and of
// the cells of one run are in it; nothing is assumed independent. A row is a regression
// (improvement) when its q is at most the look's level and the score moved worse (better) by more
// than 1, unchanged when the TOST shows the score within ±1.
//
// Level: two error budgets bind. BH at level L controls the FDR at L; and when nothing changed
// (an A/A comparison, the global null) BH rejects anything at all with probability at most L
// (Simes' inequality, which holds for the positively dependent metrics of a cell too). The
// whole-matrix false-alarm target (Thresholds.FalseAlarm, 1 %: the share of A/A comparisons with
// any regression verdict) is such a global-null probability, so it needs L ≤ 1 % over both
// looks, stricter than q = 0.05: both looks together spend B = min(q, FalseAlarm) = 0.01 by
// default. With the conservative prior this costs little power; with measured noise (history,
// trials) the tests are exact and the level is what the A/A rate comes to: with --history 10, BH
// spending q = 0.05 flagged a regression in 1.7–2.1 % of A/A comparisons, and spending 0.02 in
// 1.0–1.1 % (a regression is only one direction of a rejection, but that halving is not a bound).
//
// Two looks: B is spent over at most two looks by Lan–DeMets alpha spending (Pocock-type by
// default, at the planned information fraction 1/2): the first comparison runs BH at
// B·ln(1 + (e − 1)/2) ≈ 0.0062 for B = 0.01; the second look, on the pooled trials of the
// re-measured cells, runs BH at (B − level1)/(1 − level1) ≈ 0.0038, the level that keeps the two
// looks at B when they are independent (pooled data are positively correlated with the first look,
// which only lowers the true error, so the rule is conservative). There is no third look. The
// rerun advice asks for the fewest further trials per side that make the MDC at most 2δ with the
// configured power at the second look's Bonferroni share over every metric of the re-measured
// cells (speculative acceptance length included where it is compared); cells needing more than
// MaxFurtherTrials (20) are listed as undecidable. With Thresholds.HeadOnlyReruns (the adaptive
// job, whose base is stored) the trials are the head's alone, solving var_b/n_b + var_h/(n_h + k)
// ≤ target with n_b fixed; a cell that measuring both sides would decide but head trials cannot
// (the base's runs alone are too noisy) is listed undecidable with the reason "needs base reruns
// or paired mode". Within a GPU budget, PlanRerunsFor buys the advised reruns by their chance of
// turning an open slowdown into a regression verdict per minute (budget_value.go). A decode row
// none of whose cell-metrics was decided at the first look, and some of which are undecidable
// cell by cell (in practice the long-context rows whose only cells run at concurrency ≤ 4, with
// 2–20 % run-to-run noise), is instead measured whole: the advice asks, per such row, for the
// fewest further runs of all its cells (one `run --cells ROW_CELLS --trials N` per row, so that
// every run holds the whole row), and never fewer than its cells would get one by one, that let
// the row test detect a 2δ change of every metric with the configured power at the second look's
// Bonferroni share, predicting the score's variance as if the metrics of one cell
// were perfectly correlated (the largest it can be) and cells independent, from each noise
// estimate's upper confidence bound at the level of the power (df/χ²_{df,1−power}; a history of
// 10 runs is not trusted to be as quiet as it looked); at most MaxRowTrials (80), which a row
// that needs more still gets while its predicted power there is at least 1/2. Each run is one 30 s window per cell, so a row of two cells at 60 runs costs
// 2 cells × 60 × 2 sides × 30 s = 2 GPU-hours; `speedmatrix calibrate` reports the mean cost.
//
// Calibration: package calibrate measures the false-alarm and detection rates of all this on
// synthetic matrices with realistic noise (`speedmatrix calibrate`).
package compare
