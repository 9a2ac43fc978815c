package stream

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"time"
)

// This file renders a SelfTestReport: the text and the JSON of speedmatrix selftest.

// verdict says whether a target was met.
func verdict(ok bool) string {
	if ok {
		return "ok"
	}
	return "MISSED"
}

// quantileLine does format one row of latency quantiles.
func quantileLine(name string, q Quantiles) string {
	return fmt.Sprintf("  %-23s p50 %9v  p90 %9v  p99 %9v  max %9v", name, us(q.P50), us(q.P90), us(q.P99), us(q.Max))
}

// WriteSelfTest prints the report for people; load is the load average LoadAverage read ("": none).
func WriteSelfTest(w io.Writer, rep SelfTestReport, opts SelfTestOptions, load string) error {
	mode := "spread over the interval"
	if rep.Burst {
		mode = "all at once each interval"
	}
	pc := rep.PerCore()
	addedOK := rep.Added.N > 0 && rep.Added.P99 < TargetAddedP99
	lines := []string{
		fmt.Sprintf("speedmatrix selftest (%s %s/%s, GOMAXPROCS %d, %d CPUs)", runtime.Version(), runtime.GOOS, runtime.GOARCH, rep.GOMAXPROCS, runtime.NumCPU()),
		fmt.Sprintf("ingest:  %.0f token events/s per core (%.0f/s wall clock), %.4f allocs and %.0f B per event   target ≥ %d   %s",
			pc, rep.IngestEventsPerSec, rep.IngestAllocsPerEvent, rep.IngestBytesPerEvent, TargetEventsPerSec, verdict(pc >= TargetEventsPerSec)),
		fmt.Sprintf("latency: %d streams, a chunk every %v (%s), %d rounds; %d chunks bare, %d chunks client",
			rep.Streams, opts.Interval, mode, rep.Rounds, rep.Bare.N, rep.EndToEnd.N),
		quantileLine("bare os path", rep.Bare),
		quantileLine("client os path", rep.ClientOS),
		quantileLine("client end to end", rep.EndToEnd),
		quantileLine("added (paired)", rep.Added) + fmt.Sprintf("   target p99 < %v   %s", us(TargetAddedP99), verdict(addedOK)),
		quantileLine("matched (e2e − bare)", rep.AddedMatched),
		quantileLine("busy per chunk, bare", rep.BareBusy),
		quantileLine("busy per chunk, client", rep.ClientBusy),
	}
	if rep.BareCPUPerChunk > 0 && rep.ClientCPUPerChunk > 0 {
		lines = append(lines, fmt.Sprintf("cpu:     %.1fµs per chunk bare, %.1fµs client (whole process, in-process server included): difference %+.1fµs, noisy",
			micro(rep.BareCPUPerChunk), micro(rep.ClientCPUPerChunk), micro(rep.ClientCPUPerChunk-rep.BareCPUPerChunk)))
	}
	if load != "" {
		lines = append(lines, fmt.Sprintf("load:    %s (1, 5, 15 min) on %d CPUs: the os path is the kernel's and the scheduler's, and grows with the load", load, runtime.NumCPU()))
	}
	if rep.Errors > 0 {
		lines = append(lines, fmt.Sprintf("errors:  %d streams failed; first: %s", rep.Errors, rep.FirstErr))
	}
	_, err := io.WriteString(w, strings.Join(lines, "\n")+"\n")
	return err
}

// LoadAverage returns the first three fields of /proc/loadavg, or "" where there is none.
func LoadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}

// micro does return d in microseconds.
func micro(d time.Duration) float64 { return float64(d) / 1e3 }

// us does round a duration to microseconds for printing.
func us(d time.Duration) time.Duration { return d.Round(time.Microsecond) }

// quantilesJSON does shape quantiles in microseconds.
func quantilesJSON(q Quantiles) map[string]any {
	return map[string]any{
		"n":      q.N,
		"p50_us": float64(q.P50) / 1e3,
		"p90_us": float64(q.P90) / 1e3,
		"p99_us": float64(q.P99) / 1e3,
		"max_us": float64(q.Max) / 1e3,
	}
}

// SelfTestJSON shapes the report for selftest --json, with units in the names.
func SelfTestJSON(rep SelfTestReport, opts SelfTestOptions, load string) map[string]any {
	return map[string]any{
		"gomaxprocs":              rep.GOMAXPROCS,
		"num_cpu":                 runtime.NumCPU(),
		"load_average":            load,
		"ingest_events_per_s":     rep.IngestEventsPerSec,
		"ingest_events_per_cpu_s": rep.IngestEventsPerCPUSec,
		"ingest_allocs_per_event": rep.IngestAllocsPerEvent,
		"ingest_bytes_per_event":  rep.IngestBytesPerEvent,
		"streams":                 rep.Streams,
		"interval_ms":             float64(opts.Interval) / 1e6,
		"burst":                   rep.Burst,
		"rounds":                  rep.Rounds,
		"bare_os_path":            quantilesJSON(rep.Bare),
		"client_os_path":          quantilesJSON(rep.ClientOS),
		"client_end_to_end":       quantilesJSON(rep.EndToEnd),
		"added":                   quantilesJSON(rep.Added),
		"added_matched":           quantilesJSON(rep.AddedMatched),
		"bare_busy_per_chunk":     quantilesJSON(rep.BareBusy),
		"client_busy_per_chunk":   quantilesJSON(rep.ClientBusy),
		"bare_cpu_per_chunk_us":   micro(rep.BareCPUPerChunk),
		"client_cpu_per_chunk_us": micro(rep.ClientCPUPerChunk),
		"errors":                  rep.Errors,
		"first_error":             rep.FirstErr,
		"target_events_per_s":     TargetEventsPerSec,
		"target_added_p99_us":     float64(TargetAddedP99) / 1e3,
		"targets_met":             rep.Met(),
	}
}
