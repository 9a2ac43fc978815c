package compare

import (
	"slices"

	"github.com/speedmatrix/speedmatrix/results"
)

// The prior of decode rates follows what the files say about speculative decoding
// (results.File.SpecDecodeState). With speculative decoding served as launched, the
// acceptance rate changes from run to run and decode speed with it: CV ≈ 10 % at concurrency 1,
// 20 % at 2, 7.5 % at 4 and 0.5 % from 8 (vllm-project/vllm issue 53436). Prior.SpecDecodeRate
// covers those figures at the top of their ±20 % range. It applies where either side is
// unpinned, or unknown: a file with no server counters (imported, or /metrics not scraped)
// cannot say that the engine served no speculative decoding, and every engine we measure can.
// Where every side was pinned (acceptance fixed for the matrix) or its server counters showed
// no speculative draft, Prior.DecodeRate applies, so that comparisons without acceptance noise
// are not made blinder.

// DefaultSpecDecodeRatePrior is the CV of decode rates by concurrency with speculative
// decoding unpinned: vllm issue 53436's figures + 20 % (24 % at concurrency 2, 9 % at 4, 0.6 %
// from 8 rounded up to the 1 % floor), and 20 % at concurrency 1 as DecodeRate has.
func DefaultSpecDecodeRatePrior() []ConcurrencyCV {
	return []ConcurrencyCV{{UpTo: 1, CV: 0.20}, {UpTo: 2, CV: 0.24}, {UpTo: 4, CV: 0.09}, {UpTo: 0, CV: 0.01}}
}

// specDecodeOf combines the sides' states: unpinned if any file is, else unknown if any file
// is, else pinned if any file is, else off.
func specDecodeOf(in Input) string {
	seen := map[string]bool{}
	for _, side := range [][]*results.File{in.Base, in.Head} {
		for _, f := range side {
			seen[f.SpecDecodeState()] = true
		}
	}
	for _, s := range []string{results.SpecDecodeUnpinned, results.SpecDecodeUnknown, results.SpecDecodePinned} {
		if seen[s] {
			return s
		}
	}
	return results.SpecDecodeOff
}

// withSpecDecodePrior returns th with the decode-rate prior that state calls for.
func withSpecDecodePrior(th Thresholds, state string) Thresholds {
	if state != results.SpecDecodeUnpinned && state != results.SpecDecodeUnknown {
		return th
	}
	rate := th.Prior.SpecDecodeRate
	if len(rate) == 0 {
		rate = DefaultSpecDecodeRatePrior()
	}
	th.Prior.DecodeRate = maxCV(th.Prior.DecodeRate, rate)
	return th
}

// maxCV returns the step function that is, at every concurrency, the larger of a's and b's CV
// (ConcurrencyCV lists: the first entry whose UpTo covers the concurrency applies, 0 = any), so
// that the speculative-decoding prior never lowers a larger configured one.
func maxCV(a, b []ConcurrencyCV) []ConcurrencyCV {
	at := func(l []ConcurrencyCV, c int) float64 {
		for _, e := range l {
			if e.UpTo == 0 || c <= e.UpTo {
				return e.CV
			}
		}
		return 0
	}
	var bounds []int
	for _, l := range [][]ConcurrencyCV{a, b} {
		for _, e := range l {
			if e.UpTo > 0 && !slices.Contains(bounds, e.UpTo) {
				bounds = append(bounds, e.UpTo)
			}
		}
	}
	slices.Sort(bounds)
	var out []ConcurrencyCV
	for _, u := range bounds {
		out = append(out, ConcurrencyCV{UpTo: u, CV: max(at(a, u), at(b, u))})
	}
	last := 1
	if len(bounds) > 0 {
		last = bounds[len(bounds)-1] + 1
	}
	return append(out, ConcurrencyCV{UpTo: 0, CV: max(at(a, last), at(b, last))})
}
