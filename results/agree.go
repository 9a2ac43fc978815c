package results

import (
	"fmt"
	"math"

	"github.com/speedmatrix/speedmatrix/internal/quantile"
)

// A cell's summary numbers are derived from its trials, and a trial's from its raw samples, as the
// runner derives them (package bench's analyze for a trial; for a cell, summary.go:
// PrefillCell.Summarize and SummarizeDecode, which the runner and merge.Blocks call). The checks
// below recompute each derivation and reject a file in which they disagree, because the report
// renders the summaries while compare reads the trials: a file that contradicts itself would be
// shown as one thing and judged as another.
//
// Agreement is "within rounding": |a − b| ≤ max(agreeAbs, agreeRel·max(|a|, |b|)), so a summary
// rounded to a tenth (as reports print rates) or to four significant digits still agrees.
const (
	agreeRel = 1e-3
	agreeAbs = 0.05
)

// agree reports whether a and b are equal within rounding.
func agree(a, b float64) bool {
	return math.Abs(a-b) <= max(agreeAbs, agreeRel*max(math.Abs(a), math.Abs(b)))
}

// agreeF checks that a summary number p equals want (both present) within rounding; from says
// what want was derived from.
func (v *validator) agreeF(where, field string, p *float64, want float64, from string) {
	if p == nil || math.IsNaN(want) || math.IsInf(want, 0) {
		return
	}
	if !agree(*p, want) {
		v.addf("%s: %s is %.6g but %s gives %.6g; a summary must agree with what it summarizes", where, field, *p, from, want)
	}
}

// agreeN checks that a count p equals want (both present).
func (v *validator) agreeN(where, field string, p *int, want int, from string) {
	if p != nil && *p != want {
		v.addf("%s: %s is %d but %s gives %d; a summary must agree with what it summarizes", where, field, *p, from, want)
	}
}

// prefillAgrees checks a measured prefill cell's summary against its trials: TTFT and prompt
// tok/s are the medians of the trials', prompt tokens the first trial's, completed requests the
// trial count; and each trial's prompt tok/s is its prompt tokens ÷ its TTFT.
func (v *validator) prefillAgrees(where string, c *PrefillCell) {
	if !c.Status.Measured() || len(c.Trials) == 0 {
		return
	}
	var ttfts, rates []float64
	for i, t := range c.Trials {
		ttfts = append(ttfts, t.TTFTMs)
		rates = append(rates, t.PromptTokPerS)
		tw := fmt.Sprintf("%s trial %d", where, i+1)
		if t.PrefixCacheHitTokens != nil && *t.PrefixCacheHitTokens > 0 {
			v.addf("%s: status %s, yet the prefix cache served %d of its prompt tokens: a cached prompt is not a prefill measurement", tw, c.Status, *t.PrefixCacheHitTokens)
		}
		if t.TTFTMs > 0 && t.PromptTokens > 0 {
			v.agreeF(tw, "prompt_tok_per_s", &c.Trials[i].PromptTokPerS, float64(t.PromptTokens)/(t.TTFTMs/1000), "prompt_tokens ÷ ttft_ms")
		}
	}
	from := "the median of its trials"
	if len(c.Trials) == 1 {
		from = "its trial"
	}
	v.agreeF(where, "ttft_ms", c.TTFTMs, quantile.Median(ttfts), from)
	v.agreeF(where, "prompt_tok_per_s", c.PromptTokPerS, quantile.Median(rates), from)
	v.agreeN(where, "prompt_tokens", c.PromptTokens, c.Trials[0].PromptTokens, "its first trial")
	v.agreeN(where, "completed_requests", c.CompletedRequests, len(c.Trials), "the number of its trials")
}

// decodeTrialAgrees checks one trial of a measured decode cell against its raw samples: output
// tokens are the sum of the bins, total tok/s that sum ÷ the window, measured seconds the
// window, time between tokens and per-request tok/s the medians over its requests. A trial in
// which no output token arrived cannot belong to a measured cell: the runner marks such a cell
// error (the server stalled).
func (v *validator) decodeTrialAgrees(tw string, s Status, t *DecodeTrial) {
	sum := 0
	for _, n := range t.BinOutputTokens {
		sum += n
	}
	v.agreeN(tw, "output_tokens", t.OutputTokens, sum, "the sum of bin_output_tokens")
	if sum == 0 && (t.OutputTokens == nil || *t.OutputTokens == 0) {
		v.addf("%s: no output token in the window, yet the cell's status is %s; a window in which no token arrived is a failed cell (status error)", tw, s)
	}
	if t.WindowSeconds > 0 {
		v.agreeF(tw, "total_tok_per_s", t.TotalTokPerS, float64(sum)/t.WindowSeconds, "bin_output_tokens ÷ window_seconds")
		v.agreeF(tw, "measured_seconds", t.MeasuredSeconds, t.WindowSeconds, "window_seconds")
	}
	var tbts, rates []float64
	for _, r := range t.Requests {
		if r.TBTMs != nil && *r.TBTMs > 0 {
			tbts = append(tbts, *r.TBTMs)
			rates = append(rates, 1000 / *r.TBTMs)
		}
	}
	if len(tbts) > 0 {
		v.agreeF(tw, "tbt_ms", t.TBTMs, quantile.Median(tbts), "the median of its requests")
		v.agreeF(tw, "per_request_tok_per_s", t.PerRequestTokPerS, quantile.Median(rates), "the median of its requests")
	}
}

// decodeAgrees checks a measured decode cell's summary against its trials. With one trial the
// summary is the trial's; with several, tokens, completed requests and seconds add up (total
// tok/s is their ratio), latencies and per-request tok/s are medians over the pooled requests
// (TTFT over the trials' TTFTs when no request carries one), average active requests is the
// window-weighted mean, and inter-chunk time the median of the trials'.
func (v *validator) decodeAgrees(where string, c *DecodeCell) {
	if !c.Status.Measured() || len(c.Trials) == 0 {
		return
	}
	for i := range c.Trials {
		v.decodeTrialAgrees(fmt.Sprintf("%s trial %d", where, i+1), c.Status, &c.Trials[i])
	}
	m := &c.DecodeMetrics
	if len(c.Trials) == 1 {
		t := &c.Trials[0].DecodeMetrics
		const from = "its trial"
		for _, f := range []struct {
			name string
			s, t *float64
		}{
			{"total_tok_per_s", m.TotalTokPerS, t.TotalTokPerS}, {"per_request_tok_per_s", m.PerRequestTokPerS, t.PerRequestTokPerS},
			{"ttft_ms", m.TTFTMs, t.TTFTMs}, {"tbt_ms", m.TBTMs, t.TBTMs}, {"avg_active_requests", m.AvgActiveRequests, t.AvgActiveRequests},
			{"measured_seconds", m.MeasuredSeconds, t.MeasuredSeconds}, {"inter_chunk_ms", m.InterChunkMs, t.InterChunkMs},
			{"client_queue_ms", m.ClientQueueMs, t.ClientQueueMs},
		} {
			if f.t != nil {
				v.agreeF(where, f.name, f.s, *f.t, from)
			}
		}
		if t.OutputTokens != nil {
			v.agreeN(where, "output_tokens", m.OutputTokens, *t.OutputTokens, from)
		}
		if t.CompletedRequests != nil {
			v.agreeN(where, "completed_requests", m.CompletedRequests, *t.CompletedRequests, from)
		}
		return
	}
	const from = "its trials"
	var (
		tokens, completed           int
		seconds, activeSum, activeW float64
		ttfts, tbts, rates, queues  []float64
		trialTTFTs, gaps            []float64
	)
	for i := range c.Trials {
		t := &c.Trials[i]
		if t.OutputTokens != nil {
			tokens += *t.OutputTokens
		}
		if t.CompletedRequests != nil {
			completed += *t.CompletedRequests
		}
		seconds += t.WindowSeconds
		if t.AvgActiveRequests != nil {
			activeSum += *t.AvgActiveRequests * t.WindowSeconds
			activeW += t.WindowSeconds
		}
		if t.TTFTMs != nil {
			trialTTFTs = append(trialTTFTs, *t.TTFTMs)
		}
		if t.InterChunkMs != nil {
			gaps = append(gaps, *t.InterChunkMs)
		}
		for _, r := range t.Requests {
			if r.TTFTMs != nil {
				ttfts = append(ttfts, *r.TTFTMs)
			}
			if r.TBTMs != nil && *r.TBTMs > 0 {
				tbts = append(tbts, *r.TBTMs)
				rates = append(rates, 1000 / *r.TBTMs)
			}
			queues = append(queues, r.ClientQueueMs)
		}
	}
	if seconds > 0 {
		v.agreeF(where, "total_tok_per_s", m.TotalTokPerS, float64(tokens)/seconds, "output tokens ÷ seconds of "+from)
	}
	v.agreeN(where, "output_tokens", m.OutputTokens, tokens, "the sum over "+from)
	v.agreeN(where, "completed_requests", m.CompletedRequests, completed, "the sum over "+from)
	v.agreeF(where, "measured_seconds", m.MeasuredSeconds, seconds, "the sum of window_seconds over "+from)
	v.agreeF(where, "per_request_tok_per_s", m.PerRequestTokPerS, quantile.Median(rates), "the median over the requests of "+from)
	v.agreeF(where, "tbt_ms", m.TBTMs, quantile.Median(tbts), "the median over the requests of "+from)
	if len(ttfts) == 0 {
		v.agreeF(where, "ttft_ms", m.TTFTMs, quantile.Median(trialTTFTs), "the median of "+from)
	} else {
		v.agreeF(where, "ttft_ms", m.TTFTMs, quantile.Median(ttfts), "the median over the requests of "+from)
	}
	if activeW > 0 {
		v.agreeF(where, "avg_active_requests", m.AvgActiveRequests, activeSum/activeW, "the window-weighted mean of "+from)
	}
	v.agreeF(where, "inter_chunk_ms", m.InterChunkMs, quantile.Median(gaps), "the median of "+from)
	v.agreeF(where, "client_queue_ms", m.ClientQueueMs, quantile.Median(queues), "the median over the requests of "+from)
}
