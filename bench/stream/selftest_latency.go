package stream

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"time"
)

// The latency test runs the same server schedule twice per round: once read by bare readers and
// once by the Client. Both read through a stampConn, which stamps time.Now() the moment a Read
// on the socket returns, in the reading goroutine, before it looks at the bytes. For every data
// line of the stream the test so knows:
//
//	send     the server's stamp just before it wrote the chunk
//	read     the return of the socket Read that delivered the line's last byte
//	event    the Client's Event.At of that chunk (client phase only)
//
// read − send is the operating system's path on this machine: loopback TCP, the wake-up of the
// reading goroutine and anything else that runs meanwhile (the Go scheduler, GC, other
// processes). event − read is what the Client adds to that chunk: HTTP chunked decoding, line
// reading, SSE and JSON work of the chunks in front of it, and its time stamp. The two are
// paired per chunk, so the noise of the OS path cancels out. The bare phase shows what a reader
// that does nothing costs, so that the client phase's read − send can be compared with it: any
// difference at matched quantiles is the client's indirect cost (its garbage, its CPU time
// delaying other streams' wake-ups), and noise.

// dataLineCounter does find the ends of SSE "data:" lines in a raw HTTP/1.1 byte stream (headers
// and chunked framing included). It keeps its state across Reads, so a line split over two
// Reads is counted once, at the Read that delivered its "\n".
type dataLineCounter struct {
	match  int  // bytes of "data:" matched so far
	inData bool // inside a data line
}

var dataPrefix = []byte("data:")

// feed does return how many data lines end in b. It searches with bytes.Index and
// bytes.IndexByte, so that the scan adds little to the reader it measures.
func (c *dataLineCounter) feed(b []byte) int {
	n := 0
	for len(b) > 0 {
		switch {
		case c.inData:
			j := bytes.IndexByte(b, '\n')
			if j < 0 {
				return n
			}
			c.inData = false
			n++
			b = b[j+1:]
		case c.match > 0: // a "data:" begun in the previous Read
			switch x := b[0]; {
			case x == dataPrefix[c.match]:
				c.match++
				if c.match == len(dataPrefix) {
					c.match, c.inData = 0, true
				}
			case x == dataPrefix[0]: // "data:" overlaps itself only in its "d"
				c.match = 1
			default:
				c.match = 0
			}
			b = b[1:]
		default:
			if j := bytes.Index(b, dataPrefix); j >= 0 {
				c.inData = true
				b = b[j+len(dataPrefix):]
				continue
			}
			// Keep a prefix of "data:" that the end of b starts.
			for k := len(dataPrefix) - 1; k > 0; k-- {
				if bytes.HasSuffix(b, dataPrefix[:k]) {
					c.match = k
					break
				}
			}
			return n
		}
	}
	return n
}

// stampConn is a net.Conn that records, for every data line that arrives, when the socket Read
// that delivered its end returned.
//
// It also records how long the reader was busy between two Reads: from the return of one that
// completed a data line to the call of the next, the reader's own work on a chunk (this scan
// included), during which other streams' chunks wait for a CPU when all are busy. The response
// headers, read before any data line, are left out.
type stampConn struct {
	net.Conn
	mu      sync.Mutex
	count   dataLineCounter
	stamps  []time.Time
	busy    []time.Duration
	lastRet time.Time // return of the last Read that completed a data line; zero when none is pending
}

func (c *stampConn) Read(p []byte) (int, error) {
	called := time.Now()
	c.mu.Lock()
	if !c.lastRet.IsZero() {
		c.busy = append(c.busy, called.Sub(c.lastRet))
		c.lastRet = time.Time{}
	}
	c.mu.Unlock()
	n, err := c.Conn.Read(p)
	at := time.Now() // first: the scan below is the reader's cost, not the OS path's
	if n > 0 {
		c.mu.Lock()
		k := c.count.feed(p[:n])
		for range k {
			c.stamps = append(c.stamps, at)
		}
		if k > 0 {
			c.lastRet = at
		}
		c.mu.Unlock()
	}
	return n, err
}

// busyTimes does return a copy of the busy times recorded so far.
func (c *stampConn) busyTimes() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.busy...)
}

// lineStamps does return a copy of the stamps recorded so far.
func (c *stampConn) lineStamps() []time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Time(nil), c.stamps...)
}

// latencyServer is a loopback server whose streams send one chunk per interval and record the
// moment (this process's monotonic clock) just before writing each, and the peer address of
// each stream's connection.
type latencyServer struct {
	opts  SelfTestOptions
	start time.Time
	chunk int
	lines [][][]byte // the SSE events of each stream, built before the phase so that serving allocates little
	mu    sync.Mutex
	sent  map[int][]time.Time
	peer  map[int]string
}

func (ls *latencyServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Prompt string `json:"prompt"`
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	id, err := strconv.Atoi(in.Prompt)
	if err != nil || id < 0 || id >= len(ls.lines) {
		http.Error(w, "prompt: want the stream number", http.StatusBadRequest)
		return
	}
	ls.mu.Lock()
	ls.peer[id] = r.RemoteAddr
	ls.mu.Unlock()
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	fl := w.(http.Flusher)
	fl.Flush()
	offset := time.Duration(0)
	if !ls.opts.Burst {
		offset = ls.opts.Interval * time.Duration(id) / time.Duration(ls.opts.Streams)
	}
	sent := make([]time.Time, 0, ls.chunk)
	lines := ls.lines[id]
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for i := 0; i < ls.chunk; i++ {
		due := ls.start.Add(offset + time.Duration(i+1)*ls.opts.Interval)
		if d := time.Until(due); d > 0 {
			timer.Reset(d)
			select {
			case <-timer.C:
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

// latencySamples are the per-chunk figures of one phase.
type latencySamples struct {
	endToEnd []time.Duration // stamp − send: the bare reader's read stamp, or the Client's event stamp
	osPath   []time.Duration // read − send
	added    []time.Duration // event − read (client phase only)
	busy     []time.Duration // the reader's work from a Read's return to its next Read call
	cpu      time.Duration   // CPU time of the whole process while the phase streamed (0: unknown)
	errs     int
	firstErr string
}

func (s *latencySamples) fail(err error) {
	s.errs++
	if s.firstErr == "" {
		s.firstErr = err.Error()
	}
}

func (s *latencySamples) merge(o latencySamples) {
	s.endToEnd = append(s.endToEnd, o.endToEnd...)
	s.osPath = append(s.osPath, o.osPath...)
	s.added = append(s.added, o.added...)
	s.busy = append(s.busy, o.busy...)
	s.cpu += o.cpu
	s.errs += o.errs
	if s.firstErr == "" {
		s.firstErr = o.firstErr
	}
}

// phaseChunks does return the number of chunks each stream of a phase sends.
func phaseChunks(opts SelfTestOptions) int { return max(int(opts.Duration/opts.Interval), 1) }

// streamLines does build the SSE events of opts.Streams streams, each a different random text.
func streamLines(opts SelfTestOptions) [][][]byte {
	lines := make([][][]byte, opts.Streams)
	for id := range lines {
		lines[id] = bytes.SplitAfter(syntheticStream(phaseChunks(opts), uint64(id)), []byte("\n\n"))
	}
	return lines
}

// startLatencyServer does start a loopback latencyServer that serves lines and whose streams
// begin lead from now.
func startLatencyServer(opts SelfTestOptions, lines [][][]byte, lead time.Duration) (*latencyServer, *httptest.Server, error) {
	ls := &latencyServer{opts: opts, chunk: phaseChunks(opts), lines: lines, sent: map[int][]time.Time{}, peer: map[int]string{}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, nil, fmt.Errorf("listen on loopback: %w", err)
	}
	srv := &httptest.Server{Listener: ln, Config: &http.Server{Handler: ls}}
	srv.Start()
	ls.start = time.Now().Add(lead)
	return ls, srv, nil
}

// cpuWindow does measure the process's CPU time while ls streams: from its first chunk's due
// time to one interval after its last one's, leaving out the connecting before and the closing
// after. The function it returns waits for the window's end and reports the time (0 where the
// OS does not say, or when ctx ended first).
func cpuWindow(ctx context.Context, ls *latencyServer) func() time.Duration {
	done := make(chan time.Duration, 1)
	begin := ls.start.Add(ls.opts.Interval)
	end := ls.start.Add(time.Duration(ls.chunk+1) * ls.opts.Interval)
	go func() {
		sleep := func(until time.Time) bool {
			t := time.NewTimer(time.Until(until))
			defer t.Stop()
			select {
			case <-t.C:
				return true
			case <-ctx.Done():
				return false
			}
		}
		var d time.Duration
		if sleep(begin) {
			c0, ok0 := processCPU()
			if sleep(end) {
				if c1, ok1 := processCPU(); ok0 && ok1 {
					d = c1 - c0
				}
			}
		}
		done <- d
	}()
	return func() time.Duration { return <-done }
}

// streamLead is the time every phase gives its streams to connect before the first chunk.
const streamLead = 200 * time.Millisecond

// measureBare does run opts.Streams bare readers against a fresh latencyServer: one goroutine per
// stream writes a minimal HTTP/1.1 request on a plain TCP connection and reads the raw response
// with a 64 KiB buffer until the server closes it, stamping every Read; it parses nothing.
func measureBare(ctx context.Context, opts SelfTestOptions, lines [][][]byte) (latencySamples, error) {
	ls, srv, err := startLatencyServer(opts, lines, streamLead)
	if err != nil {
		return latencySamples{}, err
	}
	defer srv.Close()
	addr := srv.Listener.Addr().String()
	conns := make([]*stampConn, opts.Streams)
	errList := make([]error, opts.Streams)
	var wg sync.WaitGroup
	cpu := cpuWindow(ctx, ls)
	for id := range opts.Streams {
		wg.Go(func() {
			conns[id], errList[id] = bareRead(ctx, addr, id)
		})
	}
	wg.Wait()
	s := latencySamples{cpu: cpu()}
	ls.mu.Lock()
	defer ls.mu.Unlock()
	for id, sc := range conns {
		if errList[id] != nil {
			s.fail(fmt.Errorf("bare stream %d: %w", id, errList[id]))
			continue
		}
		sent, reads := ls.sent[id], sc.lineStamps()
		if len(reads) < len(sent) {
			s.fail(fmt.Errorf("bare stream %d: %d data lines read for %d chunks sent", id, len(reads), len(sent)))
			continue
		}
		for i, at := range sent {
			d := reads[i].Sub(at)
			s.endToEnd = append(s.endToEnd, d)
			s.osPath = append(s.osPath, d)
		}
		s.busy = append(s.busy, sc.busyTimes()...)
	}
	return s, ctx.Err()
}

// bareRead does one bare stream and returns its stamped connection.
func bareRead(ctx context.Context, addr string, id int) (*stampConn, error) {
	var d net.Dialer
	nc, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	sc := &stampConn{Conn: nc}
	defer sc.Close()
	stop := context.AfterFunc(ctx, func() { sc.Close() })
	defer stop()
	body := `{"model":"m","prompt":"` + strconv.Itoa(id) + `"}`
	req := "POST /v1/completions HTTP/1.1\r\nHost: " + addr + "\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body
	if _, err := io.WriteString(sc, req); err != nil {
		return nil, err
	}
	buf := make([]byte, 64<<10)
	for {
		_, err := sc.Read(buf)
		if errors.Is(err, io.EOF) {
			return sc, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// measureClient does run opts.Streams streams of one Client against a fresh latencyServer, with
// its own transport (as New builds it) whose connections are stampConns.
func measureClient(ctx context.Context, opts SelfTestOptions, lines [][][]byte) (latencySamples, error) {
	ls, srv, err := startLatencyServer(opts, lines, streamLead)
	if err != nil {
		return latencySamples{}, err
	}
	defer srv.Close()
	var connMu sync.Mutex
	conns := map[string]*stampConn{} // by local address = the server's peer address
	tr := NewTransport(opts.Streams)
	dial := tr.DialContext
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		nc, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		sc := &stampConn{Conn: nc}
		connMu.Lock()
		conns[nc.LocalAddr().String()] = sc
		connMu.Unlock()
		return sc, nil
	}
	defer tr.CloseIdleConnections()
	c := New(srv.URL, WithHTTPClient(&http.Client{Transport: tr}))

	chunks := ls.chunk
	results := make([]Result, opts.Streams)
	errList := make([]error, opts.Streams)
	var wg sync.WaitGroup
	cpu := cpuWindow(ctx, ls)
	for id := range opts.Streams {
		wg.Go(func() {
			results[id], errList[id] = c.Stream(ctx, Request{Model: "m", Prompt: strconv.Itoa(id), MaxTokens: chunks}, nil)
		})
	}
	wg.Wait()
	s := latencySamples{cpu: cpu()}
	ls.mu.Lock()
	defer ls.mu.Unlock()
	connMu.Lock()
	defer connMu.Unlock()
	for id, res := range results {
		if e := errList[id]; e != nil {
			s.fail(fmt.Errorf("stream %d: %w", id, e))
			continue
		}
		sent := ls.sent[id]
		sc := conns[ls.peer[id]]
		if sc == nil {
			s.fail(fmt.Errorf("stream %d: no connection from %s", id, ls.peer[id]))
			continue
		}
		reads := sc.lineStamps()
		if len(res.Events) != len(sent) || len(reads) < len(sent) {
			s.fail(fmt.Errorf("stream %d: %d events and %d data lines read for %d chunks sent", id, len(res.Events), len(reads), len(sent)))
			continue
		}
		for i, ev := range res.Events {
			s.endToEnd = append(s.endToEnd, ev.At.Sub(sent[i]))
			s.osPath = append(s.osPath, reads[i].Sub(sent[i]))
			s.added = append(s.added, ev.At.Sub(reads[i]))
		}
		s.busy = append(s.busy, sc.busyTimes()...)
	}
	return s, ctx.Err()
}
