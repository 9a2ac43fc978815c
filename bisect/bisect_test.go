package bisect

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"
)

// history is a scripted range: commit i (0 the good one) serves at speed[i]; skip lists the
// commits that do not build; undecided[commit] is how many first attempts come out undecided.
type history struct {
	speed     []float64
	skip      map[int]bool
	undecided map[int]int
	asked     [][]string
}

// linear returns n commits after the good one, slowed by factor f from each commit of at.
func linear(n int, at map[int]float64) *history {
	h := &history{speed: make([]float64, n+1), skip: map[int]bool{}, undecided: map[int]int{}}
	v := 1.0
	for i := range h.speed {
		if f, ok := at[i]; ok {
			v *= f
		}
		h.speed[i] = v
	}
	return h
}

func name(i int) string { return fmt.Sprintf("c%02d", i) }

func (h *history) config(runners int) Config {
	var cs []string
	for i := 1; i < len(h.speed); i++ {
		cs = append(cs, name(i))
	}
	return Config{Good: name(0), Commits: cs, Runners: runners, Cells: []string{"decode/8K/8"}}
}

func index(c string) int {
	var i int
	fmt.Sscanf(c, "c%d", &i)
	return i
}

// step measures exactly: the change against the base, bad beyond 3 %, good within, an
// interval of ±1 %, one minute of GPU time a commit.
func (h *history) step(_ context.Context, req Request) ([]Measurement, error) {
	h.asked = append(h.asked, req.Commits)
	var out []Measurement
	for _, c := range req.Commits {
		i := index(c)
		m := Measurement{Commit: c, GPUTime: time.Minute}
		rel := h.speed[i]/h.speed[index(req.Base)] - 1
		switch {
		case h.skip[i]:
			m.Verdict, m.Reason = Skip, "build failed"
		case req.Attempt[c] <= h.undecided[i]:
			m.Verdict, m.Reason = Undecided, "inconclusive"
		case rel < -0.03:
			m.Verdict = Bad
		default:
			m.Verdict = Good
		}
		if m.Verdict != Skip {
			m.Change = &Change{Change: rel, Low: rel - 0.01, High: rel + 0.01}
		}
		out = append(out, m)
	}
	return out, nil
}

// runCase is a scripted bisection and what it must find.
type runCase struct {
	name      string
	h         *history
	runners   int
	budget    Budget
	plain     bool
	culprits  []string
	ranges    [][]string
	maxSteps  int
	statement []string
	second    bool
}

// runCases returns the scripted bisections of TestRun and TestNext, each with a fresh history.
func runCases() []runCase {
	return []runCase{
		{name: "16 commits, commit 11", h: linear(16, map[int]float64{11: 0.9}), runners: 2,
			culprits: []string{"c11"}, maxSteps: 5, statement: []string{"culprit is c11", "-10.0 %"}},
		{name: "k-ary: 4 runners", h: linear(16, map[int]float64{11: 0.9}), runners: 4,
			culprits: []string{"c11"}, maxSteps: 3},
		{name: "64 commits, 8 runners", h: linear(64, map[int]float64{37: 0.8}), runners: 8,
			culprits: []string{"c37"}, maxSteps: 3},
		{name: "culprit is the bad commit", h: linear(4, map[int]float64{4: 0.9}), runners: 2,
			culprits: []string{"c04"}, maxSteps: 3},
		{name: "culprit is the first", h: linear(16, map[int]float64{1: 0.9}), runners: 2,
			culprits: []string{"c01"}, maxSteps: 6},
		{name: "skipped culprit: a range", h: func() *history {
			h := linear(16, map[int]float64{11: 0.9})
			h.skip[11] = true
			return h
		}(), runners: 2, ranges: [][]string{{"c11", "c12"}}, statement: []string{"c11 did not build or serve", "cannot be narrowed"}},
		{name: "skipped midpoint: a neighbour instead", h: func() *history {
			h := linear(16, map[int]float64{11: 0.9})
			h.skip[8] = true
			return h
		}(), runners: 2, culprits: []string{"c11"}, maxSteps: 6},
		{name: "undecided then good", h: func() *history {
			h := linear(16, map[int]float64{11: 0.9})
			h.undecided[8] = 1
			return h
		}(), runners: 2, culprits: []string{"c11"}, maxSteps: 6},
		{name: "undecided twice: unmeasurable", h: func() *history {
			h := linear(16, map[int]float64{11: 0.9})
			h.undecided[11] = 5
			return h
		}(), runners: 2, ranges: [][]string{{"c11", "c12"}}, statement: []string{"c11 stayed undecided"}},
		{name: "two regressions", h: linear(16, map[int]float64{5: 0.9, 11: 0.9}), runners: 2,
			culprits: []string{"c05", "c11"}, statement: []string{"first regression's culprit is c05", "second regression's culprit is c11"}},
		{name: "two regressions, budget for one", h: linear(16, map[int]float64{5: 0.9, 11: 0.9}), runners: 2,
			budget: Budget{Steps: 5}, culprits: []string{"c05"}, second: true, statement: []string{"second regression remains"}},
		{name: "budget spent: a range", h: linear(16, map[int]float64{11: 0.9}), runners: 2, budget: Budget{Steps: 2},
			ranges: [][]string{{"c09", "c10", "c11", "c12", "c13", "c14", "c15", "c16"}}, statement: []string{"the budget was spent"}},
		{name: "GPU budget spent", h: linear(16, map[int]float64{11: 0.9}), runners: 2, budget: Budget{GPUTime: 3 * time.Minute},
			ranges: [][]string{{"c09", "c10", "c11", "c12"}}, statement: []string{"3m0s of GPU time"}},
		{name: "not reproduced", h: linear(16, nil), runners: 2, statement: []string{"no regression was reproduced"}},
	}
}

func TestRun(t *testing.T) {
	for _, tt := range runCases() {
		t.Run(tt.name, func(t *testing.T) {
			cfg := tt.h.config(tt.runners)
			cfg.Budget, cfg.Plain = tt.budget, tt.plain
			r, err := Run(context.Background(), cfg, tt.h.step)
			if err != nil {
				t.Fatal(err)
			}
			var culprits []string
			var ranges [][]string
			for _, g := range r.Regressions {
				if g.Culprit != "" {
					culprits = append(culprits, g.Culprit)
				} else {
					ranges = append(ranges, g.Range)
				}
			}
			if !slices.Equal(culprits, tt.culprits) {
				t.Errorf("culprits %v, want %v\n%s", culprits, tt.culprits, r.Statement)
			}
			if fmt.Sprint(ranges) != fmt.Sprint(tt.ranges) {
				t.Errorf("ranges %v, want %v\n%s", ranges, tt.ranges, r.Statement)
			}
			if tt.maxSteps > 0 && r.Steps > tt.maxSteps {
				t.Errorf("%d steps, want at most %d", r.Steps, tt.maxSteps)
			}
			if r.SecondRemains != tt.second {
				t.Errorf("second remains %v, want %v\n%s", r.SecondRemains, tt.second, r.Statement)
			}
			for _, s := range tt.statement {
				if !strings.Contains(r.Statement, s) {
					t.Errorf("statement lacks %q:\n%s", s, r.Statement)
				}
			}
			if r.Steps != len(r.Rounds) || r.Steps != len(tt.h.asked) {
				t.Errorf("steps %d, rounds %d, step calls %d", r.Steps, len(r.Rounds), len(tt.h.asked))
			}
			var gpu time.Duration
			for _, a := range tt.h.asked {
				if len(a) > tt.runners-1 {
					t.Errorf("a round measured %d commits with %d runners", len(a), tt.runners)
				}
				gpu += time.Duration(len(a)) * time.Minute
			}
			if r.GPUTime != gpu {
				t.Errorf("GPU time %v, want %v", r.GPUTime, gpu)
			}
		})
	}
}

// TestStepsLogN checks that k-ary bisection finds every culprit of a 64-commit range within
// ⌈log_{N} 64⌉ + 1 rounds (the first round also measures the bad commit), for N = 2, 4 and 8.
func TestStepsLogN(t *testing.T) {
	for _, n := range []int{2, 4, 8} {
		want := int(math.Ceil(math.Log(64)/math.Log(float64(n))-1e-9)) + 1
		for at := 1; at <= 64; at++ {
			h := linear(64, map[int]float64{at: 0.9})
			r, err := Run(context.Background(), h.config(n), h.step)
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Regressions) != 1 || r.Regressions[0].Culprit != name(at) {
				t.Fatalf("runners %d, culprit %d: %s", n, at, r.Statement)
			}
			if r.Steps > want {
				t.Errorf("runners %d, culprit %d: %d steps, want at most %d", n, at, r.Steps, want)
			}
		}
	}
}

func TestPlainReadsUndecidedAsGood(t *testing.T) {
	h := linear(16, map[int]float64{11: 0.9})
	h.undecided[12] = 1 // the bad commit 12 comes out undecided once: plain bisection calls it good
	cfg := h.config(2)
	cfg.Plain = true
	r, err := Run(context.Background(), cfg, h.step)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Regressions) != 1 || r.Regressions[0].Culprit != "c13" {
		t.Errorf("plain bisection: %s", r.Statement)
	}
	cfg.Plain = false
	h.asked = nil
	if r, err = Run(context.Background(), cfg, h.step); err != nil {
		t.Fatal(err)
	}
	if len(r.Regressions) != 1 || r.Regressions[0].Culprit != "c11" {
		t.Errorf("with reruns: %s", r.Statement)
	}
}

func TestConfigErrors(t *testing.T) {
	h := linear(4, map[int]float64{2: 0.9})
	for _, tt := range []struct {
		name string
		edit func(*Config)
		want string
	}{
		{"no good", func(c *Config) { c.Good = "" }, "no good commit"},
		{"empty range", func(c *Config) { c.Commits = nil }, "range good..bad is empty"},
		{"one runner", func(c *Config) { c.Runners = 1 }, "want at least 2"},
		{"twice", func(c *Config) { c.Commits = append(c.Commits, c.Commits[0]) }, "listed twice"},
		{"negative", func(c *Config) { c.Budget.Steps = -1 }, "negative"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := h.config(2)
			tt.edit(&cfg)
			if _, err := Run(context.Background(), cfg, h.step); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want %q", err, tt.want)
			}
		})
	}
}

func TestStepErrors(t *testing.T) {
	h := linear(4, map[int]float64{2: 0.9})
	for _, tt := range []struct {
		name string
		step StepFunc
		want string
	}{
		{"error", func(context.Context, Request) ([]Measurement, error) { return nil, fmt.Errorf("runner lost") }, "runner lost"},
		{"missing", func(context.Context, Request) ([]Measurement, error) { return nil, nil }, "no measurement of commit"},
		{"stranger", func(context.Context, Request) ([]Measurement, error) {
			return []Measurement{{Commit: "zz", Verdict: Good}}, nil
		}, "not asked for"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := Run(context.Background(), h.config(2), tt.step); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want %q", err, tt.want)
			}
		})
	}
}

func TestSecondRegression(t *testing.T) {
	for _, tt := range []struct {
		name           string
		total, culprit Change
		want           bool
	}{
		{"all explained", Change{-0.10, -0.11, -0.09}, Change{-0.10, -0.11, -0.09}, false},
		{"half explained", Change{-0.19, -0.20, -0.18}, Change{-0.10, -0.11, -0.09}, true},
		{"rest within δ", Change{-0.12, -0.13, -0.11}, Change{-0.10, -0.11, -0.09}, false},
		{"rest beyond δ but noisy", Change{-0.19, -0.30, -0.05}, Change{-0.10, -0.20, 0.0}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if _, got := secondRegression(&tt.total, &tt.culprit, 0.03); got != tt.want {
				t.Errorf("second %v, want %v", got, tt.want)
			}
		})
	}
}

func TestNearerGood(t *testing.T) {
	total := &Change{-0.20, -0.21, -0.19}
	for _, tt := range []struct {
		name  string
		m     Measurement
		total *Change
		want  Verdict
	}{
		{"passes, interval above half of -20 %", Measurement{Verdict: Undecided, Passed: true, Change: &Change{0.01, -0.06, 0.08}}, total, Good},
		{"passes, interval reaching the bad half", Measurement{Verdict: Undecided, Passed: true, Change: &Change{-0.05, -0.12, 0.02}}, total, Undecided},
		{"unproven is never good", Measurement{Verdict: Undecided, Passed: false, Change: &Change{0.01, -0.06, 0.08}}, total, Undecided},
		{"a small total keeps -δ", Measurement{Verdict: Undecided, Passed: true, Change: &Change{0.0, -0.035, 0.035}}, &Change{-0.05, -0.06, -0.04}, Undecided},
		{"no total yet", Measurement{Verdict: Undecided, Passed: true, Change: &Change{0.01, -0.06, 0.08}}, nil, Undecided},
		{"bad stays bad", Measurement{Verdict: Bad, Passed: false, Change: &Change{-0.2, -0.21, -0.19}}, total, Bad},
	} {
		if got := nearerGood(tt.m, tt.total, 0.03); got.Verdict != tt.want {
			t.Errorf("%s: %s (%s), want %s", tt.name, got.Verdict, got.Reason, tt.want)
		}
	}
}
