package bench

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/speedmatrix/speedmatrix/bench/benchtest"
	"github.com/speedmatrix/speedmatrix/results"
)

// accuracyCase is one fake server and cell of TestAccuracy.
type accuracyCase struct {
	name      string
	c         int
	ttft, tbt time.Duration
	chunk     int
	maxTokens int
	window    time.Duration
	heavy     bool
	// inWindowTTFT: requests start inside the window, so TTFT comes from them (else from the
	// requests that opened the window).
	inWindowTTFT bool
}

// truth is what the server did during a cell's window, over the same requests the cell's
// medians are taken from.
type truth struct {
	TTFT, TBT, Rate, Total float64
	Scout                  float64 // prefill TTFT
}

// serverTruth computes the truth of a measured cell from the fake server's own records: every
// request the client made is matched to the server's record of it (the earliest unmatched
// arrival after the client sent it); TTFT is arrival to first flush; time between tokens uses
// the server's flush times of exactly the chunks the client counted inside the window; total is
// the tokens the server flushed inside the window over its length.
func serverTruth(h *harness, tc accuracyCase, tr results.DecodeTrial) truth {
	winStart := tr.Start
	winEnd := winStart.Add(time.Duration(tr.WindowSeconds * float64(time.Second)))
	log := h.srv.RequestLog()
	used := make([]bool, len(log))
	recs := h.rec.results()
	slices.SortFunc(recs, func(a, b recorded) int { return a.Res.Sent.Compare(b.Res.Sent) })
	var inWin, ramp, tbts, rates []float64
	var t truth
	for _, rr := range recs {
		r := rr.Res
		best := -1
		for i, s := range log {
			if !used[i] && s.MaxTokens == rr.Req.MaxTokens && !s.Arrived.Before(r.Sent.Add(-time.Millisecond)) && (best < 0 || s.Arrived.Before(log[best].Arrived)) {
				best = i
			}
		}
		if best < 0 {
			continue
		}
		used[best] = true
		s := log[best]
		if rr.Req.MaxTokens == 1 {
			t.Scout = ms(s.TTFT())
			continue
		}
		if rr.Req.MaxTokens != tc.maxTokens || r.FirstToken.IsZero() || !r.FirstToken.Before(winEnd) || s.FirstChunk.IsZero() {
			continue
		}
		if r.Sent.Before(winStart) {
			ramp = append(ramp, ms(s.TTFT()))
		} else {
			inWin = append(inWin, ms(s.TTFT()))
		}
		first, last, tokens, firstTokens := -1, -1, 0, 0
		for i, ev := range r.Events {
			if ev.At.Before(winStart) || !ev.At.Before(winEnd) || i >= len(s.Chunks) {
				continue
			}
			if first < 0 {
				first, firstTokens = i, ev.Tokens
			}
			last = i
			tokens += ev.Tokens
		}
		if first >= 0 && last > first && tokens > firstTokens {
			tbt := ms(s.Chunks[last].At.Sub(s.Chunks[first].At)) / float64(tokens-firstTokens)
			tbts = append(tbts, tbt)
			rates = append(rates, 1000/tbt)
		}
	}
	t.TTFT, _ = median(inWin)
	if !tc.inWindowTTFT {
		t.TTFT, _ = median(ramp)
	}
	t.TBT, _ = median(tbts)
	t.Rate, _ = median(rates)
	t.Total = float64(h.srv.TokensBetween(winStart, winEnd)) / tr.WindowSeconds
	return t
}

// TestAccuracy measures fake servers that stream at the injected time to first token and time
// between tokens, in multi-token chunks with continuous usage, at concurrency 1 to 128, and
// checks TTFT, time between tokens, per-request and total tok/s within 2 % (or 0.2 ms) of the
// truth, which is what the server itself did (its own flush times), so the check holds also when
// a loaded machine delays the server. A load spike can still delay the client's reading of a
// chunk by milliseconds; a case is therefore tried up to three times and passes when one attempt
// is within tolerance, with every attempt's figures logged. Under the race detector, which slows
// every goroutine several times, the figures are logged but the tolerances not enforced. The time to first token grows with
// concurrency, as on real servers (the reference shows seconds at 16 and more), which keeps the
// 2 % of it above the milliseconds that the fake server's own request handling costs when it
// shares two cores with 128 client streams.
func TestAccuracy(t *testing.T) {
	cases := []accuracyCase{
		{name: "C1 single-token chunks", c: 1, ttft: 60 * time.Millisecond, tbt: 5 * time.Millisecond, chunk: 1, maxTokens: 81, window: 2500 * time.Millisecond, inWindowTTFT: true},
		{name: "C2 multi-token chunks", c: 2, ttft: 80 * time.Millisecond, tbt: 6 * time.Millisecond, chunk: 3, maxTokens: 91, window: 2500 * time.Millisecond, inWindowTTFT: true},
		{name: "C8 long requests", c: 8, ttft: 200 * time.Millisecond, tbt: 8 * time.Millisecond, chunk: 4, maxTokens: 4001, window: 2500 * time.Millisecond},
		{name: "C32", c: 32, ttft: 250 * time.Millisecond, tbt: 10 * time.Millisecond, chunk: 4, maxTokens: 101, window: 2500 * time.Millisecond, inWindowTTFT: true},
		{name: "C128", c: 128, ttft: 500 * time.Millisecond, tbt: 20 * time.Millisecond, chunk: 5, maxTokens: 76, window: 2500 * time.Millisecond, heavy: true, inWindowTTFT: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.heavy && testing.Short() {
				t.Skip("128 streams: skipped with -short")
			}
			if tc.heavy && raceEnabled {
				t.Skip("128 streams: timing accuracy is not meaningful under the race detector (the race tests of 128 streams run without it in TestRaceManyStreams)")
			}
			var problems []string
			for attempt := 1; attempt <= 3; attempt++ {
				problems = accuracyAttempt(t, tc)
				if len(problems) == 0 {
					return
				}
				t.Logf("attempt %d off tolerance: %s", attempt, strings.Join(problems, "; "))
			}
			t.Errorf("3 attempts off tolerance; the last: %s", strings.Join(problems, "; "))
		})
	}
}

// accuracyAttempt runs one case and returns what was off tolerance. Errors that no load can
// explain (a wrong status, an invalid file) fail the test at once.
func accuracyAttempt(t *testing.T, tc accuracyCase) []string {
	h := newHarness(t, benchtest.Config{MaxModelLen: 1 << 20, TTFT: tc.ttft, TBT: tc.tbt, ChunkTokens: tc.chunk})
	cfg := testConfig([]int{1024}, []int{tc.c}, tc.window, tc.maxTokens)
	f, err := h.runner.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := results.Validate(f); err != nil {
		t.Fatal(err)
	}
	cell := decodeCell(t, f, "1K", tc.c)
	// Short requests turn over often; on a loaded machine a sample may catch the gap between
	// one request's end and the next one's arrival, and the rules rightly say queued then.
	if !cell.Status.Measured() {
		t.Fatalf("status %s (%s), want measured; log:\n%s", cell.Status, cell.Error, h.logs.String())
	}
	tr := cell.Trials[0]
	want := serverTruth(h, tc, tr)
	var problems []string
	check := func(name string, got, want, abs float64) {
		off := 100 * (got - want) / want
		if !within(got, want, 0.02, abs) && raceEnabled {
			t.Logf("%-22s %10.4g  truth %10.4g  (%+.3f %%, not enforced under the race detector)", name, got, want, off)
			return
		}
		if !within(got, want, 0.02, abs) {
			problems = append(problems, fmt.Sprintf("%s = %.4g, truth %.4g (%+.2f %%)", name, got, want, off))
			return
		}
		t.Logf("%-22s %10.4g  truth %10.4g  (%+.3f %%)", name, got, want, off)
	}
	check("TTFT ms", *cell.TTFTMs, want.TTFT, 0.2)
	check("time between tokens ms", *cell.TBTMs, want.TBT, 0.2)
	check("per-request tok/s", *cell.PerRequestTokPerS, want.Rate, 0)
	check("total tok/s", *cell.TotalTokPerS, want.Total, 0)
	check("prefill TTFT ms", *f.Prefill[0].TTFTMs, want.Scout, 0.2)
	// The server's truth stays near the injected delays unless the machine is starved; then the
	// client must still match what the server did, which is what the checks above compare.
	if inj := float64(tc.tbt) / float64(time.Millisecond); !within(want.TBT, inj, 0.05, 0) {
		t.Logf("the server itself streamed at %.4g ms between tokens, not the injected %.4g: the machine is overloaded", want.TBT, inj)
	}

	// The invariant a window that ends at the last chunk breaks.
	if lim := float64(tc.c) * *cell.PerRequestTokPerS; *cell.TotalTokPerS > 1.02*lim {
		t.Errorf("total %.1f tok/s > C × per-request %.1f", *cell.TotalTokPerS, lim)
	}
	rampNoted := false
	for _, n := range f.Notes {
		rampNoted = rampNoted || strings.HasPrefix(n, "TTFT of a decode cell")
	}
	if rampNoted == tc.inWindowTTFT {
		// A starved server can be too slow for any request to start inside the window.
		problems = append(problems, fmt.Sprintf("note on TTFT from the requests that opened the window: %v, want %v", rampNoted, !tc.inWindowTTFT))
	}
	withTTFT := 0
	for _, r := range tr.Requests {
		if r.TTFTMs != nil {
			withTTFT++
		}
	}
	if withTTFT == 0 {
		t.Errorf("no request sample carries a TTFT")
	}
	if got := *cell.AvgActiveRequests; !within(got, float64(tc.c), 0.1, 0) && !raceEnabled {
		problems = append(problems, fmt.Sprintf("avg active %.2f, want ≈ %d", got, tc.c))
	}
	if got, want := *cell.OutputTokens, h.srv.TokensBetween(tr.Start, tr.Start.Add(time.Duration(tr.WindowSeconds*1e9))); !within(float64(got), float64(want), 0.02, 0) && !raceEnabled {
		problems = append(problems, fmt.Sprintf("output tokens %d, server flushed %d in the window", got, want))
	}
	p := f.Prefill[0]
	if p.Status != results.StatusValid || *p.PromptTokens != 1024 || !within(*p.PromptTokPerS, 1024/(*p.TTFTMs/1000), 1e-9, 0) {
		t.Errorf("prefill cell %+v: want valid, 1024 prompt tokens, prompt tok/s = 1024 ÷ TTFT", p)
	}
	return problems
}
