package stream

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/speedmatrix/speedmatrix/bench/errbody"
)

// Endpoints a Request can use.
const (
	EndpointCompletions = "completions" // POST /v1/completions with "prompt"
	EndpointChat        = "chat"        // POST /v1/chat/completions with "messages"
	readBufferSize      = 64 << 10      // initial line buffer; lines may be longer
	drainTimeout        = 100 * time.Millisecond
	errorBodyLimit      = 64 << 10
)

// Request is one completion to stream.
type Request struct {
	Endpoint  string // EndpointCompletions (default when empty) or EndpointChat
	Model     string
	Prompt    string
	MaxTokens int
	// ExtraBody keys are merged into the JSON body last and override the defaults; a nil value
	// removes the key (e.g. "ignore_eos" for a server that rejects fields it does not know).
	ExtraBody map[string]any
}

// Event is one chunk that added output.
type Event struct {
	At        time.Time // arrival of the chunk's line
	Tokens    int       // output tokens this chunk added (see the package doc for "final" usage)
	CumTokens int       // output tokens up to and including this chunk
}

// Result is what one stream measured; see the package doc for the exact time stamps.
type Result struct {
	Start  time.Time     // Stream was called
	Sent   time.Time     // the request was fully written
	Queued time.Duration // Sent − Start: time spent inside the client
	// ConnWait is the part of Queued spent getting a connection (a free pooled one, or a dial).
	ConnWait   time.Duration
	FirstToken time.Time // first chunk carrying output
	Last       time.Time // last chunk carrying output
	Events     []Event
	// PromptTokens and OutputTokens are usage.prompt_tokens and usage.completion_tokens (see
	// UsageSource); Chunks counts the chunks that carried output.
	PromptTokens int
	OutputTokens int
	Chunks       int
	FinishReason string
	UsageSource  string // UsageContinuous, UsageFinal or UsageChunks
	Reused       bool   // the request went over a reused connection
	Retried      bool   // the first attempt failed on a stale reused connection and was retried
}

// TTFT does return FirstToken − Sent, or 0 when either is unknown.
func (r *Result) TTFT() time.Duration {
	if r.Sent.IsZero() || r.FirstToken.IsZero() {
		return 0
	}
	return r.FirstToken.Sub(r.Sent)
}

// Client streams completions from one server. It is safe for concurrent use.
type Client struct {
	base      string
	apiKey    string
	hc        *http.Client
	ownedTr   *http.Transport // nil when the caller supplied the HTTP client
	fresh     *http.Client    // no keep-alive: the retry after a stale connection dials anew
	now       func() time.Time
	maxConns  int
	rep       RepetitionConfig
	userAgent string
	idle      time.Duration
	dial      func(ctx context.Context, network, addr string) (net.Conn, error)
	bodies    bodyCache
}

// bodyCache holds the last request body the client encoded. The C streams of a decode cell
// send the same request, whose prompt may be megabytes of JSON at long contexts: encoding it
// once instead of once a request keeps that work out of the time between requests.
type bodyCache struct {
	mu       sync.Mutex
	endpoint string
	model    string
	prompt   string
	max      int
	path     string
	body     []byte // shared by concurrent requests, never modified
	encodes  int    // bodies encoded, for tests
}

// Option configures a Client.
type Option func(*Client)

// WithAPIKey does send "Authorization: Bearer key" with every request.
func WithAPIKey(key string) Option { return func(c *Client) { c.apiKey = key } }

// WithHTTPClient does use hc instead of the client's own HTTP/1.1 transport (tests, proxies).
func WithHTTPClient(hc *http.Client) Option { return func(c *Client) { c.hc = hc } }

// WithDialer does open the connections of the client's own transports with dial instead of
// the TCP dialer (an in-memory network in tests); the transports are otherwise unchanged.
func WithDialer(dial func(ctx context.Context, network, addr string) (net.Conn, error)) Option {
	return func(c *Client) { c.dial = dial }
}

// WithClock does take every time stamp from now (tests); the default is time.Now.
func WithClock(now func() time.Time) Option { return func(c *Client) { c.now = now } }

// WithMaxConns does cap the connections to the server at n and keep up to n idle (n ≥ the
// number of concurrent streams, or streams queue inside the client). The default is no cap with
// 256 idle connections.
func WithMaxConns(n int) Option { return func(c *Client) { c.maxConns = n } }

// WithRepetition does replace DefaultRepetition; RepetitionConfig{} turns detection off.
func WithRepetition(rc RepetitionConfig) Option { return func(c *Client) { c.rep = rc } }

// WithIdleTimeout does fail a stream with ErrStalled when its body delivers no line for d (0,
// the default: wait as long as ctx allows). The wait for the response headers is bounded by ctx
// alone.
func WithIdleTimeout(d time.Duration) Option { return func(c *Client) { c.idle = d } }

// WithUserAgent does set the User-Agent header.
func WithUserAgent(ua string) Option { return func(c *Client) { c.userAgent = ua } }

// New does return a Client for the server at baseURL (e.g. "http://localhost:8000"; a trailing
// "/v1" is accepted and dropped).
func New(baseURL string, opts ...Option) *Client {
	c := &Client{base: normalizeBase(baseURL), now: time.Now, rep: DefaultRepetition, userAgent: "speedmatrix"}
	for _, o := range opts {
		o(c)
	}
	if c.hc == nil {
		c.ownedTr = NewTransport(c.maxConns)
		c.hc = &http.Client{Transport: c.ownedTr}
		ft := NewTransport(0)
		ft.DisableKeepAlives = true
		if c.dial != nil {
			c.ownedTr.DialContext, ft.DialContext = c.dial, c.dial
		}
		c.fresh = &http.Client{Transport: ft}
	}
	return c
}

// normalizeBase does strip trailing slashes and a trailing "/v1".
func normalizeBase(u string) string {
	u = strings.TrimRight(u, "/")
	u = strings.TrimSuffix(u, "/v1")
	return strings.TrimRight(u, "/")
}

// NewTransport does return the benchmark transport: HTTP/1.1 only, no compression, no proxy,
// maxConns connections per host (0: no cap, 256 idle).
func NewTransport(maxConns int) *http.Transport {
	idle := maxConns
	if idle <= 0 {
		idle = 256
	}
	return &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        0,
		MaxIdleConnsPerHost: idle,
		MaxConnsPerHost:     max(maxConns, 0),
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
		ForceAttemptHTTP2:   false,
		TLSNextProto:        map[string]func(string, *tls.Conn) http.RoundTripper{},
		WriteBufferSize:     64 << 10,
		ReadBufferSize:      64 << 10,
	}
}

// Close does release idle connections of the client's own transport.
func (c *Client) Close() {
	if c.ownedTr != nil {
		c.ownedTr.CloseIdleConnections()
	}
}

// cachedBody does return req's path and body, from the cache when the last request without
// extra body fields was the same.
func (c *Client) cachedBody(req Request) (string, []byte, error) {
	if req.ExtraBody != nil {
		return c.body(req)
	}
	b := &c.bodies
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.body != nil && b.endpoint == req.Endpoint && b.model == req.Model && b.max == req.MaxTokens && b.prompt == req.Prompt {
		return b.path, b.body, nil
	}
	path, body, err := c.body(req)
	if err != nil {
		return "", nil, err
	}
	b.endpoint, b.model, b.max, b.prompt, b.path, b.body = req.Endpoint, req.Model, req.MaxTokens, req.Prompt, path, body
	b.encodes++
	return path, body, nil
}

// body does encode the JSON request body.
func (c *Client) body(req Request) (path string, body []byte, err error) {
	m := map[string]any{
		"model":          req.Model,
		"max_tokens":     req.MaxTokens,
		"stream":         true,
		"stream_options": map[string]any{"include_usage": true, "continuous_usage_stats": true},
		"ignore_eos":     true,
		"temperature":    0,
	}
	switch req.Endpoint {
	case "", EndpointCompletions:
		path = "/v1/completions"
		m["prompt"] = req.Prompt
	case EndpointChat:
		path = "/v1/chat/completions"
		m["messages"] = []map[string]string{{"role": "user", "content": req.Prompt}}
	default:
		return "", nil, fmt.Errorf("endpoint %q: want %q or %q", req.Endpoint, EndpointCompletions, EndpointChat)
	}
	for k, v := range req.ExtraBody {
		if v == nil {
			delete(m, k) // e.g. {"ignore_eos": nil} for a server that rejects unknown fields
			continue
		}
		m[k] = v
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(m); err != nil {
		return "", nil, fmt.Errorf("encode request body: %w", err)
	}
	return path, buf.Bytes(), nil
}

// Stream does send req and read its SSE response to the end, calling onEvent (may be nil) for
// every chunk that added output. The Result is filled as far as the stream got, also on error.
func (c *Client) Stream(ctx context.Context, req Request, onEvent func(Event)) (Result, error) {
	res := Result{Start: c.now()}
	path, body, err := c.cachedBody(req)
	if err != nil {
		return res, err
	}
	resp, cancel, err := c.send(ctx, path, body, &res)
	if err != nil {
		return res, err
	}
	defer cancel()
	defer resp.Body.Close()
	if resp.StatusCode >= 400 {
		return res, readHTTPError(resp)
	}
	d := newDecoder(&res, onEvent, c.rep)
	d.eventsCap = min(max(req.MaxTokens, 0), maxEventsPrealloc) // at most one event per token
	lr := &lineReader{r: bufio.NewReaderSize(resp.Body, readBufferSize)}
	var stalled atomic.Bool
	var idle *time.Timer
	if c.idle > 0 {
		idle = time.AfterFunc(c.idle, func() { stalled.Store(true); cancel() })
		defer idle.Stop()
	}
	for !d.done {
		line, err := lr.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			d.settle()
			if stalled.Load() {
				return res, fmt.Errorf("%w: no data for %v after %d chunks", ErrStalled, c.idle, res.Chunks)
			}
			if ctx.Err() != nil {
				if loop := d.loop(); loop != nil {
					return res, fmt.Errorf("%w (stream cut off: %w)", loop, ctx.Err())
				}
				return res, fmt.Errorf("read stream: %w", ctx.Err())
			}
			return res, fmt.Errorf("read stream after %d chunks: %w", res.Chunks, err)
		}
		if idle != nil {
			idle.Reset(c.idle)
		}
		if err := d.line(line, c.now()); err != nil {
			d.settle()
			return res, err
		}
	}
	if idle != nil {
		idle.Stop()
	}
	if d.done {
		// Read the end of the chunked body so that the connection can be reused; a server that
		// keeps it open after [DONE] is cut off after drainTimeout.
		t := time.AfterFunc(drainTimeout, cancel)
		_, _ = io.Copy(io.Discard, lr.r)
		t.Stop()
	}
	return res, d.finish()
}

// send does write the request, retrying once on a fresh connection when a reused one turns out
// to have been closed by the server before it answered. The returned cancel ends the request.
func (c *Client) send(ctx context.Context, path string, body []byte, res *Result) (*http.Response, context.CancelFunc, error) {
	for attempt := 0; ; attempt++ {
		var reused bool
		// WroteRequest runs on the transport's writer goroutine, which may still be writing when
		// an early answer (a 413 for a huge prompt) has already returned from Do.
		var sentMu sync.Mutex
		var sent time.Time
		trace := &httptrace.ClientTrace{
			GotConn: func(info httptrace.GotConnInfo) {
				reused = info.Reused
				res.ConnWait = c.now().Sub(res.Start)
			},
			WroteRequest: func(info httptrace.WroteRequestInfo) {
				if info.Err == nil {
					at := c.now()
					sentMu.Lock()
					sent = at
					sentMu.Unlock()
				}
			},
		}
		rctx, cancel := context.WithCancel(httptrace.WithClientTrace(ctx, trace))
		hreq, err := http.NewRequestWithContext(rctx, http.MethodPost, c.base+path, bytes.NewReader(body))
		if err != nil {
			cancel()
			return nil, nil, fmt.Errorf("build request: %w", err)
		}
		hreq.Header.Set("Content-Type", "application/json")
		hreq.Header.Set("Accept", "text/event-stream")
		hreq.Header.Set("User-Agent", c.userAgent)
		if c.apiKey != "" {
			hreq.Header.Set("Authorization", "Bearer "+c.apiKey)
		}
		hc := c.hc
		if attempt > 0 && c.fresh != nil {
			hc = c.fresh
		}
		resp, err := hc.Do(hreq)
		res.Reused = reused
		sentMu.Lock()
		res.Sent = sent
		sentMu.Unlock()
		if err == nil {
			if res.Sent.IsZero() {
				// A transport that reports no httptrace events (a caller's own RoundTripper):
				// the request counts as sent when Stream was called.
				res.Sent = res.Start
			}
			res.Queued = res.Sent.Sub(res.Start)
			return resp, cancel, nil
		}
		cancel()
		res.Sent = time.Time{}
		if attempt == 0 && reused && ctx.Err() == nil && staleConnError(err) {
			res.Retried = true
			continue
		}
		if ctx.Err() != nil {
			return nil, nil, fmt.Errorf("send request: %w", ctx.Err())
		}
		return nil, nil, fmt.Errorf("send request to %s: %w", c.base+path, err)
	}
}

// staleConnError does report whether err is how a connection the server had already closed
// fails: EOF or a reset before any response byte.
func staleConnError(err error) bool {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) {
		return true
	}
	msg := err.Error()
	for _, s := range []string{"connection reset", "broken pipe", "server closed", "EOF"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// readHTTPError does turn a response with status ≥ 400 into an *HTTPError with the server's
// message.
func readHTTPError(resp *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, errorBodyLimit))
	msg := ""
	if len(bytes.TrimSpace(b)) > 0 {
		msg = errbody.Message(b)
	}
	return &HTTPError{Status: resp.StatusCode, Message: msg}
}
