package sim

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/speedmatrix/speedmatrix/internal/memnet"
	"github.com/speedmatrix/speedmatrix/sim/profile"
)

// startSim starts a simulator of the default profile at a high speedup.
func startSim(t *testing.T, mod func(*Config)) *Server {
	t.Helper()
	p, err := profile.Load(profile.Default, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Profile: p, Seed: 1, NoiseCV: -1, Speedup: 100}
	if mod != nil {
		mod(&cfg)
	}
	s, err := Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func post(t *testing.T, url string, body any) (*http.Response, []byte) {
	t.Helper()
	data, _ := json.Marshal(body)
	resp, err := http.Post(url, "application/json", bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, out
}

// sseEvents reads the data: payloads of a stream; the error is the read error that ended it,
// nil after [DONE].
func sseEvents(r io.Reader) ([]string, error) {
	br := bufio.NewReader(r)
	var events []string
	for {
		line, err := br.ReadString('\n')
		if strings.HasPrefix(line, "data: ") {
			ev := strings.TrimSpace(strings.TrimPrefix(line, "data: "))
			events = append(events, ev)
			if ev == "[DONE]" {
				return events, nil
			}
		}
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return events, err
		}
	}
}

type testChunk struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Choices []struct {
		Text         *string `json:"text"`
		Delta        *struct{ Role, Content string }
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
		TotalTokens      int `json:"total_tokens"`
	} `json:"usage"`
}

func streamReq(t *testing.T, s *Server, path string, body map[string]any) ([]testChunk, error) {
	t.Helper()
	body["stream"] = true
	data, _ := json.Marshal(body)
	resp, err := http.Post(s.URL()+path, "application/json", bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		return nil, fmt.Errorf("HTTP %d: %s", resp.StatusCode, b)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Errorf("Content-Type %q", ct)
	}
	events, err := sseEvents(resp.Body)
	var chunks []testChunk
	for _, ev := range events {
		if ev == "[DONE]" {
			continue
		}
		var c testChunk
		if jerr := json.Unmarshal([]byte(ev), &c); jerr != nil {
			t.Fatalf("chunk %q: %v", ev, jerr)
		}
		chunks = append(chunks, c)
	}
	return chunks, err
}

func TestStreamCompletionsContinuousUsage(t *testing.T) {
	s := startSim(t, nil)
	chunks, err := streamReq(t, s, "/v1/completions", map[string]any{
		"prompt": strings.Repeat("The river runs past the old mill. ", 40), "max_tokens": 200, "ignore_eos": true,
		"stream_options": map[string]any{"include_usage": true, "continuous_usage_stats": true},
	})
	if err != nil {
		t.Fatal(err)
	}
	last := chunks[len(chunks)-1]
	if len(last.Choices) != 0 || last.Usage == nil || last.Usage.CompletionTokens != 200 {
		t.Fatalf("final chunk must be usage only with 200 completion tokens: %+v", last)
	}
	prev, multi := 0, false
	for i, c := range chunks[:len(chunks)-1] {
		if c.Object != "text_completion" || !strings.HasPrefix(c.ID, "cmpl-") || len(c.Choices) != 1 || c.Choices[0].Text == nil {
			t.Fatalf("chunk %d malformed: %+v", i, c)
		}
		if c.Usage == nil {
			t.Fatalf("chunk %d lacks usage under continuous_usage_stats", i)
		}
		n := c.Usage.CompletionTokens - prev
		if n < 1 {
			t.Fatalf("chunk %d carries %d tokens", i, n)
		}
		if got := s.tok.Count(*c.Choices[0].Text); got != n {
			t.Errorf("chunk %d text %q has %d tokens, usage says %d", i, *c.Choices[0].Text, got, n)
		}
		multi = multi || n > 1
		prev = c.Usage.CompletionTokens
		if c.Usage.TotalTokens != c.Usage.PromptTokens+c.Usage.CompletionTokens {
			t.Fatalf("chunk %d: total_tokens %d ≠ prompt + completion", i, c.Usage.TotalTokens)
		}
	}
	if !multi {
		t.Error("speculative decoding should put several tokens in some chunks")
	}
	if fr := chunks[len(chunks)-2].Choices[0].FinishReason; fr == nil || *fr != "length" {
		t.Errorf("last content chunk finish_reason %v, want length", fr)
	}
}

func TestStreamChat(t *testing.T) {
	s := startSim(t, nil)
	chunks, err := streamReq(t, s, "/v1/chat/completions", map[string]any{
		"messages": []map[string]any{{"role": "user", "content": "Tell me about rivers."}}, "max_tokens": 30,
		"stream_options": map[string]any{"include_usage": true},
	})
	if err != nil {
		t.Fatal(err)
	}
	first, last := chunks[0], chunks[len(chunks)-1]
	if first.Object != "chat.completion.chunk" || first.Choices[0].Delta == nil || first.Choices[0].Delta.Role != "assistant" {
		t.Fatalf("first chat chunk must carry the assistant role: %+v", first)
	}
	for _, c := range chunks[1 : len(chunks)-1] {
		if c.Usage != nil {
			t.Fatal("usage in content chunks without continuous_usage_stats")
		}
	}
	if last.Usage == nil || len(last.Choices) != 0 || last.Usage.CompletionTokens < 1 || last.Usage.CompletionTokens > 30 {
		t.Fatalf("final usage chunk: %+v", last)
	}
}

func TestNonStreaming(t *testing.T) {
	s := startSim(t, nil)
	resp, body := post(t, s.URL()+"/v1/completions", map[string]any{"prompt": "Hello there", "max_tokens": 25, "ignore_eos": true})
	var r struct {
		Choices []struct {
			Text         string `json:"text"`
			FinishReason string `json:"finish_reason"`
		} `json:"choices"`
		Usage struct {
			CompletionTokens int `json:"completion_tokens"`
		} `json:"usage"`
	}
	if resp.StatusCode != 200 || json.Unmarshal(body, &r) != nil {
		t.Fatalf("HTTP %d %s", resp.StatusCode, body)
	}
	if r.Usage.CompletionTokens != 25 || s.tok.Count(r.Choices[0].Text) != 25 || r.Choices[0].FinishReason != "length" {
		t.Fatalf("response %s", body)
	}
}

func TestTokenizeDetokenize(t *testing.T) {
	s := startSim(t, nil)
	text := strings.Repeat("Once upon a time, in a quiet village by the river, ", 30)
	_, body := post(t, s.URL()+"/tokenize", map[string]any{"model": s.prof.ServedModel, "prompt": text})
	var tok struct {
		Tokens      []int `json:"tokens"`
		Count       int   `json:"count"`
		MaxModelLen int   `json:"max_model_len"`
	}
	if err := json.Unmarshal(body, &tok); err != nil || tok.Count != len(tok.Tokens) || tok.MaxModelLen != 1048576 {
		t.Fatalf("tokenize: %s", body)
	}
	// The client's way to an exact prompt length: slice the ids, detokenize, check the count.
	for _, n := range []int{1, 17, 100, tok.Count - 1} {
		_, body := post(t, s.URL()+"/detokenize", map[string]any{"model": s.prof.ServedModel, "tokens": tok.Tokens[:n]})
		var d struct{ Prompt string }
		_ = json.Unmarshal(body, &d)
		_, body = post(t, s.URL()+"/v1/completions", map[string]any{"prompt": d.Prompt, "max_tokens": 1})
		var c struct {
			Usage struct {
				PromptTokens int `json:"prompt_tokens"`
			}
		}
		_ = json.Unmarshal(body, &c)
		if c.Usage.PromptTokens != n {
			t.Errorf("prompt of %d sliced tokens counts %d in usage", n, c.Usage.PromptTokens)
		}
	}
	_, body = post(t, s.URL()+"/tokenize", map[string]any{"messages": []map[string]string{{"role": "user", "content": "hi"}}})
	if err := json.Unmarshal(body, &tok); err != nil || tok.Count < 3 {
		t.Fatalf("tokenize messages: %s", body)
	}
}

func TestErrorShapes(t *testing.T) {
	s := startSim(t, nil)
	type apiErr struct {
		Error struct {
			Message string `json:"message"`
			Type    string `json:"type"`
			Code    int    `json:"code"`
		} `json:"error"`
	}
	tests := []struct {
		name, path string
		body       any
		code       int
		typ, msg   string
	}{
		{"too long", "/v1/completions", map[string]any{"prompt": "a b c", "max_tokens": 1048575}, 400, "BadRequestError", "maximum context length is 1048576"},
		{"unknown model", "/v1/completions", map[string]any{"model": "nope", "prompt": "x"}, 404, "NotFoundError", "does not exist"},
		{"no prompt", "/v1/completions", map[string]any{"max_tokens": 3}, 400, "BadRequestError", "prompt is required"},
		{"bad token", "/detokenize", map[string]any{"tokens": []int{-5}}, 400, "BadRequestError", "not in the vocabulary"},
		{"n", "/v1/chat/completions", map[string]any{"messages": []map[string]string{{"role": "user", "content": "x"}}, "n": 2}, 400, "BadRequestError", "n=2"},
	}
	for _, tt := range tests {
		resp, body := post(t, s.URL()+tt.path, tt.body)
		var e apiErr
		if resp.StatusCode != tt.code || json.Unmarshal(body, &e) != nil || e.Error.Code != tt.code || e.Error.Type != tt.typ || !strings.Contains(e.Error.Message, tt.msg) {
			t.Errorf("%s: HTTP %d %s", tt.name, resp.StatusCode, body)
		}
	}
}

func TestModelsHealthVersion(t *testing.T) {
	s := startSim(t, nil)
	resp, err := http.Get(s.URL() + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Data []struct {
			ID          string `json:"id"`
			MaxModelLen int    `json:"max_model_len"`
		} `json:"data"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&m)
	resp.Body.Close()
	if len(m.Data) != 1 || m.Data[0].ID != "nvidia/GLM-5.3-Flash-NVFP4" || m.Data[0].MaxModelLen != 1048576 {
		t.Fatalf("models: %+v", m)
	}
	for _, path := range []string{"/health", "/version"} {
		resp, err := http.Get(s.URL() + path)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("%s: %v %v", path, resp, err)
		}
		resp.Body.Close()
	}
}

func scrape(t *testing.T, s *Server) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(s.URL() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("/metrics is not valid Prometheus text: %v", err)
	}
	return fams
}

func value(f *dto.MetricFamily) float64 {
	m := f.GetMetric()[0]
	if m.Counter != nil {
		return m.GetCounter().GetValue()
	}
	return m.GetGauge().GetValue()
}

func TestMetricsNamesTypesAndValues(t *testing.T) {
	s := startSim(t, nil)
	prompt := strings.Repeat("word ", 300)
	for range 2 {
		post(t, s.URL()+"/v1/completions", map[string]any{"prompt": prompt, "max_tokens": 40, "ignore_eos": true})
	}
	time.Sleep(20 * time.Millisecond) // the loop publishes after the step that finished the request
	fams := scrape(t, s)
	want := map[string]dto.MetricType{
		"vllm:cache_config_info":                             dto.MetricType_GAUGE,
		"vllm:num_requests_running":                          dto.MetricType_GAUGE,
		"vllm:num_requests_waiting":                          dto.MetricType_GAUGE,
		"vllm:kv_cache_usage_perc":                           dto.MetricType_GAUGE,
		"vllm:num_preemptions_total":                         dto.MetricType_COUNTER,
		"vllm:prefix_cache_queries_total":                    dto.MetricType_COUNTER,
		"vllm:prefix_cache_hits_total":                       dto.MetricType_COUNTER,
		"vllm:prompt_tokens_total":                           dto.MetricType_COUNTER,
		"vllm:generation_tokens_total":                       dto.MetricType_COUNTER,
		"vllm:request_success_total":                         dto.MetricType_COUNTER,
		"vllm:spec_decode_num_drafts_total":                  dto.MetricType_COUNTER,
		"vllm:spec_decode_num_draft_tokens_total":            dto.MetricType_COUNTER,
		"vllm:spec_decode_num_accepted_tokens_total":         dto.MetricType_COUNTER,
		"vllm:spec_decode_num_accepted_tokens_per_pos_total": dto.MetricType_COUNTER,
		LostMetric:    dto.MetricType_COUNTER,
		BehindMetric:  dto.MetricType_GAUGE,
		SpeedupMetric: dto.MetricType_GAUGE,
		LateMetric:    dto.MetricType_COUNTER,
	}
	got := map[string]dto.MetricType{}
	for name, f := range fams {
		got[name] = f.GetType()
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("metric families (-want +got):\n%s", diff)
	}
	lbl := map[string]string{}
	for _, l := range fams["vllm:cache_config_info"].GetMetric()[0].GetLabel() {
		lbl[l.GetName()] = l.GetValue()
	}
	if lbl["block_size"] != "64" || lbl["num_gpu_blocks"] != "53215" {
		t.Errorf("cache_config_info labels %v", lbl)
	}
	if v := value(fams[SpeedupMetric]); v != 100 {
		t.Errorf("%s %g, want the speedup it started with, 100", SpeedupMetric, v)
	}
	if v := value(fams["vllm:generation_tokens_total"]); v != 80 {
		t.Errorf("generation_tokens_total %g, want 80", v)
	}
	if v := value(fams["vllm:prefix_cache_hits_total"]); v == 0 {
		t.Error("the repeated prompt must count prefix cache hits")
	}
	if d, a := value(fams["vllm:spec_decode_num_drafts_total"]), value(fams["vllm:spec_decode_num_accepted_tokens_total"]); d == 0 || a == 0 {
		t.Errorf("spec decode counters: drafts %g accepted %g", d, a)
	}
}

func TestClientDisconnectAborts(t *testing.T) {
	s := startSim(t, func(c *Config) { c.Speedup = 1 })
	ctx, cancel := context.WithCancel(context.Background())
	data, _ := json.Marshal(map[string]any{"prompt": "hi there", "max_tokens": 100000, "stream": true, "ignore_eos": true})
	req, _ := http.NewRequestWithContext(ctx, "POST", s.URL()+"/v1/completions", bytes.NewReader(data))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = bufio.NewReader(resp.Body).ReadString('\n')
	cancel()
	resp.Body.Close()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if value(scrape(t, s)["vllm:num_requests_running"]) == 0 {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("a disconnected client's request is still running")
}

// tookInBubble returns how long one streamed request of tokens takes on a simulator set up by
// mod; it must run in a testing/synctest bubble (over internal/memnet), where the duration is
// the simulator's model time (÷ its speedup), whatever the machine's load.
func tookInBubble(t *testing.T, n *memnet.Network, tokens int, mod func(*Config)) time.Duration {
	t.Helper()
	ln, err := n.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := startSim(t, func(c *Config) { mod(c); c.Listener = ln })
	defer s.Close()
	client := &http.Client{Transport: &http.Transport{DialContext: n.DialContext}}
	defer client.CloseIdleConnections()
	data, _ := json.Marshal(map[string]any{"prompt": "warm up the engine", "max_tokens": tokens, "ignore_eos": true, "stream": true})
	start := time.Now()
	resp, err := client.Post(s.URL()+"/v1/completions", "application/json", bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return time.Since(start)
}

func TestSlowdownObservable(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := memnet.New()
		b := tookInBubble(t, n, 600, func(c *Config) { c.Speedup = 20 })
		sl := tookInBubble(t, n, 600, func(c *Config) { c.Speedup = 20; c.Slowdown = "decode=3" })
		if r := float64(sl) / float64(b); r < 2 {
			t.Errorf("decode=3 made a 600-token request %.2f× slower (%v vs %v), want about 3", r, sl, b)
		}
	})
}

func TestSpeedupScalesTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := memnet.New()
		a := tookInBubble(t, n, 300, func(c *Config) { c.Speedup = 10 })
		b := tookInBubble(t, n, 300, func(c *Config) { c.Speedup = 40 })
		if r := float64(a) / float64(b); r < 3.5 || r > 4.5 {
			t.Errorf("speedup 40 vs 10 ran %.2f× faster (%v vs %v), want 4", r, b, a)
		}
	})
}

func TestFaultError(t *testing.T) {
	failed := func(seed uint64) []int {
		s := startSim(t, func(c *Config) { c.Fault = "error=30%"; c.Seed = seed })
		var out []int
		for i := range 40 {
			resp, body := post(t, s.URL()+"/v1/completions", map[string]any{"prompt": "x", "max_tokens": 2})
			if resp.StatusCode == 500 {
				if !strings.Contains(string(body), `"InternalServerError"`) {
					t.Fatalf("500 body %s", body)
				}
				out = append(out, i)
			}
		}
		return out
	}
	a, b := failed(3), failed(3)
	if len(a) < 4 || len(a) > 24 {
		t.Errorf("error=30%% failed %d of 40 requests", len(a))
	}
	if !cmp.Equal(a, b) {
		t.Errorf("the same seed must fail the same requests: %v vs %v", a, b)
	}
}

func TestFaultCut(t *testing.T) {
	s := startSim(t, func(c *Config) { c.Fault = "cut=10" })
	chunks, err := streamReq(t, s, "/v1/completions", map[string]any{"prompt": "x", "max_tokens": 100, "ignore_eos": true,
		"stream_options": map[string]any{"include_usage": true, "continuous_usage_stats": true}})
	if err == nil {
		t.Fatal("a cut stream must end without [DONE]")
	}
	if n := chunks[len(chunks)-1].Usage.CompletionTokens; n != 10 {
		t.Errorf("stream cut after %d tokens, want 10", n)
	}
}

func TestFaultCrash(t *testing.T) {
	s := startSim(t, func(c *Config) { c.Fault = "crash=200ms"; c.Speedup = 1 })
	_, err := streamReq(t, s, "/v1/completions", map[string]any{"prompt": "x", "max_tokens": 100000, "ignore_eos": true})
	if err == nil {
		t.Fatal("an open stream must be cut by the crash")
	}
	select {
	case <-s.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the server did not stop")
	}
	_, err = http.Get(s.URL() + "/health")
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("after the crash /health gave %v, want connection refused", err)
	}
	if !s.Crashed() {
		t.Error("Crashed() must report the crash")
	}
}

func TestFaultDead(t *testing.T) {
	s := startSim(t, func(c *Config) { c.Fault = "dead=50ms" })
	time.Sleep(150 * time.Millisecond)
	resp, err := http.Get(s.URL() + "/health")
	if err != nil || resp.StatusCode != 503 {
		t.Fatalf("/health after engine death: %v %v, want 503", resp, err)
	}
	resp.Body.Close()
	if r, body := post(t, s.URL()+"/v1/completions", map[string]any{"prompt": "x", "max_tokens": 2}); r.StatusCode != 500 {
		t.Fatalf("request to a dead engine: HTTP %d %s", r.StatusCode, body)
	}
}

// TestFaultHangAndSlowHealth runs in a testing/synctest bubble over internal/memnet: the
// faults' delays and the client's deadline are the fake clock's, whatever the machine's load.
func TestFaultHangAndSlowHealth(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := memnet.New()
		ln, err := n.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		s := startSim(t, func(c *Config) { c.Fault = "hang=20ms,slow-health=200ms"; c.Listener = ln })
		client := &http.Client{Transport: &http.Transport{DialContext: n.DialContext}}
		defer client.CloseIdleConnections()
		time.Sleep(60 * time.Millisecond)
		start := time.Now()
		resp, err := client.Get(s.URL() + "/health")
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("/health of a hung engine: %v %v, want 200", resp, err)
		}
		resp.Body.Close()
		if d := time.Since(start); d < 200*time.Millisecond {
			t.Errorf("/health answered in %v, want at least 200ms", d)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		data, _ := json.Marshal(map[string]any{"prompt": "x", "max_tokens": 5, "stream": true})
		req, _ := http.NewRequestWithContext(ctx, "POST", s.URL()+"/v1/completions", bytes.NewReader(data))
		resp, err = client.Do(req)
		if err == nil {
			_, err = sseEvents(resp.Body)
			resp.Body.Close()
		}
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("a request to a hung engine ended with %v, want a stall until the deadline", err)
		}
	})
}

// TestPromptForms checks that every prompt form counts the same tokens as /tokenize, through
// the escape-free fast path, JSON unescaping, the prompt cache and token-id prompts.
func TestPromptForms(t *testing.T) {
	s := startSim(t, nil)
	count := func(prompt any) int {
		_, body := post(t, s.URL()+"/v1/completions", map[string]any{"prompt": prompt, "max_tokens": 1})
		var c struct {
			Usage struct {
				PromptTokens int `json:"prompt_tokens"`
			} `json:"usage"`
		}
		if err := json.Unmarshal(body, &c); err != nil {
			t.Fatalf("%s", body)
		}
		return c.Usage.PromptTokens
	}
	for _, text := range []string{"plain words only here", "line one\nline \"two\" é ü", strings.Repeat("cached prompt again ", 500)} {
		want := s.tok.Count(text)
		for range 2 {
			if got := count(text); got != want {
				t.Errorf("prompt %.30q: %d tokens, want %d", text, got, want)
			}
		}
		if got := count([]string{text}); got != want {
			t.Errorf("[prompt] %.30q: %d tokens, want %d", text, got, want)
		}
		if got := count(s.tok.Encode(text)); got != want {
			t.Errorf("token ids of %.30q: %d tokens, want %d", text, got, want)
		}
	}
}

// TestIgnoreEOS checks that without ignore_eos the model stops on its own (the profile's mean
// answer is 512 tokens) and with it runs to max_tokens.
func TestIgnoreEOS(t *testing.T) {
	s := startSim(t, func(c *Config) { c.Speedup = 1000 })
	finish := func(ignore bool) (string, int) {
		_, body := post(t, s.URL()+"/v1/completions", map[string]any{"prompt": "tell a story", "max_tokens": 6000, "ignore_eos": ignore})
		var r struct {
			Choices []struct {
				FinishReason string `json:"finish_reason"`
			} `json:"choices"`
			Usage struct {
				CompletionTokens int `json:"completion_tokens"`
			} `json:"usage"`
		}
		if err := json.Unmarshal(body, &r); err != nil {
			t.Fatalf("%s", body)
		}
		return r.Choices[0].FinishReason, r.Usage.CompletionTokens
	}
	if fr, n := finish(false); fr != "stop" || n >= 6000 {
		t.Errorf("without ignore_eos: finish_reason %q after %d tokens, want stop before 6000", fr, n)
	}
	if fr, n := finish(true); fr != "length" || n != 6000 {
		t.Errorf("with ignore_eos: finish_reason %q after %d tokens, want length at 6000", fr, n)
	}
}

// TestVersionSaysSpeedup: /version names the simulator, its profile and its speedup, so that a
// client measuring it over HTTP can show its numbers in the profile's time.
func TestVersionSaysSpeedup(t *testing.T) {
	s := startSim(t, func(c *Config) { c.Speedup = 20 })
	resp, err := http.Get(s.URL() + "/version")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var v struct {
		Version   string `json:"version"`
		Simulator struct {
			Name    string  `json:"name"`
			Profile string  `json:"profile"`
			Speedup float64 `json:"speedup"`
		} `json:"simulator"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
		t.Fatal(err)
	}
	if v.Version == "" || v.Simulator.Name != "speedmatrix sim" || v.Simulator.Profile != profile.Default || v.Simulator.Speedup != 20 {
		t.Errorf("/version = %+v, want the engine version and simulator speedmatrix sim, profile %s, speedup 20", v, profile.Default)
	}
}

// TestServingLogNamesInjections checks that the start-up line says what the simulator was told
// to inject, so that a user who reads it knows the runs measure a slowed or faulty server.
func TestServingLogNamesInjections(t *testing.T) {
	var buf bytes.Buffer
	startSim(t, func(c *Config) {
		c.Slowdown, c.Fault = "decode=1.15", "error=1%"
		c.Log = slog.New(slog.NewTextHandler(&buf, nil))
	})
	for _, want := range []string{`slowdown="decode=1.15"`, `fault="error=1%"`} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("the serving log lacks %q:\n%s", want, buf.String())
		}
	}
}

// TestFaultStarveReportsLostTime: the starve fault loses model time as a simulator kept off
// the CPU does (the request's engine steps take 1/(1−rate) as long) and counts it in LostMetric, so that
// a client can tell a starved measurement from a slow engine; without it nothing is lost.
func TestFaultStarveReportsLostTime(t *testing.T) {
	for _, tt := range []struct {
		fault    string
		wantLost bool
	}{{"", false}, {"starve=50%", true}} {
		synctest.Test(t, func(t *testing.T) {
			n := memnet.New()
			ln, err := n.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			s := startSim(t, func(c *Config) { c.Fault = tt.fault; c.Listener = ln })
			client := &http.Client{Transport: &http.Transport{DialContext: n.DialContext}}
			defer client.CloseIdleConnections()
			data, _ := json.Marshal(map[string]any{"prompt": strings.Repeat("word ", 300), "max_tokens": 40, "ignore_eos": true})
			start := time.Now()
			resp, err := client.Post(s.URL()+"/v1/completions", "application/json", bytes.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			took := time.Since(start)
			time.Sleep(20 * time.Millisecond)
			resp, err = client.Get(s.URL() + "/metrics")
			if err != nil {
				t.Fatal(err)
			}
			p := expfmt.NewTextParser(model.LegacyValidation)
			fams, err := p.TextToMetricFamilies(resp.Body)
			resp.Body.Close()
			if err != nil {
				t.Fatal(err)
			}
			lost := value(fams[LostMetric])
			if got := lost > 0; got != tt.wantLost {
				t.Errorf("fault %q: %s = %g s after a request of %v", tt.fault, LostMetric, lost, took)
			}
			if tt.wantLost && lost > 0.5*took.Seconds() {
				t.Errorf("fault %q: lost %g s of a request of %v, want at most half (its steps' share)", tt.fault, lost, took)
			}
		})
	}
}

// TestSpeedup: 0 is the default speed; a speed the simulator cannot run is refused with what to
// give, by Start too.
func TestSpeedup(t *testing.T) {
	for _, tc := range []struct {
		in, want float64
		wantErr  bool
	}{
		{0, DefaultSpeedup, false},
		{1, 1, false},
		{0.5, 0.5, false},
		{1e6, 1e6, false},
		{-1, 0, true},
		{1e7, 0, true},
		{math.NaN(), 0, true},
	} {
		got, err := Speedup(tc.in)
		if (err != nil) != tc.wantErr || (err == nil && got != tc.want) {
			t.Errorf("Speedup(%g) = %g, %v; want %g, error %v", tc.in, got, err, tc.want, tc.wantErr)
		}
		if err != nil && !strings.Contains(err.Error(), "want a number above 0") {
			t.Errorf("Speedup(%g): %v does not say what to give", tc.in, err)
		}
	}
	if err := CheckSpeedup(0); err == nil {
		t.Error("CheckSpeedup(0) passes; a speed given as 0 cannot run")
	}
	p, err := profile.Load(profile.Default, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Start(context.Background(), Config{Profile: p, Speedup: -2}); err == nil || !strings.Contains(err.Error(), "sim: speedup -2: want a number above 0") {
		t.Errorf("Start at speedup -2: %v, want the refusal", err)
	}
}
