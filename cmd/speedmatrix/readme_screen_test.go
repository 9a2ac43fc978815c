package main

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/speedmatrix/speedmatrix/calibrate"
)

// firstScreen does return README.md's first screen: everything before its first "## " heading.
func firstScreen(t *testing.T) string {
	t.Helper()
	readme := readDoc(t, "README.md")
	i := strings.Index(readme, "\n## ")
	if i < 0 {
		t.Fatal("README.md has no ## heading")
	}
	if n := strings.Count(readme[:i], "\n"); n > 30 {
		t.Errorf("README.md's first screen is %d lines, want at most 30", n)
	}
	return readme[:i]
}

// TestREADMEFirstScreen is the checklist of what a GPU team must find on README.md's first
// screen, before any heading: the install command (a go install of this module's command), the
// action's ref and how to pin it, what the runner needs (every build mode's tools), and what
// one pull request costs in GPU time, the full matrix's minutes within 10 % of the calibrated
// cost model of the reference server (compare/calibrate) and the budget the quick start's
// speedmatrix.yaml sets. Every time the screen states has a tolerance that a test here (or a
// measurement in docs/development.md) checks.
func TestREADMEFirstScreen(t *testing.T) {
	s := firstScreen(t)
	mod := regexp.MustCompile(`(?m)^module (\S+)$`).FindStringSubmatch(readDoc(t, "go.mod"))
	if mod == nil {
		t.Fatal("go.mod names no module")
	}
	for _, want := range []struct{ what, text string }{
		{"the install command", "`go install " + mod[1] + "/cmd/speedmatrix@latest`"},
		{"the release binary's page", "[docs/install.md](docs/install.md)"},
		{"the ref to pin", "`uses: speedmatrix/speedmatrix@<commit>"},
		{"what the ref is pinned to", "pinned to a release commit"},
		{"the runner", "self-hosted Linux GPU runner"},
		{"the runner's tools", "`git`, `bash` and `curl`"},
		{"precompiled's tool", "`uv` (precompiled or auto)"},
		{"full's tools", "CUDA and `ccache` (full)"},
		{"docker's tool", "Docker (docker)"},
		{"the GPU time of a pull request", "one pull request costs at most `budget`"},
	} {
		if !strings.Contains(strings.Join(strings.Fields(s), " "), strings.Join(strings.Fields(want.text), " ")) {
			t.Errorf("README.md's first screen does not give %s: %q", want.what, want.text)
		}
	}

	s = strings.Join(strings.Fields(s), " ")
	// The budget is the quick start's.
	m := regexp.MustCompile(`\((\d+) min in the example\)`).FindStringSubmatch(s)
	if m == nil {
		t.Fatal("the first screen gives no budget (N min in the example)")
	}
	if !strings.Contains(readDoc(t, "README.md"), "budget: "+m[1]+"m ") {
		t.Errorf("the first screen's budget, %s min, is not the quick start's speedmatrix.yaml budget", m[1])
	}
	// The full matrix's minutes: the reference server's cost model, within 10 %.
	m = regexp.MustCompile(`full matrix \(≈ (\d+) min on 2× H200\)`).FindStringSubmatch(s)
	if m == nil {
		t.Fatal("the first screen gives no time of the full matrix (≈ N min on 2× H200)")
	}
	said, _ := strconv.Atoi(m[1])
	model := calibrate.NewMatrix(1, 1).RunCost(calibrate.DefaultCosts(), nil, nil, 1)
	if r := float64(said) * float64(time.Minute) / float64(model); r < 0.9 || r > 1.1 {
		t.Errorf("the first screen says the full matrix takes ≈ %d min; the reference server's cost model says %v", said, model.Round(time.Second))
	}
}

// demoTimeRE finds the demo's time and tolerance on the first screen.
var demoTimeRE = regexp.MustCompile(`demo` + "`" + ` \(about (\d+) s ± (\d+) s after the build\)`)

// checkDemoTime checks the demo's time the first screen states, with its tolerance, against
// took: the bare demo run in the simulator's time (TestREADMECommands runs it so: the fake
// clock only the model moves), which is its wall time on a machine with the cores for it. How
// much longer it takes on a loaded machine is a measurement, in docs/development.md.
func checkDemoTime(t *testing.T, took time.Duration) {
	t.Helper()
	m := demoTimeRE.FindStringSubmatch(strings.Join(strings.Fields(firstScreen(t)), " "))
	if m == nil {
		t.Fatalf("the first screen gives no demo time as %s", demoTimeRE)
	}
	said, _ := strconv.Atoi(m[1])
	tol, _ := strconv.Atoi(m[2])
	if d := took - time.Duration(said)*time.Second; d < -time.Duration(tol)*time.Second || d > time.Duration(tol)*time.Second {
		t.Errorf("the demo took %v of the simulator's time; the README says about %d s ± %d s", took.Round(100*time.Millisecond), said, tol)
	}
	t.Logf("the demo took %v of the simulator's time", took.Round(100*time.Millisecond))
}
