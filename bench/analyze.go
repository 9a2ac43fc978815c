package bench

import (
	"math"
	"slices"
	"time"

	"github.com/speedmatrix/speedmatrix/bench/telemetry"
	"github.com/speedmatrix/speedmatrix/internal/quantile"
	"github.com/speedmatrix/speedmatrix/results"
)

// minTBTSpan is the shortest time between a request's first and last token in a window from
// which its time between tokens is taken: tokens that arrive within it came in one burst of
// reads (a request that ended just after the window opened), and their spacing is the client's
// read loop, not the server's (a 200× simulator's burst read as 2·10⁷ tok/s for one request).
const minTBTSpan = time.Millisecond

// record is one request of a decode cell as the runner saw it.
type record struct {
	Res StreamResult
	// Done is set when the request ended on its own (not cancelled at the window's end).
	Done bool
}

// window is one measurement window and what was sampled during it.
type window struct {
	Start, End time.Time
	Bin        time.Duration
	// Running and Waiting are the server's samples; nil without metrics. Client holds the
	// client's count of requests in flight at the same moments.
	Running, Waiting, Client []float64
	// At holds when each sample was taken, from Start; Awaiting the client's requests in
	// flight without their first token at each sample (nil without metrics).
	At       []time.Duration
	Awaiting []float64
	// Unseen holds, at each sample, the client's requests the server had ended whose end the
	// client had not read yet (nil when the server does not count ended requests).
	Unseen []float64
	// First and Last are the scrapes at the window's edges, for counter deltas; nil without.
	First, Last *Sample
	KVUsage     []float64
}

// analysis is a trial computed from its records.
type analysis struct {
	Trial results.DecodeTrial
	// RampTTFT is set when no request started inside the window, so TTFT was taken from the
	// requests that opened it.
	RampTTFT bool
}

// ptr returns a pointer to v.
func ptr[T any](v T) *T { return &v }

// ms converts a duration to milliseconds.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// median returns the median of xs (the mean of the middle two for an even count); ok is false
// for none.
func median(xs []float64) (float64, bool) {
	if len(xs) == 0 {
		return 0, false
	}
	return quantile.Median(xs), true
}

// medianPtr returns the median of xs, or nil for none.
func medianPtr(xs []float64) *float64 {
	if m, ok := median(xs); ok {
		return &m
	}
	return nil
}

// mean returns the mean of xs; ok is false for none.
func mean(xs []float64) (float64, bool) {
	if len(xs) == 0 {
		return 0, false
	}
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs)), true
}

// binCount returns the number of bins of width bin that cover a window of seconds, as
// results.Validate counts them.
func binCount(seconds, bin float64) int {
	n := int(math.Ceil(seconds/bin - 1e-9))
	return max(n, 1)
}

// analyze computes one trial from the records of its requests. Only tokens that arrived inside
// [w.Start, w.End) count, and total tok/s divides them by the window's full length.
//
// Per request, over its tokens inside the window: time between tokens is
// (t_last − t_first) / (tokens − n_first), where n_first is the number of tokens of the first
// chunk inside the window, and per-request tok/s is its inverse. With a first chunk of one token
// this is the contract's (t_last − t_first)/(tokens − 1); excluding all of the first chunk's
// tokens keeps it exact when speculative decoding puts several tokens in one chunk (they were
// produced before t_first). TTFT is taken from requests sent inside the window; when none was,
// from the requests that opened it (RampTTFT), as llm-inference-bench reports it.
func analyze(recs []record, w window) analysis {
	winLen := w.End.Sub(w.Start)
	seconds := winLen.Seconds()
	binS := w.Bin.Seconds()
	bins := make([]int, binCount(seconds, binS))
	var (
		samples                          []results.RequestSample
		rampTTFT                         []*float64 // per sample: TTFT of a request sent before the window
		tbts, rates, ttfts, queues, gaps []float64
		rampTTFTs                        []float64
		total, completed                 int
	)
	for _, rec := range recs {
		r := rec.Res
		if !r.FirstToken.IsZero() && r.FirstToken.Before(w.End) {
			ttft := ms(r.FirstToken.Sub(r.Sent))
			if !r.Sent.Before(w.Start) {
				ttfts = append(ttfts, ttft)
			} else {
				rampTTFTs = append(rampTTFTs, ttft)
			}
		}
		var (
			tokens, chunks, firstTokens int
			tFirst, tLast               time.Time
		)
		for _, ev := range r.Events {
			if ev.At.Before(w.Start) || !ev.At.Before(w.End) || ev.Tokens <= 0 {
				continue
			}
			if chunks == 0 {
				tFirst, firstTokens = ev.At, ev.Tokens
			} else {
				gaps = append(gaps, ms(ev.At.Sub(tLast)))
			}
			tLast = ev.At
			tokens += ev.Tokens
			chunks++
			b := int(ev.At.Sub(w.Start).Seconds() / binS)
			bins[min(b, len(bins)-1)] += ev.Tokens
		}
		if tokens == 0 {
			continue
		}
		total += tokens
		s := results.RequestSample{
			OutputTokens:  tokens,
			Chunks:        chunks,
			ClientQueueMs: ms(r.Queued),
			Completed:     rec.Done && !r.Last.Before(w.Start) && r.Last.Before(w.End),
		}
		queues = append(queues, ms(r.Queued))
		var ramp *float64
		if !r.FirstToken.IsZero() {
			if !r.Sent.Before(w.Start) {
				s.TTFTMs = ptr(ms(r.FirstToken.Sub(r.Sent)))
			} else {
				ramp = ptr(ms(r.FirstToken.Sub(r.Sent)))
			}
		}
		if n := tokens - firstTokens; n > 0 && tLast.Sub(tFirst) >= minTBTSpan {
			tbt := ms(tLast.Sub(tFirst)) / float64(n)
			s.TBTMs = &tbt
			tbts = append(tbts, tbt)
			rates = append(rates, 1000/tbt)
		}
		if s.Completed {
			completed++
		}
		samples = append(samples, s)
		rampTTFT = append(rampTTFT, ramp)
	}
	a := analysis{}
	ttftSamples := ttfts
	if len(ttftSamples) == 0 && len(rampTTFTs) > 0 {
		ttftSamples = rampTTFTs
		a.RampTTFT = true
		// Give the requests that opened the window their TTFT, so the raw samples hold what
		// the median was taken from.
		for i := range samples {
			samples[i].TTFTMs = rampTTFT[i]
		}
	}
	m := results.DecodeMetrics{
		TotalTokPerS:      ptr(float64(total) / seconds),
		PerRequestTokPerS: medianPtr(rates),
		TTFTMs:            medianPtr(ttftSamples),
		TBTMs:             medianPtr(tbts),
		CompletedRequests: ptr(completed),
		OutputTokens:      ptr(total),
		MeasuredSeconds:   ptr(seconds),
		InterChunkMs:      medianPtr(gaps),
		ClientQueueMs:     medianPtr(queues),
		Telemetry:         windowTelemetry(w),
	}
	active := w.Running
	if active == nil {
		active = w.Client
	}
	if avg, ok := weightedMean(active, w.At, winLen); ok {
		m.AvgActiveRequests = &avg
	}
	if samples == nil {
		samples = []results.RequestSample{}
	}
	a.Trial = results.DecodeTrial{
		Start:           w.Start.UTC(),
		DecodeMetrics:   m,
		BinSeconds:      binS,
		WindowSeconds:   seconds,
		BinOutputTokens: bins,
		Requests:        samples,
		RunningSamples:  w.Running,
		WaitingSamples:  w.Waiting,
	}
	if w.Running == nil {
		a.Trial.RunningSamples = w.Client
	} else {
		a.Trial.AwaitingSamples = w.Awaiting
	}
	if len(w.At) > 0 {
		a.Trial.SampleSeconds = make([]float64, len(w.At))
		for i, at := range w.At {
			a.Trial.SampleSeconds[i] = at.Seconds()
		}
	}
	return a
}

// meanPtr returns the mean of xs, or nil for none.
func meanPtr(xs []float64) *float64 {
	if m, ok := mean(xs); ok {
		return &m
	}
	return nil
}

// windowTelemetry summarizes what /metrics said during a window; with no server samples the
// client's count of requests in flight stands in (Source "client").
func windowTelemetry(w window) *results.Telemetry {
	if w.Running == nil {
		if len(w.Client) == 0 {
			return nil
		}
		return &results.Telemetry{MaxRunning: ptr(slices.Max(w.Client)), Source: "client"}
	}
	t := &results.Telemetry{Source: "server"}
	if len(w.Running) > 0 {
		t.MaxRunning = ptr(slices.Max(w.Running))
	}
	if len(w.Waiting) > 0 {
		t.MaxWaiting = ptr(slices.Max(w.Waiting))
	}
	if len(w.KVUsage) > 0 {
		t.MaxKVCacheUsage = ptr(slices.Max(w.KVUsage))
	}
	if f, l := w.First, w.Last; f != nil && l != nil {
		d := telemetry.Delta(f.Counters, l.Counters)
		t.Preemptions = d.Preemptions.Ptr()
		t.PrefixCacheHitPct = d.PrefixHitPct.Ptr()
		t.SpecAcceptancePct = d.SpecAcceptancePct.Ptr()
		t.SpecAcceptanceLength = d.SpecAcceptanceLength.Ptr()
	}
	return t
}

// deref returns *p, or the zero value for nil.
func deref[T any](p *T) T {
	if p == nil {
		var z T
		return z
	}
	return *p
}
