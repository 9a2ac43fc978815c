package stream

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// closingHandler does answer like llama.cpp's llama-server: a chunked SSE response that
// announces "Connection: keep-alive", after which the server closes the connection anyway (a
// moment later, so that a pooled client has put it back in its pool and may reuse it).
func closingHandler(body []byte, closeAfter time.Duration, served *atomic.Int64) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		drainBody(r)
		conn, bw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			panic(err)
		}
		defer conn.Close()
		fmt.Fprintf(bw, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: keep-alive\r\nKeep-Alive: timeout=5, max=100\r\nTransfer-Encoding: chunked\r\n\r\n")
		fmt.Fprintf(bw, "%x\r\n%s\r\n0\r\n\r\n", len(body), body)
		bw.Flush()
		served.Add(1)
		time.Sleep(closeAfter)
	}
}

func TestServerClosesAfterEveryStream(t *testing.T) {
	body := readCapture(t, "llama-server/completions_stream.sse")
	var served atomic.Int64
	srv, _ := newServer(t, closingHandler(body, 2*time.Millisecond, &served))
	c := New(srv.URL, WithMaxConns(8))
	defer c.Close()

	var errs, retried, reqs atomic.Int64
	one := func() {
		reqs.Add(1)
		res, err := c.Stream(context.Background(), Request{Model: "m", Prompt: "p", MaxTokens: 12}, nil)
		if err != nil {
			errs.Add(1)
			t.Errorf("request failed: %v", err)
			return
		}
		if res.Retried {
			retried.Add(1)
		}
		if res.OutputTokens != 12 {
			t.Errorf("OutputTokens %d, want 12", res.OutputTokens)
		}
	}
	for range 40 { // sequential: every request after the first finds a connection the server is closing
		one()
	}
	var wg sync.WaitGroup
	for range 8 { // concurrent
		wg.Go(func() {
			for range 10 {
				one()
			}
		})
	}
	wg.Wait()
	if errs.Load() != 0 {
		t.Fatalf("%d of %d requests failed", errs.Load(), reqs.Load())
	}
	// The scenario must really have happened, or this test proves nothing.
	if retried.Load() == 0 {
		t.Errorf("no request needed a retry: the server did not reproduce the stale keep-alive connection")
	}
	t.Logf("%d requests, %d retried on a fresh connection, 0 errors", reqs.Load(), retried.Load())
}

func TestConnectionsAreReused(t *testing.T) {
	// A server that honours keep-alive: sequential streams share one connection (the body is
	// read to its end after [DONE]), and 8 concurrent streams use 8 connections, never more.
	body := vllmContinuous([]int{1, 2, 1}, 0)
	srv, cc := newServer(t, sseHandler(body, 0, 0, 0))
	c := New(srv.URL, WithMaxConns(8))
	for range 20 {
		res, err := c.Stream(context.Background(), Request{Model: "m", Prompt: "p"}, nil)
		if err != nil || res.Retried {
			t.Fatalf("err %v retried %v", err, res.Retried)
		}
	}
	if _, seen := cc.counts(); seen != 1 {
		t.Errorf("20 sequential streams opened %d connections, want 1", seen)
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 5 {
				if _, err := c.Stream(context.Background(), Request{Model: "m", Prompt: "p"}, nil); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	if _, seen := cc.counts(); seen > 8 {
		t.Errorf("8 concurrent streams opened %d connections in all, want ≤ 8", seen)
	}
	c.Close()
	waitNoConns(t, cc)
}
