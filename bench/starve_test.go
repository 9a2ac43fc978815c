package bench

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/speedmatrix/speedmatrix/bench/benchtest"
	"github.com/speedmatrix/speedmatrix/results"
)

// scriptedLag is a LagMeter whose first starvedStarts measurements report the client off the
// CPU for a whole second at once, and the rest none: a machine that starves the run, made
// deterministic.
type scriptedLag struct {
	starvedStarts int64
	starts        atomic.Int64
}

func (m *scriptedLag) Start() func() Lateness {
	n := m.starts.Add(1)
	return func() Lateness {
		if m.starvedStarts < 0 || n <= m.starvedStarts {
			return Lateness{Total: 2 * time.Second, Worst: time.Second}
		}
		return Lateness{}
	}
}

func TestStarved(t *testing.T) {
	window := 1500 * time.Millisecond
	tests := []struct {
		name string
		late Lateness
		lost float64
		want string // a word of the reason; "" for not starved
	}{
		{"idle machine", Lateness{Total: 5 * time.Millisecond, Worst: time.Millisecond}, 0, ""},
		{"busy machine, short slices", Lateness{Total: 600 * time.Millisecond, Worst: 20 * time.Millisecond}, -1, ""},
		{"off the CPU 80 ms at once", Lateness{Total: 100 * time.Millisecond, Worst: 80 * time.Millisecond}, -1, ""},
		{"off the CPU 300 ms at once", Lateness{Total: 400 * time.Millisecond, Worst: 300 * time.Millisecond}, -1, "waited 300ms at once"},
		{"simulator skipped 50 ms", Lateness{}, 0.05, "50ms of the 1.5s window's model time skipped"},
		{"simulator skipped 10 ms", Lateness{}, 0.01, ""},
		{"not a simulator", Lateness{}, -1, ""},
	}
	for _, tt := range tests {
		got := starved(window, tt.late, tt.lost)
		if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
			t.Errorf("%s: starved = %q, want %q", tt.name, got, tt.want)
		}
	}
	if got := starved(0, Lateness{Worst: time.Second}, 1); got != "" {
		t.Errorf("no span: starved = %q, want none", got)
	}
}

// TestStarvedEdges: a client off the CPU when its window opens or closes biases the window; the
// same wait in the middle of it does not.
func TestStarvedEdges(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	open, end := t0, t0.Add(1500*time.Millisecond)
	gap := func(from, d time.Duration) Lateness {
		return Lateness{Worst: d, Total: d, Gaps: []Gap{{From: t0.Add(from), To: t0.Add(from + d)}}}
	}
	tests := []struct {
		name    string
		late    Lateness
		closed  time.Time
		starved bool
	}{
		{"no wait", Lateness{}, end, false},
		{"60 ms in the middle", gap(700*time.Millisecond, 60*time.Millisecond), end, false},
		{"60 ms over the opening", gap(-20*time.Millisecond, 60*time.Millisecond), end, true},
		{"60 ms over the planned close", gap(1480*time.Millisecond, 60*time.Millisecond), end.Add(40 * time.Millisecond), true},
		{"60 ms ending as the window closed late", gap(1490*time.Millisecond, 60*time.Millisecond), end.Add(50 * time.Millisecond), true},
		{"10 ms at the close", gap(1495*time.Millisecond, 10*time.Millisecond), end, false},
	}
	for _, tt := range tests {
		if got := starvedEdges(open, end, tt.closed, tt.late) != ""; got != tt.starved {
			t.Errorf("%s: starved %v, want %v", tt.name, got, tt.starved)
		}
	}
}

// TestRunStarvedWindowMeasuredAgain: a window the machine starved is measured again once the
// machine settles; the cell then holds the window measured on time, valid, and the run ends
// well.
func TestRunStarvedWindowMeasuredAgain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarnessSim(t, steady())
		lag := &scriptedLag{starvedStarts: 2} // the first window and the first settle
		h.runner.Lag = lag
		cfg := shortConfig(2)
		cfg.KeepStarved = false
		cfg.PrefillFromDecode = false // the decode window is the first measurement judged
		f, err := h.runner.Run(context.Background(), cfg)
		if err != nil {
			t.Fatalf("run: %v", err)
		}
		c := decodeCell(t, f, "1K", 2)
		if c.Status != results.StatusValid || len(c.Trials) != 1 {
			t.Errorf("cell %s with %d trials, want valid with the one window measured on time", c.Status, len(c.Trials))
		}
		if !strings.Contains(h.logs.String(), "starved this window") {
			t.Errorf("the log does not say that the window was measured again:\n%s", h.logs.String())
		}
	})
}

// TestRunStarvedMachineEnds: a machine that starves every window never yields a valid number,
// nor a verdict on the server (stalled, queued, dead): the cell is an error that says the
// machine could not keep up, the run ends with ErrHostStarved, partial, and against a
// simulator the error names the speedup to use.
func TestRunStarvedMachineEnds(t *testing.T) {
	for _, tt := range []struct {
		name      string
		timeScale float64
		hint      string
	}{
		{"simulator at 20×", 20, "--sim-speedup 5"},
		{"real server", 0, "idle cores"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				sc := steady()
				sc.SimSpeedup = tt.timeScale // the server says its speed in /metrics, as the simulator does
				h := newHarnessSim(t, sc)
				h.runner.Lag = &scriptedLag{starvedStarts: -1}
				cfg := testConfig([]int{1024, 2048}, []int{1, 2}, 300*time.Millisecond, 1001)
				cfg.KeepStarved = false
				f, err := h.runner.Run(context.Background(), cfg)
				if !errors.Is(err, ErrHostStarved) || errors.Is(err, ErrServerDead) || !strings.Contains(err.Error(), tt.hint) {
					t.Fatalf("err = %v, want ErrHostStarved naming %q", err, tt.hint)
				}
				if f == nil || !f.Run.Partial {
					t.Fatalf("file %v, want the partial results", f)
				}
				for _, c := range f.Decode {
					if c.Status == results.StatusValid || c.Status == results.StatusQueued {
						t.Errorf("decode %s×%d is %s from a starved machine", c.ContextLabel, c.Concurrency, c.Status)
					}
				}
				for _, c := range f.Prefill {
					if c.Status == results.StatusValid {
						t.Errorf("prefill %s is valid from a starved machine", c.ContextLabel)
					}
				}
				if len(f.Prefill) != 1 || len(f.Decode) != 0 || !strings.Contains(f.Prefill[0].Error, "could not keep up") {
					t.Errorf("prefill cells %+v and decode cells %+v, want the first prefill an error saying the machine could not keep up, and nothing after it", f.Prefill, f.Decode)
				}
			})
		})
	}
}

// TestRunStarvedScoutMeasuredAgain: a prefill whose TTFT the machine starved is measured again
// with a new prompt once the machine settles, and the cell holds the trial measured on time.
func TestRunStarvedScoutMeasuredAgain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarnessSim(t, steady())
		h.runner.Lag = &scriptedLag{starvedStarts: 1} // the first scout
		cfg := shortConfig(1)
		cfg.KeepStarved = false
		f, err := h.runner.Run(context.Background(), cfg)
		if err != nil {
			t.Fatalf("run: %v", err)
		}
		if len(f.Prefill) != 1 || f.Prefill[0].Status != results.StatusValid || len(f.Prefill[0].Trials) != 1 {
			t.Fatalf("prefill cells %+v, want one valid with the one trial measured on time", f.Prefill)
		}
		if !strings.Contains(h.logs.String(), "starved this prefill") {
			t.Errorf("the log does not say that the prefill was measured again:\n%s", h.logs.String())
		}
		if c := decodeCell(t, f, "1K", 1); c.Status != results.StatusValid {
			t.Errorf("decode cell %s, want valid", c.Status)
		}
	})
}

func TestStarvedScout(t *testing.T) {
	tests := []struct {
		ttft, worst time.Duration
		starved     bool
	}{
		{30 * time.Millisecond, 2 * time.Millisecond, false}, // within the slack
		{30 * time.Millisecond, 10 * time.Millisecond, true},
		{600 * time.Millisecond, 60 * time.Millisecond, false},
		{600 * time.Millisecond, 150 * time.Millisecond, true},
	}
	if starvedScout(100*time.Millisecond, Lateness{}, simClock{lost: 0.01, late: -1}) == "" {
		t.Error("a simulator that skipped 10 ms of a 100 ms prefill: not starved")
	}
	// The simulator's steps ran late: what the demo's false block was (6 ms of a 130 ms
	// prefill); a timer's jitter is not.
	for _, tt := range []struct {
		ttft    time.Duration
		late    float64
		starved bool
	}{
		{130 * time.Millisecond, 0.006, true},
		{130 * time.Millisecond, 0.002, false}, // 1.5 %
		{30 * time.Millisecond, 0.0008, false}, // within the slack
		{30 * time.Millisecond, 0.0012, true},
		{2 * time.Second, 0.030, false},
		{2 * time.Second, 0.045, true},
	} {
		if got := starvedScout(tt.ttft, Lateness{}, simClock{lost: 0, late: tt.late}) != ""; got != tt.starved {
			t.Errorf("TTFT %v, the simulator %v s late: starved %v, want %v", tt.ttft, tt.late, got, tt.starved)
		}
	}
	for _, tt := range tests {
		if got := starvedScout(tt.ttft, Lateness{Worst: tt.worst}, simClock{lost: -1, late: -1}) != ""; got != tt.starved {
			t.Errorf("TTFT %v, worst %v: starved %v, want %v", tt.ttft, tt.worst, got, tt.starved)
		}
	}
}

// TestRunKeepStarved: with KeepStarved a starved measurement is kept, the run goes on, and the
// file says how many of its numbers hold the machine's load.
func TestRunKeepStarved(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarnessSim(t, steady())
		h.runner.Lag = &scriptedLag{starvedStarts: -1}
		f, err := h.runner.Run(context.Background(), shortConfig(1))
		if err != nil {
			t.Fatalf("run: %v", err)
		}
		if !strings.Contains(strings.Join(f.Notes, "\n"), "2 measurement(s) were kept although this machine starved") {
			t.Errorf("notes %q lack the starved measurements kept (the prefill and the window)", f.Notes)
		}
	})
}

// lagWhen is a LagMeter that reports the client off the CPU for a second whenever starving
// says so as a measurement ends.
type lagWhen struct{ starving *atomic.Bool }

func (m lagWhen) Start() func() Lateness {
	return func() Lateness {
		if m.starving.Load() {
			return Lateness{Total: 2 * time.Second, Worst: time.Second}
		}
		return Lateness{}
	}
}

// TestRunStarvedProbeIsNotAHang: a server whose streams stall while this client was kept off
// the CPU is not declared hung (ErrServerDead): the short request it got no answer to went
// unread by a starved client, and the run ends with ErrHostStarved.
func TestRunStarvedProbeIsNotAHang(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		scfg := steady()
		var hung atomic.Bool
		scfg.Fault = func(_, promptTokens, maxTokens int) benchtest.Fault {
			if promptTokens == 2048 && maxTokens > 1 {
				hung.Store(true)
			}
			if hung.Load() {
				return benchtest.FaultStall
			}
			return benchtest.FaultNone
		}
		h := newHarnessSim(t, scfg)
		h.runner.Lag = lagWhen{&hung}
		cfg := testConfig([]int{1024, 2048}, []int{1}, 300*time.Millisecond, 1001)
		cfg.KeepStarved = false
		cfg.Timeouts.Readiness = 300 * time.Millisecond
		cfg.Timeouts.Probe = 300 * time.Millisecond
		_, err := h.runner.Run(context.Background(), cfg)
		if !errors.Is(err, ErrHostStarved) || errors.Is(err, ErrServerDead) {
			t.Fatalf("err = %v, want ErrHostStarved, not ErrServerDead", err)
		}
	})
}
