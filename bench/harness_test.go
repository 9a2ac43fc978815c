package bench

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/speedmatrix/speedmatrix/bench/benchtest"
	"github.com/speedmatrix/speedmatrix/bench/server"
	"github.com/speedmatrix/speedmatrix/bench/stream"
	"github.com/speedmatrix/speedmatrix/bench/telemetry"
	"github.com/speedmatrix/speedmatrix/internal/memnet"
	"github.com/speedmatrix/speedmatrix/results"
)

// wordPrompter builds prompts of exactly n words, which the fake server counts as tokens.
type wordPrompter struct{}

func (wordPrompter) Build(ctx context.Context, model string, tokens int, label string) (Prompt, error) {
	var b strings.Builder
	b.WriteString("test:" + strings.ReplaceAll(label, " ", "_"))
	for i := 1; i < tokens; i++ {
		fmt.Fprintf(&b, " p%d", i)
	}
	return Prompt{Text: b.String(), Tokens: tokens}, nil
}

// recorder is a Streamer that keeps every result of the Streamer it wraps.
type recorder struct {
	Streamer
	mu   sync.Mutex
	seen []recorded
}

// recorded is one request and its result.
type recorded struct {
	Req StreamRequest
	Res StreamResult
}

func (r *recorder) Stream(ctx context.Context, req StreamRequest, onEvent func(StreamEvent)) (StreamResult, error) {
	res, err := r.Streamer.Stream(ctx, req, onEvent)
	r.mu.Lock()
	r.seen = append(r.seen, recorded{req, res})
	r.mu.Unlock()
	return res, err
}

func (r *recorder) results() []recorded {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]recorded(nil), r.seen...)
}

// harness is a fake server and a Runner wired to it.
type harness struct {
	srv    *benchtest.Server
	client *stream.Client
	rec    *recorder
	runner *Runner
	logs   *syncBuffer
}

// syncBuffer is a bytes.Buffer safe for concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// newHarness starts a fake server with cfg and checks, when the test ends, that no goroutine
// and no connection is left behind.
func newHarness(t *testing.T, cfg benchtest.Config) *harness {
	t.Helper()
	return newHarnessNet(t, cfg, nil)
}

// newHarnessSim is newHarness for a test in a testing/synctest bubble: the fake server and
// the runner's clients talk over an in-memory network, so every wait of the run is the
// bubble's and its timings are the fake clock's, whatever the machine's load.
func newHarnessSim(t *testing.T, cfg benchtest.Config) *harness {
	t.Helper()
	return newHarnessNet(t, cfg, memnet.New())
}

// newHarnessNet is newHarness over the network n (nil: the machine's loopback).
func newHarnessNet(t *testing.T, cfg benchtest.Config, n *memnet.Network) *harness {
	t.Helper()
	base := runtime.NumGoroutine()
	metricsClient := &http.Client{Timeout: 5 * time.Second}
	var opts []stream.Option
	if n != nil {
		ln, err := n.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		cfg.Listener = ln
		metricsClient.Transport = &http.Transport{DialContext: n.DialContext}
		opts = append(opts, stream.WithDialer(n.DialContext))
	}
	srv := benchtest.New(cfg)
	client := stream.New(srv.URL, opts...)
	logs := &syncBuffer{}
	h := &harness{srv: srv, client: client, logs: logs, rec: &recorder{Streamer: StreamClient{C: client}}}
	h.runner = &Runner{
		Stream:  h.rec,
		Server:  ServerClient{C: server.New(srv.URL, server.WithHTTPClient(metricsClient))},
		Prompts: wordPrompter{},
		Log:     slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}
	if !cfg.NoMetrics {
		h.runner.Metrics = TelemetryScraper{S: &telemetry.Scraper{URL: telemetry.MetricsURL(srv.URL), Client: metricsClient}}
	}
	t.Cleanup(func() {
		client.Close()
		metricsClient.CloseIdleConnections()
		http.DefaultClient.CloseIdleConnections()
		deadline := time.Now().Add(5 * time.Second)
		for srv.ActiveConns() > 0 && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if n := srv.ActiveConns(); n > 0 {
			t.Errorf("connection leak: %d connections still active after the run", n)
		}
		srv.Close()
		if n != nil {
			// In a bubble synctest.Test itself fails the test on a goroutine of the run left
			// blocked, and the process's count would include goroutines outside it.
			return
		}
		for runtime.NumGoroutine() > base && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if n := runtime.NumGoroutine(); n > base {
			buf := make([]byte, 1<<20)
			buf = buf[:runtime.Stack(buf, true)]
			t.Errorf("goroutine leak: %d goroutines, %d before the test\n%s", n, base, buf)
		}
	})
	return h
}

// testConfig returns a configuration with short windows and timeouts.
func testConfig(contexts, concurrency []int, window time.Duration, maxTokens int) Config {
	c := DefaultConfig()
	c.URL = "http://fake"
	c.MatrixName = "test"
	c.Matrix = Matrix{Contexts: contexts, Concurrency: concurrency}
	c.PrefillFromDecode = true
	c.Duration = window
	c.MaxTokens = maxTokens
	c.Warmup = 1
	c.RunID = "test"
	// The fault tests name the cell measured first; TestShuffledOrder measures shuffled.
	c.Order = results.OrderMatrix
	c.KeepStarved = true // these tests run in real time on a shared machine; starve_test.go judges starvation
	c.Timeouts = Timeouts{
		Readiness: 5 * time.Second,
		Drain:     5 * time.Second,
		Scout:     10 * time.Second,
		Stop:      5 * time.Second,
		Health:    2 * time.Second,
		Setup:     10 * time.Second,
		Sample:    100 * time.Millisecond,
		Poll:      20 * time.Millisecond,
		Bin:       250 * time.Millisecond,
	}
	return c
}

// decodeCell returns the decode cell label×c of f.
func decodeCell(t *testing.T, f *results.File, label string, c int) *results.DecodeCell {
	t.Helper()
	for i := range f.Decode {
		if f.Decode[i].ContextLabel == label && f.Decode[i].Concurrency == c {
			return &f.Decode[i]
		}
	}
	t.Fatalf("no decode cell %s×%d in %d cells", label, c, len(f.Decode))
	return nil
}

// within reports whether got is within rel (or abs) of want.
func within(got, want, rel, abs float64) bool {
	d := got - want
	if d < 0 {
		d = -d
	}
	return d <= abs || d <= rel*want
}
