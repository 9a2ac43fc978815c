package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/speedmatrix/speedmatrix/bench/stream"
)

// errSelfTestTargets is returned by `selftest --check` when a target was missed.
var errSelfTestTargets = errors.New("the client missed a self-test target")

// newSelftestCmd builds `speedmatrix selftest`.
func newSelftestCmd(env *Env) *cobra.Command {
	var (
		opts   stream.SelfTestOptions
		asJSON bool
		check  bool
	)
	cmd := &cobra.Command{
		Use:   "selftest",
		Short: "Measure the benchmark client's own cost: ingest rate per core and the timing error it adds",
		Long: `selftest measures what the streaming client itself costs on this machine, with no
inference server: how many token events one core parses and time-stamps per second (target at
least 200,000), and the latency it adds to every chunk at 128 concurrent streams against a
loopback server that stamps each chunk just before sending it (target p99 under 100 µs). Run it
on the machine that will run the benchmark, while that machine is otherwise idle.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if opts.Streams < 1 || opts.IngestEvents < 1 || opts.Duration <= 0 || opts.Interval <= 0 {
				return usagef("--streams, --events, --duration and --interval must be positive")
			}
			if opts.Duration < opts.Interval {
				return usagef("--duration %v is shorter than --interval %v: no chunk would be sent", opts.Duration, opts.Interval)
			}
			rep, err := stream.SelfTest(cmd.Context(), opts)
			if err != nil {
				return fmt.Errorf("selftest: %w", err)
			}
			if asJSON {
				enc := json.NewEncoder(env.Stdout)
				enc.SetIndent("", "  ")
				if err := enc.Encode(selftestJSON(rep)); err != nil {
					return err
				}
			} else if err := writeSelftest(env.Stdout, rep, opts, loadAverage()); err != nil {
				return err
			}
			if check && !selftestMet(rep) {
				return errSelfTestTargets
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.IntVar(&opts.IngestEvents, "events", 300000, "token chunks parsed from memory to measure the ingest rate")
	f.IntVar(&opts.Streams, "streams", 128, "concurrent streams of the latency test")
	f.DurationVar(&opts.Duration, "duration", 3*time.Second, "how long the latency test streams")
	f.DurationVar(&opts.Interval, "interval", 20*time.Millisecond, "gap between two chunks of one stream (20ms = 50 tok/s per stream)")
	f.BoolVar(&opts.Burst, "burst", false, "send every stream's chunk at the same instant (one decode step of a batching server) instead of spread over the interval")
	f.BoolVar(&asJSON, "json", false, "print the figures as JSON")
	f.BoolVar(&check, "check", false, "exit 1 when a target is missed (≥ 200,000 events/s per core, p99 < 100µs)")
	return cmd
}

// selftestMet does report whether both targets were met and every stream worked.
func selftestMet(rep stream.SelfTestReport) bool {
	return perCore(rep) >= stream.TargetEventsPerSec && rep.AddedP99 < stream.TargetAddedP99 && rep.Errors == 0
}

// perCore does return the per-core ingest rate: per CPU second where measured, else per wall second.
func perCore(rep stream.SelfTestReport) float64 {
	if rep.IngestEventsPerCPUSec > 0 {
		return rep.IngestEventsPerCPUSec
	}
	return rep.IngestEventsPerSec
}

func verdict(ok bool) string {
	if ok {
		return "ok"
	}
	return "MISSED"
}

// writeSelftest does print the report for people.
func writeSelftest(w io.Writer, rep stream.SelfTestReport, opts stream.SelfTestOptions, load string) error {
	mode := "spread over the interval"
	if rep.Burst {
		mode = "all at once each interval"
	}
	pc := perCore(rep)
	_, err := fmt.Fprintf(w, `speedmatrix selftest (%s %s/%s, GOMAXPROCS %d)
ingest:  %.0f token events/s per core (%.0f/s wall clock)   target ≥ %d   %s
latency: %d streams, a chunk every %v (%s), %d chunks
         added p50 %v  p90 %v  p99 %v  max %v   target p99 < %v   %s
`, runtime.Version(), runtime.GOOS, runtime.GOARCH, rep.GOMAXPROCS,
		pc, rep.IngestEventsPerSec, stream.TargetEventsPerSec, verdict(pc >= stream.TargetEventsPerSec),
		rep.Streams, opts.Interval, mode, rep.Samples,
		us(rep.AddedP50), us(rep.AddedP90), us(rep.AddedP99), us(rep.AddedMax), us(stream.TargetAddedP99), verdict(rep.AddedP99 < stream.TargetAddedP99))
	if err == nil && load != "" {
		_, err = fmt.Fprintf(w, "load:    %s (1, 5, 15 min) on %d CPUs: on a busy machine the latency is the scheduler's, not the client's\n", load, runtime.NumCPU())
	}
	if err == nil && rep.Errors > 0 {
		_, err = fmt.Fprintf(w, "errors:  %d streams failed; first: %s\n", rep.Errors, rep.FirstErr)
	}
	return err
}

// loadAverage does return the first three fields of /proc/loadavg, or "" where there is none.
func loadAverage() string {
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

// us does round a duration to microseconds for printing.
func us(d time.Duration) time.Duration { return d.Round(time.Microsecond) }

// selftestJSON does shape the report for --json with units in the names.
func selftestJSON(rep stream.SelfTestReport) map[string]any {
	return map[string]any{
		"gomaxprocs":              rep.GOMAXPROCS,
		"ingest_events_per_s":     rep.IngestEventsPerSec,
		"ingest_events_per_cpu_s": rep.IngestEventsPerCPUSec,
		"streams":                 rep.Streams,
		"burst":                   rep.Burst,
		"samples":                 rep.Samples,
		"added_p50_us":            float64(rep.AddedP50) / 1e3,
		"added_p90_us":            float64(rep.AddedP90) / 1e3,
		"added_p99_us":            float64(rep.AddedP99) / 1e3,
		"added_max_us":            float64(rep.AddedMax) / 1e3,
		"errors":                  rep.Errors,
		"target_events_per_s":     stream.TargetEventsPerSec,
		"target_added_p99_us":     float64(stream.TargetAddedP99) / 1e3,
		"targets_met":             selftestMet(rep),
	}
}
