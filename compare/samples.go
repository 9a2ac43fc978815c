package compare

import (
	"math"

	"github.com/speedmatrix/speedmatrix/compare/stats"
	"github.com/speedmatrix/speedmatrix/internal/quantile"
	"github.com/speedmatrix/speedmatrix/results"
)

// medianEfficiency is π/2: the variance of a sample median of normal data over that of the mean.
// The within-run variance of a median over requests is the batch-means variance of the mean of
// the log values times this factor.
const medianEfficiency = math.Pi / 2

// minWithinDF is the fewest degrees of freedom a within-run estimate needs (five batches: 25
// bins or requests): fewer would make a noisy variance estimate with a huge t quantile.
const minWithinDF = 4

// sideData is what one side (one or more files pooled) holds for one cell.
type sideData struct {
	status  results.Status
	decode  *results.DecodeCell
	prefill *results.PrefillCell
	// file is the index of the first file among its side's files.
	file int
	// extra are this cell in further files of the same side, pooled with the first.
	extra []sideValueSource
	// accept are the cells holding this decode cell's speculative acceptance, one per file
	// (acceptance.go).
	accept []*results.DecodeCell
	// fx are the run factors of the side's files by file index (runeffect.go); nil: none.
	fx []map[results.Phase]float64
	// blocks says, by file index, that a file's trials are the blocks of a paired run.
	blocks []bool
}

// adj returns what to subtract from a log value of metric m read from file (runeffect.go).
func (s *sideData) adj(file int, m results.Metric) float64 {
	if file >= len(s.fx) {
		return 0
	}
	p := results.PhaseDecode
	if s.prefill != nil {
		p = results.PhasePrefill
	}
	return adjustment(s.fx[file], p, m)
}

// runs returns how many server lifetimes the side's values come from: one per file, or one per
// trial of a paired run's file (each of its blocks is served by its own server).
func (s *sideData) runs() int {
	n := 0
	count := func(file int, d *results.DecodeCell, p *results.PrefillCell) {
		if file < len(s.blocks) && s.blocks[file] {
			switch {
			case d != nil:
				n += max(1, len(d.Trials))
			case p != nil:
				n += max(1, len(p.Trials))
			}
			return
		}
		n++
	}
	seen := map[int]bool{s.file: true}
	count(s.file, s.decode, s.prefill)
	for _, e := range s.extra {
		if !seen[e.file] {
			seen[e.file] = true
			count(e.file, e.decode, e.prefill)
		}
	}
	return n
}

// sideValueSource is a cell from one more file of the same side.
type sideValueSource struct {
	decode  *results.DecodeCell
	prefill *results.PrefillCell
	file    int
}

// runKey names one run of a side: a file and a trial in it.
type runKey struct{ file, trial int }

// decodeRuns returns the log values of decode metric m by run (file and trial; trial 0 is the
// cell's summary when it kept no trials).
func (s *sideData) decodeRuns(m results.Metric) map[runKey]float64 {
	out := map[runKey]float64{}
	add := func(d *results.DecodeCell, file int) {
		if d == nil {
			return
		}
		n := 0
		a := s.adj(file, m)
		for i := range d.Trials {
			if l, ok := logOf(decodeTrialValue(&d.Trials[i], m)); ok {
				out[runKey{file, i}] = l - a
				n++
			}
		}
		if n == 0 {
			if l, ok := logOf(d.Value(m)); ok {
				out[runKey{file, 0}] = l - a
			}
		}
	}
	add(s.decode, s.file)
	for _, e := range s.extra {
		add(e.decode, e.file)
	}
	return out
}

// metricSample is one side's material for one metric.
type metricSample struct {
	// logs are the log values of the independent runs or trials (one per trial, or the cell's
	// summary when it kept no trials).
	logs []float64
	// withinVar is the within-run variance of the single run's log value (batch means), or
	// NaN when there is none.
	withinVar float64
	withinDF  float64
	// samplingVar is the variance of the single run's log value that its own sample size
	// implies (speculative acceptance: its window's draft steps, acceptance.go), 0 where none
	// is known. A history measures the run-to-run noise of runs of its own size; a run that
	// holds far fewer steps (a slowed head's window) is noisier than that, and this floors its
	// share of the noise.
	samplingVar float64
	// summary is the value reported for the side (the cell's own number, or the geometric mean
	// of pooled files).
	summary *float64
}

func logOf(p *float64) (float64, bool) {
	if p == nil || !(*p > 0) || math.IsInf(*p, 0) {
		return 0, false
	}
	return math.Log(*p), true
}

// decodeTrialValue returns the trial's value of m: its summary when set, else computed from its
// raw samples.
func decodeTrialValue(t *results.DecodeTrial, m results.Metric) *float64 {
	if v := t.Value(m); v != nil {
		return v
	}
	switch m {
	case results.MetricTotalTokPerS:
		if t.WindowSeconds > 0 && len(t.BinOutputTokens) > 0 {
			var sum int
			for _, b := range t.BinOutputTokens {
				sum += b
			}
			v := float64(sum) / t.WindowSeconds
			return &v
		}
	default:
		if xs := requestValues(t, m); len(xs) > 0 {
			v := quantile.Median(xs)
			return &v
		}
	}
	return nil
}

// requestValues returns the per-request values of a latency or per-request-rate metric.
func requestValues(t *results.DecodeTrial, m results.Metric) []float64 {
	var xs []float64
	for _, r := range t.Requests {
		switch m {
		case results.MetricTTFT:
			if r.TTFTMs != nil && *r.TTFTMs > 0 {
				xs = append(xs, *r.TTFTMs)
			}
		case results.MetricTBT:
			if r.TBTMs != nil && *r.TBTMs > 0 {
				xs = append(xs, *r.TBTMs)
			}
		case results.MetricPerRequestTokPerS:
			if r.TBTMs != nil && *r.TBTMs > 0 {
				xs = append(xs, 1000 / *r.TBTMs)
			}
		}
	}
	return xs
}

// withinNeeded is how many samples (requests, or full bins) a within-run estimate takes: five
// batches of five, minWithinDF + 1 batches.
const withinNeeded = (minWithinDF + 1) * (minWithinDF + 1)

// withinSamples returns how many samples of metric m one trial holds for a within-run estimate:
// its full output-token bins for total tok/s, its requests with a value for the others.
func withinSamples(t *results.DecodeTrial, m results.Metric) int {
	if m == results.MetricTotalTokPerS {
		if t.BinSeconds <= 0 {
			return 0
		}
		full := len(t.BinOutputTokens)
		if t.WindowSeconds > 0 {
			full = min(full, int(math.Floor(t.WindowSeconds/t.BinSeconds+1e-9)))
		}
		return full
	}
	return len(requestValues(t, m))
}

// priorReason says why this side offered nothing better than the prior for metric m (one of
// the results.Prior* constants), and for PriorFewSamples how many samples its window held. It is
// empty for a side whose own repetitions would have served had the other side had them too.
func (s *sideData) priorReason(m results.Metric) (string, int) {
	switch {
	case s.prefill != nil:
		if s.prefill.SummaryOnly || len(s.prefill.Trials) == 0 {
			return results.PriorSummaryOnly, 0
		}
		return results.PriorPrefill, 0
	case m == results.MetricSpecAcceptance:
		return results.PriorCounters, 0
	case s.decode != nil:
		d := s.decode
		if d.SummaryOnly || len(d.Trials) == 0 {
			return results.PriorSummaryOnly, 0
		}
		if len(d.Trials) == 1 && len(s.extra) == 0 {
			if n := withinSamples(&d.Trials[0], m); n < withinNeeded {
				return results.PriorFewSamples, n
			}
			return results.PriorNoWithin, 0
		}
	}
	return "", 0
}

// priorReason says why the prior alone set the noise of metric m of a cell (kb and kh runs on
// the two sides): identical repetitions, or the most telling reason of either side (too few raw
// samples before no estimate from them, before a prefill request, before no raw samples).
func priorReason(b, h *sideData, kb, kh int, m results.Metric) (string, *int) {
	if kb >= 2 && kh >= 2 {
		return results.PriorNoSpread, nil
	}
	rank := map[string]int{results.PriorSummaryOnly: 1, results.PriorPrefill: 2, results.PriorNoWithin: 3, results.PriorFewSamples: 4}
	reason, most := "", 0
	for _, s := range []*sideData{b, h} {
		r, n := s.priorReason(m)
		if r == results.PriorFewSamples {
			most = max(most, n)
		}
		if rank[r] > rank[reason] {
			reason = r
		}
	}
	if reason == results.PriorFewSamples {
		return reason, &most
	}
	return reason, nil
}

// within returns the within-run variance of the log value of metric m of one trial, from batch
// means: over the full output-token bins for total tok/s, over the requests (in the order the
// file lists them) for the per-request metrics.
func within(t *results.DecodeTrial, m results.Metric) (v, df float64, ok bool) {
	if m == results.MetricTotalTokPerS {
		full := withinSamples(t, m)
		if full < withinNeeded {
			return 0, 0, false
		}
		rates := make([]float64, full)
		for i := range full {
			rates[i] = float64(t.BinOutputTokens[i]) / t.BinSeconds
		}
		mean, vm, d, err := stats.BatchMeans(rates, 0)
		if err != nil || mean <= 0 || d < minWithinDF {
			return 0, 0, false
		}
		return vm / (mean * mean), float64(d), true
	}
	xs := requestValues(t, m) // withinSamples counts these
	if len(xs) < withinNeeded {
		return 0, 0, false
	}
	logs := make([]float64, len(xs))
	for i, x := range xs {
		logs[i] = math.Log(x)
	}
	_, vm, d, err := stats.BatchMeans(logs, 0)
	if err != nil || d < minWithinDF {
		return 0, 0, false
	}
	return vm * medianEfficiency, float64(d), true
}

// sample collects one side's material for metric m.
func (s *sideData) sample(m results.Metric) metricSample {
	if m == results.MetricSpecAcceptance {
		return s.acceptanceSample()
	}
	out := metricSample{withinVar: math.NaN()}
	add := func(d *results.DecodeCell, p *results.PrefillCell, file int) {
		a := s.adj(file, m)
		switch {
		case d != nil:
			n := 0
			for i := range d.Trials {
				if l, ok := logOf(decodeTrialValue(&d.Trials[i], m)); ok {
					out.logs = append(out.logs, l-a)
					n++
				}
			}
			if n == 0 {
				if l, ok := logOf(d.Value(m)); ok {
					out.logs = append(out.logs, l-a)
				}
			}
		case p != nil:
			n := 0
			for _, t := range p.Trials {
				v := t.TTFTMs
				if m == results.MetricPromptTokPerS {
					v = t.PromptTokPerS
				}
				if v > 0 {
					out.logs = append(out.logs, math.Log(v)-a)
					n++
				}
			}
			if n == 0 {
				if l, ok := logOf(p.Value(m)); ok {
					out.logs = append(out.logs, l-a)
				}
			}
		}
	}
	add(s.decode, s.prefill, s.file)
	for _, e := range s.extra {
		add(e.decode, e.prefill, e.file)
	}
	// The summary shown is the cell's own number for one file, else the pooled geometric mean.
	if len(s.extra) == 0 {
		if s.decode != nil {
			out.summary = s.decode.Value(m)
		} else if s.prefill != nil {
			out.summary = s.prefill.Value(m)
		}
	}
	if out.summary != nil && (math.IsNaN(*out.summary) || math.IsInf(*out.summary, 0)) {
		out.summary = nil // not a number a comparison file can hold
	}
	if out.summary == nil && len(out.logs) > 0 {
		v := math.Exp(meanOf(out.logs))
		out.summary = &v
	}
	// Within-run noise only describes a single trial.
	if len(out.logs) == 1 && len(s.extra) == 0 && s.decode != nil && len(s.decode.Trials) == 1 && !s.decode.SummaryOnly {
		if v, df, ok := within(&s.decode.Trials[0], m); ok {
			out.withinVar, out.withinDF = v, df
		}
	}
	return out
}

func meanOf(xs []float64) float64 {
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

func varianceOf(xs []float64) float64 {
	m := meanOf(xs)
	var s float64
	for _, x := range xs {
		s += (x - m) * (x - m)
	}
	return s / float64(len(xs)-1)
}
