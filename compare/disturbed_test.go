package compare

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/speedmatrix/speedmatrix/results"
)

// flatBins returns n bins around v with a small regular wobble.
func flatBins(n, v int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = v + (i%3-1)*10
	}
	return out
}

// binsTrial returns a decode trial of 1 s bins over a window of n seconds (n: len(bins)).
func binsTrial(bins []int) *results.DecodeTrial {
	return &results.DecodeTrial{BinSeconds: 1, WindowSeconds: float64(len(bins)), BinOutputTokens: bins}
}

// restartBins returns bins of one request at a time (c=1) whose requests end every 10–60 s and
// leave a dip of one or two bins while the next one's cached prefill runs: the cell's speed,
// not a stall (as results' "restarts at c=1" noise model).
func restartBins(rng *rand.Rand, n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = int(60 * math.Exp(0.03*rng.NormFloat64()))
	}
	for i := rng.IntN(20); i < n; i += 10 + rng.IntN(50) {
		out[i] = int(float64(out[i]) * rng.Float64())
		if i+1 < n && rng.Float64() < 0.5 {
			out[i+1] = int(float64(out[i+1]) * rng.Float64())
		}
	}
	return out
}

// TestStallOf finds a stalled stretch of a window's bins by the runner's rule
// (results.DetectDisturbance) and leaves steady or noisy windows, steps and empty stretches
// alone.
func TestStallOf(t *testing.T) {
	dip := flatBins(40, 890)
	for i := 19; i < 32; i++ {
		dip[i] = 135
	}
	noisy := flatBins(40, 890)
	for i := 0; i < 40; i += 4 {
		noisy[i] = 400 // scattered low bins are noise, not one stretch
	}
	step := flatBins(40, 890)
	for i := 26; i < 40; i++ {
		step[i] = 600 // two levels to the window's end: a run effect, not a stall
	}
	empty := flatBins(40, 890)
	for i := 19; i < 32; i++ {
		empty[i] = 135
	}
	empty[25] = 0 // an empty bin in the stretch: a stalled server, which fails closed
	short := slicesClone(dip)
	short[39] = 300 // the last bin covers 0.4 s of the window: no level, not in the rest
	cases := []struct {
		name   string
		tr     *results.DecodeTrial
		ok     bool
		first  int
		last   int
		restLo float64
	}{
		{"the issue's stall: bins 19–31 of 40 at 135 against 890", binsTrial(dip), true, 19, 31, 880},
		{"steady", binsTrial(flatBins(40, 890)), false, 0, 0, 0},
		{"scattered low bins", binsTrial(noisy), false, 0, 0, 0},
		{"too short to tell", binsTrial([]int{10, 900, 900}), false, 0, 0, 0},
		{"a step to the window's end", binsTrial(step), false, 0, 0, 0},
		{"an empty bin inside the stall", binsTrial(empty), false, 0, 0, 0},
		{"a short last bin", &results.DecodeTrial{BinSeconds: 1, WindowSeconds: 39.4, BinOutputTokens: short}, true, 19, 31, 880},
	}
	for _, tc := range cases {
		d, rest := stallOf(tc.tr)
		if (d != nil) != tc.ok {
			t.Errorf("%s: stall %+v, want found %v", tc.name, d, tc.ok)
			continue
		}
		if d == nil {
			continue
		}
		if d.FirstBin != tc.first || d.LastBin != tc.last {
			t.Errorf("%s: stall at bins %d–%d, want %d–%d", tc.name, d.FirstBin, d.LastBin, tc.first, tc.last)
		}
		if rest < tc.restLo || rest > 900 {
			t.Errorf("%s: the rest's mean %.0f, want about 890", tc.name, rest)
		}
	}
}

// slicesClone returns a copy of xs.
func slicesClone(xs []int) []int { return append([]int(nil), xs...) }

// TestRepairDipsLowConcurrency checks that the windows of one to three requests are judged by
// the same rule as the rest (compare once skipped them below four requests): their restarts
// (a request ends, the next one's cached prefill leaves a bin or two low) are never read as
// a stall, while a real stall at one request is decided from the rest of its window.
func TestRepairDipsLowConcurrency(t *testing.T) {
	rng := rand.New(rand.NewPCG(33, 3))
	for i := range 2000 {
		n := []int{30, 40, 80}[i%3]
		bins := restartBins(rng, n)
		f := &results.File{Decode: []results.DecodeCell{{Context: 8192, ContextLabel: "8K", Concurrency: 1 + i%3, Status: results.StatusValid,
			Trials: []results.DecodeTrial{*binsTrial(bins)}}}}
		if g, ids := repairDips(f); g != nil {
			t.Fatalf("window %d (c=%d): restarts read as a stall of %v: %v", i, 1+i%3, ids, bins)
		}
	}

	bins := flatBins(40, 60)
	for i := 10; i < 20; i++ {
		bins[i] = 15
	}
	rate := 0.0
	for _, b := range bins {
		rate += float64(b)
	}
	rate /= 40
	tbt := 1000 / rate
	f := &results.File{Decode: []results.DecodeCell{{Context: 8192, ContextLabel: "8K", Concurrency: 1, Status: results.StatusValid,
		DecodeMetrics: results.DecodeMetrics{TotalTokPerS: &rate},
		Trials:        []results.DecodeTrial{{BinSeconds: 1, WindowSeconds: 40, BinOutputTokens: bins, DecodeMetrics: results.DecodeMetrics{TotalTokPerS: &rate, TBTMs: &tbt}}}}}}
	g, ids := repairDips(f)
	if g == nil || len(ids) != 1 {
		t.Fatalf("a stall of 10 bins at a quarter of the level, c=1: not repaired")
	}
	got := *g.Decode[0].Trials[0].TotalTokPerS
	if math.Abs(got-60) > 1 {
		t.Errorf("repaired rate %.1f tok/s, want the rest's ≈ 60", got)
	}
	if *f.Decode[0].Trials[0].TotalTokPerS != rate || f.Decode[0].Trials[0].BinOutputTokens[12] != 15 {
		t.Errorf("repairDips modified its input")
	}
}

// TestStartOf checks the measuring position of a cell: its trials' starts, else the cell's
// Started, else (a run with no times) its Order.
func TestStartOf(t *testing.T) {
	t0 := time.Date(2026, 12, 7, 6, 0, 0, 0, time.UTC)
	id := results.CellID{Phase: results.PhaseDecode, ContextLabel: "8K", Concurrency: 4}
	pid := results.CellID{Phase: results.PhasePrefill, ContextLabel: "8K"}
	cases := []struct {
		name  string
		f     *results.File
		id    results.CellID
		want  float64
		ok    bool
		timed bool
	}{
		{"trials' starts", &results.File{Decode: []results.DecodeCell{{ContextLabel: "8K", Concurrency: 4, Started: t0.Add(time.Hour), Order: 5,
			Trials: []results.DecodeTrial{{Start: t0}, {Start: t0.Add(10 * time.Second)}}}}}, id, float64(t0.Unix()) + 5, true, true},
		{"the cell's Started", &results.File{Decode: []results.DecodeCell{{ContextLabel: "8K", Concurrency: 4, Started: t0, Order: 5,
			Trials: []results.DecodeTrial{{}}}}}, id, float64(t0.Unix()), true, true},
		{"a prefill cell's Started", &results.File{Prefill: []results.PrefillCell{{ContextLabel: "8K", Started: t0, Order: 2,
			Trials: []results.PrefillTrial{{}}}}}, pid, float64(t0.Unix()), true, true},
		{"its Order, no times", &results.File{Decode: []results.DecodeCell{{ContextLabel: "8K", Concurrency: 4, Order: 5}}}, id, 5, true, false},
		{"nothing", &results.File{Decode: []results.DecodeCell{{ContextLabel: "8K", Concurrency: 4}}}, id, 0, false, false},
	}
	for _, tc := range cases {
		timed := fileTimed(tc.f)
		if timed != tc.timed {
			t.Errorf("%s: fileTimed %v, want %v", tc.name, timed, tc.timed)
		}
		got, ok := startOf(tc.f, tc.id, !timed)
		if ok != tc.ok || got != tc.want {
			t.Errorf("%s: startOf %v (ok %v), want %v (ok %v)", tc.name, got, ok, tc.want, tc.ok)
		}
	}
}
