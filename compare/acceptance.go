package compare

import (
	"fmt"
	"math"
	"strconv"

	"github.com/speedmatrix/speedmatrix/results"
)

// Speculative acceptance as a metric.
//
// results.MetricSpecAcceptance, the mean tokens per draft step (1 + accepted ÷ drafts from the
// server's spec-decode counters over the window), is compared in a decode cell where either
// side measured it, like any metric: on the log scale, higher is better (a drop is a
// regression), in the same Benjamini–Hochberg family, with δ = DefaultAcceptanceDelta. It is
// the length, not the rate (accepted ÷ drafted), because tokens per step is what decode speed
// scales with at low concurrency (a 3 % shorter acceptance is about 3 % slower decode there) and
// what a pinned server is pinned to (synthetic_acceptance_length). It is not part of the row
// tests (a row's score pools its speed metrics) nor of Metrics(phase), so a matrix without
// speculative decoding compares exactly as before.
//
// Source: a pinned run's matrix shows only its pinned length, so its acceptance is taken from
// its acceptance pass (results.File.AcceptanceCell); an unpinned run's from its own cells. A
// cell whose pass did not measure it has no acceptance on that side: not comparable, never a
// lost number (a missing counter says nothing about the engine).
//
// Noise: one window's acceptance is one ratio of counters, so a single run has no within-run
// estimate; trials and history measure it as for the other metrics, else the prior
// Prior.SpecAcceptance applies (DefaultAcceptancePrior).

// DefaultAcceptanceDelta is the practical floor of speculative acceptance length: 3 %, the
// floor of decode throughput, since at low concurrency tokens per step is decode speed.
const DefaultAcceptanceDelta = 0.03

// DefaultAcceptancePrior is the run-to-run CV of a window's mean acceptance length by
// concurrency: 20 % up to concurrency 2, 7.5 % at 4, 1 % from 8. With speculative decoding,
// vLLM's decode throughput varies run to run by CV ≈ 10 % at concurrency 1, 20 % at 2, 7.5 % at
// 4 and 0.5 % at 8 and above, and that spread is the acceptance rate changing from run to run
// (vllm-project/vllm issue 53436). At low concurrency a step's time hardly depends on how many
// drafts it accepts, so tokens per step varies as much as throughput does: the prior takes
// those figures, at the upper end (20 % for concurrency 1 and 2, as the decode-rate prior does
// at 1), and never below 1 %.
func DefaultAcceptancePrior() []ConcurrencyCV {
	return []ConcurrencyCV{{UpTo: 2, CV: 0.20}, {UpTo: 4, CV: 0.075}, {UpTo: 0, CV: 0.01}}
}

// acceptanceCV returns the prior CV of acceptance length at concurrency c.
func (p Prior) acceptanceCV(c int) float64 {
	l := p.SpecAcceptance
	if len(l) == 0 {
		l = DefaultAcceptancePrior()
	}
	for _, e := range l {
		if e.UpTo == 0 || c <= e.UpTo {
			return e.CV
		}
	}
	return 0
}

// withAcceptanceDefaults returns th with the acceptance floor set where its Delta lacks it.
func withAcceptanceDefaults(th Thresholds) Thresholds {
	if _, ok := th.Delta[results.MetricSpecAcceptance]; ok {
		return th
	}
	d := make(map[results.Metric]float64, len(th.Delta)+1)
	for k, v := range th.Delta {
		d[k] = v
	}
	d[results.MetricSpecAcceptance] = DefaultAcceptanceDelta
	th.Delta = d
	return th
}

// cellMetrics returns the metrics compared in cell id: the phase's, and speculative acceptance
// for a decode cell where either side measured it.
func cellMetrics(id results.CellID, b, h *sideData) []results.Metric {
	ms := results.Metrics(id.Phase)
	if id.Phase == results.PhaseDecode && (len(b.acceptanceSample().logs) > 0 || len(h.acceptanceSample().logs) > 0) {
		ms = append(ms[:len(ms):len(ms)], results.MetricSpecAcceptance)
	}
	return ms
}

// attachAcceptance gives every decode cell of one side the cells that hold its acceptance, one
// per file of the side (results.File.AcceptanceCell).
func attachAcceptance(side map[results.CellID]*sideData, files []*results.File) {
	for id, s := range side {
		if id.Phase != results.PhaseDecode {
			continue
		}
		s.accept = nil
		for _, f := range files {
			if c := f.AcceptanceCell(id); c != nil {
				s.accept = append(s.accept, c)
			}
		}
	}
}

// acceptanceOf returns a window's acceptance length, or nil.
func acceptanceOf(m *results.DecodeMetrics) *float64 {
	if m.Telemetry == nil {
		return nil
	}
	return m.Telemetry.SpecAcceptanceLength
}

// acceptanceLogs returns the log acceptance lengths of a cell's trials, or of its summary when
// no trial holds one.
func acceptanceLogs(c *results.DecodeCell) []float64 {
	var out []float64
	for i := range c.Trials {
		if l, ok := logOf(acceptanceOf(&c.Trials[i].DecodeMetrics)); ok {
			out = append(out, l)
		}
	}
	if len(out) == 0 {
		if l, ok := logOf(acceptanceOf(&c.DecodeMetrics)); ok {
			out = append(out, l)
		}
	}
	return out
}

// acceptanceSample is sample for MetricSpecAcceptance: the side's acceptance cells pooled, no
// within-run estimate; one window's sampling variance (acceptanceSamplingVar).
func (s *sideData) acceptanceSample() metricSample {
	out := metricSample{withinVar: math.NaN()}
	for _, c := range s.accept {
		out.logs = append(out.logs, acceptanceLogs(c)...)
	}
	if len(s.accept) == 1 {
		out.summary = acceptanceOf(&s.accept[0].DecodeMetrics)
	}
	if out.summary != nil && (math.IsNaN(*out.summary) || math.IsInf(*out.summary, 0)) {
		out.summary = nil
	}
	if out.summary == nil && len(out.logs) > 0 {
		v := math.Exp(meanOf(out.logs))
		out.summary = &v
	}
	if len(out.logs) == 1 && len(s.accept) == 1 {
		out.samplingVar = acceptanceSamplingVar(s.accept[0])
	}
	return out
}

// acceptanceSamplingVar is the variance of the log of a window's mean acceptance length that its
// number of draft steps implies, 0 where the cell does not say enough: one window of cell c (its
// one trial, or its summary). Each draft step of a request emits L tokens, 1 ≤ L ≤ k + 1, drawn
// independently; the window's mean over N steps has variance Var(L)/N, its log Var(L)/(N·μ²).
// N is the window's output tokens ÷ μ, k the draft tokens per step (μ − 1 accepted of
// spec_acceptance_pct % of them), and Var(L) that of the geometric acceptance with mean μ: each
// further draft position accepted with probability α given the one before, the shape vLLM's
// per-position acceptance counters show and the simulator draws from (acceptanceVar).
func acceptanceSamplingVar(c *results.DecodeCell) float64 {
	m := &c.DecodeMetrics
	if len(c.Trials) == 1 {
		m = &c.Trials[0].DecodeMetrics
	}
	if m.Telemetry == nil || m.Telemetry.SpecAcceptanceLength == nil || m.Telemetry.SpecAcceptancePct == nil || m.OutputTokens == nil {
		return 0
	}
	mu, pct, tokens := *m.Telemetry.SpecAcceptanceLength, *m.Telemetry.SpecAcceptancePct, float64(*m.OutputTokens)
	if !(mu > 1) || !(pct > 0) || !(tokens > 0) {
		return 0
	}
	k := int(math.Round((mu - 1) / (pct / 100)))
	if k < 1 || mu >= float64(k+1) {
		return 0
	}
	steps := tokens / mu
	return acceptanceVar(k, mu) / (steps * mu * mu)
}

// acceptanceVar is Var(L) of the tokens a draft step of k draft tokens emits, L = 1 + the
// accepted ones, under geometric acceptance (position i accepted with probability α^i: a
// position is reached only if the one before was accepted) with mean μ: with I_i accepted at
// position i, I_i·I_j = I_max(i,j), so Var(L) = Σ_{i,j} α^max(i,j) − (μ − 1)².
func acceptanceVar(k int, mu float64) float64 {
	mean := func(a float64) float64 {
		s, p := 0.0, 1.0
		for range k {
			p *= a
			s += p
		}
		return s
	}
	lo, hi := 0.0, 1.0
	for range 60 { // bisection: mean rises with α from 0 to k
		mid := (lo + hi) / 2
		if mean(mid) < mu-1 {
			lo = mid
		} else {
			hi = mid
		}
	}
	a := (lo + hi) / 2
	var s float64
	p := 1.0
	for m := 1; m <= k; m++ {
		p *= a
		s += p * float64(2*m-1)
	}
	return max(0, s-(mu-1)*(mu-1))
}

// acceptanceTested reports whether any cell compared speculative acceptance.
func acceptanceTested(cells []results.CellComparison) bool {
	for _, c := range cells {
		for _, m := range c.Metrics {
			if m.Metric == results.MetricSpecAcceptance {
				return true
			}
		}
	}
	return false
}

// pinWarnings says when base and head served speculative decoding differently (one pinned, or
// pinned at different lengths): their decode speeds at low concurrency then differ by how much
// each accepted, not only by the engine.
func pinWarnings(b, h *results.File) []string {
	desc := func(f *results.File) string {
		if f.Pinned() {
			return fmt.Sprintf("pinned at %s tokens per draft step", strconv.FormatFloat(f.SpecDecode.PinnedAcceptanceLength, 'f', -1, 64))
		}
		return "as launched"
	}
	if b.Pinned() == h.Pinned() && (!b.Pinned() || b.SpecDecode.PinnedAcceptanceLength == h.SpecDecode.PinnedAcceptanceLength) {
		return nil
	}
	return []string{fmt.Sprintf("speculative decoding was served differently (base %s, head %s): decode speed at low concurrency differs by acceptance as well as by the engine; compare runs served alike, or set spec_decode.acceptance_length so that both pin the same length", desc(b), desc(h))}
}
