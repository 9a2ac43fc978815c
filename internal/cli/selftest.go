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
inference server. Run it on the machine that will run the benchmark, while it is otherwise idle.

ingest: how many token events (realistic vLLM chunks, one token each, continuous usage) one
core parses and time-stamps per second through the whole client, read from memory; per second
of that thread's CPU time where the OS reports it. Target: at least 200,000.

latency: a loopback server in this process streams to --streams concurrent streams, one chunk
per --interval, and stamps each chunk just before writing it (send). The same schedule runs
once for each kind of reader per round, --rounds times, the order swapped every round:
  bare reader  one goroutine per stream on a plain TCP connection, reading with a 64 KiB buffer
               and stamping the moment each Read returns; it parses nothing.
  client       the speedmatrix client, whose connections stamp every socket Read the same way
               (read), next to the client's own time stamp of each chunk (event).
It prints the quantiles (p50, p90, p99, max over all chunks) of:
  os path      read − send: loopback TCP and the wake-up of the reading goroutine, i.e. what
               the operating system and the Go scheduler cost on this machine, in both phases.
  end to end   event − send: what the client's time stamps lag behind the send.
  added        event − read of the same chunk, paired per chunk: what the client adds between
               the kernel handing over the bytes and its time stamp (HTTP and SSE decoding and
               the JSON work of the chunks in front of it). The target applies to this:
               p99 under 100 µs.
  matched      end to end − bare os path at each quantile: the added time plus the client's
               indirect cost (its garbage and CPU time delaying wake-ups), plus the noise
               between two runs; it is shown, not checked.
  busy         each reader's work from the return of a socket Read that completed a data line
               to its next Read call (about one per chunk), bare against client: while all
               CPUs are busy (many chunks at once on few cores, see --burst) other streams'
               chunks wait for it, which shows in matched, not in added.
  cpu          the process's CPU time per chunk in each kind of phase (the in-process server's
               share is in both): what the client's work costs that could delay other streams.
On a loaded or small machine the os path dominates; it delays a bare reader just as much. With
more runnable threads than CPUs (load average above the CPU count) the kernel also preempts the
reading thread between a Read and the client's stamp, which shows in the added figure's tail:
run it on an idle machine.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if opts.Streams < 1 || opts.IngestEvents < 1 || opts.Duration <= 0 || opts.Interval <= 0 || opts.Rounds < 1 {
				return usagef("--streams, --events, --duration, --interval and --rounds must be positive")
			}
			if opts.Duration/time.Duration(opts.Rounds) < opts.Interval {
				return usagef("--duration %v over %d rounds is shorter than --interval %v: no chunk would be sent", opts.Duration, opts.Rounds, opts.Interval)
			}
			rep, err := stream.SelfTest(cmd.Context(), opts)
			if err != nil {
				return fmt.Errorf("selftest: %w", err)
			}
			load := loadAverage()
			if asJSON {
				enc := json.NewEncoder(env.Stdout)
				enc.SetIndent("", "  ")
				if err := enc.Encode(selftestJSON(rep, opts, load)); err != nil {
					return err
				}
			} else if err := writeSelftest(env.Stdout, rep, opts, load); err != nil {
				return err
			}
			if check && !rep.Met() {
				return errSelfTestTargets
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.IntVar(&opts.IngestEvents, "events", 300000, "token chunks parsed from memory to measure the ingest rate")
	f.IntVar(&opts.Streams, "streams", 128, "concurrent streams of the latency test")
	f.DurationVar(&opts.Duration, "duration", 3*time.Second, "how long each reader streams in the latency test, over all rounds (the test takes twice this)")
	f.IntVar(&opts.Rounds, "rounds", 2, "alternations of a bare-reader phase and a client phase the duration is split into, so that a change in load hits both alike")
	f.DurationVar(&opts.Interval, "interval", 20*time.Millisecond, "gap between two chunks of one stream (20ms = 50 tok/s per stream)")
	f.BoolVar(&opts.Burst, "burst", false, "send every stream's chunk at the same instant (one decode step of a batching server) instead of spread over the interval")
	f.BoolVar(&asJSON, "json", false, "print the figures as JSON")
	f.BoolVar(&check, "check", false, "exit 1 when a target is missed (≥ 200,000 events/s per core, added p99 < 100µs paired per chunk) or a stream failed")
	return cmd
}

func verdict(ok bool) string {
	if ok {
		return "ok"
	}
	return "MISSED"
}

// quantileLine does format one row of latency quantiles.
func quantileLine(name string, q stream.Quantiles) string {
	return fmt.Sprintf("  %-23s p50 %9v  p90 %9v  p99 %9v  max %9v", name, us(q.P50), us(q.P90), us(q.P99), us(q.Max))
}

// writeSelftest does print the report for people.
func writeSelftest(w io.Writer, rep stream.SelfTestReport, opts stream.SelfTestOptions, load string) error {
	mode := "spread over the interval"
	if rep.Burst {
		mode = "all at once each interval"
	}
	pc := rep.PerCore()
	addedOK := rep.Added.N > 0 && rep.Added.P99 < stream.TargetAddedP99
	lines := []string{
		fmt.Sprintf("speedmatrix selftest (%s %s/%s, GOMAXPROCS %d, %d CPUs)", runtime.Version(), runtime.GOOS, runtime.GOARCH, rep.GOMAXPROCS, runtime.NumCPU()),
		fmt.Sprintf("ingest:  %.0f token events/s per core (%.0f/s wall clock), %.4f allocs and %.0f B per event   target ≥ %d   %s",
			pc, rep.IngestEventsPerSec, rep.IngestAllocsPerEvent, rep.IngestBytesPerEvent, stream.TargetEventsPerSec, verdict(pc >= stream.TargetEventsPerSec)),
		fmt.Sprintf("latency: %d streams, a chunk every %v (%s), %d rounds; %d chunks bare, %d chunks client",
			rep.Streams, opts.Interval, mode, rep.Rounds, rep.Bare.N, rep.EndToEnd.N),
		quantileLine("bare os path", rep.Bare),
		quantileLine("client os path", rep.ClientOS),
		quantileLine("client end to end", rep.EndToEnd),
		quantileLine("added (paired)", rep.Added) + fmt.Sprintf("   target p99 < %v   %s", us(stream.TargetAddedP99), verdict(addedOK)),
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

// micro does return d in microseconds.
func micro(d time.Duration) float64 { return float64(d) / 1e3 }

// us does round a duration to microseconds for printing.
func us(d time.Duration) time.Duration { return d.Round(time.Microsecond) }

// quantilesJSON does shape quantiles in microseconds.
func quantilesJSON(q stream.Quantiles) map[string]any {
	return map[string]any{
		"n":      q.N,
		"p50_us": float64(q.P50) / 1e3,
		"p90_us": float64(q.P90) / 1e3,
		"p99_us": float64(q.P99) / 1e3,
		"max_us": float64(q.Max) / 1e3,
	}
}

// selftestJSON does shape the report for --json with units in the names.
func selftestJSON(rep stream.SelfTestReport, opts stream.SelfTestOptions, load string) map[string]any {
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
		"target_events_per_s":     stream.TargetEventsPerSec,
		"target_added_p99_us":     float64(stream.TargetAddedP99) / 1e3,
		"targets_met":             rep.Met(),
	}
}
