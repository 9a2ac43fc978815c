// Package selftest is `speedmatrix selftest`: its flags, then bench/stream's self-test.
package selftest

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/speedmatrix/speedmatrix/internal/cli/cmdutil"

	"github.com/spf13/cobra"

	"github.com/speedmatrix/speedmatrix/bench/stream"
)

// errSelfTestTargets is returned by `selftest --check` when a target was missed.
var errSelfTestTargets = errors.New("the client missed a self-test target")

// NewCmd builds `speedmatrix selftest`.
func NewCmd(env *cmdutil.Env) *cobra.Command {
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
				return cmdutil.Usagef("--streams, --events, --duration, --interval and --rounds must be positive")
			}
			if opts.Duration/time.Duration(opts.Rounds) < opts.Interval {
				return cmdutil.Usagef("--duration %v over %d rounds is shorter than --interval %v: no chunk would be sent", opts.Duration, opts.Rounds, opts.Interval)
			}
			rep, err := stream.SelfTest(cmd.Context(), opts)
			if err != nil {
				return fmt.Errorf("selftest: %w", err)
			}
			load := stream.LoadAverage()
			if asJSON {
				enc := json.NewEncoder(env.Stdout)
				enc.SetIndent("", "  ")
				if err := enc.Encode(stream.SelfTestJSON(rep, opts, load)); err != nil {
					return err
				}
			} else if err := stream.WriteSelfTest(env.Stdout, rep, opts, load); err != nil {
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
