package engine

import "math"

// noiseAccept is the noise kind of the run-to-run acceptance factor.
const noiseAccept = noiseDecode + 1

// Speculative acceptance, run to run and pinned.
//
// Unpinned, the mean number of accepted draft tokens of a step is the profile's mean times a
// run-to-run factor fixed per (seed, batch size, power-of-two context bucket), like the decode
// step time's, with coefficient of variation NoiseCV/(2·batch): a run (a seed) at concurrency 1
// accepts noticeably more or less than another, at 16 and above nearly the same, which is how
// the public figures describe vLLM's acceptance-driven spread (vllm-project/vllm issue 53436).
// The factor moves probability mass between the distribution and its ends (all rejected for a
// factor below 1, all accepted above) so that the mean scales exactly; one uniform draw per
// sequence-step, as before, so without noise the draws are unchanged.
//
// Pinned (Config.PinnedAcceptanceLength L), a step accepts ⌊L − 1⌋ draft tokens and one more
// with probability frac(L − 1): the minimum-variance schedule of vLLM's synthetic rejection
// sampling (SpeculativeConfig rejection_sample_method "synthetic" with
// synthetic_acceptance_length, which counts the target's own token as this package does). No
// run-to-run factor applies: a pinned server's acceptance does not vary from run to run, and the
// decode step time's run-to-run factor, which stands for that variation, keeps a tenth of its CV
// (decodeRunCV).

// pinnedRunShare is the share of the decode step time's run-to-run CV left when acceptance is
// pinned: that CV stands for the published spread of speculative decoding (CV/batch, PROFILES.md),
// which is the acceptance changing from run to run; pinned, what is left is the 0.5–2 % at low
// concurrency a server shows without speculative decoding (1.5 % at concurrency 1 for CV 0.15).
const pinnedRunShare = 0.1

// decodeRunCV returns the CV at batch 1 of the decode step time's run-to-run factor.
func (e *Engine) decodeRunCV() float64 {
	if e.cfg.PinnedAcceptanceLength > 0 {
		return e.cfg.NoiseCV * pinnedRunShare
	}
	return e.cfg.NoiseCV
}

// acceptFactor returns the run-to-run factor on the mean accepted tokens for the planned step.
func (e *Engine) acceptFactor() float64 {
	if e.cfg.NumSpecTokens == 0 || e.cfg.PinnedAcceptanceLength > 0 || e.cfg.NoiseCV == 0 {
		return 1
	}
	batch := 0
	var ctx int64
	for _, p := range e.plan {
		if p.to < 0 {
			batch++
			ctx += int64(p.from)
		}
	}
	if batch == 0 {
		return 1
	}
	mean := float64(ctx) / float64(batch)
	return runFactor(e.cfg.Seed, e.cfg.NoiseCV, 2*float64(batch), noiseAccept, uint64(batch), ctxBucket(mean))
}

// acceptedFrom maps one uniform draw u in [0, 1) to the accepted draft tokens of a
// sequence-step, pinned or scaled by the step's run-to-run factor.
func (e *Engine) acceptedFrom(u float64) int {
	k := e.cfg.NumSpecTokens
	if l := e.cfg.PinnedAcceptanceLength; l > 0 {
		a := l - 1
		j := int(math.Floor(a))
		if u < a-float64(j) {
			j++
		}
		return min(j, k)
	}
	f, mean := e.stepAccept, e.meanAccept
	switch {
	case f < 1 && f > 0:
		// Scale the mean down: all rejected with probability 1 − f.
		if u < 1-f {
			return 0
		}
		return e.fromDistribution((u - (1 - f)) / f)
	case f > 1 && mean < float64(k):
		// Scale the mean up: all accepted with probability 1 − w.
		target := math.Min(f*mean, float64(k))
		w := (float64(k) - target) / (float64(k) - mean)
		if u >= w {
			return k
		}
		return e.fromDistribution(u / w)
	}
	return e.fromDistribution(u)
}
