package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestValidate: validate accepts a good speedmatrix.yaml and says what it makes a run do (what
// it measures, the matrix and its expected time, the budget), names every bad value of a bad one
// (exit 2) without measuring anything, warns of engine.serve's variables the environment lacks,
// and needs --config.
func TestValidate(t *testing.T) {
	dir := t.TempDir()
	write := func(name, doc string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good.yaml", "matrix: full\nduration: 30s\nbudget: 75m\nengine:\n  name: vllm\n  source: .\n  build: auto\n  serve:\n    command: [vllm, serve, m, --port, \"${PORT}\", --api-key, \"${VLLM_KEY}\"]\n")
	out, errOut, code := runCLI("validate", "--config", good)
	if code != ExitOK {
		t.Fatalf("a good file: exit %d\n%s", code, errOut)
	}
	for _, want := range []string{good + ": valid", "measures: engine.serve (vllm serve m --port ${PORT} --api-key ${VLLM_KEY}), built auto from .",
		"matrix: full (8 prefill cells and 64 decode cells; 73 cells on a 1M-token server like the reference's", "30s windows, 1 trial: about 41 min", "budget: 75 min"} {
		if !strings.Contains(out, want) {
			t.Errorf("validate's output lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(errOut, "VLLM_KEY") || strings.Contains(errOut, "PORT,") {
		t.Errorf("stderr %q: want a warning naming VLLM_KEY (and not PORT, the run's own)", errOut)
	}
	bad := write("bad.yaml", "matrix: huge\nduration: -1s\ncells: [decode/8K]\n")
	_, errOut, code = runCLI("validate", "--config", bad)
	if code != ExitUsage || !strings.Contains(errOut, `bad.yaml:1:9: matrix: matrix "huge" unknown`) || !strings.Contains(errOut, "bad.yaml:2:11: duration") {
		t.Errorf("a bad file: exit %d, %q; want %d and every bad value with its line", code, errOut, ExitUsage)
	}
	cells := write("cells.yaml", "cells: [decode/8K]\n")
	if _, errOut, code = runCLI("validate", "--config", cells); code != ExitUsage || !strings.Contains(errOut, "needs its concurrency") {
		t.Errorf("a cell without its concurrency: exit %d, %q", code, errOut)
	}
	sim := write("sim.yaml", "matrix: quick\n")
	if out, _, code = runCLI("validate", "--config", sim); code != ExitOK || !strings.Contains(out, "the built-in simulator (profile glm-5.3-flash-nvfp4-h200x2, 20× faster") {
		t.Errorf("a file that measures the simulator: exit %d\n%s", code, out)
	}
	if _, errOut, code = runCLI("validate"); code != ExitUsage || !strings.Contains(errOut, "--config: give the file to check") || !strings.Contains(errOut, "there is no ./speedmatrix.yaml") {
		t.Errorf("no --config: exit %d, %q", code, errOut)
	}
}

// TestValidateBudget: validate states a pull request's GPU time against the budget — the first
// pass's estimate with the build and load expected, what is left for confirmations and reruns,
// and the cells a paired run affords before the history exists — and warns when the first
// pass, or any paired run, cannot fit (issue 35: `budget: 30m` was accepted silently while the
// first pass alone is about 41 min).
func TestValidateBudget(t *testing.T) {
	dir := t.TempDir()
	cfg := func(budget, paired string) string {
		p := filepath.Join(dir, budget+paired+".yaml")
		doc := "matrix: full\nduration: 30s\nbudget: " + budget + "\nengine:\n  name: vllm\n  source: .\n  build: auto\n  serve:\n    command: [vllm, serve, m, --port, \"${PORT}\"]\n" + paired
		if err := os.WriteFile(p, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct {
		name, budget, paired string
		want, warn           []string
	}{
		{name: "the example's 75 min", budget: "75m",
			want: []string{"budget: 75 min of GPU time a pull request (build, model load, the first pass, confirmations and reruns together); the first pass ≈ 41 min + build and load ≈ 8 min (estimate) = 49 min, leaving ≈ 26 min for confirmations and reruns",
				"paired (paired.mode auto; every pull request until the store holds 10 default-branch runs): 12 of the matrix's 72 cells fit the budget 75 min"}},
		{name: "30 min: the first pass cannot fit", budget: "30m",
			want: []string{"= 49 min: over the budget"},
			warn: []string{"budget 30 min: the first pass alone is expected to take about 41 min, with build and model load 49 min", "raise budget to at least 49 min"}},
		{name: "5 min: no paired run fits", budget: "5m",
			warn: []string{"paired.mode auto: until the store holds store.min_history default-branch runs, pull requests are measured paired, but a paired run needs at least 2 blocks a side"}},
		{name: "paired off", budget: "75m", paired: "paired: {mode: off}\n",
			want: []string{"leaving ≈ 26 min"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := runCLI("validate", "--config", cfg(tc.budget, tc.paired))
			if code != ExitOK {
				t.Fatalf("exit %d, want 0 (a warning, not an error)\n%s", code, errOut)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("validate's output lacks %q:\n%s", w, out)
				}
			}
			for _, w := range tc.warn {
				if !strings.Contains(errOut, w) {
					t.Errorf("validate's warnings lack %q:\n%s", w, errOut)
				}
			}
			if tc.warn == nil && strings.Contains(errOut, "budget") {
				t.Errorf("a warning about the budget where it fits:\n%s", errOut)
			}
			if tc.paired != "" && strings.Contains(out, "paired (") {
				t.Errorf("paired.mode off, but validate states a paired choice:\n%s", out)
			}
		})
	}
}
