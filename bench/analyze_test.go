package bench

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/speedmatrix/speedmatrix/bench/telemetry"
	"github.com/speedmatrix/speedmatrix/results"
)

// t0 is the start of the synthetic windows.
var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// at returns t0 + ms milliseconds.
func at(msec float64) time.Time { return t0.Add(time.Duration(msec * float64(time.Millisecond))) }

// synth builds a request sent at sent ms whose chunks arrive at the given ms with the given
// token counts.
func synth(sent float64, done bool, chunks ...[2]float64) record {
	r := StreamResult{Sent: at(sent), Queued: time.Millisecond}
	cum := 0
	for _, c := range chunks {
		cum += int(c[1])
		r.Events = append(r.Events, StreamEvent{At: at(c[0]), Tokens: int(c[1]), CumTokens: cum})
	}
	if len(chunks) > 0 {
		r.FirstToken, r.Last = r.Events[0].At, r.Events[len(r.Events)-1].At
	}
	r.OutputTokens, r.Chunks = cum, len(chunks)
	return record{Res: r, Done: done}
}

// TestAnalyzeWindowEdges checks the per-cell definitions on hand-made streams: only tokens
// inside [start, end) count and the window's full length divides them; time between tokens
// excludes the first in-window chunk's tokens; TTFT comes from requests sent inside the window;
// completed requests are those that ended inside it.
func TestAnalyzeWindowEdges(t *testing.T) {
	w := window{Start: at(1000), End: at(3000), Bin: time.Second,
		Running: []float64{2, 2}, Waiting: []float64{0, 0}, Client: []float64{2, 2}}
	recs := []record{
		// Started before the window; chunks of 3 tokens every 30 ms straddle its start: the
		// chunks at 990 (before) and 1020…2970 (inside) and 3000 (at the end: outside).
		synth(0, false, append([][2]float64{{100, 1}, {990, 3}}, every(1020, 3000, 30, 3)...)...),
		// Sent inside the window at 1500, first token at 1600, 3-token chunks every 30 ms until
		// it completes at 2500.
		synth(1500, true, append([][2]float64{{1600, 1}}, every(1630, 2500, 30, 3)...)...),
		// Sent at 2990, no token before the end: no sample.
		synth(2990, false),
	}
	a := analyze(recs, w)
	m := a.Trial.DecodeMetrics
	// Request 1: chunks at 1020, 1050, …, 2970 inside: 66 chunks, 198 tokens.
	// Request 2: 1 + 29 chunks (1630…2470) × 3 = 88 tokens, all inside.
	if got, want := *m.OutputTokens, 198+88; got != want {
		t.Errorf("output tokens %d, want %d", got, want)
	}
	if got, want := *m.TotalTokPerS, float64(198+88)/2; got != want {
		t.Errorf("total %v tok/s, want %v (tokens ÷ the window's full 2 s)", got, want)
	}
	// Time between tokens is exactly 10 ms for both: (2970−1020)/(198−3) and (2470−1600)/(88−1).
	if !within(*m.TBTMs, 10, 1e-9, 0) || !within(*m.PerRequestTokPerS, 100, 1e-9, 0) {
		t.Errorf("TBT %v ms, per request %v tok/s; want 10 and 100", *m.TBTMs, *m.PerRequestTokPerS)
	}
	if *m.TTFTMs != 100 || a.RampTTFT {
		t.Errorf("TTFT %v ms (ramp %v), want 100 from the request sent inside the window", *m.TTFTMs, a.RampTTFT)
	}
	if *m.CompletedRequests != 1 || *m.AvgActiveRequests != 2 {
		t.Errorf("completed %d, avg active %v; want 1 and 2", *m.CompletedRequests, *m.AvgActiveRequests)
	}
	if got := a.Trial.BinOutputTokens[0] + a.Trial.BinOutputTokens[1]; got != 198+88 || len(a.Trial.BinOutputTokens) != 2 {
		t.Errorf("bins %v, want 2 bins summing to %d", a.Trial.BinOutputTokens, 198+88)
	}
	if got, want := a.Trial.BinOutputTokens[0], 33*3+1+13*3; got != want {
		t.Errorf("first bin %d tokens, want %d", got, want)
	}
	if len(a.Trial.Requests) != 2 || a.Trial.Requests[0].TTFTMs != nil || *a.Trial.Requests[1].TTFTMs != 100 {
		t.Errorf("request samples %+v", a.Trial.Requests)
	}
	if err := results.Validate(&results.File{Schema: results.SchemaV1, Run: results.Run{Source: "measured", Tool: results.Tool{Name: "t"}},
		Decode: []results.DecodeCell{{Context: 1024, ContextLabel: "1K", Concurrency: 2, Status: results.StatusValid, DecodeMetrics: m, Trials: []results.DecodeTrial{a.Trial}}}}); err != nil {
		t.Error(err)
	}
}

// TestAnalyzeRampTTFT checks the fallback when no request started inside the window.
func TestAnalyzeRampTTFT(t *testing.T) {
	w := window{Start: at(1000), End: at(2000), Bin: time.Second}
	recs := []record{
		synth(0, false, append([][2]float64{{300, 1}}, every(310, 2000, 10, 1)...)...),
		synth(5, false, append([][2]float64{{505, 1}}, every(515, 2000, 10, 1)...)...),
	}
	a := analyze(recs, w)
	if !a.RampTTFT || *a.Trial.TTFTMs != 400 {
		t.Errorf("TTFT %v (ramp %v), want 400 = median(300, 500) from the requests that opened the window", *a.Trial.TTFTMs, a.RampTTFT)
	}
	for _, r := range a.Trial.Requests {
		if r.TTFTMs == nil {
			t.Errorf("a request that opened the window lacks the TTFT the median came from")
		}
	}
}

// every returns chunks of n tokens from first to before end, step ms apart.
func every(first, end, step, n float64) [][2]float64 {
	var out [][2]float64
	for x := first; x < end; x += step {
		out = append(out, [2]float64{x, n})
	}
	return out
}

// TestWindowTelemetryCounters checks that a window's counter figures are the difference of its
// first and last scrape, and absent where the server lacks a counter.
func TestWindowTelemetryCounters(t *testing.T) {
	v := func(x float64) telemetry.Value { return telemetry.Value{V: x, OK: true} }
	first := &Sample{Counters: telemetry.Snapshot{Preemptions: v(2), PrefixQueries: v(1000), PrefixHits: v(900),
		SpecDrafts: v(100), SpecDraftTokens: v(700), SpecAccepted: v(300)}}
	last := &Sample{Counters: telemetry.Snapshot{Preemptions: v(5), PrefixQueries: v(3000), PrefixHits: v(2800),
		SpecDrafts: v(200), SpecDraftTokens: v(1400), SpecAccepted: v(500)}}
	got := windowTelemetry(window{Running: []float64{4, 4}, First: first, Last: last})
	want := &results.Telemetry{MaxRunning: ptr(4.0), Preemptions: ptr(3.0), PrefixCacheHitPct: ptr(95.0),
		SpecAcceptancePct: ptr(100 * 200 / 700.0), SpecAcceptanceLength: ptr(3.0), Source: "server"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("telemetry (-want +got):\n%s", diff)
	}
	noCounters := windowTelemetry(window{Running: []float64{4}, First: &Sample{}, Last: &Sample{}})
	if noCounters.Preemptions != nil || noCounters.PrefixCacheHitPct != nil || noCounters.SpecAcceptancePct != nil {
		t.Errorf("figures without counters: %+v", noCounters)
	}
}

// TestAnalyzeBurstHasNoTBT: a request whose in-window tokens all came in one burst (it ended
// just after the window opened: two chunks 50 µs apart) gives no time between tokens, so it
// cannot make the cell's per-request rate 10⁷ tok/s (a 200× simulator's run once measured a
// whole matrix and then could not write it, the rate above the file's plausible maximum); the
// other request's 10 ms stands alone, and the file passes its own check.
func TestAnalyzeBurstHasNoTBT(t *testing.T) {
	w := window{Start: at(1000), End: at(2000), Bin: time.Second, Running: []float64{2}, Waiting: []float64{0}, Client: []float64{2}}
	recs := []record{
		synth(0, true, [2]float64{900, 1}, [2]float64{1000.1, 3}, [2]float64{1000.15, 40}),
		synth(0, false, append([][2]float64{{990, 1}}, every(1000, 2000, 10, 1)...)...),
	}
	a := analyze(recs, w)
	m := a.Trial.DecodeMetrics
	if r := a.Trial.Requests[0]; r.TBTMs != nil {
		t.Errorf("burst request: TBT %v ms, want none (its tokens came 50 µs apart)", *r.TBTMs)
	}
	if m.TBTMs == nil || !within(*m.TBTMs, 10, 1e-9, 0) || !within(*m.PerRequestTokPerS, 100, 1e-9, 0) {
		t.Errorf("TBT %v, per request %v; want 10 ms and 100 tok/s from the steady request alone", m.TBTMs, m.PerRequestTokPerS)
	}
	if err := results.Validate(&results.File{Schema: results.SchemaV1, Run: results.Run{Source: "measured", Tool: results.Tool{Name: "t"}},
		Decode: []results.DecodeCell{{Context: 1024, ContextLabel: "1K", Concurrency: 2, Status: results.StatusValid, DecodeMetrics: m, Trials: []results.DecodeTrial{a.Trial}}}}); err != nil {
		t.Error(err)
	}
}
