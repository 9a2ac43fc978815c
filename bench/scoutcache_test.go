package bench

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/speedmatrix/speedmatrix/bench/benchtest"
	"github.com/speedmatrix/speedmatrix/bench/telemetry"
	"github.com/speedmatrix/speedmatrix/results"
)

// prefixCache stands in for vLLM's prefix cache over a Streamer and a Scraper: every request
// queries its prompt's words (the fake server's tokens), and a prompt seen before hits all of
// them but the last, as vLLM's counters vllm:prefix_cache_queries_total and _hits_total say.
type prefixCache struct {
	Streamer
	S    Scraper
	mu   sync.Mutex
	seen map[string]bool
	q, h float64
}

func (p *prefixCache) Stream(ctx context.Context, req StreamRequest, onEvent func(StreamEvent)) (StreamResult, error) {
	n := float64(len(strings.Fields(req.Prompt)))
	p.mu.Lock()
	if p.seen == nil {
		p.seen = map[string]bool{}
	}
	p.q += n
	if p.seen[req.Prompt] {
		p.h += n - 1
	}
	p.seen[req.Prompt] = true
	p.mu.Unlock()
	return p.Streamer.Stream(ctx, req, onEvent)
}

func (p *prefixCache) Scrape(ctx context.Context) (Sample, error) {
	sm, err := p.S.Scrape(ctx)
	p.mu.Lock()
	defer p.mu.Unlock()
	sm.Counters.PrefixQueries, sm.Counters.PrefixHits = telemetry.Value{V: p.q, OK: true}, telemetry.Value{V: p.h, OK: true}
	return sm, err
}

// samePrompter builds one prompt per length whatever the label: a prompter that breaks the
// run prefix, so every trial of a context sends the prompt its first trial left in the cache.
type samePrompter struct{}

func (samePrompter) Build(ctx context.Context, model string, tokens int, label string) (Prompt, error) {
	return wordPrompter{}.Build(ctx, model, tokens, "same")
}

// twoPrefillTrials is a run of one prefill cell of 300 tokens, measured twice.
func twoPrefillTrials() Config {
	cfg := testConfig(nil, nil, 0, 16)
	cfg.Matrix = Matrix{PrefillContexts: []int{300}}
	cfg.PrefillFromDecode = false
	cfg.Duration = results.MinWindow
	cfg.Trials = 2
	return cfg
}

// TestScoutPrefixCache: a prefill measurement records how many of its prompt tokens the
// server's prefix cache served, from the server's counters, and is valid only when none were;
// a trial the cache served is an error, never a fast prefill. Without the counters nothing is
// recorded and nothing is claimed.
func TestScoutPrefixCache(t *testing.T) {
	tests := []struct {
		name     string
		prompts  Prompter
		counters bool
		want     results.Status
		wantHits []any // per trial; nil entries: not recorded
	}{
		{"unique prompts", wordPrompter{}, true, results.StatusValid, []any{0, 0}},
		{"a prompt served from the cache", samePrompter{}, true, results.StatusError, []any{0, 299}},
		{"no prefix-cache counters", samePrompter{}, false, results.StatusValid, []any{nil, nil}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, benchtest.Config{MaxModelLen: 1 << 20, TTFT: 5 * time.Millisecond, TBT: time.Millisecond, ChunkTokens: 2})
			pc := &prefixCache{Streamer: h.rec, S: h.runner.Metrics}
			h.runner.Stream, h.runner.Prompts = pc, tt.prompts
			if tt.counters {
				h.runner.Metrics = pc
			}
			f, err := h.runner.Run(context.Background(), twoPrefillTrials())
			if err != nil {
				t.Fatal(err)
			}
			if len(f.Prefill) != 1 {
				t.Fatalf("%d prefill cells, want 1", len(f.Prefill))
			}
			c := f.Prefill[0]
			if c.Status != tt.want {
				t.Errorf("status %s (%s), want %s", c.Status, c.Error, tt.want)
			}
			var hits []any
			for _, tr := range c.Trials {
				if tr.PrefixCacheHitTokens == nil {
					hits = append(hits, nil)
				} else {
					hits = append(hits, *tr.PrefixCacheHitTokens)
				}
			}
			if len(hits) != len(tt.wantHits) {
				t.Fatalf("hits per trial %v, want %v", hits, tt.wantHits)
			}
			for i := range hits {
				if hits[i] != tt.wantHits[i] {
					t.Errorf("hits per trial %v, want %v", hits, tt.wantHits)
					break
				}
			}
			if err := results.Validate(f); err != nil {
				t.Errorf("the results do not validate: %v", err)
			}
		})
	}
}

// meterLog logs the scouts sent and the scrapes of /metrics, over a prefix cache and a server
// that reports the simulator's late seconds and is always idle (so a drain scrapes once).
type meterLog struct {
	pc     *prefixCache
	mu     sync.Mutex
	events []string
}

func (m *meterLog) Stream(ctx context.Context, req StreamRequest, onEvent func(StreamEvent)) (StreamResult, error) {
	if req.MaxTokens == 1 {
		m.add("scout")
	}
	return m.pc.Stream(ctx, req, onEvent)
}

func (m *meterLog) Scrape(ctx context.Context) (Sample, error) {
	sm, err := m.pc.Scrape(ctx)
	sm.Running, sm.Waiting = 0, 0
	sm.Counters.SimLate, sm.Counters.SimLost = telemetry.Value{OK: true}, telemetry.Value{OK: true}
	m.add("scrape")
	return sm, err
}

func (m *meterLog) add(e string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.events = append(m.events, e)
}

// TestScoutScrapesOnce: between two measured prefill trials the client reads /metrics three
// times: once after the first (the prefix cache's count of its prompt, which holds the
// simulator's clocks too), once to drain, once before the second (the counters and the clocks
// it is judged against). It read the simulator's clocks and the prefix cache's counters in two
// scrapes back to back before each trial, and once more after it: five.
func TestScoutScrapesOnce(t *testing.T) {
	h := newHarness(t, benchtest.Config{MaxModelLen: 1 << 20, TTFT: 5 * time.Millisecond, TBT: time.Millisecond, ChunkTokens: 2})
	m := &meterLog{pc: &prefixCache{Streamer: h.rec, S: h.runner.Metrics}}
	h.runner.Stream, h.runner.Metrics = m, m
	f, err := h.runner.Run(context.Background(), twoPrefillTrials())
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Prefill) != 1 || f.Prefill[0].Status != results.StatusValid || len(f.Prefill[0].Trials) != 2 {
		t.Fatalf("prefill cells %+v, want one valid cell of two trials", f.Prefill)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	var scouts []int
	for i, e := range m.events {
		if e == "scout" {
			scouts = append(scouts, i)
		}
	}
	if len(scouts) != 3 {
		t.Fatalf("%d requests of one token sent, want 3: the context's warm-up and two trials (events %v)", len(scouts), m.events)
	}
	between := scouts[2] - scouts[1] - 1
	if between != 3 {
		t.Errorf("%d scrapes of /metrics between the two trials, want 3 (events %v)", between, m.events)
	}
}
