package bench

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/speedmatrix/speedmatrix/results"
)

// TestScoutWarmsTheDecodePrompt checks the prompt discipline: the decode streams of a context
// send exactly the scout's prompt (so prefill hits the cache the scout warmed), while every
// other prompt (another context, a further prefill trial, the warm-ups) is different. Each
// context's first request of max_tokens 1 is its hidden warm-up (Config.ContextWarmup), sent
// before the scout with a prompt of its own: the scout's prompt with a marker in front, a few
// tokens longer.
func TestScoutWarmsTheDecodePrompt(t *testing.T) {
	h := newHarness(t, steady())
	cfg := testConfig([]int{1024, 2048}, []int{2}, 300*time.Millisecond, 1001)
	cfg.Trials = 2
	if _, err := h.runner.Run(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	scouts := map[int][]uint64{} // prompt tokens → scout prompt hashes, in order
	decode := map[int]map[uint64]int{}
	var warm []uint64
	ctxWarm := map[int]bool{} // context → its warm-up came before its first scout
	for _, r := range h.srv.RequestLog() {
		context := r.PromptTokens &^ 7 // the warm-up's few extra tokens
		switch {
		case r.MaxTokens == 1 && r.PromptTokens != context:
			if r.PromptTokens-context > 4 {
				t.Errorf("a warm-up of %d tokens, want the context's %d and a few", r.PromptTokens, context)
			}
			_, dup := ctxWarm[context]
			ctxWarm[context] = !dup && len(scouts[context]) == 0
			warm = append(warm, r.PromptHash)
		case r.MaxTokens == 1:
			scouts[r.PromptTokens] = append(scouts[r.PromptTokens], r.PromptHash)
		case r.MaxTokens == 1001:
			if decode[r.PromptTokens] == nil {
				decode[r.PromptTokens] = map[uint64]int{}
			}
			decode[r.PromptTokens][r.PromptHash]++
		default:
			warm = append(warm, r.PromptHash)
		}
	}
	for _, n := range []int{1024, 2048} {
		if len(scouts[n]) != 2 || scouts[n][0] == scouts[n][1] {
			t.Errorf("context %d: scouts %v, want two with different prompts", n, scouts[n])
			continue
		}
		if len(decode[n]) != 1 || decode[n][scouts[n][0]] == 0 {
			t.Errorf("context %d: decode prompts %v, want all equal to the first scout's %x", n, decode[n], scouts[n][0])
		}
	}
	if len(ctxWarm) != 2 || !ctxWarm[1024] || !ctxWarm[2048] {
		t.Errorf("context warm-ups %v (context → the only one, before the scout), want one per context, each first", ctxWarm)
	}
	all := append(append(append([]uint64{}, scouts[1024]...), scouts[2048]...), warm...)
	slices.Sort(all)
	if len(slices.Compact(all)) != len(all) {
		t.Errorf("two different prompts share a hash: %v", all)
	}
}

// TestContextWarmupOff checks that without Config.ContextWarmup a context sends its scout
// first: one request of max_tokens 1 per context and trial, and the results say which.
func TestContextWarmupOff(t *testing.T) {
	for _, on := range []bool{false, true} {
		h := newHarness(t, steady())
		cfg := testConfig([]int{1024}, []int{1}, 300*time.Millisecond, 101)
		cfg.ContextWarmup = on
		f, err := h.runner.Run(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, r := range h.srv.RequestLog() {
			if r.MaxTokens == 1 {
				n++
			}
		}
		want := 1
		if on {
			want = 2
		}
		if n != want || f.Run.Settings.ContextWarmup != on {
			t.Errorf("context warm-up %v: %d requests of max_tokens 1 (want %d), recorded %v", on, n, want, f.Run.Settings.ContextWarmup)
		}
	}
}

// TestReadinessWaitsForEveryStream checks that the window opens only after every one of the C
// streams has produced a token, even when their first tokens arrive far apart.
func TestReadinessWaitsForEveryStream(t *testing.T) {
	scfg := steady()
	// Requests 1 and 2 are the warm-up and the scout; the four decode streams get their first
	// token 100, 200, 300 and 400 ms after they arrive.
	scfg.TTFTFor = func(n int) time.Duration {
		if n <= 2 {
			return 20 * time.Millisecond
		}
		return time.Duration(n-2) * 100 * time.Millisecond
	}
	h, _, cell := runFourStreams(t, scfg, 3*time.Second)
	if cell.Status != results.StatusValid {
		t.Errorf("status %s, want valid", cell.Status)
	}
	start := cell.Trials[0].Start
	var last time.Time
	for _, r := range h.srv.RequestLog() {
		if r.MaxTokens == 1001 && r.FirstChunk.After(last) {
			last = r.FirstChunk
		}
	}
	// The server stamps a chunk after flushing it, so the client may see it a little earlier;
	// the streams' first tokens are 100 ms apart, so 10 ms of slack still tells them apart.
	if start.Before(last.Add(-10 * time.Millisecond)) {
		t.Errorf("window opened at %s, %v before the last stream's first token", start.Format(time.StampMicro), last.Sub(start))
	}
}

// TestDrainBetweenCells checks that a cell starts only after the server reports nothing running
// or waiting, and that a server that never drains is noted and measured anyway after the drain
// timeout.
func TestDrainBetweenCells(t *testing.T) {
	for _, tc := range []struct {
		name    string
		linger  time.Duration // the server reports a request running this long after the last
		timeout time.Duration
		noted   bool
	}{
		{name: "waits for the server", linger: 400 * time.Millisecond, timeout: 5 * time.Second},
		{name: "gives up after the drain timeout", linger: time.Hour, timeout: 300 * time.Millisecond, noted: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			scfg := steady()
			var mu sync.Mutex
			var lastBusy time.Time
			scfg.Metrics = func(run, wait int) (int, int) {
				mu.Lock()
				defer mu.Unlock()
				now := time.Now()
				if run > 0 {
					lastBusy = now
				}
				if run == 0 && !lastBusy.IsZero() && now.Sub(lastBusy) < tc.linger {
					run = 1
				}
				return run, wait
			}
			h := newHarness(t, scfg)
			cfg := testConfig([]int{1024}, []int{1, 2}, 300*time.Millisecond, 1001)
			cfg.Timeouts.Drain = tc.timeout
			f, err := h.runner.Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			first := decodeCell(t, f, "1K", 1).Trials[0]
			end := first.Start.Add(time.Duration(first.WindowSeconds * float64(time.Second)))
			var next time.Time
			for _, r := range h.srv.RequestLog() {
				if r.MaxTokens == 1001 && r.Arrived.After(end) && (next.IsZero() || r.Arrived.Before(next)) {
					next = r.Arrived
				}
			}
			wait := min(tc.linger, tc.timeout)
			if gap := next.Sub(end); gap < wait*3/4 {
				t.Errorf("the next cell began %v after the window closed, want ≥ %v of drain", gap, wait*3/4)
			}
			noted := strings.Contains(strings.Join(f.Notes, "\n"), "was not drained")
			if noted != tc.noted {
				t.Errorf("drain note %v, want %v (notes %q)", noted, tc.noted, f.Notes)
			}
			if c := decodeCell(t, f, "1K", 2); !c.Status.Measured() {
				t.Errorf("the cell after the drain: %s", c.Status)
			}
			if err := results.Validate(f); err != nil {
				t.Error(err)
			}
		})
	}
}
