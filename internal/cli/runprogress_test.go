package cli

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
	env := &Env{Stderr: &buf, Getenv: func(k string) string { return map[string]string{"GITHUB_ACTIONS": "true"}[k] }}
	if p, ok := pickProgress(env, false).(*lineProgress); !ok || !p.groups {
		t.Errorf("in GitHub Actions: %T, want grouped lines", pickProgress(env, false))
	}
	if pickProgress(env, true) != nil {
		t.Errorf("--quiet shows progress")
	}
	env.Getenv = func(string) string { return "" }
	if p, ok := pickProgress(env, false).(*lineProgress); !ok || p.groups {
		t.Errorf("not a terminal, not Actions: %T, want plain lines", pickProgress(env, false))
	}
}
