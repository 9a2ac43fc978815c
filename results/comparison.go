package results

import (
	"fmt"
	"io"
	"math"
	"strings"
	"time"
)

// ComparisonSchemaV1 is the value of the schema field of a version 1 comparison file: what
// `speedmatrix compare` writes and what report and the bot read.
const ComparisonSchemaV1 = "speedmatrix/comparison/v1"

// Verdict is the outcome of comparing one metric of one cell, one cell, or the whole matrix.
type Verdict string

// The verdicts.
const (
	VerdictRegression   Verdict = "regression"   // worse beyond δ, significant after FDR control
	VerdictImprovement  Verdict = "improvement"  // better beyond δ, significant after FDR control
	VerdictUnchanged    Verdict = "unchanged"    // shown equivalent within ±δ (TOST)
	VerdictInconclusive Verdict = "inconclusive" // neither: too noisy for δ; more trials decide it
	// VerdictNotComparable: a status differs (except the status changes that are themselves a
	// regression or an improvement), the cell is missing from one file, or there is no number.
	VerdictNotComparable Verdict = "not_comparable"
	// VerdictUnproven: worse beyond δ by a test whose only noise is a prior (no history, no
	// separate runs, no pairs measured the run-to-run noise): neither shown nor ruled out. A
	// prior is never the only evidence for a block; history or a paired A/B run decides it.
	VerdictUnproven Verdict = "unproven"
	// VerdictIncomplete: the head lacks data it should hold (a cell the base or its own plan
	// has, a partial run, a window that stalled): missing data never passes.
	VerdictIncomplete Verdict = "incomplete"
)

// Valid reports whether v is one of the verdicts.
func (v Verdict) Valid() bool {
	switch v {
	case VerdictRegression, VerdictImprovement, VerdictUnchanged, VerdictInconclusive, VerdictNotComparable,
		VerdictUnproven, VerdictIncomplete:
		return true
	}
	return false
}

// Metric names a compared quantity of a cell.
type Metric string

// The compared metrics: prefill has prompt tok/s and TTFT; decode has total tok/s, per-request
// tok/s, TTFT and time between tokens.
const (
	MetricPromptTokPerS     Metric = "prompt_tok_per_s"
	MetricTotalTokPerS      Metric = "total_tok_per_s"
	MetricPerRequestTokPerS Metric = "per_request_tok_per_s"
	MetricTTFT              Metric = "ttft_ms"
	MetricTBT               Metric = "tbt_ms"
	// MetricSpecAcceptance is the mean tokens per speculative draft step (1 + accepted ÷
	// drafts, the server's spec-decode counters) of a decode cell. It is compared only where a
	// side measured it, so it is not in Metrics (see package compare).
	MetricSpecAcceptance Metric = "spec_acceptance_length"
)

// Metrics returns the metrics compared for a phase, in display order.
func Metrics(p Phase) []Metric {
	if p == PhasePrefill {
		return []Metric{MetricPromptTokPerS, MetricTTFT}
	}
	return []Metric{MetricTotalTokPerS, MetricPerRequestTokPerS, MetricTTFT, MetricTBT}
}

// HigherIsBetter reports whether a larger value of m is better (throughput) rather than worse
// (latency).
func (m Metric) HigherIsBetter() bool {
	return m == MetricPromptTokPerS || m == MetricTotalTokPerS || m == MetricPerRequestTokPerS || m == MetricSpecAcceptance
}

// Title returns the metric's name as a report shows it.
func (m Metric) Title() string {
	switch m {
	case MetricPromptTokPerS:
		return "Prompt tok/s"
	case MetricTotalTokPerS:
		return "Total tok/s"
	case MetricPerRequestTokPerS:
		return "Per request tok/s"
	case MetricTTFT:
		return "TTFT"
	case MetricTBT:
		return "Time between tokens"
	case MetricSpecAcceptance:
		return "Acceptance length"
	}
	return string(m)
}

// knownMetric reports whether m is one of the metrics.
func knownMetric(m Metric) bool {
	switch m {
	case MetricPromptTokPerS, MetricTotalTokPerS, MetricPerRequestTokPerS, MetricTTFT, MetricTBT, MetricSpecAcceptance:
		return true
	}
	return false
}

// Noise sources: where the run-to-run spread of a cell-metric came from.
const (
	NoiseTrials  = "trials"       // repeated trials in both files (Welch)
	NoiseHistory = "history"      // the spread of the same cell across earlier results of the base
	NoiseWithin  = "within+prior" // within-run batch means, floored by the configured prior
	NoisePrior   = "prior"        // the configured prior alone: Noise.PriorReason says why
	// NoiseMeasured: run-to-run noise measured on this machine (A/A reruns of one commit in the
	// store, `speedmatrix calibrate --store`) above the prior, used in its place: Noise.PriorCV
	// is the prior it exceeded.
	NoiseMeasured = "measured"
	// NoisePaired: the spread of the head/base log-ratios of the pairs of a paired A/B run
	// (Noise.Pairs of them; the period effect removed where both orders occurred).
	NoisePaired = "paired"
)

// MeasuredRunToRun reports whether a noise source is run-to-run noise that was measured
// (history, a paired run's pairs, this machine's A/A runs), not within one run or assumed.
func MeasuredRunToRun(source string) bool {
	switch source {
	case NoiseHistory, NoisePaired, NoiseMeasured:
		return true
	}
	return false
}

// Why the configured prior alone set the noise (Noise.PriorReason).
const (
	// PriorSummaryOnly: a side kept no raw samples (an imported report, summary numbers only).
	PriorSummaryOnly = "summary_only"
	// PriorFewSamples: the raw samples exist but the window held too few of them to estimate the
	// within-run noise (Noise.Samples says how many, Noise.SamplesNeeded how many it takes).
	PriorFewSamples = "few_samples"
	// PriorNoWithin: the window's raw samples were enough in number but gave no estimate (every
	// value equal, or a rate of zero).
	PriorNoWithin = "no_within_estimate"
	// PriorPrefill: a prefill trial is one request, so one run has no within-run spread.
	PriorPrefill = "prefill_one_request"
	// PriorNoSpread: both sides repeated the cell, and every repetition gave the same value.
	PriorNoSpread = "trials_identical"
	// PriorCounters: the metric is one ratio of the server's counters per window (speculative
	// acceptance), so one run has no within-run spread.
	PriorCounters = "counters_only"
)

// Comparison is the outcome of comparing a head results file with a base results file.
type Comparison struct {
	Schema   string             `json:"schema"`
	Created  time.Time          `json:"created,omitzero"`
	Base     ComparedRun        `json:"base"`
	Head     ComparedRun        `json:"head"`
	Settings ComparisonSettings `json:"settings"`
	// Verdict is the whole matrix's: regression if any cell-metric is a regression; else
	// improvement if any is an improvement; else inconclusive if any is inconclusive; else
	// unchanged (or not_comparable when nothing could be compared).
	Verdict Verdict `json:"verdict"`
	// VerdictReason says why the verdict is incomplete (a partial head, cells missing in the
	// head) or, where compare can say it in one line, unproven (the head's one run reads two
	// ways); empty otherwise.
	VerdictReason string            `json:"verdict_reason,omitempty"`
	Summary       ComparisonSummary `json:"summary"`
	Cells         []CellComparison  `json:"cells"`
	// Rows are the pooled tests of whole decode context rows, present when both sides hold at
	// least two runs of a row's cells (the second look after a row rerun). A row's regression
	// makes the matrix's verdict a regression like a cell's.
	Rows []RowComparison `json:"rows,omitempty"`
	// Groups are the tests of groups of cells within their runs (a decode row, a concurrency
	// column, a phase) and of the whole matrix's shift between runs; a group's regression makes
	// the matrix's verdict a regression like a cell's.
	Groups []GroupComparison `json:"groups,omitempty"`
	Rerun  *RerunAdvice      `json:"rerun,omitempty"`
	// GPUTime is the head job's GPU time by phase and, for the cells left undecided, the cost
	// to decide them; nil when the comparison was made outside a job (speedmatrix compare).
	GPUTime *GPUTime `json:"gpu_time,omitempty"`
	// Warnings are problems that did not stop the comparison (different models compared with
	// --force, cells missing from one file, history files that did not match).
	Warnings []string `json:"warnings,omitempty"`
}

// Cell returns c's comparison of the cell named id (CellID.String()), nil when it has none.
func (c *Comparison) Cell(id string) *CellComparison {
	return find(c.Cells, func(x *CellComparison) bool { return x.Cell == id })
}

// find returns the first element of xs that match accepts, nil when none does.
func find[T any](xs []T, match func(*T) bool) *T {
	for i := range xs {
		if match(&xs[i]) {
			return &xs[i]
		}
	}
	return nil
}

// ComparedRun identifies one side of a comparison.
type ComparedRun struct {
	Path          string    `json:"path,omitempty"`
	RunID         string    `json:"run_id,omitempty"`
	ServedModel   string    `json:"served_model,omitempty"`
	Engine        string    `json:"engine,omitempty"`
	EngineVersion string    `json:"engine_version,omitempty"`
	Commit        string    `json:"commit,omitempty"`
	GPU           string    `json:"gpu,omitempty"`
	GPUCount      int       `json:"gpu_count,omitempty"`
	Source        string    `json:"source,omitempty"`
	Start         time.Time `json:"start,omitzero"`
	// TimeScale is how many times faster than its profile the side's server ran (the built-in
	// simulator's speedup); absent for a real server. Base and Head are as measured; reports
	// show them in the profile's time (rates ÷ TimeScale, times × TimeScale).
	TimeScale float64 `json:"time_scale,omitempty"`
}

// ComparisonSettings are the thresholds a comparison used, so that it can be repeated.
type ComparisonSettings struct {
	// FDR is the Benjamini–Hochberg false discovery rate q over both looks together.
	FDR float64 `json:"fdr"`
	// FalseAlarm is the whole-matrix false-alarm rate the levels also keep (both looks spend
	// min(FDR, FalseAlarm)); 0 when not capped.
	FalseAlarm float64 `json:"false_alarm,omitempty"`
	// Look is 1 for a first comparison and 2 for the second look after a rerun.
	Look int `json:"look"`
	// Level is the BH level this look used (q's share spent at this look).
	Level float64 `json:"level"`
	// Spending is the alpha-spending function that split FDR between the looks.
	Spending string `json:"spending"`
	// MinimumEffect is set when p-values test "the change lies beyond ±δ" rather than "the change
	// is zero".
	MinimumEffect bool `json:"minimum_effect,omitempty"`
	// EquivalenceAlpha is the level of the TOST that shows "unchanged".
	EquivalenceAlpha float64 `json:"equivalence_alpha"`
	// Power is the power the minimal detectable change and the rerun advice are computed for.
	Power float64 `json:"power"`
	// ConfidenceLevel is the level of every reported interval.
	ConfidenceLevel float64          `json:"confidence_level"`
	Metrics         []MetricSettings `json:"metrics"`
	// HistoryFiles is how many earlier base results gave the history noise.
	HistoryFiles int  `json:"history_files,omitempty"`
	Forced       bool `json:"forced,omitempty"`
	// Pairing is set when the two sides were one paired A/B run and the comparison used the
	// pairs' log-ratios (noise source NoisePaired); Side is empty.
	Pairing *Pairing `json:"pairing,omitempty"`
	// SpecDecode is what the files said about speculative decoding (SpecDecodeUnpinned,
	// SpecDecodeUnknown, SpecDecodeOff, SpecDecodePinned); it chose the prior of decode rates.
	SpecDecode string `json:"spec_decode,omitempty"`
}

// MetricSettings are one metric's practical floor and direction.
type MetricSettings struct {
	Metric Metric `json:"metric"`
	// Delta is the practical floor δ as a fraction (0.03 = 3 %): changes within ±δ do not matter.
	Delta          float64 `json:"delta"`
	HigherIsBetter bool    `json:"higher_is_better"`
}

// ComparisonSummary counts the verdicts and summarizes decode throughput.
type ComparisonSummary struct {
	// Counts are per cell-metric.
	Counts VerdictCounts `json:"counts"`
	// CellCounts are per cell (a cell's verdict is its worst metric's).
	CellCounts VerdictCounts `json:"cell_counts"`
	// Tests is how many cell-metrics entered the Benjamini–Hochberg family.
	Tests int `json:"tests"`
	// DecodeTotalGeomean is the geometric-mean change of decode total tok/s over the cells
	// measured in both runs; nil when none was.
	DecodeTotalGeomean *Change `json:"decode_total_geomean,omitempty"`
}

// VerdictCounts counts verdicts.
type VerdictCounts struct {
	Regression    int `json:"regression"`
	Improvement   int `json:"improvement"`
	Unchanged     int `json:"unchanged"`
	Inconclusive  int `json:"inconclusive"`
	NotComparable int `json:"not_comparable"`
	Unproven      int `json:"unproven,omitempty"`
	Incomplete    int `json:"incomplete,omitempty"`
}

// Add counts one verdict.
func (c *VerdictCounts) Add(v Verdict) {
	switch v {
	case VerdictRegression:
		c.Regression++
	case VerdictImprovement:
		c.Improvement++
	case VerdictUnchanged:
		c.Unchanged++
	case VerdictInconclusive:
		c.Inconclusive++
	case VerdictNotComparable:
		c.NotComparable++
	case VerdictUnproven:
		c.Unproven++
	case VerdictIncomplete:
		c.Incomplete++
	}
}

// AddCounts adds the counts of o.
func (c *VerdictCounts) AddCounts(o VerdictCounts) {
	c.Regression += o.Regression
	c.Improvement += o.Improvement
	c.Unchanged += o.Unchanged
	c.Inconclusive += o.Inconclusive
	c.NotComparable += o.NotComparable
	c.Unproven += o.Unproven
	c.Incomplete += o.Incomplete
}

// Total returns the number of verdicts counted.
func (c VerdictCounts) Total() int {
	return c.Regression + c.Improvement + c.Unchanged + c.Inconclusive + c.NotComparable + c.Unproven + c.Incomplete
}

// Change is a relative change (head/base − 1) with its confidence interval, all fractions.
type Change struct {
	Change float64 `json:"change"`
	Low    float64 `json:"low"`
	High   float64 `json:"high"`
	// Level is the confidence of Low … High where it is not the comparison's: a cell whose
	// interval at the comparison's level lies wholly slower than δ while at its table's level
	// (one cell of many: the level it is judged at) it does not shows the latter, so that no
	// cell a comparison passes shows a slowdown beyond δ. 0: the comparison's level.
	Level float64 `json:"level,omitempty"`
	// Cells is how many cells a summary change is over.
	Cells int `json:"cells,omitempty"`
}

// CellComparison is the comparison of one cell.
type CellComparison struct {
	// Cell is the cell's CellID.String() form ("prefill/8K", "decode/8K/32").
	Cell         string `json:"cell"`
	Phase        Phase  `json:"phase"`
	ContextLabel string `json:"context_label"`
	Context      int    `json:"context,omitempty"`
	Concurrency  int    `json:"concurrency,omitempty"`
	// BaseStatus and HeadStatus are empty when the cell is missing from that file.
	BaseStatus Status `json:"base_status,omitempty"`
	HeadStatus Status `json:"head_status,omitempty"`
	// Verdict is the worst of the metrics' verdicts (regression, then improvement,
	// inconclusive, unchanged, not_comparable).
	Verdict Verdict            `json:"verdict"`
	Reason  string             `json:"reason,omitempty"`
	Metrics []MetricComparison `json:"metrics"`
}

// Metric returns c's comparison of metric m, nil when it has none.
func (c *CellComparison) Metric(m Metric) *MetricComparison {
	return find(c.Metrics, func(x *MetricComparison) bool { return x.Metric == m })
}

// MetricComparison is the comparison of one metric of one cell.
type MetricComparison struct {
	Metric Metric `json:"metric"`
	// Base is the reference the change is taken against, the base every report shows: where
	// there is a change, head/(1 + change), so that change = head/base − 1 of the two numbers
	// shown always holds. It is the base run's own value (BaseRun) unless BaseFrom says
	// otherwise; without a change it is the base run's own value.
	Base *float64 `json:"base"`
	// BaseRun is the base run's own value (the geometric mean of the base side's runs where it
	// pooled several); nil where the base has no number.
	BaseRun *float64 `json:"base_run,omitempty"`
	// BaseFrom says where Base came from when it is not the base run's own value:
	// BaseFromHistory, the history's estimate (a comparison with history: the base run pooled
	// with the history's newest level, or the base side's runs at their run factors' mean);
	// BaseFromRuns, the base side's runs and trials pooled (their geometric mean, after each
	// run's factor), where that differs from BaseRun by more than BaseFromTolerance. Empty: the
	// base run's own value.
	BaseFrom string `json:"base_from,omitempty"`
	// Head is the head run's own value.
	Head *float64 `json:"head"`
	// Change is head/base − 1 (from the log-scale estimate) with its confidence interval.
	Change *Change `json:"change,omitempty"`
	// P is the two-sided p-value of "no change"; Q is its Benjamini–Hochberg adjustment over the
	// whole family; RankP is the Mann–Whitney p-value when both files hold enough trials.
	P     *float64 `json:"p,omitempty"`
	Q     *float64 `json:"q,omitempty"`
	RankP *float64 `json:"rank_p,omitempty"`
	// TOSTP is the p-value of the equivalence test within ±δ.
	TOSTP *float64 `json:"tost_p,omitempty"`
	// MDC is the smallest change (fraction, either direction) this cell would call a
	// regression or improvement with the configured power if it were the only change.
	MDC     *float64 `json:"mdc,omitempty"`
	Delta   float64  `json:"delta"`
	Verdict Verdict  `json:"verdict"`
	Reason  string   `json:"reason,omitempty"`
	Noise   *Noise   `json:"noise,omitempty"`
	// FurtherTrials is how many more trials per side an inconclusive cell needs; nil when it
	// needs none or more than the advice's limit.
	FurtherTrials *int `json:"further_trials,omitempty"`
	// Note is set on a note, a metric that does not decide its cell (DecidingMetric), whose
	// change is significant and beyond δ: NoteWorse or NoteBetter. Its verdict stays
	// inconclusive, since a note never decides a cell, but it is not "too noisy to tell": the
	// reports mark it apart.
	Note string `json:"note,omitempty"`
}

// A note's change that is significant and beyond δ (MetricComparison.Note).
const (
	NoteWorse  = "worse"
	NoteBetter = "better"
)

// Where the reference a change is taken against comes from (MetricComparison.BaseFrom).
const (
	BaseFromHistory = "history"
	BaseFromRuns    = "runs"
)

// BaseFromTolerance is how far (relative) the reference may lie from the base run's own value
// and still be shown as the base run's: below what three significant digits show.
const BaseFromTolerance = 0.0005

// SetReference makes m's Base the reference its change is taken against: head/(1 + change),
// keeping the base run's own value in BaseRun, and says in BaseFrom where that reference came
// from (history: the comparison had history files; else the base side's runs, where the
// reference differs from the base run's value). It is idempotent: a MetricComparison
// whose BaseRun is set (compare set it) is left as it is, and one written before BaseRun
// existed is upgraded, so every reader shows one number per cell-metric.
func (m *MetricComparison) SetReference(history bool) {
	if m.BaseRun != nil {
		return
	}
	m.BaseRun = m.Base
	if m.Base == nil || m.Head == nil || m.Change == nil || !(m.Change.Change > -1) || !(*m.Head > 0) {
		return
	}
	ref := *m.Head / (1 + m.Change.Change)
	if math.IsNaN(ref) || math.IsInf(ref, 0) {
		return
	}
	m.Base = &ref
	switch {
	case history || (m.Noise != nil && (m.Noise.PooledRuns > 0 || m.Noise.Source == NoiseHistory)):
		// A comparison with history takes every change against the history's estimate (the
		// run factors and levels are the history's), even where it lands on the base run's value.
		m.BaseFrom = BaseFromHistory
	case math.Abs(ref / *m.BaseRun - 1) > BaseFromTolerance:
		m.BaseFrom = BaseFromRuns
	}
}

// SetReferences calls SetReference on every cell-metric of c (history: c was compared with
// history files).
func (c *Comparison) SetReferences() {
	for i := range c.Cells {
		for j := range c.Cells[i].Metrics {
			c.Cells[i].Metrics[j].SetReference(c.Settings.HistoryFiles > 0)
		}
	}
}

// Noise says how the run-to-run noise of a cell-metric was estimated.
type Noise struct {
	Source string `json:"source"` // NoiseTrials, NoiseHistory, NoiseWithin or NoisePrior
	// CV is the coefficient of variation of one run's value (the log-scale standard deviation).
	CV float64 `json:"cv"`
	// DF is the degrees of freedom of the noise estimate; nil when it is taken as known.
	DF         *float64 `json:"df,omitempty"`
	BaseTrials int      `json:"base_trials"`
	HeadTrials int      `json:"head_trials"`
	// WithinCV is the within-run estimate (batch means) when there was one.
	WithinCV *float64 `json:"within_cv,omitempty"`
	// Scale is the factor by which the matrix's own spread of changes scaled a guessed noise up
	// (empirical null); CV already includes it.
	Scale *float64 `json:"scale,omitempty"`
	// Moderated is set when the history variance was shrunk toward its noise class's (cells of
	// one phase and prior): the degrees of freedom the class lent it.
	Moderated *float64 `json:"moderated,omitempty"`
	// PooledRuns is set where the base's value pools its runs with the history's newest level
	// (the pooled baseline): how many runs.
	PooledRuns int `json:"pooled_runs,omitempty"`
	// PriorReason says, for Source NoisePrior, why nothing better was available: one of the
	// Prior* constants.
	PriorReason string `json:"prior_reason,omitempty"`
	// Samples is, for PriorFewSamples, the most raw samples a side's window held for this metric:
	// requests for the per-request metrics, full 1 s bins for total tok/s; SamplesNeeded is how
	// many a within-run estimate takes.
	Samples       *int `json:"samples,omitempty"`
	SamplesNeeded int  `json:"samples_needed,omitempty"`
	// PriorCV is, where measured noise above the prior replaced it (Source NoiseMeasured, or the
	// floor of NoiseWithin), the prior's CV; MeasuredCV the measured one that replaced it.
	PriorCV    *float64 `json:"prior_cv,omitempty"`
	MeasuredCV *float64 `json:"measured_cv,omitempty"`
	// Pairs is, for NoisePaired, how many pairs the estimate used; Drift, when both orders
	// occurred, the fitted drift per block (the later block's change over the earlier one, a
	// fraction), which the estimate removed.
	Pairs int      `json:"pairs,omitempty"`
	Drift *float64 `json:"drift,omitempty"`
	// Levels is, for NoiseHistory, how many levels the cell-metric's history has when it shifted
	// (a change point of at least the metric's δ): the noise is then the spread within each
	// level, on history runs − Levels degrees of freedom. LevelFrom is the engine commit of the
	// first run of the newest level.
	Levels    int    `json:"history_levels,omitempty"`
	LevelFrom string `json:"history_level_from,omitempty"`
}

// RowComparison is the pooled test of one decode context row: per run, every tested
// cell-metric of the row is combined into one weighted score, and the two sides' scores are
// compared by Welch's t, so that correlations between the metrics and cells of one run are in
// the measured variance.
type RowComparison struct {
	ContextLabel string   `json:"context_label"`
	Cells        []string `json:"cells"`
	// BaseRuns and HeadRuns are the runs (file and trial) that held every cell-metric of the row.
	BaseRuns int `json:"base_runs"`
	HeadRuns int `json:"head_runs"`
	// Effect is the weighted mean change of the row's metrics in units of their δ, positive when
	// worse (1 = every metric worse by exactly δ); Low and High are its confidence interval.
	Effect float64 `json:"effect"`
	Low    float64 `json:"low"`
	High   float64 `json:"high"`
	DF     float64 `json:"df"`
	// P is the two-sided p-value of "no change"; Q its Benjamini–Hochberg adjustment in the same
	// family as the cell-metrics.
	P       float64 `json:"p"`
	Q       float64 `json:"q"`
	Verdict Verdict `json:"verdict"`
	Reason  string  `json:"reason,omitempty"`
	// Pairs is set when the row was tested pair by pair (a paired comparison): the pairs whose
	// score difference entered the crossover estimate in place of Welch's t.
	Pairs int `json:"pairs,omitempty"`
}

// RerunAdvice lists the inconclusive cells to measure again and the rule for the second look.
type RerunAdvice struct {
	// Cells is the --cells argument of `speedmatrix run`: CellID strings joined by commas.
	Cells string      `json:"cells"`
	Items []RerunItem `json:"items"`
	// Trials is the number of further trials per side that decides every listed cell.
	Trials int            `json:"trials"`
	Rule   SequentialRule `json:"rule"`
	// Undecidable lists the inconclusive cell-metrics that no reasonable number of trials
	// decides (more than the advice's limit), by cell.
	Undecidable []UndecidableItem `json:"undecidable,omitempty"`
	// Rows are the decode context rows that no cell of theirs decides, each to be measured whole
	// (all its cells in every run) for the row test.
	Rows []RowRerun `json:"rows,omitempty"`
	// HeadOnly is set when the advice measures the head alone (the base is stored): Trials and
	// FurtherTrials are head trials against the base's runs as they are.
	HeadOnly bool `json:"head_only,omitempty"`
}

// RowRerun is one decode context row to measure whole again.
type RowRerun struct {
	ContextLabel string `json:"context_label"`
	// Cells is the --cells argument of `speedmatrix run`: the row's compared cells.
	Cells string `json:"cells"`
	// FurtherTrials is the number of further runs per side (--trials).
	FurtherTrials int `json:"further_trials"`
}

// UndecidableItem names the metrics of one cell that more trials would not decide.
type UndecidableItem struct {
	Cell    string   `json:"cell"`
	Metrics []Metric `json:"metrics"`
	// Reason is UndecidableNeedsBase when only the base's runs keep it undecided; empty: no
	// number of trials within the advice's limit decides it.
	Reason string `json:"reason,omitempty"`
}

// RerunItem is one cell to measure again.
type RerunItem struct {
	Cell          string   `json:"cell"`
	Metrics       []Metric `json:"metrics"`
	FurtherTrials int      `json:"further_trials"`
}

// SequentialRule is the two-look group-sequential rule for the rerun.
type SequentialRule struct {
	Method string  `json:"method"`
	FDR    float64 `json:"fdr"`
	// Level1 is the BH level of the first look (this comparison); Level2 is the BH level the
	// second look must use on the pooled trials.
	Level1 float64 `json:"level1"`
	Level2 float64 `json:"level2"`
	// InformationFraction is the first look's share of the information the plan assumed.
	InformationFraction float64 `json:"information_fraction"`
	Text                string  `json:"text"`
}

// ValidateComparison checks c: the schema, the verdicts, the cell identities and metrics, and
// that every number is finite.
func ValidateComparison(c *Comparison) error {
	var v validator
	if c.Schema != ComparisonSchemaV1 {
		v.addf("schema is %q, want %q", c.Schema, ComparisonSchemaV1)
	}
	if !c.Verdict.Valid() {
		v.addf("verdict %q is not one of regression, incomplete, unproven, improvement, unchanged, inconclusive, not_comparable", c.Verdict)
	}
	s := c.Settings
	if !(s.FDR > 0 && s.FDR < 1) {
		v.addf("settings.fdr %v is not in (0, 1)", s.FDR)
	}
	if s.Look != 1 && s.Look != 2 {
		v.addf("settings.look %d is not 1 or 2", s.Look)
	}
	for i, m := range s.Metrics {
		if !knownMetric(m.Metric) {
			v.addf("settings.metrics[%d]: unknown metric %q", i, m.Metric)
		}
		finite(&v, fmt.Sprintf("settings.metrics[%d].delta", i), m.Delta)
	}
	for _, f := range []struct {
		name string
		x    float64
	}{{"settings.level", s.Level}, {"settings.equivalence_alpha", s.EquivalenceAlpha}, {"settings.power", s.Power}, {"settings.confidence_level", s.ConfidenceLevel}} {
		finite(&v, f.name, f.x)
	}
	for _, side := range []struct {
		name string
		r    ComparedRun
	}{{"base", c.Base}, {"head", c.Head}} {
		if !validTimeScale(side.r.TimeScale) {
			v.addf("%s.time_scale is %v; want a positive number", side.name, side.r.TimeScale)
		}
	}
	seen := map[string]bool{}
	for i, cell := range c.Cells {
		where := fmt.Sprintf("cells[%d] (%s)", i, cell.Cell)
		id, err := ParseCellID(cell.Cell)
		if err != nil {
			v.addf("cells[%d]: %v", i, err)
		} else if id.String() != cell.Cell || id.Phase != cell.Phase || id.ContextLabel != cell.ContextLabel || id.Concurrency != cell.Concurrency {
			v.addf("%s: cell, phase, context_label and concurrency disagree", where)
		}
		if seen[cell.Cell] {
			v.addf("%s: cell listed twice", where)
		}
		seen[cell.Cell] = true
		if !cell.Verdict.Valid() {
			v.addf("%s: verdict %q is not a verdict", where, cell.Verdict)
		}
		for j, m := range cell.Metrics {
			mw := fmt.Sprintf("%s metrics[%d]", where, j)
			if !knownMetric(m.Metric) {
				v.addf("%s: unknown metric %q", mw, m.Metric)
			}
			if !m.Verdict.Valid() {
				v.addf("%s: verdict %q is not a verdict", mw, m.Verdict)
			}
			for _, p := range []struct {
				name string
				x    *float64
			}{{"base", m.Base}, {"head", m.Head}, {"p", m.P}, {"q", m.Q}, {"rank_p", m.RankP}, {"tost_p", m.TOSTP}, {"mdc", m.MDC}} {
				if p.x != nil {
					finite(&v, mw+"."+p.name, *p.x)
				}
			}
			for _, p := range []struct {
				name string
				x    *float64
			}{{"p", m.P}, {"q", m.Q}, {"rank_p", m.RankP}, {"tost_p", m.TOSTP}} {
				if p.x != nil && (*p.x < 0 || *p.x > 1) {
					v.addf("%s.%s %v is not a probability", mw, p.name, *p.x)
				}
			}
			if m.Change != nil {
				changeOK(&v, mw+".change", m.Change)
				if m.BaseRun != nil && m.Base != nil && m.Head != nil && *m.Base > 0 {
					if d := *m.Head / *m.Base - 1 - m.Change.Change; math.Abs(d) > 0.005 {
						v.addf("%s: change %v is not head/base − 1 = %v of the numbers it shows", mw, m.Change.Change, *m.Head / *m.Base - 1)
					}
				}
			}
			switch m.BaseFrom {
			case "", BaseFromHistory, BaseFromRuns:
			default:
				v.addf("%s.base_from %q is not history or runs", mw, m.BaseFrom)
			}
			if m.Noise != nil {
				switch m.Noise.Source {
				case NoiseTrials, NoiseHistory, NoiseWithin, NoisePrior, NoiseMeasured, NoisePaired:
				default:
					v.addf("%s.noise.source %q is not trials, history, within+prior, prior, measured or paired", mw, m.Noise.Source)
				}
				switch m.Noise.PriorReason {
				case "", PriorSummaryOnly, PriorFewSamples, PriorNoWithin, PriorPrefill, PriorNoSpread, PriorCounters:
				default:
					v.addf("%s.noise.prior_reason %q is not one of %s, %s, %s, %s, %s, %s", mw, m.Noise.PriorReason,
						PriorSummaryOnly, PriorFewSamples, PriorNoWithin, PriorPrefill, PriorNoSpread, PriorCounters)
				}
				finite(&v, mw+".noise.cv", m.Noise.CV)
				if m.Noise.Scale != nil {
					finite(&v, mw+".noise.scale", *m.Noise.Scale)
				}
			}
		}
	}
	if g := c.Summary.DecodeTotalGeomean; g != nil {
		changeOK(&v, "summary.decode_total_geomean", g)
	}
	for i, r := range c.Rows {
		for _, x := range []float64{r.Effect, r.Low, r.High, r.DF, r.P, r.Q} {
			finite(&v, fmt.Sprintf("rows[%d]", i), x)
		}
		if r.Low > r.High {
			v.addf("rows[%d]: low %v above high %v", i, r.Low, r.High)
		}
	}
	if r := c.Rerun; r != nil {
		for i, row := range r.Rows {
			for _, s := range strings.Split(row.Cells, ",") {
				if _, err := ParseCellID(s); err != nil {
					v.addf("rerun.rows[%d].cells: %v", i, err)
				}
			}
		}
		for i, it := range r.Items {
			if _, err := ParseCellID(it.Cell); err != nil {
				v.addf("rerun.items[%d]: %v", i, err)
			}
		}
		for i, it := range r.Undecidable {
			if _, err := ParseCellID(it.Cell); err != nil {
				v.addf("rerun.undecidable[%d]: %v", i, err)
			}
		}
		if r.Cells != "" {
			for _, s := range strings.Split(r.Cells, ",") {
				if _, err := ParseCellID(s); err != nil {
					v.addf("rerun.cells: %v", err)
				}
			}
		}
	}
	if len(v.problems) > 0 {
		return &ValidationError{File: "comparison", Problems: v.problems}
	}
	return nil
}

func finite(v *validator, name string, x float64) {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		v.addf("%s is %v; write null for a number that does not exist", name, x)
	}
}

func changeOK(v *validator, name string, c *Change) {
	finite(v, name+".change", c.Change)
	finite(v, name+".low", c.Low)
	finite(v, name+".high", c.High)
	if c.Change <= -1 || c.Low <= -1 {
		v.addf("%s: a relative change must be above −100%%", name)
	}
	if c.Low > c.High {
		v.addf("%s: low %v above high %v", name, c.Low, c.High)
	}
}

// DecodeComparison reads one comparison document from data, strictly (unknown fields and
// trailing data are errors), and validates it.
// A comparison written before MetricComparison.BaseRun existed is upgraded (SetReferences).
func DecodeComparison(data []byte) (*Comparison, error) {
	c, err := decodeDoc(data, "comparison", ValidateComparison)
	if err != nil {
		return nil, err
	}
	c.SetReferences()
	return c, nil
}

// ReadComparison reads and validates a comparison from r.
func ReadComparison(r io.Reader) (*Comparison, error) {
	return readDoc(r, "comparison", DecodeComparison)
}

// ReadComparisonFile reads and validates the comparison file at path.
func ReadComparisonFile(path string) (*Comparison, error) {
	return readDocFile(path, ReadComparison)
}

// EncodeComparison validates c and returns its canonical JSON (two-space indent, a final
// newline).
func EncodeComparison(c *Comparison) ([]byte, error) { return encodeDoc(c, ValidateComparison) }

// WriteComparison writes c's canonical JSON to w.
func WriteComparison(w io.Writer, c *Comparison) error { return writeDoc(w, c, EncodeComparison) }

// WriteComparisonFile writes c to path in a folder speedmatrix keeps, as WriteFileAtomic
// writes (temporary file, sync, rename; a link or non-regular file at path refused).
func WriteComparisonFile(path string, c *Comparison) error {
	return writeDocFile(path, c, EncodeComparison, WriteFileAtomic)
}

// WriteComparisonOutput writes c to path, a file the user named, as WriteOutput writes.
func WriteComparisonOutput(path string, c *Comparison) error {
	return writeDocFile(path, c, EncodeComparison, WriteOutput)
}

// DecidingMetric is the metric a cell of phase p is decided on: decode total tok/s, prefill
// prompt tok/s. Its other metrics are notes: compared and shown, never a verdict of their own.
func DecidingMetric(p Phase) Metric {
	if p == PhasePrefill {
		return MetricPromptTokPerS
	}
	return MetricTotalTokPerS
}

// Kinds of GroupComparison.
const (
	GroupRow    = "row"    // the cells of one decode context row, within their runs
	GroupColumn = "column" // the cells of one decode concurrency, within their runs
	GroupPhase  = "phase"  // every cell of one phase, within their runs
	GroupShift  = "shift"  // the whole phase's shift between runs (the run factor)
)

// GroupComparison is one test of a group of cells' deciding metric.
type GroupComparison struct {
	Kind         string   `json:"kind"`
	Phase        Phase    `json:"phase"`
	ContextLabel string   `json:"context_label,omitempty"`
	Concurrency  int      `json:"concurrency,omitempty"`
	Cells        []string `json:"cells"`
	// Change is the group's mean whole change (head/base − 1) over its cells, worse or better as
	// the metric goes; Z its test statistic, positive when worse.
	Change float64 `json:"change"`
	Z      float64 `json:"z"`
	// Low and High are the confidence interval of Change (at the comparison's level): the
	// cells' within-run changes taken as independent, the phase's shift between runs shared by
	// all of them. Zero in files written before they existed.
	Low  float64 `json:"low,omitempty"`
	High float64 `json:"high,omitempty"`
	// Level is the confidence of Low … High where it is not the comparison's: a group whose
	// interval lies wholly slower than δ at the comparison's level but not at the groups'
	// (the level it is judged at) shows the latter (as Change.Level). 0: the comparison's.
	Level float64 `json:"level,omitempty"`
	// DF is the degrees of freedom of that interval (Student's t); 0: the normal.
	DF float64 `json:"df,omitempty"`
	P  float64 `json:"p"`
	Q  float64 `json:"q"`
	// Verdict is regression or improvement when the group decided, else inconclusive.
	Verdict Verdict `json:"verdict"`
	Reason  string  `json:"reason,omitempty"`
}

// Name returns how the group is called in text: "row 32K", "concurrency 8", "decode", "decode shift".
func (g GroupComparison) Name() string {
	switch g.Kind {
	case GroupRow:
		return "row " + g.ContextLabel
	case GroupColumn:
		return fmt.Sprintf("concurrency %d", g.Concurrency)
	case GroupShift:
		return string(g.Phase) + " shift between runs"
	}
	return "all " + string(g.Phase) + " cells"
}
