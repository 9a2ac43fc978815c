package telemetry

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"
)

// maxMetricsBody bounds what is read of one /metrics answer.
const maxMetricsBody = 64 << 20

// Scraper reads a server's /metrics. Zero fields take defaults: Client a 10 s-timeout client,
// Interval 1 s, Now time.Now, Log discards.
type Scraper struct {
	URL      string // the full /metrics URL, e.g. "http://host:8000/metrics"
	APIKey   string
	Client   *http.Client
	Interval time.Duration
	Now      func() time.Time
	Log      *slog.Logger
}

// MetricsURL does return the /metrics URL of a server base URL ("http://host:8000" or ".../v1").
func MetricsURL(baseURL string) string {
	u := strings.TrimRight(baseURL, "/")
	u = strings.TrimRight(strings.TrimSuffix(u, "/v1"), "/")
	return u + "/metrics"
}

func (s *Scraper) now() time.Time {
	if s.Now == nil {
		return time.Now()
	}
	return s.Now()
}

func (s *Scraper) log() *slog.Logger {
	if s.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return s.Log
}

// Scrape does read /metrics once. A server without /metrics (404) gives a Snapshot of
// FlavorNone and no error; other failures give a Snapshot with Err set and the error.
func (s *Scraper) Scrape(ctx context.Context) (Snapshot, error) {
	hc := s.Client
	if hc == nil {
		hc = &http.Client{Timeout: 10 * time.Second}
	}
	fail := func(err error) (Snapshot, error) {
		return Snapshot{At: s.now(), Flavor: FlavorNone, Err: err}, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.URL, nil)
	if err != nil {
		return fail(fmt.Errorf("metrics URL %q: %w", s.URL, err))
	}
	req.Header.Set("Accept", "text/plain;version=0.0.4")
	if s.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+s.APIKey)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return fail(fmt.Errorf("scrape %s: %w", s.URL, err))
	}
	defer resp.Body.Close()
	at := s.now() // the server answered: its numbers are of this moment
	if resp.StatusCode == http.StatusNotFound {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
		return Snapshot{At: at, Flavor: FlavorNone}, nil
	}
	if resp.StatusCode != http.StatusOK {
		return fail(fmt.Errorf("scrape %s: HTTP %d", s.URL, resp.StatusCode))
	}
	snap, err := Parse(io.LimitReader(resp.Body, maxMetricsBody), at)
	if err != nil {
		snap.Err = err
		return snap, fmt.Errorf("scrape %s: %w", s.URL, err)
	}
	return snap, nil
}

// Run does scrape at once and then every Interval until ctx ends, handing every Snapshot
// (failed scrapes too, with Err set) to deliver from this goroutine; it returns nil when ctx
// ends. A server without /metrics is scraped once: deliver gets one FlavorNone snapshot and Run
// returns nil, logging that once. Repeated failures are logged once per streak.
func (s *Scraper) Run(ctx context.Context, deliver func(Snapshot)) error {
	interval := s.Interval
	if interval <= 0 {
		interval = time.Second
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	failing := false
	for {
		snap, err := s.Scrape(ctx)
		if ctx.Err() != nil {
			return nil
		}
		deliver(snap)
		switch {
		case err == nil && snap.Flavor == FlavorNone:
			s.log().Info("the server exports no known /metrics; telemetry will be estimated client-side", "url", s.URL)
			return nil
		case err != nil && !failing:
			s.log().Warn("scraping /metrics failed; retrying every interval", "err", err)
			failing = true
		case err == nil && failing:
			s.log().Info("scraping /metrics works again", "url", s.URL)
			failing = false
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}
