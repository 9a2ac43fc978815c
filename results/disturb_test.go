package results

import (
	"math"
	"math/rand/v2"
	"os"
	"testing"
)

// level returns n bins at v tokens each, with Gaussian noise of relative sd cv.
func level(rng *rand.Rand, n int, v, cv float64) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = max(0, int(math.Round(v*(1+cv*rng.NormFloat64()))))
	}
	return out
}

func TestDetectDisturbance(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	// The example: decode/64K/16, bins 19–31 of 40 at ≈135 tokens against ≈890.
	stall := level(rng, 40, 890, 0.01)
	for i := 19; i <= 31; i++ {
		stall[i] = int(135 * (1 + 0.05*rng.NormFloat64()))
	}
	// A power cap hit at bin 18 of 30: 8 % slower from then on.
	step := level(rng, 30, 2000, 0.005)
	for i := 18; i < 30; i++ {
		step[i] = int(float64(step[i]) * 0.92)
	}
	// A 3 s GC pause (zero tokens) in a 30 s window at concurrency 1.
	pause := level(rng, 30, 90, 0.03)
	pause[10], pause[11], pause[12] = 0, 0, 0
	// A late client: a bin read late moves its tokens into the next one, over and over.
	late := level(rng, 40, 600, 0.02)
	for _, i := range []int{3, 9, 17, 25, 33} {
		late[i+1] += late[i]
		late[i] = 0
	}
	// A restart at concurrency 1 (a request ended, the next one's cached prefill): one bin
	// at half its level.
	restart := level(rng, 30, 100, 0.02)
	restart[14] = 50
	tests := []struct {
		name        string
		bins        []int
		bin, window float64
		want        string // kind, "" for none
		first, last int
	}{
		{"issue stall", stall, 1, 40, DisturbStall, 19, 31},
		// Bins that alternate (chunks of two tokens against 50 ms bins) and a stall of 30 %.
		{"alternating bins, stall", []int{18, 20, 24, 16, 20, 24, 16, 0, 0, 0, 0, 0, 0, 24, 16, 20, 20, 20, 24, 16}, 0.05, 1, DisturbStall, 7, 12},
		{"power cap step", step, 1, 30, DisturbStep, 18, 29},
		{"gc pause", pause, 1, 30, DisturbStall, 10, 12},
		{"late reads", late, 1, 40, "", 0, 0},
		{"restart at c=1", restart, 1, 30, "", 0, 0},
		{"steady", level(rng, 30, 1000, 0.01), 1, 30, "", 0, 0},
		{"too few bins", []int{100, 100, 0, 0, 0, 100, 100}, 1, 7, "", 0, 0},
		{"all zero", make([]int, 30), 1, 30, "", 0, 0},
		{"partial last bin left out", append(level(rng, 29, 500, 0.01), 10), 1, 29.2, "", 0, 0},
		{"bad bin width", stall, 0, 40, "", 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := DetectDisturbance(tt.bins, tt.bin, tt.window)
			switch {
			case tt.want == "" && d != nil:
				t.Fatalf("disturbance %+v in an undisturbed window %v", *d, tt.bins)
			case tt.want == "":
			case d == nil:
				t.Fatalf("no disturbance found in %v, want a %s", tt.bins, tt.want)
			case d.Kind != tt.want || d.FirstBin != tt.first || d.LastBin != tt.last:
				t.Fatalf("got %+v, want %s bins %d–%d", *d, tt.want, tt.first, tt.last)
			}
		})
	}
}

// noiseModel generates an undisturbed window of n bins.
type noiseModel struct {
	name string
	gen  func(rng *rand.Rand, n int) []int
	// noisy marks bins too noisy (10 % or more) for every disturbance of the power test to
	// show; their misses are logged, not failed.
	noisy bool
}

// ordinaryNoise are the kinds of bin noise an undisturbed window shows.
func ordinaryNoise() []noiseModel {
	return []noiseModel{
		{"gaussian 0.5 %", func(rng *rand.Rand, n int) []int { return level(rng, n, 5000, 0.005) }, false},
		{"gaussian 3 %", func(rng *rand.Rand, n int) []int { return level(rng, n, 800, 0.03) }, false},
		{"gaussian 10 % (c=1, speculative)", func(rng *rand.Rand, n int) []int { return level(rng, n, 150, 0.10) }, true},
		{"poisson-like 20 tokens a bin", func(rng *rand.Rand, n int) []int { return level(rng, n, 20, 1/math.Sqrt(20)) }, true},
		{"multi-token chunks", func(rng *rand.Rand, n int) []int {
			out := make([]int, n)
			for i := range out {
				for range 40 {
					out[i] += 1 + rng.IntN(4)
				}
			}
			return out
		}, true},
		{"restarts at c=1", func(rng *rand.Rand, n int) []int {
			// A request of 4096 tokens at ≤ 400 tok/s lasts ≥ 10 s: when it ends, the next
			// one's cached prefill (up to two bins at a long context) leaves a dip.
			out := level(rng, n, 60, 0.03)
			for i := rng.IntN(20); i < n; i += 10 + rng.IntN(50) {
				out[i] = int(float64(out[i]) * rng.Float64())
				if i+1 < n && rng.Float64() < 0.5 {
					out[i+1] = int(float64(out[i+1]) * rng.Float64())
				}
			}
			return out
		}, false},
		{"late reads", func(rng *rand.Rand, n int) []int {
			out := level(rng, n, 600, 0.02)
			for i := 0; i+1 < n; i++ {
				if rng.Float64() < 0.1 {
					moved := int(float64(out[i]) * rng.Float64())
					out[i] -= moved
					out[i+1] += moved
				}
			}
			return out
		}, false},
		{"slow wander (AR 0.7, 2 %)", func(rng *rand.Rand, n int) []int {
			out := make([]int, n)
			e := 0.0
			for i := range out {
				e = 0.7*e + 0.02*math.Sqrt(1-0.49)*rng.NormFloat64()
				out[i] = int(1000 * (1 + e))
			}
			return out
		}, false},
	}
}

// TestDisturbanceFalsePositives checks that ordinary bin noise is not called disturbed: 64
// windows a run, so the rate per window must be tiny (none in 5 000 of each model here).
func TestDisturbanceFalsePositives(t *testing.T) {
	const windows = 5000
	for _, nm := range ordinaryNoise() {
		t.Run(nm.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(7, uint64(len(nm.name))))
			fp := 0
			for i := range windows {
				n := []int{30, 40, 80}[i%3]
				bins := nm.gen(rng, n)
				if d := DetectDisturbance(bins, 1, float64(n)); d != nil {
					if fp++; fp <= 3 {
						t.Logf("false positive %+v in %v", *d, bins)
					}
				}
			}
			if fp > 0 {
				t.Errorf("%d of %d undisturbed windows called disturbed", fp, windows)
			}
		})
	}
}

// TestDisturbancePower checks that the disturbances the issue describes are found: a stall or a
// step that moves 10 % or more of a window's tokens, under each kind of ordinary noise. A step
// over close to half the window is the hardest (the window's median lies between its levels):
// with bins of 3 % noise about 4 % are missed; with 10 % noise or Poisson-like counts a
// quarter to a half, which a re-measure cannot help either.
func TestDisturbancePower(t *testing.T) {
	const windows = 2000
	for _, nm := range ordinaryNoise() {
		t.Run(nm.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(11, uint64(len(nm.name))))
			missed := 0
			for i := range windows {
				n := []int{30, 40}[i%2]
				bins := nm.gen(rng, n)
				// A stall of 15–40 % of the window at 0–40 % of the level, or a step of
				// 15–30 % down over the last 30–50 % of the window.
				if i%4 == 0 {
					from := n/2 + rng.IntN(n/5)
					f := 0.7 + 0.15*rng.Float64()
					for j := from; j < n; j++ {
						bins[j] = int(float64(bins[j]) * f)
					}
				} else {
					k := int(math.Ceil((0.15 + 0.25*rng.Float64()) * float64(n)))
					from := 1 + rng.IntN(n-k-1)
					f := 0.4 * rng.Float64()
					for j := from; j < from+k; j++ {
						bins[j] = int(float64(bins[j]) * f)
					}
				}
				if DetectDisturbance(bins, 1, float64(n)) == nil {
					missed++
				}
			}
			rate := float64(missed) / windows
			t.Logf("missed %.1f %% of disturbed windows", 100*rate)
			if rate > 0.07 && !nm.noisy {
				t.Errorf("missed %.1f %% of disturbed windows", 100*rate)
			}
		})
	}
}

// TestDisturbanceMeasuredWindows runs the test on windows measured by speedmatrix (the
// simulator on a loaded 2-core machine, 25 ms bins: reads late by a bin or two are common):
// none is disturbed.
func TestDisturbanceMeasuredWindows(t *testing.T) {
	for _, path := range []string{"testdata/measured-2trials.json"} {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		f, err := Decode(data)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range f.Decode {
			for i, tr := range c.Trials {
				if d := DetectDisturbance(tr.BinOutputTokens, tr.BinSeconds, tr.WindowSeconds); d != nil {
					t.Errorf("%s trial %d: disturbance %+v in %v", c.ID(), i+1, *d, tr.BinOutputTokens)
				}
			}
		}
	}
}

// FuzzDetectDisturbance checks the test never panics and what it returns is in range: bins
// inside the window, a run no longer than the rest, an impact of the sign of the level change.
func FuzzDetectDisturbance(f *testing.F) {
	f.Add([]byte{100, 100, 100, 100, 100, 10, 10, 10, 100, 100, 100, 100}, 1.0, 12.0)
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 0, 0}, 0.025, 0.2)
	f.Add([]byte{200, 200, 200, 200, 200, 200, 100, 100, 100, 100}, 1.0, 9.5)
	f.Fuzz(func(t *testing.T, raw []byte, bin, window float64) {
		bins := make([]int, len(raw))
		for i, b := range raw {
			bins[i] = int(b) * 7
		}
		d := DetectDisturbance(bins, bin, window)
		if d == nil {
			return
		}
		if d.FirstBin < 0 || d.LastBin >= len(bins) || d.FirstBin > d.LastBin {
			t.Fatalf("bins %d–%d outside a window of %d", d.FirstBin, d.LastBin, len(bins))
		}
		if span := d.LastBin - d.FirstBin + 1; 2*span > len(bins) {
			t.Fatalf("a run of %d bins in %d is longer than the rest", span, len(bins))
		}
		if (d.Level < 1) != (d.Impact > 0) || math.IsNaN(d.Z) || d.Z < disturbZ {
			t.Fatalf("inconsistent %+v", *d)
		}
		if d.Kind != DisturbStall && d.Kind != DisturbStep {
			t.Fatalf("kind %q", d.Kind)
		}
	})
}
