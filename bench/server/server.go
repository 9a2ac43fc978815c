package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/speedmatrix/speedmatrix/bench/errbody"
)

// ErrNotSupported means the server has no such endpoint (404, 405 or 501).
var ErrNotSupported = errors.New("endpoint not supported by this server")

// StatusError is an answer with an unexpected HTTP status.
type StatusError struct {
	Method, Path string
	Status       int
	Message      string // the server's message or the start of the body
}

// Error does describe the failed call.
func (e *StatusError) Error() string {
	s := fmt.Sprintf("%s %s: HTTP %d", e.Method, e.Path, e.Status)
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

// Unwrap does make errors.Is(err, ErrNotSupported) true for 404, 405 and 501.
func (e *StatusError) Unwrap() error {
	switch e.Status {
	case http.StatusNotFound, http.StatusMethodNotAllowed, http.StatusNotImplemented:
		return ErrNotSupported
	}
	return nil
}

// Client calls one server's informational endpoints. It is safe for concurrent use.
type Client struct {
	base   string
	apiKey string
	hc     *http.Client
	// tokShape remembers which /tokenize request shape the server took: 0 unknown, 1 vLLM
	// ("prompt"/"prompt" reply), 2 llama.cpp ("content"/"content" reply).
	tokShape atomic.Int32
}

// Option configures a Client.
type Option func(*Client)

// WithAPIKey does send "Authorization: Bearer key".
func WithAPIKey(key string) Option { return func(c *Client) { c.apiKey = key } }

// WithHTTPClient does use hc (default: a client with a 30 s timeout per call for small calls;
// tokenizing a 1M-token prompt can take seconds, so the timeout is generous).
func WithHTTPClient(hc *http.Client) Option { return func(c *Client) { c.hc = hc } }

// New does return a Client for the server at baseURL ("http://host:8000"; a trailing "/v1" is
// dropped).
func New(baseURL string, opts ...Option) *Client {
	u := strings.TrimRight(baseURL, "/")
	u = strings.TrimRight(strings.TrimSuffix(u, "/v1"), "/")
	c := &Client{base: u, hc: &http.Client{Timeout: 120 * time.Second}}
	for _, o := range opts {
		o(c)
	}
	return c
}

// BaseURL does return the normalised base URL.
func (c *Client) BaseURL() string { return c.base }

// maxBody bounds what is read of any informational answer (a 1M-token /tokenize reply is ~8 MB).
const maxBody = 256 << 20

// call does send one request and decode a JSON answer into out (nil: ignore the body).
func (c *Client) call(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("encode %s body: %w", path, err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		return fmt.Errorf("build %s %s: %w", method, path, err)
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	if c.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.apiKey)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, c.base+path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return fmt.Errorf("%s %s: read answer: %w", method, path, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return &StatusError{Method: method, Path: path, Status: resp.StatusCode, Message: errbody.Message(b)}
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("%s %s: answer is not the expected JSON (%v): %q", method, path, err, cut(b, 200))
	}
	return nil
}

// cut does return at most n bytes of b, marking a cut.
func cut(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}

// Model is one served model.
type Model struct {
	ID      string `json:"id"`
	OwnedBy string `json:"owned_by,omitempty"`
	Root    string `json:"root,omitempty"`
	// MaxModelLen is vLLM's context limit; 0 when the server does not say (see Props).
	MaxModelLen int `json:"max_model_len,omitempty"`
}

// Models does list GET /v1/models.
func (c *Client) Models(ctx context.Context) ([]Model, error) {
	var out struct {
		Data []Model `json:"data"`
	}
	if err := c.call(ctx, http.MethodGet, "/v1/models", nil, &out); err != nil {
		return nil, err
	}
	return out.Data, nil
}

// Health does return nil when GET /health answers 2xx. A server without /health (404) counts as
// healthy when GET /v1/models answers instead; 503 and connection errors are returned.
func (c *Client) Health(ctx context.Context) error {
	err := c.call(ctx, http.MethodGet, "/health", nil, nil)
	if errors.Is(err, ErrNotSupported) {
		if _, merr := c.Models(ctx); merr != nil {
			return fmt.Errorf("no /health and /v1/models failed: %w", merr)
		}
		return nil
	}
	return err
}

// Version does return the engine version from GET /version (vLLM) or GET /api/version (Ollama);
// ErrNotSupported when neither exists.
func (c *Client) Version(ctx context.Context) (string, error) {
	v, err := c.VersionInfo(ctx)
	return v.Version, err
}

// SimulatorName is what the built-in simulator calls itself in /version.
const SimulatorName = "speedmatrix sim"

// VersionInfo is what a server's version endpoint says.
type VersionInfo struct {
	Version string
	// Simulator is set when the server is the built-in simulator (`speedmatrix sim`).
	Simulator *SimulatorInfo
}

// SimulatorInfo is how the built-in simulator describes itself in /version.
type SimulatorInfo struct {
	Profile string
	// Speedup is how many times faster than its profile the simulator runs (1 when it did not
	// say a positive number).
	Speedup float64
}

// VersionInfo does read GET /version (vLLM, and the built-in simulator, which adds
// "simulator": {"name": "speedmatrix sim", "profile", "speedup"}) or GET /api/version (Ollama);
// ErrNotSupported when neither exists.
func (c *Client) VersionInfo(ctx context.Context) (VersionInfo, error) {
	var out struct {
		Version   string `json:"version"`
		Simulator *struct {
			Name    string  `json:"name"`
			Profile string  `json:"profile"`
			Speedup float64 `json:"speedup"`
		} `json:"simulator"`
	}
	err := c.call(ctx, http.MethodGet, "/version", nil, &out)
	if errors.Is(err, ErrNotSupported) {
		err = c.call(ctx, http.MethodGet, "/api/version", nil, &out)
	}
	if err != nil {
		return VersionInfo{}, err
	}
	v := VersionInfo{Version: out.Version}
	if sim := out.Simulator; sim != nil && sim.Name == SimulatorName {
		v.Simulator = &SimulatorInfo{Profile: sim.Profile, Speedup: sim.Speedup}
		if !(sim.Speedup > 0) || math.IsInf(sim.Speedup, 0) {
			v.Simulator.Speedup = 1
		}
	}
	return v, nil
}

// Props are llama.cpp's server properties (GET /props).
type Props struct {
	ContextSize int    // default_generation_settings.n_ctx: tokens per slot
	TotalSlots  int    // requests the server runs at once
	BuildInfo   string // e.g. "b11669-…"
}

// Props does read GET /props (llama.cpp); ErrNotSupported elsewhere.
func (c *Client) Props(ctx context.Context) (Props, error) {
	var out struct {
		Default struct {
			NCtx int `json:"n_ctx"`
		} `json:"default_generation_settings"`
		NCtx       int    `json:"n_ctx"`
		TotalSlots int    `json:"total_slots"`
		BuildInfo  string `json:"build_info"`
	}
	if err := c.call(ctx, http.MethodGet, "/props", nil, &out); err != nil {
		return Props{}, err
	}
	p := Props{ContextSize: out.Default.NCtx, TotalSlots: out.TotalSlots, BuildInfo: out.BuildInfo}
	if p.ContextSize == 0 {
		p.ContextSize = out.NCtx
	}
	return p, nil
}
