// Package stream is the benchmark's streaming client: it sends one OpenAI-compatible completion
// request with SSE streaming (POST /v1/completions or /v1/chat/completions) and time-stamps every
// chunk as it arrives. It is the layer the runner (package bench) stands on; it does no
// scheduling, windowing or statistics, and it must not hide any client-side delay inside a
// server-side figure.
//
// # API
//
//	c := stream.New("http://host:8000", stream.WithAPIKey(key), stream.WithMaxConns(128))
//	defer c.Close()
//	res, err := c.Stream(ctx, stream.Request{Endpoint: stream.EndpointCompletions,
//	        Model: "m", Prompt: p, MaxTokens: 4096}, func(ev stream.Event) { ... })
//
// Stream blocks until the response ends; it calls onEvent (may be nil) synchronously, from the
// calling goroutine, for every chunk that added output tokens, so onEvent must be quick. The
// Result is filled as far as the stream got, also when an error is returned. A Client is safe for
// concurrent use: the runner calls Stream from C goroutines at once.
//
// # Connections
//
// HTTP/1.1 only (HTTP/2 is off: one multiplexed connection would serialise the streams), one
// connection per in-flight stream, compression off (a gzip layer would buffer chunks).
// WithMaxConns(n) caps connections per host and keeps n idle ones; a stream that finds all n busy
// waits inside the client, and that wait shows in Result.Queued. Servers such as llama.cpp close
// the connection after every streamed response although they announce Keep-Alive; a request that
// fails on a reused idle connection before any response byte arrived is retried once on a fresh
// connection (Result.Retried). The retry is safe: the server closed that connection before it
// read the request. Measured in TestServerClosesAfterEveryStream (a server that closes 2 ms after
// every response while announcing Keep-Alive, 40 sequential and 8×10 concurrent requests; the
// 2 ms make the race far likelier than llama.cpp's 12–19 %): without a retry 54–58 of 120
// requests failed, a retry through the same pool still failed 11, and the retry on a fresh
// connection gives 0 failures (about 56 requests retried). Keep-alive stays on because servers
// that honour it (vLLM, SGLang) then need no new connection per request; the retry costs a
// failed write, which lands in Queued, never in TTFT.
//
// # Request body
//
// {"model", "prompt" (completions) or "messages":[{"role":"user","content":…}] (chat),
// "max_tokens", "stream": true, "stream_options": {"include_usage": true,
// "continuous_usage_stats": true}, "ignore_eos": true, "temperature": 0}; Request.ExtraBody keys
// are merged last and override these, and a nil value removes a key.
//
// # Time stamps
//
// All times come from the injected clock (WithClock; default time.Now, whose readings carry the
// monotonic clock, so differences are monotonic).
//   - Start: Stream was called. Result.ConnWait is the time until a connection was obtained
//     (httptrace GotConn: a free pooled one, or a new dial).
//   - Sent: the request, body included, was written (httptrace WroteRequest). Go's transport
//     reports this just before its final flush, so at most one 64 KB write buffer is still on
//     its way to the socket: one write system call, microseconds, which TTFT includes.
//     Result.Queued = Sent − Start is the time the request spent inside the client: body
//     encoding, waiting for a free connection, dialing and writing the body. With a caller's
//     transport that reports no httptrace events, Sent = Start.
//   - FirstToken: arrival of the first chunk that carries output (text, content, reasoning or
//     tool-call deltas, or a rise of the continuous usage count). TTFT = FirstToken − Sent; it never
//     contains client queueing or upload time.
//   - Event.At / Last: the moment the first "data:" line of that chunk was read from the
//     connection.
//
// # Token counting
//
// Output tokens come from usage.completion_tokens, never from counting chunks:
//   - UsageContinuous ("continuous"): every content chunk carried a cumulative
//     usage.completion_tokens (vLLM with continuous_usage_stats); an event's Tokens is the rise of
//     that count, so a speculative-decoding chunk carrying 3 tokens counts 3.
//   - UsageFinal ("final"): usage came only at the end (vLLM-style separate "choices": [] chunk,
//     llama.cpp's finishing chunk, Ollama's zeros until the last chunk — zero counts are ignored).
//     While streaming each content chunk is reported to onEvent as 1 token; when the stream ends
//     the final count is spread evenly over Result.Events (event i gets
//     round((i+1)·N/k) − round(i·N/k) of N tokens over k events), so Result.Events always sums
//     to Result.OutputTokens.
//   - UsageChunks ("chunks"): the server sent no usage at all; one token per content chunk.
//
// Chunks counts the content-bearing chunks (the secondary inter-chunk metric).
//
// # Faults
//
// Every error wraps one of: *HTTPError (status ≥ 400, with the server's message), ErrTruncated
// (the body ended before "[DONE]" and before any finish_reason), ErrMalformed (a chunk that is not
// JSON; the error quotes a snippet), ErrServerError (an "error" object inside the stream),
// ErrRepetition (the output ends in a loop, see RepetitionConfig), ErrStalled (no data for the
// WithIdleTimeout duration), or a connection error.
// Reason(err) names the class in one word for a results file.
//
// # Server facts
//
// GET /v1/models, /health, /version and POST /tokenize, /detokenize live in package
// bench/server; SelfTest (this package) measures the client's own cost.
//
// # Own cost
//
// Stream takes an event's time stamp right after the line that carries its data arrives, before
// any JSON is read, and allocates next to nothing per chunk: Result.Events is allocated once
// with room for max_tokens events (at most 65,536, doubling beyond). SelfTest measures the
// ingest rate of one core and, against a loopback server, pairs every chunk's Event.At with the
// return of the socket Read that delivered it (the "added" latency the target is about), and
// runs bare readers under the same schedule to show what the OS path itself costs; the file
// comment of selftest_latency.go gives the method.
package stream
