package engine

import (
	"math"
	"math/bits"
)

// splitmix64 is a fast, well-mixed hash of one word.
func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// HashKey mixes the words of a key into one hash.
func HashKey(words ...uint64) uint64 {
	h := uint64(0x243f6a8885a308d3)
	for _, w := range words {
		h = splitmix64(h ^ w)
	}
	return h
}

// unitFromHash maps a hash to a uniform number in (0, 1).
func unitFromHash(h uint64) float64 {
	return (float64(h>>11) + 0.5) / (1 << 53)
}

// normalFromHash maps a hash to a standard normal number.
func normalFromHash(h uint64) float64 {
	return math.Sqrt2 * math.Erfinv(2*unitFromHash(h)-1)
}

// ctxBucket groups context lengths by powers of two, so that the cells of a matrix (8K, 16K, …)
// fall in different buckets.
func ctxBucket(ctx float64) uint64 {
	if ctx < 1 {
		return 0
	}
	return uint64(bits.Len64(uint64(ctx)))
}

// Noise kinds, part of the key of a run factor.
const (
	noisePrefill uint64 = iota + 1
	noiseDecode
)

// runFactor returns the multiplier on step time that stays fixed for one seed and one regime
// (kind, batch size, context bucket): the "run-to-run" part of the noise. Its coefficient of
// variation is cv/scale.
func runFactor(seed uint64, cv, scale float64, kind, batch, bucket uint64) float64 {
	if cv == 0 {
		return 1
	}
	z := normalFromHash(HashKey(seed, kind, batch, bucket))
	return clamp(1+z*cv/scale, 0.5, 2)
}

func clamp(x, lo, hi float64) float64 { return math.Min(hi, math.Max(lo, x)) }

// BlockHashes returns the prefix-cache keys of a prompt: one hash per full block of blockSize
// token ids, each covering the whole prefix up to the end of its block (a hash chain), so that
// two prompts share exactly the blocks of their common prefix.
func BlockHashes(ids []int, blockSize int) []uint64 {
	n := len(ids) / blockSize
	out := make([]uint64, n)
	h := uint64(0x6a09e667f3bcc908)
	for b := range n {
		for _, id := range ids[b*blockSize : (b+1)*blockSize] {
			h = (h ^ uint64(id)) * 0x100000001b3
			h ^= h >> 29
		}
		h = splitmix64(h)
		out[b] = h
	}
	return out
}
