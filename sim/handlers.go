package sim

import (
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/speedmatrix/speedmatrix/sim/engine"
	"github.com/speedmatrix/speedmatrix/sim/inject"
	"github.com/speedmatrix/speedmatrix/sim/tokenizer"
)

// maxBody bounds a request body: a 1M-token prompt is about 6 MB of text.
const maxBody = 256 << 20

// Handler returns the HTTP handler of the simulator's API.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /health", s.handleHealth)
	mux.HandleFunc("GET /version", s.handleVersion)
	mux.HandleFunc("GET /v1/models", s.handleModels)
	mux.HandleFunc("GET /metrics", s.handleMetrics)
	mux.HandleFunc("POST /tokenize", s.handleTokenize)
	mux.HandleFunc("POST /detokenize", s.handleDetokenize)
	mux.HandleFunc("POST /v1/completions", func(w http.ResponseWriter, r *http.Request) { s.handleGenerate(w, r, false) })
	mux.HandleFunc("POST /v1/chat/completions", func(w http.ResponseWriter, r *http.Request) { s.handleGenerate(w, r, true) })
	if !s.keyed {
		return mux
	}
	return s.requireKey(mux)
}

// publicPaths stay open with an API key, as in vLLM (PUBLIC_ENDPOINTS of its authentication
// middleware): health probes, the version and metrics scraping.
var publicPaths = []string{"/health", "/ping", "/load", "/version", "/metrics"}

// requireKey wraps next in vLLM's --api-key check: every request but OPTIONS (CORS preflight)
// and those to a public path needs "Authorization: Bearer KEY" (scheme in any case), else
// 401 with vLLM's body {"error": "Unauthorized"}. The key is compared by its hash in constant
// time, as vLLM does.
func (s *Server) requireKey(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodOptions || isPublicPath(r.URL.Path) || s.validKey(r.Header.Get("Authorization")) {
			next.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = io.WriteString(w, `{"error":"Unauthorized"}`)
	})
}

// isPublicPath reports whether path is a public path or lies under one (on a segment
// boundary: /healthcheck is not /health).
func isPublicPath(path string) bool {
	for _, p := range publicPaths {
		if path == p || strings.HasPrefix(path, p+"/") {
			return true
		}
	}
	return false
}

// validKey reports whether an Authorization header carries the server's key.
func (s *Server) validKey(header string) bool {
	scheme, param, _ := strings.Cut(header, " ")
	if !strings.EqualFold(scheme, "bearer") {
		return false
	}
	h := sha256.Sum256([]byte(param))
	return subtle.ConstantTimeCompare(h[:], s.apiKey[:]) == 1
}

// apiError writes vLLM's error shape.
func apiError(w http.ResponseWriter, code int, typ, param, msg string) {
	body := map[string]any{"error": map[string]any{"message": msg, "type": typ, "param": nil, "code": code}}
	if param != "" {
		body["error"].(map[string]any)["param"] = param
	}
	writeJSON(w, code, body)
}

func badRequest(w http.ResponseWriter, format string, args ...any) {
	apiError(w, http.StatusBadRequest, "BadRequestError", "", fmt.Sprintf(format, args...))
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

func (s *Server) handleHealth(w http.ResponseWriter, r *http.Request) {
	if d := s.faults.SlowHealth; d > 0 {
		t := s.clock.NewTimer(d)
		select {
		case <-t.C():
		case <-r.Context().Done():
			t.Stop()
			return
		}
	}
	if s.dead.Load() {
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	w.WriteHeader(http.StatusOK)
}

// handleVersion answers vLLM's {"version": …} and says who answers: "simulator" names the
// simulator, its profile and its speedup, so that a client measuring it over HTTP records the
// time scale and shows the numbers in the profile's time (bench/server reads it).
func (s *Server) handleVersion(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{
		"version":   s.prof.EngineVersion,
		"simulator": map[string]any{"name": "speedmatrix sim", "profile": s.prof.Name, "speedup": s.cfg.Speedup},
	})
}

func (s *Server) handleModels(w http.ResponseWriter, _ *http.Request) {
	m := s.prof.ServedModel
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": []any{map[string]any{
		"id": m, "object": "model", "created": s.start.Unix(), "owned_by": "vllm", "root": m,
		"parent": nil, "max_model_len": s.prof.MaxModelLen, "permission": []any{},
	}}})
}

// chatMessage is one message of a chat request; content is a string or a list of parts.
type chatMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// renderChat applies the simulator's chat template.
func renderChat(msgs []chatMessage, addGenerationPrompt bool) (string, error) {
	var b strings.Builder
	for i, m := range msgs {
		var text string
		if len(m.Content) > 0 && m.Content[0] == '"' {
			if err := json.Unmarshal(m.Content, &text); err != nil {
				return "", fmt.Errorf("messages[%d].content: %v", i, err)
			}
		} else if len(m.Content) > 0 && string(m.Content) != "null" {
			var parts []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			}
			if err := json.Unmarshal(m.Content, &parts); err != nil {
				return "", fmt.Errorf("messages[%d].content must be a string or a list of text parts", i)
			}
			for _, p := range parts {
				if p.Type != "text" {
					return "", fmt.Errorf("messages[%d].content: part type %q is not supported by the simulator (text only)", i, p.Type)
				}
				text += p.Text
			}
		}
		if m.Role == "" {
			return "", fmt.Errorf("messages[%d].role is missing", i)
		}
		b.WriteString(m.Role)
		b.WriteString(": ")
		b.WriteString(text)
		b.WriteString("\n")
	}
	if addGenerationPrompt {
		b.WriteString("assistant:")
	}
	return b.String(), nil
}

// promptIDs reads a completions prompt: a string, a list of one string, token ids, or a list of
// one list of token ids.
func (s *Server) promptIDs(raw json.RawMessage) ([]int, []uint64, error) {
	// A plain string without escapes (the usual long prompt) needs no JSON decoding.
	if n := len(raw); n >= 2 && raw[0] == '"' && raw[n-1] == '"' && bytes.IndexByte(raw[1:n-1], '\\') < 0 && bytes.IndexByte(raw[1:n-1], '"') < 0 && utf8.Valid(raw[1:n-1]) {
		ids, hashes := s.prompts.encode(string(raw[1 : n-1]))
		return ids, hashes, nil
	}
	var str string
	if json.Unmarshal(raw, &str) == nil {
		ids, hashes := s.prompts.encode(str)
		return ids, hashes, nil
	}
	var strs []string
	if json.Unmarshal(raw, &strs) == nil {
		if len(strs) != 1 {
			return nil, nil, fmt.Errorf("prompt: the simulator takes one prompt per request, got %d", len(strs))
		}
		ids, hashes := s.prompts.encode(strs[0])
		return ids, hashes, nil
	}
	var ids []int
	if json.Unmarshal(raw, &ids) != nil {
		var idss [][]int
		if json.Unmarshal(raw, &idss) != nil {
			return nil, nil, errors.New("prompt must be a string, a list of one string, or a list of token ids")
		}
		if len(idss) != 1 {
			return nil, nil, fmt.Errorf("prompt: the simulator takes one prompt per request, got %d", len(idss))
		}
		ids = idss[0]
	}
	if err := s.checkIDs(ids); err != nil {
		return nil, nil, err
	}
	return ids, engine.BlockHashes(ids, s.prof.KVCache.BlockSize), nil
}

func (s *Server) checkIDs(ids []int) error {
	_, err := s.tok.Decode(ids)
	return err
}

func (s *Server) checkModel(w http.ResponseWriter, model string) bool {
	if model != "" && model != s.prof.ServedModel {
		apiError(w, http.StatusNotFound, "NotFoundError", "model", fmt.Sprintf("The model `%s` does not exist.", model))
		return false
	}
	return true
}

func decodeBody(w http.ResponseWriter, r *http.Request, v any) bool {
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		badRequest(w, "reading the request body: %v", err)
		return false
	}
	return unmarshalBody(w, data, v)
}

// unmarshalBody decodes a request body, answering 400 when it is not valid.
func unmarshalBody(w http.ResponseWriter, data []byte, v any) bool {
	if err := json.Unmarshal(data, v); err != nil {
		badRequest(w, "the request body is not valid JSON for this endpoint: %v", err)
		return false
	}
	return true
}

func (s *Server) handleTokenize(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Model               string          `json:"model"`
		Prompt              json.RawMessage `json:"prompt"`
		Messages            []chatMessage   `json:"messages"`
		AddGenerationPrompt *bool           `json:"add_generation_prompt"`
	}
	if !decodeBody(w, r, &req) || !s.checkModel(w, req.Model) {
		return
	}
	var ids []int
	switch {
	case req.Messages != nil:
		text, err := renderChat(req.Messages, req.AddGenerationPrompt == nil || *req.AddGenerationPrompt)
		if err != nil {
			badRequest(w, "%v", err)
			return
		}
		ids = s.tok.Encode(text)
	case len(req.Prompt) > 0:
		var err error
		if ids, _, err = s.promptIDs(req.Prompt); err != nil {
			badRequest(w, "%v", err)
			return
		}
	default:
		badRequest(w, "give either prompt or messages")
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"count": len(ids), "max_model_len": s.prof.MaxModelLen, "tokens": ids, "token_strs": nil})
}

func (s *Server) handleDetokenize(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Model  string `json:"model"`
		Tokens []int  `json:"tokens"`
	}
	if !decodeBody(w, r, &req) || !s.checkModel(w, req.Model) {
		return
	}
	text, err := s.tok.Decode(req.Tokens)
	if err != nil {
		badRequest(w, "%v", err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"prompt": text})
}

// genRequest is the part of a completions or chat request the simulator reads.
type genRequest struct {
	Model               string          `json:"model"`
	Prompt              json.RawMessage `json:"prompt"`
	Messages            []chatMessage   `json:"messages"`
	MaxTokens           *int            `json:"max_tokens"`
	MaxCompletionTokens *int            `json:"max_completion_tokens"`
	Stream              bool            `json:"stream"`
	StreamOptions       *struct {
		IncludeUsage         bool `json:"include_usage"`
		ContinuousUsageStats bool `json:"continuous_usage_stats"`
	} `json:"stream_options"`
	IgnoreEOS bool `json:"ignore_eos"`
	N         *int `json:"n"`
}

// stream is one generation request between its handler and the scheduler loop.
type stream struct {
	req      engine.Request
	at       time.Duration // model time of arrival
	cutAfter int

	mu      sync.Mutex
	pending int
	finish  engine.FinishReason
	notify  chan struct{}
}

// push hands the stream new tokens (and its end) from the scheduler loop; it never blocks.
func (st *stream) push(n int, fin engine.FinishReason) {
	st.mu.Lock()
	st.pending += n
	if fin != engine.NotFinished {
		st.finish = fin
	}
	st.mu.Unlock()
	select {
	case st.notify <- struct{}{}:
	default:
	}
}

// take returns the tokens pushed since the last take and the finish reason, if any.
func (st *stream) take() (int, engine.FinishReason) {
	st.mu.Lock()
	defer st.mu.Unlock()
	n := st.pending
	st.pending = 0
	return n, st.finish
}

type usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	TotalTokens      int `json:"total_tokens"`
	CompletionTokens int `json:"completion_tokens"`
}

func (s *Server) handleGenerate(w http.ResponseWriter, r *http.Request, chat bool) {
	// The request arrives now: the real time spent reading and tokenizing it below is part of
	// the frontend time the engine models, not added to it.
	arrived := s.virtualNow()
	if s.dead.Load() {
		apiError(w, http.StatusInternalServerError, "InternalServerError", "", "EngineCore encountered an issue. See stack trace (above) for the root cause.")
		return
	}
	var req genRequest
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		badRequest(w, "reading the request body: %v", err)
		return
	}
	// A long plain prompt is cut out of the body before JSON decoding (see skimPrompt).
	skimmed, rest, ok := skimPrompt(data)
	if ok {
		data = rest
	}
	if !unmarshalBody(w, data, &req) || !s.checkModel(w, req.Model) {
		return
	}
	if req.N != nil && *req.N != 1 {
		badRequest(w, "n=%d: the simulator generates one choice per request (n=1)", *req.N)
		return
	}
	var ids []int
	var hashes []uint64
	if chat {
		if len(req.Messages) == 0 {
			badRequest(w, "messages: at least one message is required")
			return
		}
		text, err := renderChat(req.Messages, true)
		if err != nil {
			badRequest(w, "%v", err)
			return
		}
		ids, hashes = s.prompts.encode(text)
	} else {
		switch {
		case ok:
			ids, hashes = s.prompts.encode(string(skimmed))
		case len(req.Prompt) == 0:
			badRequest(w, "prompt is required")
			return
		default:
			if ids, hashes, err = s.promptIDs(req.Prompt); err != nil {
				badRequest(w, "%v", err)
				return
			}
		}
	}
	maxLen := s.prof.MaxModelLen
	if len(ids) == 0 {
		badRequest(w, "the prompt is empty")
		return
	}
	if len(ids) > maxLen {
		badRequest(w, "This model's maximum context length is %d tokens. However, your request has %d input tokens. Please reduce the length of the input messages.", maxLen, len(ids))
		return
	}
	maxTokens := maxLen - len(ids)
	if req.MaxCompletionTokens != nil {
		maxTokens = *req.MaxCompletionTokens
	} else if req.MaxTokens != nil {
		maxTokens = *req.MaxTokens
	}
	if maxTokens < 1 {
		badRequest(w, "max_tokens must be at least 1, got %d.", maxTokens)
		return
	}
	if len(ids)+maxTokens > maxLen {
		badRequest(w, "'max_tokens' or 'max_completion_tokens' is too large: %d. This model's maximum context length is %d tokens and your request has %d input tokens (%d > %d - %d).", maxTokens, maxLen, len(ids), maxTokens, maxLen, len(ids))
		return
	}
	ordinal := s.requests.Add(1)
	if inject.Draw(s.faults.ErrorRate, engine.HashKey(s.seed, 0xe1, ordinal)) {
		apiError(w, http.StatusInternalServerError, "InternalServerError", "", "injected fault: internal server error")
		return
	}
	st := &stream{at: arrived, notify: make(chan struct{}, 1)}
	if s.faults.CutAfter > 0 && inject.Draw(s.faults.CutRate, engine.HashKey(s.seed, 0xc7, ordinal)) {
		st.cutAfter = s.faults.CutAfter
	}
	st.req = engine.Request{
		PromptLen: len(ids),
		Hashes:    hashes,
		MaxTokens: maxTokens,
		IgnoreEOS: req.IgnoreEOS,
		Tag:       st,
	}
	s.submit(st)
	gen := s.tok.NewGenerator(engine.HashKey(s.seed, 0x9e, ordinal))
	id := fmt.Sprintf("%016x", engine.HashKey(s.seed, 0x1d, ordinal))
	out := &writer{s: s, w: w, chat: chat, model: s.prof.ServedModel, created: s.clock.Now().Unix(), prompt: len(ids)}
	if chat {
		out.id = "chatcmpl-" + id
	} else {
		out.id = "cmpl-" + id
	}
	if req.StreamOptions != nil {
		out.includeUsage = req.StreamOptions.IncludeUsage
		out.continuous = req.StreamOptions.ContinuousUsageStats
	}
	s.serve(r, st, gen, out, req.Stream)
}

// serve waits for the stream's tokens and writes them, as SSE chunks or one response.
func (s *Server) serve(r *http.Request, st *stream, gen *tokenizer.Generator, out *writer, streaming bool) {
	var text []byte
	var buf []byte
	if streaming {
		out.startStream()
	}
	for {
		select {
		case <-st.notify:
		case <-r.Context().Done():
			s.abort(st)
			return
		case <-s.deadCh:
			panic(http.ErrAbortHandler)
		}
		n, fin := st.take()
		if fin == engine.FinishAbort && n == 0 {
			panic(http.ErrAbortHandler)
		}
		cut := false
		if st.cutAfter > 0 && out.generated+n >= st.cutAfter {
			n, cut = st.cutAfter-out.generated, true
			fin = engine.NotFinished
		}
		if n > 0 || fin != engine.NotFinished {
			buf = gen.Append(buf[:0], n)
			out.generated += n
			if streaming {
				out.chunk(buf, fin)
			} else {
				text = append(text, buf...)
			}
		}
		if cut {
			s.abort(st)
			if streaming {
				out.flush()
			}
			panic(http.ErrAbortHandler)
		}
		if fin != engine.NotFinished {
			if streaming {
				out.end()
			} else {
				out.whole(text, fin)
			}
			return
		}
	}
}

// writer writes a response in vLLM's format.
type writer struct {
	s                        *Server
	w                        http.ResponseWriter
	chat                     bool
	id, model                string
	created                  int64
	prompt, generated        int
	includeUsage, continuous bool
	buf                      bytes.Buffer
}

func (o *writer) usage() *usage {
	return &usage{PromptTokens: o.prompt, TotalTokens: o.prompt + o.generated, CompletionTokens: o.generated}
}

func (o *writer) object() string {
	if o.chat {
		return "chat.completion.chunk"
	}
	return "text_completion"
}

// chunk and its parts are vLLM's streaming response, fields in vLLM's order.
type chunk struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	Model   string `json:"model"`
	Choices []any  `json:"choices"`
	Usage   *usage `json:"usage"`
}

type textChoice struct {
	Index        int     `json:"index"`
	Text         string  `json:"text"`
	Logprobs     any     `json:"logprobs"`
	FinishReason *string `json:"finish_reason"`
	StopReason   any     `json:"stop_reason"`
}

type delta struct {
	Role    string `json:"role,omitempty"`
	Content string `json:"content"`
}

type deltaChoice struct {
	Index        int     `json:"index"`
	Delta        delta   `json:"delta"`
	Logprobs     any     `json:"logprobs"`
	FinishReason *string `json:"finish_reason"`
}

func (o *writer) startStream() {
	h := o.w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	o.w.WriteHeader(http.StatusOK)
	if o.chat {
		o.event([]any{deltaChoice{Delta: delta{Role: "assistant"}}}, o.continuousUsage())
	}
	o.flush()
}

func (o *writer) continuousUsage() *usage {
	if o.includeUsage && o.continuous {
		return o.usage()
	}
	return nil
}

// chunk writes one chunk carrying the text of the tokens a step produced.
func (o *writer) chunk(text []byte, fin engine.FinishReason) {
	var finish *string
	if fin != engine.NotFinished {
		f := fin.String()
		finish = &f
	}
	if o.chat {
		o.event([]any{deltaChoice{Delta: delta{Content: string(text)}, FinishReason: finish}}, o.continuousUsage())
	} else {
		o.event([]any{textChoice{Text: string(text), FinishReason: finish}}, o.continuousUsage())
	}
	o.flush()
}

// event writes one data: line.
func (o *writer) event(choices []any, u *usage) {
	o.buf.Reset()
	o.buf.WriteString("data: ")
	_ = json.NewEncoder(&o.buf).Encode(chunk{ID: o.id, Object: o.object(), Created: o.created, Model: o.model, Choices: choices, Usage: u})
	o.buf.Truncate(o.buf.Len() - 1) // Encode's newline
	o.buf.WriteString("\n\n")
	_, _ = o.w.Write(o.buf.Bytes())
}

func (o *writer) flush() {
	_ = http.NewResponseController(o.w).Flush()
}

// end writes the final usage chunk (when asked for) and [DONE].
func (o *writer) end() {
	if o.includeUsage {
		o.event([]any{}, o.usage())
	}
	_, _ = io.WriteString(o.w, "data: [DONE]\n\n")
	o.flush()
}

// whole writes a non-streaming response.
func (o *writer) whole(text []byte, fin engine.FinishReason) {
	var choice map[string]any
	if o.chat {
		choice = map[string]any{"index": 0, "message": map[string]any{"role": "assistant", "content": string(text)}, "logprobs": nil, "finish_reason": fin.String()}
	} else {
		choice = map[string]any{"index": 0, "text": string(text), "logprobs": nil, "finish_reason": fin.String(), "stop_reason": nil}
	}
	obj := "text_completion"
	if o.chat {
		obj = "chat.completion"
	}
	writeJSON(o.w, http.StatusOK, map[string]any{"id": o.id, "object": obj, "created": o.created, "model": o.model, "choices": []any{choice}, "usage": o.usage()})
}
