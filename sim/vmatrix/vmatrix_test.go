package vmatrix

import (
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/speedmatrix/speedmatrix/results"
	"github.com/speedmatrix/speedmatrix/sim/profile"
)

// smallOptions is a quick matrix: 8K and 64K, C = 1, 8, 64, 10 s windows.
func smallOptions() Options {
	o := ReferenceOptions(1 << 20)
	o.PrefillContexts = []int{8192, 65536}
	o.Contexts = []int{8192, 65536}
	o.Concurrency = []int{1, 8, 64}
	o.Window = 10 * time.Second
	return o
}

func measure(t *testing.T, seed uint64, noise float64, slowdown string) *results.File {
	t.Helper()
	p, err := profile.Load(profile.Default, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := p.EngineConfig(seed, noise)
	if err != nil {
		t.Fatal(err)
	}
	if slowdown == "decode64K" {
		cfg.Slowdown = func(ph engineDecodePhase, ctx float64, _ int) float64 { return slowIf(ph, ctx) }
	}
	f, err := Run(cfg, smallOptions())
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func totals(f *results.File) []float64 {
	var out []float64
	for _, c := range f.Decode {
		if c.TotalTokPerS != nil {
			out = append(out, *c.TotalTokPerS)
		}
	}
	for _, c := range f.Prefill {
		out = append(out, *c.PromptTokPerS)
	}
	return out
}

// TestNoiseAA checks run-to-run noise: the same seed repeats exactly, another seed differs, by
// more at concurrency 1 than at 8, and without noise the seed changes little.
func TestNoiseAA(t *testing.T) {
	a, b, c := measure(t, 1, 0.15, ""), measure(t, 1, 0.15, ""), measure(t, 2, 0.15, "")
	if diff := cmp.Diff(totals(a), totals(b)); diff != "" {
		t.Errorf("same seed, different results:\n%s", diff)
	}
	ta, tc := totals(a), totals(c)
	if cmp.Equal(ta, tc) {
		t.Fatal("seeds 1 and 2 gave identical results under noise 0.15")
	}
	// Cells are 8K×{1,8,64}, 64K×{1,8,64}: compare the spread at C=1 with that at C=8 over
	// several seeds.
	spread := func(idx int, noise float64) float64 {
		var xs []float64
		for seed := uint64(1); seed <= 12; seed++ {
			xs = append(xs, totals(measure(t, seed, noise, ""))[idx])
		}
		mean, ss := 0.0, 0.0
		for _, x := range xs {
			mean += x / float64(len(xs))
		}
		for _, x := range xs {
			ss += (x - mean) * (x - mean)
		}
		return math.Sqrt(ss/float64(len(xs)-1)) / mean
	}
	cv1, cv8, quiet := spread(0, 0.15), spread(1, 0.15), spread(0, 0)
	t.Logf("run-to-run CV over 12 seeds: C=1 %.3f, C=8 %.3f; C=1 without noise %.3f (acceptance draws only)", cv1, cv8, quiet)
	if !(cv1 > 0.05 && cv1 > 2*cv8 && cv1 > 1.5*quiet) {
		t.Errorf("run-to-run CV at C=1 is %.3f (without noise %.3f) and at C=8 %.3f: want several %% at C=1, well above the noise-free spread, and much less at C=8", cv1, quiet, cv8)
	}
}

// TestSlowdownShowsInMatrix checks that a decode slow-down at contexts ≥ 64K slows exactly
// those cells.
func TestSlowdownShowsInMatrix(t *testing.T) {
	base, slow := measure(t, 1, 0, ""), measure(t, 1, 0, "decode64K")
	for i, c := range base.Decode {
		if c.TotalTokPerS == nil {
			continue
		}
		r := *slow.Decode[i].TotalTokPerS / *c.TotalTokPerS
		if c.Context >= 65536 && (r > 0.85 || r < 0.7) {
			t.Errorf("%s×%d: decode ×1.25 gave %.2f of the throughput, want about 0.8", c.ContextLabel, c.Concurrency, r)
		}
		if c.Context < 65536 && r != 1 {
			t.Errorf("%s×%d: a rule for ≥ 64K changed a short-context cell (%.3f)", c.ContextLabel, c.Concurrency, r)
		}
	}
}

func TestStatusPattern(t *testing.T) {
	f := measure(t, 1, 0, "")
	var got []results.Status
	for _, c := range f.Decode {
		got = append(got, c.Status)
	}
	v, q, o := results.StatusValid, results.StatusQueued, results.StatusOverCapacity
	// 64 streams of 64K + 4096 need 4.46M KV tokens, more than the profile's 3.41M.
	want := []results.Status{v, v, q, v, v, o}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("statuses (-want +got):\n%s", diff)
	}
}
