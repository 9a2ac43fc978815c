package stream

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestSelfTestSmall(t *testing.T) {
	// 128 concurrent streams through one client, and 128 bare readers: every chunk of every
	// stream must arrive and be paired with its socket read.
	rep, err := SelfTest(context.Background(), SelfTestOptions{IngestEvents: 5000, Streams: 128, Duration: 100 * time.Millisecond, Rounds: 1, Interval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Errors != 0 {
		t.Errorf("errors %d, first: %s", rep.Errors, rep.FirstErr)
	}
	for name, q := range map[string]Quantiles{"bare": rep.Bare, "client os": rep.ClientOS, "end to end": rep.EndToEnd, "added": rep.Added} {
		if q.N != 128*5 {
			t.Errorf("%s: %d samples, want 640", name, q.N)
		}
		if q.P50 < 0 || q.P90 < q.P50 || q.P99 < q.P90 || q.Max < q.P99 {
			t.Errorf("%s: implausible quantiles %+v", name, q)
		}
	}
	// The client's stamp is taken after the socket read of the same chunk, so end to end is
	// never below the OS path at any quantile.
	if rep.EndToEnd.P50 < rep.ClientOS.P50 || rep.EndToEnd.Max < rep.ClientOS.Max {
		t.Errorf("end to end %+v below its OS path %+v", rep.EndToEnd, rep.ClientOS)
	}
	// One busy time per Read that completed data lines: at least one per stream (the last), at
	// most one per data line (5 chunks, the finishing and usage chunks and [DONE]).
	for name, q := range map[string]Quantiles{"bare busy": rep.BareBusy, "client busy": rep.ClientBusy} {
		if q.N < 128 || q.N > 128*8 || q.P50 < 0 || q.Max < q.P50 {
			t.Errorf("%s: implausible %+v for 640 chunks", name, q)
		}
	}
	if rep.IngestEventsPerSec <= 0 || rep.AddedMatched != rep.EndToEnd.Minus(rep.Bare) {
		t.Errorf("implausible report %+v", rep)
	}
}

func TestQuantiles(t *testing.T) {
	var d []time.Duration
	for i := 100; i >= 1; i-- {
		d = append(d, time.Duration(i)*time.Microsecond)
	}
	got := quantilesOf(d)
	want := Quantiles{N: 100, P50: 51 * time.Microsecond, P90: 91 * time.Microsecond, P99: 100 * time.Microsecond, Max: 100 * time.Microsecond}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("quantilesOf (-want +got):\n%s", diff)
	}
	if got := quantilesOf(nil); got != (Quantiles{}) {
		t.Errorf("quantilesOf(nil) = %+v", got)
	}
	if got := want.Minus(Quantiles{N: 7, P50: time.Microsecond, P90: 100 * time.Microsecond}); got != (Quantiles{N: 100, P50: 50 * time.Microsecond, P90: -9 * time.Microsecond, P99: 100 * time.Microsecond, Max: 100 * time.Microsecond}) {
		t.Errorf("Minus = %+v", got)
	}
}

func TestDataLineCounter(t *testing.T) {
	// A chunked HTTP response cut at every position: the data lines are counted once each, at
	// the piece that holds their "\n", whatever the cut.
	raw := "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n" +
		"1e\r\ndata: {\"a\":\"dat data:\"}\n\n\r\n" + "d\r\n: keep\n\ndat\n\r\n" + "f\r\ndata:[DONE]\n\n\r\n0\r\n\r\n"
	for cut := 0; cut <= len(raw); cut++ {
		var c dataLineCounter
		n1 := c.feed([]byte(raw[:cut]))
		n2 := c.feed([]byte(raw[cut:]))
		if n1+n2 != 2 {
			t.Fatalf("cut %d: %d + %d data lines, want 2", cut, n1, n2)
		}
	}
	var c dataLineCounter
	for i := range len(raw) {
		c.feed([]byte{raw[i]})
	}
	if c.inData || c.match != 0 {
		t.Errorf("state after the response: %+v", c)
	}
}

// BenchmarkIngest measures token events one goroutine parses and time-stamps per second
// (target ≥ 200,000/s per core); run with -cpu 1 for the per-core figure. allocs/event counts
// every heap allocation of the Stream call (request and response included) per event.
func BenchmarkIngest(b *testing.B) {
	const n = 100000
	var run ingestRun
	for b.Loop() {
		r, err := measureIngest(context.Background(), n)
		if err != nil {
			b.Fatal(err)
		}
		run.wall += r.wall
		run.cpu += r.cpu
		run.allocs += r.allocs
		run.bytes += r.bytes
	}
	events := float64(n * b.N)
	b.ReportMetric(events/run.wall.Seconds(), "events/s")
	if run.cpu > 0 {
		b.ReportMetric(events/run.cpu.Seconds(), "events/cpu-s")
	}
	b.ReportMetric(float64(run.allocs)/events, "allocs/event")
	b.ReportMetric(float64(run.bytes)/events, "B/event")
}

// BenchmarkChunkPath measures the work between a socket read and an event: line reading, SSE
// and JSON scanning and accounting of one vLLM-style token chunk (run with -benchmem; the
// target is 0 allocs/op).
func BenchmarkChunkPath(b *testing.B) {
	const n = 4096
	body := syntheticStream(n, 3)
	br := bufio.NewReaderSize(bytes.NewReader(body), readBufferSize)
	var res Result
	d := newDecoder(&res, nil, DefaultRepetition)
	d.eventsCap = n
	at := time.Now()
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		if i == n {
			// The next stream: the same buffers, as a new Stream would have after its first
			// few chunks.
			br.Reset(bytes.NewReader(body))
			res.Events = res.Events[:0]
			evs := res.Events
			res = Result{Events: evs}
			*d = decoder{res: &res, rep: DefaultRepetition, allContUsed: true, eventsCap: n, data: d.data[:0], textBuf: d.textBuf[:0], tail: d.tail[:0]}
			i = 0
		}
		lr := lineReader{r: br}
		for {
			line, err := lr.next()
			if err == io.EOF {
				b.Fatal("unexpected end")
			}
			if err := d.line(line, at); err != nil {
				b.Fatal(err)
			}
			if len(line) == 0 {
				break
			}
		}
		i++
	}
}

// BenchmarkAddedLatency128 measures the time stamping at 128 concurrent streams (target: the
// paired added p99 < 100 µs); each iteration streams 2 × 1 s.
func BenchmarkAddedLatency128(b *testing.B) {
	for _, burst := range []bool{false, true} {
		name := "spread"
		if burst {
			name = "burst"
		}
		b.Run(name, func(b *testing.B) {
			var bare, added Quantiles
			for b.Loop() {
				bs, cs, err := measureLatency(context.Background(), SelfTestOptions{Streams: 128, Duration: time.Second, Rounds: 1, Interval: 20 * time.Millisecond, Burst: burst})
				if err != nil || bs.errs+cs.errs > 0 {
					b.Fatalf("%v; %d stream errors, first: %s %s", err, bs.errs+cs.errs, bs.firstErr, cs.firstErr)
				}
				bare, added = quantilesOf(bs.endToEnd), quantilesOf(cs.added)
			}
			b.ReportMetric(float64(bare.P99.Microseconds()), "bare-p99-µs")
			b.ReportMetric(float64(added.P50.Microseconds()), "added-p50-µs")
			b.ReportMetric(float64(added.P99.Microseconds()), "added-p99-µs")
		})
	}
}

func TestSelfTestReportMet(t *testing.T) {
	good := SelfTestReport{IngestEventsPerSec: 150000, IngestEventsPerCPUSec: 250000,
		Added: Quantiles{N: 10, P99: 99 * time.Microsecond}, AddedMatched: Quantiles{P99: time.Second}}
	for _, tc := range []struct {
		name string
		edit func(*SelfTestReport)
		want bool
	}{
		{"both met; matched is not checked", func(*SelfTestReport) {}, true},
		{"per core is per CPU second", func(r *SelfTestReport) { r.IngestEventsPerCPUSec = 199999 }, false},
		{"wall clock where no CPU time", func(r *SelfTestReport) { r.IngestEventsPerCPUSec, r.IngestEventsPerSec = 0, 200000 }, true},
		{"added p99 at the target", func(r *SelfTestReport) { r.Added.P99 = TargetAddedP99 }, false},
		{"no samples", func(r *SelfTestReport) { r.Added = Quantiles{} }, false},
		{"a stream failed", func(r *SelfTestReport) { r.Errors = 1 }, false},
	} {
		r := good
		tc.edit(&r)
		if got := r.Met(); got != tc.want {
			t.Errorf("%s: Met() = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// FuzzDataLineCounter checks the counter against a byte-by-byte reference, with the input cut
// into Reads at arbitrary places.
func FuzzDataLineCounter(f *testing.F) {
	f.Add([]byte("1e\r\ndata: {\"a\":1}\n\n\r\n"), uint8(3), uint8(7))
	f.Add([]byte("dadata:x\ndata:\ndatdata:\n"), uint8(2), uint8(9))
	f.Fuzz(func(t *testing.T, b []byte, c1, c2 uint8) {
		want, match, inData := 0, 0, false
		for _, x := range b {
			switch {
			case inData:
				if x == '\n' {
					inData = false
					want++
				}
			case x == "data:"[match]:
				if match++; match == 5 {
					match, inData = 0, true
				}
			case x == 'd':
				match = 1
			default:
				match = 0
			}
		}
		i, j := min(int(c1), len(b)), min(int(c1)+int(c2), len(b))
		var c dataLineCounter
		if got := c.feed(b[:i]) + c.feed(b[i:j]) + c.feed(b[j:]); got != want {
			t.Errorf("%q cut at %d and %d: %d data lines, want %d", b, i, j, got, want)
		}
		if c.inData != inData || c.match != match {
			t.Errorf("%q: state %+v, want match %d inData %v", b, c, match, inData)
		}
	})
}
