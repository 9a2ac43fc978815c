package stream

import (
	"context"
	"testing"
	"time"
)

func TestSelfTestSmall(t *testing.T) {
	// 128 concurrent streams through one client: every chunk of every stream must arrive.
	rep, err := SelfTest(context.Background(), SelfTestOptions{IngestEvents: 5000, Streams: 128, Duration: 100 * time.Millisecond, Interval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Errors != 0 || rep.Samples != 128*5 {
		t.Errorf("errors %d (%s), samples %d, want 0 and 640", rep.Errors, rep.FirstErr, rep.Samples)
	}
	if rep.IngestEventsPerSec <= 0 || rep.AddedP50 <= 0 || rep.AddedP99 < rep.AddedP50 || rep.AddedMax < rep.AddedP99 {
		t.Errorf("implausible report %+v", rep)
	}
}

// BenchmarkIngest measures token events one goroutine parses and time-stamps per second
// (target ≥ 200,000/s per core); run with -cpu 1 for the per-core figure.
func BenchmarkIngest(b *testing.B) {
	const n = 100000
	var cpu, wall time.Duration
	for b.Loop() {
		w, c, err := measureIngest(context.Background(), n)
		if err != nil {
			b.Fatal(err)
		}
		wall += w
		cpu += c
	}
	b.ReportMetric(float64(n*b.N)/wall.Seconds(), "events/s")
	if cpu > 0 {
		b.ReportMetric(float64(n*b.N)/cpu.Seconds(), "events/cpu-s")
	}
}

// BenchmarkAddedLatency128 measures the time stamping error at 128 concurrent streams (target
// p99 < 100 µs); each iteration streams for 2 s.
func BenchmarkAddedLatency128(b *testing.B) {
	for _, burst := range []bool{false, true} {
		name := "spread"
		if burst {
			name = "burst"
		}
		b.Run(name, func(b *testing.B) {
			var p50, p99 time.Duration
			for b.Loop() {
				lat, errs, first, err := measureAddedLatency(context.Background(), SelfTestOptions{Streams: 128, Duration: 2 * time.Second, Interval: 20 * time.Millisecond, Burst: burst})
				if err != nil || errs > 0 {
					b.Fatalf("%v; %d stream errors, first: %s", err, errs, first)
				}
				rep := quantiles(lat)
				p50, p99 = rep[0], rep[1]
			}
			b.ReportMetric(float64(p50.Microseconds()), "p50-µs")
			b.ReportMetric(float64(p99.Microseconds()), "p99-µs")
		})
	}
}
