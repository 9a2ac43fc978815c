package benchtest

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Fault is what the server does to one request instead of streaming it normally.
type Fault int

// The faults.
const (
	FaultNone       Fault = iota
	FaultHTTP500          // answer 500 with an error body
	FaultTruncate         // stop after a few chunks without finish_reason or [DONE], closing the connection
	FaultRepeat           // stream the same text over and over (a repetition loop)
	FaultStreamJunk       // send a chunk that is not JSON
	FaultStall            // send the headers, then nothing until the client gives up
)

// Config is how the server behaves.
type Config struct {
	Model       string
	MaxModelLen int // reported by /v1/models and /tokenize
	// TTFT is the time from the request's arrival (after a free slot, see MaxRunning) to its
	// first chunk, which carries one token. TBT is the time per output token afterwards; a chunk
	// of ChunkTokens tokens is sent every ChunkTokens·TBT.
	TTFT time.Duration
	// TTFTFor, when set, gives the n-th stream request (from 1) its own time to first token.
	TTFTFor     func(n int) time.Duration
	TBT         time.Duration
	ChunkTokens int
	// MaxRunning caps the requests served at once; others wait (and count as waiting) until a
	// slot frees. 0: no cap.
	MaxRunning int
	// KVBlocks and BlockSize give vllm:cache_config_info (KV capacity = their product); 0: the
	// metric is absent.
	KVBlocks, BlockSize int
	// FinalUsage sends usage only in the last chunk, as servers without continuous_usage_stats
	// do; content chunks carry none.
	FinalUsage bool
	// APIKey, when set, is required as "Authorization: Bearer KEY" on every endpoint (else 401).
	APIKey string
	// NoMetrics makes /metrics answer 404.
	NoMetrics bool
	// SimSpeedup, when above 0, is reported as the built-in simulator reports its speed
	// (speedmatrix_sim_speedup in /metrics).
	SimSpeedup float64
	// Listener, when set, is where the server serves (its URL is http:// and its address),
	// instead of a free loopback port: tests under testing/synctest give an in-memory one
	// (internal/memnet), so that the server's waits and its client's are the bubble's own.
	Listener net.Listener
	// Fault, when set, picks a fault for a stream request: the n-th (counted from 1), with its
	// prompt length in words and its max_tokens.
	Fault func(n, promptTokens, maxTokens int) Fault
	// Metrics, when set, overrides the running and waiting counts /metrics reports, given the
	// real ones.
	Metrics func(running, waiting int) (int, int)
	// Frontend is the time after a request's arrival during which it is neither running nor
	// waiting (vLLM's API server tokenizing it): at concurrency 1 the server runs nothing for
	// this long between one request and the next.
	Frontend time.Duration
	// SerialPrefill admits one request at a time: a request counts as waiting until no other
	// is in its TTFT, then as running through its TTFT, as chunked prefill admits requests
	// whose prompts fill the step's token budget.
	SerialPrefill bool
}

// Chunk is one chunk the server sent: when (after Flush) and how many tokens.
type Chunk struct {
	At     time.Time
	Tokens int
}

// Request is one stream request as the server saw it.
type Request struct {
	Arrived    time.Time // its body was read (before any wait for a slot)
	FirstChunk time.Time // its first chunk was flushed; zero when none was
	// Chunks holds the flush time and tokens of each chunk that carried tokens, in order.
	Chunks       []Chunk
	PromptTokens int
	PromptHash   uint64 // FNV-1a of the prompt text: equal prompts, equal hashes
	MaxTokens    int
}

// TTFT returns FirstChunk − Arrived, the server-side truth of the time to first token.
func (r Request) TTFT() time.Duration { return r.FirstChunk.Sub(r.Arrived) }

// Server is a running fake server.
type Server struct {
	*httptest.Server
	cfg Config

	slots    chan struct{}
	prefill  chan struct{} // held by the request in its TTFT with SerialPrefill
	running  atomic.Int64
	waiting  atomic.Int64
	requests atomic.Int64
	versions atomic.Int64 // GET /version requests
	dead     atomic.Bool

	mu     sync.Mutex
	chunks []Chunk
	reqs   []Request
	vocab  []string
	ids    map[string]int

	connMu   sync.Mutex
	conns    map[net.Conn]http.ConnState
	activeAt map[net.Conn]time.Time // when the connection's current request began to arrive
}

// connKey is the request context key of the request's connection.
type connKey struct{}

// New starts a server; Close it when done.
func New(cfg Config) *Server {
	if cfg.Model == "" {
		cfg.Model = "fake-model"
	}
	if cfg.ChunkTokens < 1 {
		cfg.ChunkTokens = 1
	}
	s := &Server{cfg: cfg, ids: map[string]int{}, conns: map[net.Conn]http.ConnState{}, activeAt: map[net.Conn]time.Time{}}
	if cfg.MaxRunning > 0 {
		s.slots = make(chan struct{}, cfg.MaxRunning)
	}
	if cfg.SerialPrefill {
		s.prefill = make(chan struct{}, 1)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/completions", s.completions)
	mux.HandleFunc("POST /v1/chat/completions", s.completions)
	mux.HandleFunc("GET /v1/models", s.models)
	mux.HandleFunc("GET /health", s.health)
	mux.HandleFunc("GET /version", func(w http.ResponseWriter, _ *http.Request) {
		s.versions.Add(1)
		writeJSON(w, map[string]string{"version": "0.0.0-fake"})
	})
	mux.HandleFunc("GET /metrics", s.metrics)
	mux.HandleFunc("POST /tokenize", s.tokenize)
	mux.HandleFunc("POST /detokenize", s.detokenize)
	var h http.Handler = mux
	if cfg.APIKey != "" {
		h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Authorization") != "Bearer "+cfg.APIKey {
				http.Error(w, `{"error":"Unauthorized"}`, http.StatusUnauthorized)
				return
			}
			mux.ServeHTTP(w, r)
		})
	}
	s.Server = httptest.NewUnstartedServer(h)
	s.Server.Config.ConnContext = func(ctx context.Context, c net.Conn) context.Context {
		return context.WithValue(ctx, connKey{}, c)
	}
	s.Server.Config.ConnState = func(c net.Conn, st http.ConnState) {
		now := time.Now()
		s.connMu.Lock()
		defer s.connMu.Unlock()
		if st == http.StateClosed || st == http.StateHijacked {
			delete(s.conns, c)
			delete(s.activeAt, c)
			return
		}
		if st == http.StateActive {
			s.activeAt[c] = now
		}
		s.conns[c] = st
	}
	if cfg.Listener != nil {
		s.Server.Listener.Close()
		s.Server.Listener = cfg.Listener
	}
	s.Server.Start()
	return s
}

// Kill makes the server dead: /health answers 503, streams in flight are cut off, and every new
// request has its connection closed without an answer.
func (s *Server) Kill() { s.dead.Store(true) }

// Refuse closes the listener and every connection, so that new connections are refused.
func (s *Server) Refuse() {
	s.dead.Store(true)
	s.Server.Listener.Close()
	s.Server.CloseClientConnections()
}

// VersionRequests returns how many GET /version requests arrived.
func (s *Server) VersionRequests() int { return int(s.versions.Load()) }

// Requests returns how many stream requests arrived.
func (s *Server) Requests() int { return int(s.requests.Load()) }

// Running returns how many requests stream now.
func (s *Server) Running() int { return int(s.running.Load()) }

// ActiveConns returns the connections that are open and not idle.
func (s *Server) ActiveConns() int {
	s.connMu.Lock()
	defer s.connMu.Unlock()
	n := 0
	for _, st := range s.conns {
		if st != http.StateIdle {
			n++
		}
	}
	return n
}

// Counts returns the running and waiting counts /metrics reports now.
func (s *Server) Counts() (running, waiting int) {
	run, wait := int(s.running.Load()), int(s.waiting.Load())
	if s.cfg.Metrics != nil {
		run, wait = s.cfg.Metrics(run, wait)
	}
	return run, wait
}

// KVCacheTokens returns the KV capacity /metrics reports (0 when absent).
func (s *Server) KVCacheTokens() int { return s.cfg.KVBlocks * s.cfg.BlockSize }

// Dead reports whether Kill or Refuse was called.
func (s *Server) Dead() bool { return s.dead.Load() }

// RequestLog returns the stream requests so far.
func (s *Server) RequestLog() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Request, len(s.reqs))
	for i, r := range s.reqs {
		out[i] = r
		out[i].Chunks = append([]Chunk(nil), r.Chunks...)
	}
	return out
}

// TokensBetween returns the tokens of the chunks the server sent in [from, to).
func (s *Server) TokensBetween(from, to time.Time) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, c := range s.chunks {
		if !c.At.Before(from) && c.At.Before(to) {
			n += c.Tokens
		}
	}
	return n
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// abort closes the connection without an answer.
func abort(w http.ResponseWriter) {
	if hj, ok := w.(http.Hijacker); ok {
		if c, _, err := hj.Hijack(); err == nil {
			c.Close()
			return
		}
	}
	panic(http.ErrAbortHandler)
}

func (s *Server) health(w http.ResponseWriter, _ *http.Request) {
	if s.dead.Load() {
		http.Error(w, "engine dead", http.StatusServiceUnavailable)
		return
	}
	w.WriteHeader(http.StatusOK)
}

func (s *Server) models(w http.ResponseWriter, _ *http.Request) {
	if s.dead.Load() {
		abort(w)
		return
	}
	writeJSON(w, map[string]any{"object": "list", "data": []map[string]any{
		{"id": s.cfg.Model, "object": "model", "max_model_len": s.cfg.MaxModelLen},
	}})
}

func (s *Server) metrics(w http.ResponseWriter, _ *http.Request) {
	if s.dead.Load() {
		abort(w)
		return
	}
	if s.cfg.NoMetrics {
		http.NotFound(w, nil)
		return
	}
	run, wait := s.Counts()
	var b strings.Builder
	m := s.cfg.Model
	fmt.Fprintf(&b, "# HELP vllm:num_requests_running Number of requests in model execution batches.\n# TYPE vllm:num_requests_running gauge\n")
	fmt.Fprintf(&b, "vllm:num_requests_running{engine=\"0\",model_name=%q} %d\n", m, run)
	fmt.Fprintf(&b, "# HELP vllm:num_requests_waiting Number of requests waiting to be processed.\n# TYPE vllm:num_requests_waiting gauge\n")
	fmt.Fprintf(&b, "vllm:num_requests_waiting{engine=\"0\",model_name=%q} %d\n", m, wait)
	fmt.Fprintf(&b, "# HELP vllm:kv_cache_usage_perc KV-cache usage. 1 means 100 percent usage.\n# TYPE vllm:kv_cache_usage_perc gauge\n")
	fmt.Fprintf(&b, "vllm:kv_cache_usage_perc{engine=\"0\",model_name=%q} %g\n", m, 0.01*float64(run))
	if s.cfg.KVBlocks > 0 {
		fmt.Fprintf(&b, "# HELP vllm:cache_config_info Information of the LLMEngine CacheConfig\n# TYPE vllm:cache_config_info gauge\n")
		fmt.Fprintf(&b, "vllm:cache_config_info{block_size=\"%d\",cache_dtype=\"auto\",enable_prefix_caching=\"True\",engine=\"0\",gpu_memory_utilization=\"0.9\",num_cpu_blocks=\"None\",num_gpu_blocks=\"%d\"} 1.0\n", s.cfg.BlockSize, s.cfg.KVBlocks)
	}
	if s.cfg.SimSpeedup > 0 {
		fmt.Fprintf(&b, "# HELP speedmatrix_sim_speedup How many times faster than its profile the simulator runs.\n# TYPE speedmatrix_sim_speedup gauge\n")
		fmt.Fprintf(&b, "speedmatrix_sim_speedup %g\n", s.cfg.SimSpeedup)
	}
	w.Header().Set("Content-Type", "text/plain; version=0.0.4")
	_, _ = io.WriteString(w, b.String())
}

// tokenize splits the prompt into words; each distinct word is a token id.
func (s *Server) tokenize(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Prompt   string `json:"prompt"`
		Messages []struct {
			Content string `json:"content"`
		} `json:"messages"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	text := req.Prompt
	for _, m := range req.Messages {
		text += " " + m.Content
	}
	words := strings.Fields(text)
	ids := make([]int, len(words))
	s.mu.Lock()
	for i, wd := range words {
		id, ok := s.ids[wd]
		if !ok {
			id = len(s.vocab)
			s.vocab = append(s.vocab, wd)
			s.ids[wd] = id
		}
		ids[i] = id
	}
	s.mu.Unlock()
	writeJSON(w, map[string]any{"count": len(ids), "max_model_len": s.cfg.MaxModelLen, "tokens": ids})
}

func (s *Server) detokenize(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Tokens []int `json:"tokens"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	words := make([]string, 0, len(req.Tokens))
	s.mu.Lock()
	for _, id := range req.Tokens {
		if id < 0 || id >= len(s.vocab) {
			s.mu.Unlock()
			http.Error(w, fmt.Sprintf("token id %d out of range", id), http.StatusBadRequest)
			return
		}
		words = append(words, s.vocab[id])
	}
	s.mu.Unlock()
	writeJSON(w, map[string]any{"prompt": strings.Join(words, " ")})
}

// completions streams one request on the server's clock: the first chunk (one token) at
// arrival + TTFT, then a chunk of ChunkTokens tokens every ChunkTokens·TBT, each deadline
// computed from the first, so delays never accumulate.
func (s *Server) completions(w http.ResponseWriter, r *http.Request) {
	if s.dead.Load() {
		abort(w)
		return
	}
	var req struct {
		Prompt   string `json:"prompt"`
		Messages []struct {
			Content string `json:"content"`
		} `json:"messages"`
		MaxTokens int  `json:"max_tokens"`
		Stream    bool `json:"stream"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	arrived := time.Now()
	if c, ok := r.Context().Value(connKey{}).(net.Conn); ok {
		s.connMu.Lock()
		if at, ok := s.activeAt[c]; ok {
			arrived = at
		}
		s.connMu.Unlock()
	}
	n := int(s.requests.Add(1))
	prompt := req.Prompt
	for _, m := range req.Messages {
		prompt += " " + m.Content
	}
	promptTokens := len(strings.Fields(prompt))
	fault := FaultNone
	if s.cfg.Fault != nil {
		fault = s.cfg.Fault(n, promptTokens, req.MaxTokens)
	}
	if fault == FaultHTTP500 {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = io.WriteString(w, `{"object":"error","message":"injected failure","type":"InternalServerError","code":500}`)
		return
	}
	if s.cfg.MaxModelLen > 0 && promptTokens+req.MaxTokens > s.cfg.MaxModelLen {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = fmt.Fprintf(w, `{"object":"error","message":"prompt of %d tokens plus max_tokens %d exceeds max_model_len %d","code":400}`, promptTokens, req.MaxTokens, s.cfg.MaxModelLen)
		return
	}
	s.mu.Lock()
	idx := len(s.reqs)
	h := fnv.New64a()
	_, _ = io.WriteString(h, prompt)
	s.reqs = append(s.reqs, Request{Arrived: arrived, PromptTokens: promptTokens, PromptHash: h.Sum64(), MaxTokens: req.MaxTokens})
	s.mu.Unlock()
	ctx := r.Context()
	if s.cfg.Frontend > 0 {
		t := time.NewTimer(s.cfg.Frontend)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
	queue := s.slots != nil || s.prefill != nil
	if queue {
		s.waiting.Add(1)
	}
	if s.slots != nil {
		select {
		case s.slots <- struct{}{}:
			defer func() { <-s.slots }()
		case <-ctx.Done():
			s.waiting.Add(-1)
			return
		}
	}
	prefilling := false
	if s.prefill != nil {
		select {
		case s.prefill <- struct{}{}:
			prefilling = true
			defer func() {
				if prefilling {
					<-s.prefill
				}
			}()
		case <-ctx.Done():
			s.waiting.Add(-1)
			return
		}
	}
	if queue {
		s.waiting.Add(-1)
	}
	s.running.Add(1)
	defer s.running.Add(-1)

	fl, _ := w.(http.Flusher)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	fl.Flush()

	if fault == FaultStall {
		<-ctx.Done()
		return
	}
	t0 := time.Now()
	ttft := s.cfg.TTFT
	if s.cfg.TTFTFor != nil {
		ttft = s.cfg.TTFTFor(n)
	}
	maxTokens := max(req.MaxTokens, 1)
	chat := strings.Contains(r.URL.Path, "chat")
	cum := 0
	for i := 0; cum < maxTokens; i++ {
		tokens := 1
		at := t0.Add(ttft)
		if i > 0 {
			tokens = min(s.cfg.ChunkTokens, maxTokens-cum)
			at = t0.Add(ttft + time.Duration(i)*time.Duration(s.cfg.ChunkTokens)*s.cfg.TBT)
		}
		if s.dead.Load() {
			abort(w)
			return
		}
		if d := time.Until(at); d > 0 {
			t := time.NewTimer(d)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
		}
		cum += tokens
		var text strings.Builder
		for j := range tokens {
			if fault == FaultRepeat {
				text.WriteString("la la ")
			} else {
				fmt.Fprintf(&text, "w%d ", cum-tokens+j)
			}
		}
		finish := "null"
		if cum >= maxTokens {
			finish = `"length"`
		}
		var line string
		if fault == FaultStreamJunk && i == 2 {
			line = "data: {not json\n\n"
		} else if chat {
			line = fmt.Sprintf(`data: {"id":"c%d","object":"chat.completion.chunk","model":%q,"choices":[{"index":0,"delta":{"content":%q},"finish_reason":%s}],"usage":{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d}}`+"\n\n",
				n, s.cfg.Model, text.String(), finish, promptTokens, cum, promptTokens+cum)
		} else {
			line = fmt.Sprintf(`data: {"id":"c%d","object":"text_completion","model":%q,"choices":[{"index":0,"text":%q,"finish_reason":%s}],"usage":{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d}}`+"\n\n",
				n, s.cfg.Model, text.String(), finish, promptTokens, cum, promptTokens+cum)
		}
		if s.cfg.FinalUsage {
			line = strings.Replace(line, fmt.Sprintf(`,"usage":{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d}`, promptTokens, cum, promptTokens+cum), "", 1)
		}
		if _, err := io.WriteString(w, line); err != nil {
			return
		}
		fl.Flush()
		now := time.Now()
		s.mu.Lock()
		s.chunks = append(s.chunks, Chunk{At: now, Tokens: tokens})
		if i == 0 {
			s.reqs[idx].FirstChunk = now
		}
		s.reqs[idx].Chunks = append(s.reqs[idx].Chunks, Chunk{At: now, Tokens: tokens})
		s.mu.Unlock()
		if prefilling {
			prefilling = false
			<-s.prefill
		}
		if fault == FaultTruncate && i == 3 {
			abort(w)
			return
		}
		if fault == FaultStreamJunk && i == 2 {
			return
		}
	}
	_, _ = fmt.Fprintf(w, `data: {"id":"c%d","object":"text_completion","model":%q,"choices":[],"usage":{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d}}`+"\n\ndata: [DONE]\n\n",
		n, s.cfg.Model, promptTokens, cum, promptTokens+cum)
	fl.Flush()
}
