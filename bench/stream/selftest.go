package stream

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// SelfTestOptions size the self-test; zero fields take the defaults in brackets.
type SelfTestOptions struct {
	// IngestEvents is the number of token chunks parsed for the ingest rate [300000].
	IngestEvents int
	// Streams is the number of concurrent streams of the latency test [128].
	Streams int
	// Duration is how long the latency test streams [3s].
	Duration time.Duration
	// Interval is the gap between two chunks of one stream [20ms, i.e. 50 tok/s per stream].
	Interval time.Duration
	// Burst makes all streams send each chunk at the same instant, as one decode step of a
	// batching server would, instead of spread evenly over the interval.
	Burst bool
}

func (o SelfTestOptions) withDefaults() SelfTestOptions {
	if o.IngestEvents <= 0 {
		o.IngestEvents = 300000
	}
	if o.Streams <= 0 {
		o.Streams = 128
	}
	if o.Duration <= 0 {
		o.Duration = 3 * time.Second
	}
	if o.Interval <= 0 {
		o.Interval = 20 * time.Millisecond
	}
	return o
}

// SelfTestReport is what the client costs on this machine.
type SelfTestReport struct {
	GOMAXPROCS int
	// IngestEventsPerSec is token events (one token per chunk, realistic vLLM chunks with
	// continuous usage) that one goroutine parses and time-stamps per second of wall time, read
	// from memory through the whole Stream path.
	IngestEventsPerSec float64
	// IngestEventsPerCPUSec is the same per second of that thread's CPU time (Linux; 0
	// elsewhere): the per-core figure, not disturbed by other processes on a busy machine.
	IngestEventsPerCPUSec float64
	// Streams, Samples and the Added* figures are the latency test: a loopback server in this
	// process stamps each chunk (monotonic clock) just before writing it; the added latency is
	// the client's arrival stamp minus that send stamp: kernel loopback, scheduling, reading,
	// parsing and stamping.
	Streams   int
	Burst     bool
	Samples   int
	AddedP50  time.Duration
	AddedP90  time.Duration
	AddedP99  time.Duration
	AddedMax  time.Duration
	Errors    int
	FirstErr  string
	WallClock time.Duration
}

// Targets of the issue: ≥ 200,000 token events/s per core, p99 added latency < 100 µs.
const (
	TargetEventsPerSec = 200000
	TargetAddedP99     = 100 * time.Microsecond
)

// SelfTest does measure the client's own cost: the ingest rate of one core and the timing
// error it adds at opts.Streams concurrent streams. It needs no server and no network beyond
// loopback.
func SelfTest(ctx context.Context, opts SelfTestOptions) (SelfTestReport, error) {
	opts = opts.withDefaults()
	start := time.Now()
	rep := SelfTestReport{GOMAXPROCS: runtime.GOMAXPROCS(0), Streams: opts.Streams, Burst: opts.Burst}
	wall, cpu, err := measureIngest(ctx, opts.IngestEvents)
	if err != nil {
		return rep, fmt.Errorf("ingest test: %w", err)
	}
	rep.IngestEventsPerSec = float64(opts.IngestEvents) / wall.Seconds()
	if cpu > 0 {
		rep.IngestEventsPerCPUSec = float64(opts.IngestEvents) / cpu.Seconds()
	}
	runtime.GC() // the ingest test's garbage must not be collected during the latency test
	lat, errs, firstErr, err := measureAddedLatency(ctx, opts)
	if err != nil {
		return rep, fmt.Errorf("latency test: %w", err)
	}
	rep.Errors, rep.FirstErr = errs, firstErr
	rep.Samples = len(lat)
	if q := quantiles(lat); q != nil {
		rep.AddedP50, rep.AddedP99, rep.AddedP90, rep.AddedMax = q[0], q[1], q[2], q[3]
	}
	rep.WallClock = time.Since(start)
	return rep, nil
}

// quantiles does sort lat and return its p50, p99, p90 and maximum (nil when empty).
func quantiles(lat []time.Duration) []time.Duration {
	if len(lat) == 0 {
		return nil
	}
	slices.Sort(lat)
	q := func(p float64) time.Duration { return lat[min(len(lat)-1, int(p*float64(len(lat))))] }
	return []time.Duration{q(0.50), q(0.99), q(0.90), lat[len(lat)-1]}
}

// chunkWords are the words of the synthetic output: random, so the repetition detector (which
// stays on) sees no loop.
var chunkWords = strings.Fields("the of harbor river light stone bread lamp quiet morning window garden market bridge snow train ferry orchard clock museum winter summer letter market notebook tide")

// syntheticStream does build a vLLM-style SSE body of n one-token chunks with continuous usage,
// a finishing chunk, a usage chunk and [DONE].
func syntheticStream(n int, seed uint64) []byte {
	rng := rand.New(rand.NewPCG(seed, 7))
	var b bytes.Buffer
	b.Grow(n * 260)
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, `data: {"id":"cmpl-8f1c2a","object":"text_completion","created":1795959439,"model":"glm-5.3-flash","choices":[{"index":0,"text":" %s","logprobs":null,"finish_reason":null,"stop_reason":null}],"usage":{"prompt_tokens":8192,"total_tokens":%d,"completion_tokens":%d}}`+"\n\n",
			chunkWords[rng.IntN(len(chunkWords))], 8192+i, i)
	}
	fmt.Fprintf(&b, `data: {"id":"cmpl-8f1c2a","object":"text_completion","created":1795959439,"model":"glm-5.3-flash","choices":[{"index":0,"text":"","logprobs":null,"finish_reason":"length","stop_reason":null}],"usage":{"prompt_tokens":8192,"total_tokens":%d,"completion_tokens":%d}}`+"\n\n", 8192+n, n)
	fmt.Fprintf(&b, `data: {"id":"cmpl-8f1c2a","object":"text_completion","created":1795959439,"model":"glm-5.3-flash","choices":[],"usage":{"prompt_tokens":8192,"total_tokens":%d,"completion_tokens":%d}}`+"\n\ndata: [DONE]\n\n", 8192+n, n)
	return b.Bytes()
}

// memTransport does answer every request with body from memory.
type memTransport struct{ body []byte }

func (m memTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		_, _ = io.Copy(io.Discard, req.Body)
		req.Body.Close()
	}
	return &http.Response{
		StatusCode: http.StatusOK, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: http.Header{"Content-Type": {"text/event-stream"}},
		Body:   io.NopCloser(bytes.NewReader(m.body)), ContentLength: -1, Request: req,
	}, nil
}

// measureIngest does stream n pre-built chunks from memory in this goroutine, locked to its
// thread so that the thread's CPU time is the client's.
func measureIngest(ctx context.Context, n int) (wall, cpu time.Duration, err error) {
	body := syntheticStream(n, 1)
	c := New("http://selftest.invalid", WithHTTPClient(&http.Client{Transport: memTransport{body}}))
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	events := 0
	cpu0, cpuOK := threadCPU()
	t0 := time.Now()
	res, err := c.Stream(ctx, Request{Model: "m", Prompt: "p", MaxTokens: n}, func(Event) { events++ })
	wall = time.Since(t0)
	if cpu1, ok := threadCPU(); ok && cpuOK {
		cpu = cpu1 - cpu0
	}
	if err != nil {
		return 0, 0, err
	}
	if events != n || res.OutputTokens != n {
		return 0, 0, fmt.Errorf("parsed %d events and %d tokens of %d", events, res.OutputTokens, n)
	}
	return wall, cpu, nil
}

// latencyServer is a loopback server whose streams send one chunk per interval and record the
// moment (this process's monotonic clock) just before writing each.
type latencyServer struct {
	opts  SelfTestOptions
	start time.Time
	chunk int
	mu    sync.Mutex
	sent  map[int][]time.Time
}

func (ls *latencyServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Prompt string `json:"prompt"`
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	id, _ := strconv.Atoi(in.Prompt)
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	fl := w.(http.Flusher)
	fl.Flush()
	offset := time.Duration(0)
	if !ls.opts.Burst {
		offset = ls.opts.Interval * time.Duration(id) / time.Duration(ls.opts.Streams)
	}
	sent := make([]time.Time, 0, ls.chunk)
	body := syntheticStream(ls.chunk, uint64(id))
	lines := bytes.SplitAfter(body, []byte("\n\n"))
	for i := 0; i < ls.chunk; i++ {
		due := ls.start.Add(offset + time.Duration(i+1)*ls.opts.Interval)
		if d := time.Until(due); d > 0 {
			select {
			case <-time.After(d):
			case <-r.Context().Done():
				return
			}
		}
		sent = append(sent, time.Now())
		if _, err := w.Write(lines[i]); err != nil {
			return
		}
		fl.Flush()
	}
	for _, l := range lines[ls.chunk:] {
		_, _ = w.Write(l)
	}
	ls.mu.Lock()
	ls.sent[id] = sent
	ls.mu.Unlock()
}

// measureAddedLatency does run opts.Streams streams against a loopback latencyServer and
// returns arrival − send for every chunk.
func measureAddedLatency(ctx context.Context, opts SelfTestOptions) (lat []time.Duration, errs int, firstErr string, err error) {
	chunks := max(int(opts.Duration/opts.Interval), 1)
	ls := &latencyServer{opts: opts, chunk: chunks, sent: map[int][]time.Time{}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, 0, "", fmt.Errorf("listen on loopback: %w", err)
	}
	srv := &httptest.Server{Listener: ln, Config: &http.Server{Handler: ls}}
	srv.Start()
	defer srv.Close()
	c := New(srv.URL, WithMaxConns(opts.Streams))
	defer c.Close()

	// Open every stream first (the server waits for start + interval before the first chunk).
	ls.start = time.Now().Add(200 * time.Millisecond)
	results := make([]Result, opts.Streams)
	errList := make([]error, opts.Streams)
	var wg sync.WaitGroup
	for id := range opts.Streams {
		wg.Go(func() {
			results[id], errList[id] = c.Stream(ctx, Request{Model: "m", Prompt: strconv.Itoa(id), MaxTokens: chunks}, nil)
		})
	}
	wg.Wait()
	ls.mu.Lock()
	defer ls.mu.Unlock()
	for id, res := range results {
		if e := errList[id]; e != nil {
			errs++
			if firstErr == "" {
				firstErr = e.Error()
			}
			continue
		}
		sent := ls.sent[id]
		if len(res.Events) != len(sent) {
			errs++
			if firstErr == "" {
				firstErr = fmt.Sprintf("stream %d: %d events for %d chunks sent", id, len(res.Events), len(sent))
			}
			continue
		}
		for i, ev := range res.Events {
			lat = append(lat, ev.At.Sub(sent[i]))
		}
	}
	if ctx.Err() != nil {
		return lat, errs, firstErr, ctx.Err()
	}
	if len(lat) == 0 {
		return nil, errs, firstErr, errors.New("no stream completed: " + firstErr)
	}
	return lat, errs, firstErr, nil
}
