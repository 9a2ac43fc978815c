package results

import (
	"math"
	"slices"
)

// Kinds of a disturbed decode window.
const (
	// DisturbStall is a run of bins well below the rest of the window that the window recovered
	// from (a stalled request, a GC pause, a co-tenant's burst): the bins outside it show the
	// engine's level.
	DisturbStall = "stall"
	// DisturbStep is a window at two levels: it changed level and did not come back (a power
	// cap hit, a clock change, a co-tenant that came or went). Neither level is known to be the
	// engine's.
	DisturbStep = "step"
)

// What a run did with a disturbed window (DisturbedTrial.Used).
const (
	// UsedRemeasure: the cell was measured again in the same job; the new window replaced the
	// disturbed one.
	UsedRemeasure = "remeasure"
	// UsedUndisturbedBins: the window's undisturbed bins (outside a stall, enough of them) were
	// kept as the trial, cut from the window; the stall's bins were left out.
	UsedUndisturbedBins = "undisturbed_bins"
	// UsedDisturbed: neither was possible; the disturbed window is the cell's trial as measured,
	// and compare must not read it as the engine's speed without saying so.
	UsedDisturbed = "disturbed"
)

// Disturbance says where and by how much a decode window's bins left the window's own level.
type Disturbance struct {
	Kind string `json:"kind"` // DisturbStall or DisturbStep
	// FirstBin and LastBin are the disturbed bins, 0-based and inclusive, in BinOutputTokens.
	FirstBin int `json:"first_bin"`
	LastBin  int `json:"last_bin"`
	// Level is the disturbed bins' mean ÷ the other bins' mean (0.15: at 15 % of the rest).
	Level float64 `json:"level"`
	// Impact is the share of the window's tokens the disturbance moved: (rest's mean −
	// disturbed mean) × disturbed bins ÷ (rest's mean × bins); positive when tokens were lost.
	Impact float64 `json:"impact"`
	// Z is the level difference in units of its robust standard error (bin-to-bin noise).
	Z float64 `json:"z"`
}

// The disturbance test's thresholds (DetectDisturbance). All must hold for a window to be
// called disturbed; they were set against undisturbed windows of the simulator and of measured
// runs, and against models of ordinary bin noise (a request's restart at concurrency 1, a client
// that reads late and moves tokens into the next bin, multi-token chunks), see disturb_test.go.
const (
	// DisturbMinBins is the fewest full bins a window needs to be judged at all.
	DisturbMinBins = 8
	// disturbMaxBlocks caps the resolution of the test: a window of more bins is judged on
	// blocks of adjacent bins (a short window of a fast simulator has 80 bins of 25 ms).
	disturbMaxBlocks = 40
	// disturbZ is the least level difference, in robust standard errors, of a disturbance.
	disturbZ = 8
	// A deep disturbance (the run at half the rest's level or less, moving 10 % of the window's
	// tokens or more) needs only disturbDeepZ: no ordinary noise loses that many tokens in one
	// run of bins, while bins that alternate (chunks of several tokens, late reads) inflate the
	// noise scale.
	disturbDeepZ           = 4
	disturbDeepLevelChange = 0.5
	disturbDeepImpact      = 0.10
	// disturbMinLevelChange is the least relative difference between the disturbed bins and
	// the rest (7 %).
	disturbMinLevelChange = 0.07
	// DisturbMinImpact is the least share of the window's tokens a disturbance moves (2 %):
	// less than a verdict's smallest relevant change, it is not worth a re-measure.
	DisturbMinImpact = 0.02
	// disturbMinSpan is the least share of the window's bins a disturbance spans (10 %, and
	// at least disturbMinSpanBins): one or two slow bins are a request's restart (its cached
	// prefill at concurrency 1) or a late read, the engine's and the client's ordinary noise.
	disturbMinSpan     = 0.10
	disturbMinSpanBins = 3
	// disturbWiden is how many blocks on each side of a run the widened check adds.
	disturbWiden = 2
)

// DetectDisturbance returns the disturbance of a decode window, from its output-token bins (bin
// seconds wide; the last one may be shorter, as windowSeconds tells), or nil when the window
// shows none or has too few bins to tell (DisturbMinBins).
//
// The test looks for one contiguous run of bins at another level than the rest of the window:
// inside the window (a stall) or reaching its end or start (a step, two levels). It scores every
// run of bins (on blocks of adjacent bins when the window has more than 40) by the difference of
// its mean from the other bins' mean, in units of a robust noise scale taken from the
// differences of adjacent blocks (1.4826 × their median absolute value ÷ √2, which a step or a
// stall hardly moves). A run is a disturbance when it differs by ≥ 6 such standard errors, by
// ≥ 10 % of the rest's level, spans ≥ 5 % of the window (two bins at least), moves ≥ 2 % of the
// window's tokens, and still moves them with one more block on each side: a client that reads
// late only moves tokens into the next bin, a stall loses them. Of the runs that pass, the one
// with the largest score is returned; the run is never longer than the rest.
func DetectDisturbance(bins []int, binSeconds, windowSeconds float64) *Disturbance {
	if binSeconds <= 0 || windowSeconds <= 0 || math.IsNaN(binSeconds) || math.IsNaN(windowSeconds) {
		return nil
	}
	x := make([]float64, len(bins))
	for i, b := range bins {
		x[i] = float64(b)
	}
	// The last bin: scaled to a full bin when it covers at least half of one, else left out.
	if n := len(x); n > 0 {
		last := windowSeconds - float64(n-1)*binSeconds
		switch {
		case last >= binSeconds*(1-1e-9):
		case last >= binSeconds/2:
			x[n-1] *= binSeconds / last
		default:
			x = x[:n-1]
		}
	}
	n := len(x)
	if n < DisturbMinBins {
		return nil
	}
	// Blocks of g adjacent bins; the last block may hold fewer.
	g := (n + disturbMaxBlocks - 1) / disturbMaxBlocks
	m := (n + g - 1) / g
	y := make([]float64, m) // mean per bin of each block
	w := make([]float64, m) // bins in each block
	for b := range m {
		lo, hi := b*g, min((b+1)*g, n)
		for _, v := range x[lo:hi] {
			y[b] += v
		}
		w[b] = float64(hi - lo)
		y[b] /= w[b]
	}
	med := medianOf(slices.Clone(y))
	if med <= 0 {
		return nil // a window with no tokens in most of it is an error, not a disturbance
	}
	sigma := diffScale(y)
	// Bins often alternate (a chunk of several tokens falls on one side of a bin's edge or the
	// other; a late read moves tokens into the next bin): adjacent blocks then cancel, and the
	// means of pairs of blocks are steadier than single blocks suggest. Their scale, per block,
	// is taken when it is clearly the smaller (the smaller of two estimates of one scale would
	// be too small half the time).
	if m >= 32 {
		pairs := make([]float64, m/2)
		for b := range pairs {
			pairs[b] = (y[2*b] + y[2*b+1]) / 2
		}
		if p := diffScale(pairs) * math.Sqrt2; p < 0.6*sigma {
			sigma = p
		}
	}
	// A floor for windows whose bins hardly vary (a simulator, a deterministic server): tokens
	// are whole, and 0.5 % of the level is below any disturbance worth a re-measure.
	sigma = max(sigma, 0.005*med, 1/float64(g))

	// Prefix sums of tokens and bins over blocks.
	tok := make([]float64, m+1)
	cnt := make([]float64, m+1)
	for b := range m {
		tok[b+1] = tok[b] + y[b]*w[b]
		cnt[b+1] = cnt[b] + w[b]
	}
	minSpan := max(disturbMinSpanBins, int(math.Ceil(disturbMinSpan*float64(n))))
	// found is the best run so far, in blocks [i, j), with its level a and the rest's r.
	type found struct {
		i, j    int
		a, r, z float64
	}
	var best *found
	bestScore := 0.0
	seg := make([]float64, 0, m)
	for i := 0; i < m; i++ {
		for j := i + 1; j <= m; j++ {
			kb := cnt[j] - cnt[i] // bins in the run
			rb := float64(n) - kb // bins in the rest
			if kb < float64(minSpan) || kb > rb {
				continue
			}
			// A run that moves few tokens against the rest's mean is no disturbance: cheap
			// to tell, and most runs of an undisturbed window stop here.
			if mr := (tok[m] - tok[j] + tok[i]) / rb; mr <= 0 || math.Abs(kb*mr-(tok[j]-tok[i])) < DisturbMinImpact/2*mr*float64(n) {
				continue
			}
			// Levels are medians of blocks, so that a lone slow or late bin moves neither; the
			// run's level is its quartile nearest the window's, so that most of its bins must
			// be disturbed (two slow bins, a long prefill at concurrency 1, are no stall).
			seg = append(seg[:0], y[i:j]...)
			r := med // the window's level: a run never longer than the rest does not move it
			slices.Sort(seg)
			a := seg[min(len(seg)*3/4, len(seg)-1)]
			if tok[j]-tok[i] > kb*r {
				a = seg[(len(seg)-1)/4]
			}
			if r <= 0 {
				continue
			}
			d := a - r
			// Standard error of the difference of two medians of blocks whose noise is sigma.
			kBlocks, rBlocks := float64(j-i), float64(m-(j-i))
			z := math.Abs(d) / (1.2533 * sigma * math.Sqrt(1/kBlocks+1/rBlocks))
			// The tokens the run lost (or gained) against the rest's level, as a share of
			// the window's.
			impact := (kb*r - (tok[j] - tok[i])) / (r * float64(n))
			need := float64(disturbZ)
			if math.Abs(d)/r >= disturbDeepLevelChange && math.Abs(impact) >= disturbDeepImpact {
				need = disturbDeepZ
			}
			if z < need || math.Abs(d)/r < disturbMinLevelChange || math.Abs(impact) < DisturbMinImpact || math.Signbit(impact) != math.Signbit(-d) {
				continue
			}
			// Widened by two blocks on each side (where there are), the run must still move
			// as many tokens: late reads move them across the run's edges, a stall loses them.
			lo, hi := max(i-disturbWiden, 0), min(j+disturbWiden, m)
			wide := ((cnt[hi]-cnt[lo])*r - (tok[hi] - tok[lo])) / (r * float64(n))
			if math.Abs(wide) < DisturbMinImpact || math.Signbit(wide) != math.Signbit(impact) {
				continue
			}
			if z <= bestScore {
				continue
			}
			bestScore = z
			best = &found{i: i, j: j, a: a, r: r, z: z}
		}
	}
	if best == nil {
		return nil
	}
	// Median levels let a run take in bins at the rest's level beside it: trim its edge
	// blocks that are nearer the rest's level than the run's.
	i, j, a, r := best.i, best.j, best.a, best.r
	for j-i > 1 && math.Abs(y[i]-r) < math.Abs(y[i]-a) && cnt[j]-cnt[i+1] >= float64(minSpan) {
		i++
	}
	for j-i > 1 && math.Abs(y[j-1]-r) < math.Abs(y[j-1]-a) && cnt[j-1]-cnt[i] >= float64(minSpan) {
		j--
	}
	kb := cnt[j] - cnt[i]
	kind := DisturbStall
	if a > r || j == m {
		kind = DisturbStep
	}
	return &Disturbance{
		Kind:     kind,
		FirstBin: i * g,
		LastBin:  min(j*g, n) - 1,
		Level:    (tok[j] - tok[i]) / kb / r,
		Impact:   (kb*r - (tok[j] - tok[i])) / (r * float64(n)),
		Z:        best.z,
	}
}

// diffScale returns a robust standard deviation of the values of y from the differences of
// neighbours: 1.4826 × their median absolute value ÷ √2, which a step or a stall hardly moves.
func diffScale(y []float64) float64 {
	diffs := make([]float64, 0, len(y))
	for b := 1; b < len(y); b++ {
		diffs = append(diffs, math.Abs(y[b]-y[b-1]))
	}
	return 1.4826 * medianOf(diffs) / math.Sqrt2
}

// medianOf returns the median of xs, reordering it; 0 for none.
func medianOf(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	slices.Sort(xs)
	h := len(xs) / 2
	if len(xs)%2 == 1 {
		return xs[h]
	}
	return (xs[h-1] + xs[h]) / 2
}
