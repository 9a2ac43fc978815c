package compare

import (
	"fmt"
	"math"
	"sort"

	"github.com/speedmatrix/speedmatrix/compare/stats"
	"github.com/speedmatrix/speedmatrix/results"
)

// pairingOf returns the pairing the comparison uses: the two sides are the base and head files
// of one paired run (`run --paired`) in an interleaved scheme, one file each. Otherwise it is
// nil, with a warning when both files are sides of paired runs that cannot be paired.
func pairingOf(in Input) (*results.Pairing, string) {
	if len(in.Base) != 1 || len(in.Head) != 1 {
		return nil, ""
	}
	b, h := in.Base[0].Run.Pairing, in.Head[0].Run.Pairing
	switch {
	case b == nil || h == nil:
		return nil, ""
	case b.ID != h.ID:
		return nil, fmt.Sprintf("both files come from paired runs, but different paired runs (%s and %s): compared unpaired; compare the base and head files of one `run --paired`", b.ID, h.ID)
	case b.Scheme != results.PairingABBA || h.Scheme != results.PairingABBA:
		return nil, "" // sequential blocks are not pairs
	case b.Side == h.Side:
		return nil, fmt.Sprintf("both files are the %s side of paired run %s: compared unpaired", b.Side, b.ID)
	}
	p := *b
	p.Side = ""
	return &p, ""
}

// pairedTrial is one side's value of a metric in one pair.
type pairedTrial struct {
	log   float64
	block int
}

// pairTrials returns the log values of metric m of one side's trials by pair.
func (s *sideData) pairTrials(m results.Metric) map[int]pairedTrial {
	out := map[int]pairedTrial{}
	switch {
	case s.decode != nil:
		for i := range s.decode.Trials {
			t := &s.decode.Trials[i]
			if l, ok := logOf(decodeTrialValue(t, m)); ok && t.Pair > 0 {
				out[t.Pair] = pairedTrial{l, t.Block}
			}
		}
	case s.prefill != nil:
		for _, t := range s.prefill.Trials {
			v := t.TTFTMs
			if m == results.MetricPromptTokPerS {
				v = t.PromptTokPerS
			}
			if v > 0 && t.Pair > 0 {
				out[t.Pair] = pairedTrial{math.Log(v), t.Block}
			}
		}
	}
	return out
}

// pairDiffs returns, in pair order, the head − base log differences of metric m over the pairs
// both sides measured, and for each whether the head's block came first.
func pairDiffs(b, h *sideData, m results.Metric) (d []float64, headFirst []bool) {
	bt, ht := b.pairTrials(m), h.pairTrials(m)
	var pairs []int
	for k := range bt {
		if _, ok := ht[k]; ok {
			pairs = append(pairs, k)
		}
	}
	sort.Ints(pairs)
	for _, k := range pairs {
		d = append(d, ht[k].log-bt[k].log)
		headFirst = append(headFirst, ht[k].block < bt[k].block)
	}
	return d, headFirst
}

// estimatePaired sets p's estimate from the pairs of a paired run: the two-period crossover
// estimate of the log-ratio (stats.PairedEstimate), which removes a drift between blocks, and the
// sign-flip test of the pairs' drift-corrected log-ratios as the rank check. It reports false,
// leaving p alone, when fewer than two pairs hold the metric or their spread is zero.
func (p *pending) estimatePaired(b, h *sideData, noise *results.Noise, th Thresholds) bool {
	d, hf := pairDiffs(b, h, p.metric)
	pe, err := stats.PairedEstimate(d, hf)
	if err != nil || !(pe.SE > 0) {
		return false
	}
	n := float64(pe.Pairs)
	// One run's variance on each side such that SE² = vb/n + vh/n: the advice's predictions
	// then hold for more pairs.
	v := n * pe.SE * pe.SE / 2
	p.vb, p.vh = v, v
	p.est = pe.Estimate
	noise.Source = results.NoisePaired
	noise.CV = math.Sqrt(v)
	noise.Pairs = pe.Pairs
	if pe.PeriodAdjusted {
		noise.Drift = ptr(math.Expm1(pe.Period))
	}
	if pe.Pairs >= th.MinRankTrials && pe.Pairs <= stats.MaxSignFlipPairs {
		r := make([]float64, len(d))
		for i, x := range d {
			// Base first: x = Δ + period; head first: x = Δ − period.
			if hf[i] {
				r[i] = x + pe.Period
			} else {
				r[i] = x - pe.Period
			}
		}
		if sp, err := stats.SignFlip(r); err == nil {
			p.out.RankP = ptr(sp)
		}
	}
	return true
}
