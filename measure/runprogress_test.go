package measure

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/speedmatrix/speedmatrix/bench"
	"github.com/speedmatrix/speedmatrix/results"
)

// TestBarProgress drives the terminal bar through two cells and checks what it draws: the
// current cell, the count of cells, the live rate and an error line.
func TestBarProgress(t *testing.T) {
	var buf bytes.Buffer
	p := &barProgress{w: &buf}
	a := results.CellID{Phase: results.PhaseDecode, ContextLabel: "8K", Concurrency: 4}
	b := results.CellID{Phase: results.PhaseDecode, ContextLabel: "8K", Concurrency: 8}
	p.Start([]bench.PlannedCell{{ID: a, Trials: 1}, {ID: b, Trials: 1}}, time.Minute)
	p.CellStart(a, 1)
	p.Tokens(500)
	time.Sleep(1100 * time.Millisecond) // one refresh of the rate
	p.CellDone(bench.CellOutcome{ID: a, Status: results.StatusValid, TokPerS: 450})
	p.CellStart(b, 1)
	p.CellDone(bench.CellOutcome{ID: b, Status: results.StatusError, Error: "a stream failed: HTTP 500"})
	p.Finish()
	out := buf.String()
	if strings.Contains(out, "· 0.0 tok/s") {
		t.Errorf("the live rate missed the 500 tokens:\n%q", out)
	}
	for _, want := range []string{"decode/8K/4 · ", " tok/s", "(2/2)", "decode/8K/8", "Error: a stream failed: HTTP 500"} {
		if !strings.Contains(out, want) {
			t.Errorf("bar output lacks %q:\n%q", want, out)
		}
	}
}

func TestPickProgress(t *testing.T) {
	var buf bytes.Buffer
	env := &Deps{Stderr: &buf, Getenv: func(k string) string { return map[string]string{"GITHUB_ACTIONS": "true"}[k] }}
	if p, ok := pickProgress(env, false, 0).(*lineProgress); !ok || !p.groups {
		t.Errorf("in GitHub Actions: %T, want grouped lines", pickProgress(env, false, 0))
	}
	if pickProgress(env, true, 0) != nil {
		t.Errorf("--quiet shows progress")
	}
	env.Getenv = func(string) string { return "" }
	if p, ok := pickProgress(env, false, 0).(*lineProgress); !ok || p.groups {
		t.Errorf("not a terminal, not Actions: %T, want plain lines", pickProgress(env, false, 0))
	}
}

// TestOutcomeLineSplitsWaiting checks that a finished cell's line shows its window apart from
// the readiness and drain around it (issue 9: a queued cell's "1m2s" was mostly readiness).
func TestOutcomeLineSplitsWaiting(t *testing.T) {
	o := bench.CellOutcome{ID: results.CellID{Phase: results.PhaseDecode, ContextLabel: "8K", Concurrency: 32}, Status: results.StatusQueued,
		TokPerS: 865.7, TTFTMs: 8671, Elapsed: 3200 * time.Millisecond, Window: 2 * time.Second, Readiness: 1100 * time.Millisecond, Drain: 100 * time.Millisecond}
	got := outcomeLine(o, 0)
	want := "decode/8K/32       Requests queued · 865.7 tok/s · TTFT 8,671 ms · window 2.0s · readiness 1.1s · drain 0.1s"
	if got != want {
		t.Errorf("outcomeLine:\n got %q\nwant %q", got, want)
	}
}

// TestOutcomeLineInProfileTime checks that against the built-in simulator at 20× a cell's line
// shows its rate and TTFT in the profile's time, as the reports do, and its window, readiness
// and drain as this run's wall time.
func TestOutcomeLineInProfileTime(t *testing.T) {
	o := bench.CellOutcome{ID: results.CellID{Phase: results.PhaseDecode, ContextLabel: "8K", Concurrency: 1}, Status: results.StatusValid,
		TokPerS: 3430.5, TTFTMs: 31, Window: 2 * time.Second, Readiness: 100 * time.Millisecond}
	got := outcomeLine(o, 20)
	want := "decode/8K/1        Valid · 171.5 tok/s · TTFT 620 ms · window 2.0s · readiness 0.1s · drain 0.0s"
	if got != want {
		t.Errorf("outcomeLine at 20×:\n got %q\nwant %q", got, want)
	}
	var b strings.Builder
	p := &lineProgress{w: &b, scale: 20}
	p.Start(nil, time.Second)
	if !strings.Contains(b.String(), "measured rates ÷ 20, times × 20") {
		t.Errorf("the progress does not say its numbers are in the profile's time: %q", b.String())
	}
}

// TestProgressStartPlural: one cell is "1 cell", never "1 cells" (issue 25).
func TestProgressStartPlural(t *testing.T) {
	for _, tc := range []struct {
		n    int
		want string
	}{{1, "speedmatrix run: 1 cell, about 1s"}, {2, "speedmatrix run: 2 cells, about 1s"}} {
		var b strings.Builder
		p := &lineProgress{w: &b}
		p.Start(make([]bench.PlannedCell, tc.n), time.Second)
		if !strings.HasPrefix(b.String(), tc.want) {
			t.Errorf("%d cells: %q, want it to start %q", tc.n, b.String(), tc.want)
		}
	}
}

// TestBarShowsPhase checks that the bar names the phase a decode trial is in.
func TestBarShowsPhase(t *testing.T) {
	var buf bytes.Buffer
	p := &barProgress{w: &buf}
	a := results.CellID{Phase: results.PhaseDecode, ContextLabel: "8K", Concurrency: 4}
	p.Start([]bench.PlannedCell{{ID: a, Trials: 1}}, time.Minute)
	p.CellStart(a, 1)
	p.Phase(a, bench.PhaseReadiness)
	p.Finish()
	if !strings.Contains(buf.String(), "decode/8K/4 · readiness") {
		t.Errorf("bar output lacks the readiness phase:\n%q", buf.String())
	}
}

// TestBudgetLine checks the run's closing time budget line.
func TestBudgetLine(t *testing.T) {
	cpu := 2.5
	b := &results.Budget{WallSeconds: 112, SetupSeconds: 3, PrefillSeconds: 14.8, ReadinessSeconds: 6.1, WindowSeconds: 86, DrainSeconds: 1.9, OtherSeconds: 0.2,
		WallPerMeasured: 112 / 100.8, CPUSeconds: &cpu, CPUIncludesServer: true}
	got := budgetLine(b)
	want := "time budget: wall 1m52s = windows 86.0s + prefill 14.8s + readiness 6.1s + drain 1.9s + setup 3.0s + other 0.2s; wall ÷ (windows + prefill) = 1.11; CPU 2.50 s = 0.029 CPU-s per window-second (this process, with the in-process simulator)"
	if got != want {
		t.Errorf("budgetLine:\n got %q\nwant %q", got, want)
	}
}

// TestBudgetLineServerParts checks that the line names the parts of readiness and setup the
// server and the warm-ups took, and the ratio with them counted.
func TestBudgetLineServerParts(t *testing.T) {
	b := &results.Budget{WallSeconds: 149, SetupSeconds: 29.2, WarmupSeconds: 22.7, PrefillSeconds: 15.1, ReadinessSeconds: 17.4, AdmissionSeconds: 15.9,
		WindowSeconds: 86, DrainSeconds: 0.3, OtherSeconds: 0.5}
	b.Ratios()
	got := budgetLine(b)
	want := "time budget: wall 2m29s = windows 86.0s + prefill 15.1s + readiness 17.4s + drain 0.3s + setup 29.2s + other 0.5s; of the readiness, the server starting the requests 15.9s, the client deciding 1.5s; of the setup, warm-up requests 22.7s; wall ÷ (windows + prefill) = 1.47, ÷ (windows + prefill + warm-up + the server starting requests) = 1.07"
	if got != want {
		t.Errorf("budgetLine:\n got %q\nwant %q", got, want)
	}
}
