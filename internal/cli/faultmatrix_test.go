package cli

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/speedmatrix/speedmatrix/results"
)

// TestRunFaultMatrix runs `speedmatrix run` against the in-process simulator with each kind of
// --sim-fault and checks the exit code, that the run ends within the configured timeouts once
// the server is dead or hung (plus a margin), and the results file: valid, marked partial when
// the run ended early, holding the planned cells in order up to the end. The runs and their
// bounds are in the simulator's time (runSimTimeTook), so a loaded machine moves neither.
func TestRunFaultMatrix(t *testing.T) {
	const (
		window    = 300 * time.Millisecond
		readiness = time.Second
		drain     = time.Second
		probe     = 2 * time.Second // the simulator's probe bound at this speedup (runsim.go scale)
		margin    = time.Second     // setup and the cell in flight (no load: the bubble's time)
	)
	// After a fault at `at`: the cell in flight, a drain, a readiness wait and a window with no
	// token, the probe.
	tail := window + drain + readiness + window + probe
	cases := []struct {
		name    string
		fault   string
		extra   []string
		exit    int
		partial bool
		msg     string        // in the error
		bound   time.Duration // the whole run
		noFile  bool
	}{
		{name: "error", fault: "error=100%", exit: ExitError, msg: "every decode cell failed", bound: 6 * time.Second},
		{name: "cut", fault: "cut=50", exit: ExitError, msg: "every decode cell failed", bound: 8 * time.Second},
		{name: "crash", fault: "crash=1s", exit: ExitError, partial: true, msg: "stopped answering", bound: time.Second + tail + margin},
		{name: "dead", fault: "dead=1s", exit: ExitError, partial: true, msg: "stopped answering", bound: time.Second + tail + margin},
		{name: "hang", fault: "hang=1s", exit: ExitError, partial: true, msg: "the server hangs", bound: time.Second + tail + margin},
		{name: "slow-health answered", fault: "slow-health=500ms", extra: []string{"--health-timeout", "2s"}, exit: ExitOK, bound: 10 * time.Second},
		{name: "slow-health too slow", fault: "slow-health=2s", extra: []string{"--health-timeout", "200ms"}, exit: ExitError,
			msg: "/health did not answer within 200ms (3 tries)", bound: 3 * time.Second, noFile: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "r.json")
			args := append([]string{"run", "--contexts", "1K", "--concurrency", "1,2,4,8", "--duration", window.String(),
				"--readiness-timeout", readiness.String(), "--drain-timeout", drain.String(), "--max-tokens", "1001",
				"--warmup", "0", "--sim-speedup", "60", "--sim-fault", c.fault, "--quiet", "-o", out, "--order", "matrix"}, c.extra...)
			_, stderr, took, err := runSimTimeTook(t, nil, args...)
			if ExitCode(err) != c.exit || (c.msg != "" && (err == nil || !strings.Contains(err.Error(), c.msg))) {
				t.Fatalf("exit %d, %v; want exit %d saying %q\n%s", ExitCode(err), err, c.exit, c.msg, lastLines(stderr, 15))
			}
			if took > c.bound {
				t.Errorf("the run took %v, want at most %v", took.Round(time.Millisecond), c.bound)
			}
			t.Logf("exit %d in %v: %v", ExitCode(err), took.Round(time.Millisecond), err)
			if c.noFile {
				if _, err := results.ReadFile(out); err == nil {
					t.Errorf("a run that could not start wrote %s", out)
				}
				return
			}
			f, err := results.ReadFile(out) // validates
			if err != nil {
				t.Fatal(err)
			}
			if f.Run.Partial != c.partial {
				t.Errorf("partial %v (%q), want %v", f.Run.Partial, f.Run.PartialReason, c.partial)
			}
			if c.partial && !strings.Contains(f.Run.PartialReason, "stopped answering") {
				t.Errorf("partial reason %q", f.Run.PartialReason)
			}
			// The cells are the plan's, in order, up to where the run ended.
			if len(f.Prefill) != 1 || f.Prefill[0].ContextLabel != "1K" {
				t.Fatalf("prefill cells %+v, want 1K", f.Prefill)
			}
			plan := []int{1, 2, 4, 8}
			if len(f.Decode) > len(plan) || !c.partial && len(f.Decode) != len(plan) {
				t.Fatalf("%d decode cells, want %d (all when complete)", len(f.Decode), len(plan))
			}
			for i, d := range f.Decode {
				if d.ContextLabel != "1K" || d.Concurrency != plan[i] {
					t.Errorf("decode cell %d is %s×%d, want 1K×%d", i, d.ContextLabel, d.Concurrency, plan[i])
				}
				last := i == len(f.Decode)-1
				switch {
				case c.exit == ExitOK && !d.Status.Measured():
					t.Errorf("1K×%d: %s %q, want measured", d.Concurrency, d.Status, d.Error)
				case c.msg == "every decode cell failed" && d.Status != results.StatusError:
					t.Errorf("1K×%d: %s, want error", d.Concurrency, d.Status)
				case c.partial && !last && !d.Status.Measured():
					t.Errorf("1K×%d: %s %q before the end, want measured", d.Concurrency, d.Status, d.Error)
				}
			}
		})
	}
}

// lastLines returns the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n") + "\n(" + strconv.Itoa(len(lines)) + " lines)"
}
