package results

import (
	"github.com/speedmatrix/speedmatrix/internal/quantile"
)

// Summarize sets a measured prefill cell's summary from its trials, as the runner derives it and
// Validate checks it: TTFT and prompt tok/s are the medians of the trials', prompt tokens the
// first trial's, completed requests the number of trials. A cell without trials is left as it is.
func (c *PrefillCell) Summarize() {
	if len(c.Trials) == 0 {
		return
	}
	var ttfts, rates []float64
	for _, t := range c.Trials {
		ttfts = append(ttfts, t.TTFTMs)
		rates = append(rates, t.PromptTokPerS)
	}
	c.TTFTMs, c.PromptTokPerS = medianPtr(ttfts), medianPtr(rates)
	c.PromptTokens = ptr(c.Trials[0].PromptTokens)
	c.CompletedRequests = ptr(len(c.Trials))
}

// SummarizeDecode returns the summary of a decode cell's trials, as the runner derives it and
// Validate checks it: one trial's own numbers; for several, tokens and seconds add up (total
// tok/s is their ratio), latencies are medians over the pooled requests (TTFT over the trials'
// where no trial's requests had one), average active is the mean over trials weighted by their
// length, and the telemetry is combined (combineTelemetry).
func SummarizeDecode(trials []DecodeTrial) DecodeMetrics {
	if len(trials) == 1 {
		return trials[0].DecodeMetrics
	}
	var (
		tokens, completed    int
		seconds, activeSum   float64
		activeW              float64
		ttfts, tbts, rates   []float64
		queues, gaps         []float64
		hasActive, hasChunks bool
	)
	for _, t := range trials {
		m := t.DecodeMetrics
		tokens += deref(m.OutputTokens)
		completed += deref(m.CompletedRequests)
		seconds += t.WindowSeconds
		if m.AvgActiveRequests != nil {
			activeSum += *m.AvgActiveRequests * t.WindowSeconds
			activeW += t.WindowSeconds
			hasActive = true
		}
		if m.InterChunkMs != nil {
			gaps = append(gaps, *m.InterChunkMs)
			hasChunks = true
		}
		for _, r := range t.Requests {
			if r.TTFTMs != nil {
				ttfts = append(ttfts, *r.TTFTMs)
			}
			if r.TBTMs != nil {
				tbts = append(tbts, *r.TBTMs)
				rates = append(rates, 1000 / *r.TBTMs)
			}
			queues = append(queues, r.ClientQueueMs)
		}
	}
	m := DecodeMetrics{
		TotalTokPerS:      ptr(float64(tokens) / seconds),
		PerRequestTokPerS: medianPtr(rates),
		TTFTMs:            medianPtr(ttfts),
		TBTMs:             medianPtr(tbts),
		CompletedRequests: ptr(completed),
		OutputTokens:      ptr(tokens),
		MeasuredSeconds:   ptr(seconds),
		ClientQueueMs:     medianPtr(queues),
	}
	if m.TTFTMs == nil { // every trial took TTFT from the requests that opened its window
		var xs []float64
		for _, t := range trials {
			if t.TTFTMs != nil {
				xs = append(xs, *t.TTFTMs)
			}
		}
		m.TTFTMs = medianPtr(xs)
	}
	if hasActive && activeW > 0 {
		m.AvgActiveRequests = ptr(activeSum / activeW)
	}
	m.Telemetry = combineTelemetry(trials)
	if hasChunks {
		m.InterChunkMs = medianPtr(gaps)
	}
	return m
}

// combineTelemetry summarizes the trials' telemetry: maxima of the maxima, the sum of
// preemptions, the mean of the percentages and of the acceptance length.
func combineTelemetry(trials []DecodeTrial) *Telemetry {
	var out *Telemetry
	var hit, acc, length []float64
	for _, tr := range trials {
		t := tr.Telemetry
		if t == nil {
			continue
		}
		if out == nil {
			out = &Telemetry{Source: t.Source}
		}
		maxInto(&out.MaxRunning, t.MaxRunning)
		maxInto(&out.MaxWaiting, t.MaxWaiting)
		maxInto(&out.MaxKVCacheUsage, t.MaxKVCacheUsage)
		if t.Preemptions != nil {
			out.Preemptions = ptr(deref(out.Preemptions) + *t.Preemptions)
		}
		if t.PrefixCacheHitPct != nil {
			hit = append(hit, *t.PrefixCacheHitPct)
		}
		if t.SpecAcceptancePct != nil {
			acc = append(acc, *t.SpecAcceptancePct)
		}
		if t.SpecAcceptanceLength != nil {
			length = append(length, *t.SpecAcceptanceLength)
		}
	}
	if out != nil {
		out.PrefixCacheHitPct, out.SpecAcceptancePct, out.SpecAcceptanceLength = meanPtr(hit), meanPtr(acc), meanPtr(length)
	}
	return out
}

// maxInto sets *dst to the larger of *dst and *v (v nil: unchanged).
func maxInto(dst **float64, v *float64) {
	if v != nil && (*dst == nil || *v > **dst) {
		*dst = ptr(*v)
	}
}

// ptr returns a pointer to v.
func ptr[T any](v T) *T { return &v }

// deref returns *p, or the zero value for nil.
func deref[T any](p *T) T {
	if p == nil {
		var z T
		return z
	}
	return *p
}

// medianPtr returns the median of xs (the mean of the middle two for an even count), or nil for
// none.
func medianPtr(xs []float64) *float64 {
	if len(xs) == 0 {
		return nil
	}
	return ptr(quantile.Median(xs))
}

// meanPtr returns the mean of xs, or nil for none.
func meanPtr(xs []float64) *float64 {
	if len(xs) == 0 {
		return nil
	}
	var s float64
	for _, x := range xs {
		s += x
	}
	return ptr(s / float64(len(xs)))
}
