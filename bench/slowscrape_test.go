package bench

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/speedmatrix/speedmatrix/results"
)

// lateScraper answers each scrape late: the server's snapshot is taken at once, the answer
// arrives after Late, as a Python server rendering /metrics on a loaded machine answers (the
// real vLLM on 2 shared cores: its running count was 0 while the client's next request
// already had its first token, so a concurrency-1 cell of short requests read as queued).
type lateScraper struct {
	S    Scraper
	Late time.Duration
}

func (l lateScraper) Scrape(ctx context.Context) (Sample, error) {
	sm, err := l.S.Scrape(ctx)
	time.Sleep(l.Late)
	return sm, err
}

// TestLateScrapeNotQueued: at concurrency 1 with requests of a few steps, a scrape whose
// answer comes late sees the server between two requests (running 0) while the client has
// since moved on; the client's counts read on both sides of the scrape cover that instant,
// so the cell is valid, as the server never held a request waiting. A server that cannot run
// all C is still queued (its waiting count says so).
func TestLateScrapeNotQueued(t *testing.T) {
	for _, tc := range []struct {
		name       string
		c, seats   int
		wantStatus results.Status
	}{
		{"concurrency 1 of short requests", 1, 0, results.StatusValid},
		{"concurrency 4 on 4 seats", 4, 4, results.StatusValid},
		{"concurrency 4 on 2 seats", 4, 2, results.StatusQueued},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				scfg := steady()
				scfg.TTFT, scfg.TBT, scfg.ChunkTokens, scfg.MaxRunning = 30*time.Millisecond, 2*time.Millisecond, 4, tc.seats
				scfg.Frontend = 15 * time.Millisecond // vLLM tokenizing: neither running nor waiting
				h := newHarnessSim(t, scfg)
				h.runner.Metrics = lateScraper{S: h.runner.Metrics, Late: 45 * time.Millisecond}
				cfg := testConfig([]int{1024}, []int{tc.c}, 3*time.Second, 16)
				cfg.Timeouts.Sample = 70 * time.Millisecond
				f, err := h.runner.Run(context.Background(), cfg)
				if err != nil {
					t.Fatal(err)
				}
				if c := decodeCell(t, f, "1K", tc.c); c.Status != tc.wantStatus {
					t.Errorf("status %s (%s), want %s; log:\n%s", c.Status, c.Error, tc.wantStatus, h.logs.String())
				}
			})
		})
	}
}
