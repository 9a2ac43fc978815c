package compare

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/speedmatrix/speedmatrix/compare/stats"
	"github.com/speedmatrix/speedmatrix/results"
)

// Thresholds are the tunables of a comparison. Start from DefaultThresholds and change fields;
// new knobs are added here so that signatures never change.
type Thresholds struct {
	// Delta is the practical floor δ per metric, as a fraction (0.03 = 3 %). A change within
	// ±δ does not matter; "regression" needs the estimate beyond δ.
	Delta map[results.Metric]float64
	// MinimumEffect tests "the change lies beyond ±δ" (H0: |change| ≤ δ) instead of "the change
	// is not zero" (H0: change = 0, and the estimate must then lie beyond δ).
	MinimumEffect bool
	// FDR is the Benjamini–Hochberg false discovery rate q over the whole family of cell-metrics,
	// both looks together.
	FDR float64
	// FalseAlarm is the whole-matrix false-alarm rate the levels must also keep: the share of
	// comparisons of two runs of the same server (A/A) with any regression verdict. Under that
	// global null BH rejects anything with probability at most its level (Simes; also under the
	// positive dependence of metrics and looks), and a regression verdict is a rejection, so both
	// looks together spend min(FDR, FalseAlarm) (0 turns the cap off). With noise that is measured (history,
	// trials) the tests are exact and this cap is what keeps A/A at FalseAlarm; with the
	// conservative prior it costs a little power.
	FalseAlarm float64
	// Spending splits FDR between a first comparison and a second look after reruns.
	Spending stats.Spending
	// PlannedFraction is the first look's share of the information the two-look plan assumes
	// (1/2: the rerun at least doubles the trials).
	PlannedFraction float64
	// Look is 1 for a first comparison, 2 for the comparison of the pooled trials after the
	// rerun the advice asked for.
	Look int
	// EquivalenceAlpha is the level of the TOST that shows a cell-metric unchanged within ±δ.
	EquivalenceAlpha float64
	// Power is the power the minimal detectable change and the rerun advice aim at.
	Power float64
	// ConfidenceLevel is the level of the reported intervals.
	ConfidenceLevel float64
	// Prior is the run-to-run noise assumed where the data cannot tell.
	Prior Prior
	// MinHistory is how many earlier base results a cell needs for history noise (default 3,
	// the fewest that give a variance with 2 degrees of freedom, for a caller that asked for
	// history; the bot, which uses it unasked, sets store.min_history, default 10: with fewer
	// the first look detects less than with the prior).
	MinHistory int
	// MinRankTrials is how many trials each side needs before the Mann–Whitney test is run as a
	// check on a decision.
	MinRankTrials int
	// MaxFurtherTrials caps the rerun advice; cells that need more are called undecidable.
	MaxFurtherTrials int
	// MaxRowTrials caps the further runs per side of a whole decode row that no cell of its own
	// decides (the row test's rerun); 0 turns the row rerun off.
	MaxRowTrials int
	// HeadOnlyReruns says that a rerun measures the head alone against the base's runs as they
	// are (the adaptive job, whose base is stored): the advice then asks for head trials that
	// solve var_b/n_b + var_h/(n_h + k) ≤ target with n_b fixed, and calls a cell the base's
	// runs keep undecided results.UndecidableNeedsBase. False: both sides are measured again.
	HeadOnlyReruns bool
}

// Prior is the configured run-to-run noise: coefficients of variation of one run's value of a
// cell-metric.
type Prior struct {
	// Prefill is the CV of prefill prompt tok/s and TTFT (one request per cell).
	Prefill float64
	// DecodeTTFT is the CV of a decode cell's median TTFT.
	DecodeTTFT float64
	// DecodeRate lists the CV of decode total tok/s, per-request tok/s and time between tokens by
	// concurrency: the first entry whose UpTo is at least the cell's concurrency applies.
	DecodeRate []ConcurrencyCV
	// SpecDecodeRate replaces DecodeRate where a side served speculative decoding unpinned, or
	// cannot tell (specprior.go; empty: DefaultSpecDecodeRatePrior).
	SpecDecodeRate []ConcurrencyCV
	// SpecAcceptance lists the CV of speculative acceptance length by concurrency (empty:
	// DefaultAcceptancePrior).
	SpecAcceptance []ConcurrencyCV
}

// ConcurrencyCV is a CV for concurrency levels up to UpTo (0 = any).
type ConcurrencyCV struct {
	UpTo int
	CV   float64
}

// DefaultPrior is the prior from the published run-to-run noise of LLM serving (each figure and
// its source: docs/noise.md), taken at the upper end of each range so that it
// errs towards "inconclusive": decode at concurrency 1 varies 10–20 % (prior 20 %), at
// concurrency ≥ 8 under 1 % (prior 1 %), with 10 % at 2 and 5 % at 4 between; with speculative
// decoding unpinned or unknown, 24 % at 2 and 9 % at 4 (DefaultSpecDecodeRatePrior); median
// TTFT on light load varies 10–20 % (prior 20 %); a single prefill request 5 %.
func DefaultPrior() Prior {
	return Prior{
		Prefill:        0.05,
		DecodeTTFT:     0.20,
		DecodeRate:     []ConcurrencyCV{{UpTo: 1, CV: 0.20}, {UpTo: 2, CV: 0.10}, {UpTo: 4, CV: 0.05}, {UpTo: 0, CV: 0.01}},
		SpecDecodeRate: DefaultSpecDecodeRatePrior(),
		SpecAcceptance: DefaultAcceptancePrior(),
	}
}

// CV returns the prior CV of metric m in cell id.
func (p Prior) CV(id results.CellID, m results.Metric) float64 {
	if id.Phase == results.PhasePrefill {
		return p.Prefill
	}
	if m == results.MetricTTFT {
		return p.DecodeTTFT
	}
	if m == results.MetricSpecAcceptance {
		return p.acceptanceCV(id.Concurrency)
	}
	for _, e := range p.DecodeRate {
		if e.UpTo == 0 || id.Concurrency <= e.UpTo {
			return e.CV
		}
	}
	return 0
}

// DefaultThresholds returns the documented defaults: δ = 3 % for throughput (prompt tok/s,
// total tok/s, per-request tok/s) and 5 % for latency (TTFT, time between tokens); q = 0.05 and
// a whole-matrix false-alarm rate of 1 %, so that both looks spend min(0.05, 0.01) = 0.01, split
// by Pocock-type spending at t = 1/2 (0.0062 at the first look, 0.0038 at the second); TOST at
// 5 %; power 80 %; 95 % intervals; the DefaultPrior; history from 3 earlier runs; the rank check
// from 4 trials a side; at most 20 further trials a cell and 80 further runs of a whole row.
func DefaultThresholds() Thresholds {
	return Thresholds{
		Delta: map[results.Metric]float64{
			results.MetricPromptTokPerS:     0.03,
			results.MetricTotalTokPerS:      0.03,
			results.MetricPerRequestTokPerS: 0.03,
			results.MetricTTFT:              0.05,
			results.MetricTBT:               0.05,
			results.MetricSpecAcceptance:    DefaultAcceptanceDelta,
		},
		FDR:              0.05,
		FalseAlarm:       0.01,
		Spending:         stats.SpendPocock,
		PlannedFraction:  0.5,
		Look:             1,
		EquivalenceAlpha: 0.05,
		Power:            0.80,
		ConfidenceLevel:  0.95,
		Prior:            DefaultPrior(),
		MinHistory:       3,
		MinRankTrials:    4,
		MaxFurtherTrials: 20,
		MaxRowTrials:     80,
	}
}

// check reports the first setting that makes no sense.
func (t Thresholds) check() error {
	for _, m := range allMetrics {
		d, ok := t.Delta[m]
		if !ok || !(d > 0 && d < 1) {
			return fmt.Errorf("threshold for %s is %v; want a fraction in (0, 1)", m, d)
		}
	}
	switch {
	case !(t.FDR > 0 && t.FDR < 1):
		return fmt.Errorf("FDR q %v is not in (0, 1)", t.FDR)
	case !(t.FalseAlarm >= 0 && t.FalseAlarm < 0.5):
		return fmt.Errorf("false-alarm rate %v is not in [0, 0.5)", t.FalseAlarm)
	case t.Look != 1 && t.Look != 2:
		return fmt.Errorf("look %d is not 1 or 2", t.Look)
	case !(t.EquivalenceAlpha > 0 && t.EquivalenceAlpha < 0.5):
		return fmt.Errorf("equivalence alpha %v is not in (0, 0.5)", t.EquivalenceAlpha)
	case !(t.Power > 0.5 && t.Power < 1):
		return fmt.Errorf("power %v is not in (0.5, 1)", t.Power)
	case !(t.ConfidenceLevel > 0.5 && t.ConfidenceLevel < 1):
		return fmt.Errorf("confidence level %v is not in (0.5, 1)", t.ConfidenceLevel)
	case !(t.PlannedFraction > 0 && t.PlannedFraction < 1):
		return fmt.Errorf("planned information fraction %v is not in (0, 1)", t.PlannedFraction)
	}
	return nil
}

var allMetrics = []results.Metric{results.MetricPromptTokPerS, results.MetricTotalTokPerS, results.MetricPerRequestTokPerS, results.MetricTTFT, results.MetricTBT}

// metricAliases maps the names --threshold accepts to the metrics they set.
var metricAliases = map[string][]results.Metric{
	"prompt_tok_per_s":       {results.MetricPromptTokPerS},
	"prompt":                 {results.MetricPromptTokPerS},
	"total_tok_per_s":        {results.MetricTotalTokPerS},
	"total":                  {results.MetricTotalTokPerS},
	"per_request_tok_per_s":  {results.MetricPerRequestTokPerS},
	"per_request":            {results.MetricPerRequestTokPerS},
	"ttft_ms":                {results.MetricTTFT},
	"ttft":                   {results.MetricTTFT},
	"tbt_ms":                 {results.MetricTBT},
	"tbt":                    {results.MetricTBT},
	"throughput":             {results.MetricPromptTokPerS, results.MetricTotalTokPerS, results.MetricPerRequestTokPerS},
	"latency":                {results.MetricTTFT, results.MetricTBT},
	"spec_acceptance_length": {results.MetricSpecAcceptance},
	"acceptance":             {results.MetricSpecAcceptance},
	"all":                    allMetrics,
}

// MetricNames returns the names SetThreshold accepts, sorted.
func MetricNames() []string {
	names := make([]string, 0, len(metricAliases))
	for n := range metricAliases {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// ParseThreshold reads one --threshold argument, "METRIC=PCT" (e.g. "total_tok_per_s=2.5",
// "latency=8%", "ttft=10"), and returns the metrics it names and δ as a fraction.
func ParseThreshold(s string) ([]results.Metric, float64, error) {
	name, pct, ok := strings.Cut(s, "=")
	name = strings.ToLower(strings.TrimSpace(name))
	if !ok || name == "" {
		return nil, 0, fmt.Errorf("threshold %q: want METRIC=PERCENT, e.g. total_tok_per_s=3 or latency=5%%", s)
	}
	ms, known := metricAliases[name]
	if !known {
		return nil, 0, fmt.Errorf("threshold %q: unknown metric %q (known: %s)", s, name, strings.Join(MetricNames(), ", "))
	}
	pct = strings.TrimSuffix(strings.TrimSpace(pct), "%")
	v, err := strconv.ParseFloat(strings.TrimSpace(pct), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return nil, 0, fmt.Errorf("threshold %q: %q is not a percentage like 3 or 2.5%%", s, pct)
	}
	if v <= 0 || v >= 100 {
		return nil, 0, fmt.Errorf("threshold %q: %v%% is not between 0 and 100 (exclusive)", s, v)
	}
	return ms, v / 100, nil
}

// SetThreshold applies one --threshold argument to t.
func (t *Thresholds) SetThreshold(s string) error {
	ms, d, err := ParseThreshold(s)
	if err != nil {
		return err
	}
	delta := make(map[results.Metric]float64, len(t.Delta))
	for k, v := range t.Delta {
		delta[k] = v
	}
	for _, m := range ms {
		delta[m] = d
	}
	t.Delta = delta
	return nil
}

// Plan returns the two-look plan the thresholds define.
func (t Thresholds) Plan() (stats.TwoLook, error) {
	return t.plan()
}

// plan computes the look-1 level from the spending function at the planned fraction, and the
// look-2 level for independent looks (the conservative case: the second look's pooled data is
// correlated with the first by √t1, which only lowers the error the second look adds).
func (t Thresholds) plan() (stats.TwoLook, error) {
	total := t.Budget()
	a1, err := t.Spending.Spent(total, t.PlannedFraction)
	if err != nil {
		return stats.TwoLook{}, err
	}
	c1 := stats.NormalQuantile(1 - a1/2)
	// Independent looks: (1 − a1)·level2 = total − a1.
	level2 := (total - a1) / (1 - a1)
	return stats.TwoLook{Alpha: total, C1: c1, C2: stats.NormalQuantile(1 - level2/2), Level1: a1, Level2: level2}, nil
}

// Budget returns the level both looks spend together: min(FDR, FalseAlarm), or FDR when
// FalseAlarm is 0.
func (t Thresholds) Budget() float64 {
	if t.FalseAlarm > 0 && t.FalseAlarm < t.FDR {
		return t.FalseAlarm
	}
	return t.FDR
}
