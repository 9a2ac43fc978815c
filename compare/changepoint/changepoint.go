package changepoint

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// Settings are the tunables of Detect. Start from DefaultSettings and change fields.
type Settings struct {
	// Permutations is how many random permutations each significance test draws (199).
	Permutations int
	// Alpha is the largest permutation p-value that makes a split a change point (0.01).
	Alpha float64
	// MinSize is the fewest values a segment may hold on either side of a change point (3): a
	// shift is sustained only when it lasts that long.
	MinSize int
	// Exponent is α of the energy distance |x − y|^α, in (0, 2) (1).
	Exponent float64
	// MinChange is δ: change points whose relative change of the means is smaller in size are
	// not reported (0 reports every significant one).
	MinChange float64
	// HigherIsBetter says which way is a regression: a fall when set (throughput), a rise when
	// not (latency).
	HigherIsBetter bool
	// MaxChanges caps the change points searched for (0 = no cap).
	MaxChanges int
}

// DefaultSettings returns 199 permutations, p ≤ 0.01, segments of at least 3 values, exponent 1,
// no minimum change (set MinChange to the metric's δ) and no cap.
func DefaultSettings() Settings {
	return Settings{Permutations: 199, Alpha: 0.01, MinSize: 3, Exponent: 1}
}

// check reports the first setting that makes no sense.
func (s Settings) check() error {
	switch {
	case s.Permutations < 1:
		return fmt.Errorf("changepoint: %d permutations; want at least 1 (199 is usual)", s.Permutations)
	case !(s.Alpha > 0 && s.Alpha < 1):
		return fmt.Errorf("changepoint: alpha %v is not in (0, 1)", s.Alpha)
	case s.Alpha*float64(s.Permutations+1) < 1:
		return fmt.Errorf("changepoint: %d permutations cannot give a p-value of %v or less; use at least %d", s.Permutations, s.Alpha, int(math.Ceil(1/s.Alpha))-1)
	case s.MinSize < 2:
		return fmt.Errorf("changepoint: minimum segment size %d; want at least 2", s.MinSize)
	case !(s.Exponent > 0 && s.Exponent < 2):
		return fmt.Errorf("changepoint: exponent %v is not in (0, 2)", s.Exponent)
	case !(s.MinChange >= 0 && s.MinChange < 1):
		return fmt.Errorf("changepoint: minimum change %v is not a fraction in [0, 1)", s.MinChange)
	case s.MaxChanges < 0:
		return fmt.Errorf("changepoint: max changes %d is negative", s.MaxChanges)
	}
	return nil
}

// Direction says whether a shift made the metric worse or better.
type Direction string

// The directions of a shift.
const (
	Regression  Direction = "regression"
	Improvement Direction = "improvement"
)

// ChangePoint is one sustained shift of the series.
type ChangePoint struct {
	// Index is the position of the first value of the new level.
	Index int
	// Before and After are the means of the segments on either side (between the neighbouring
	// change points).
	Before, After float64
	// Change is After/Before − 1.
	Change float64
	// P is the permutation p-value of the step that found the split; Q its statistic q̂.
	P, Q      float64
	Direction Direction
}

// ErrInput is wrapped by errors about the values given to Detect.
var ErrInput = errors.New("changepoint: bad input")

// Detect returns the sustained shifts of xs in order of position. rng draws the permutations;
// the same seed gives the same answer.
func Detect(xs []float64, s Settings, rng *rand.Rand) ([]ChangePoint, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	for i, x := range xs {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, fmt.Errorf("%w: value %d is %v; drop values that were not measured", ErrInput, i, x)
		}
		if s.MinChange > 0 && x <= 0 {
			return nil, fmt.Errorf("%w: value %d is %v; a relative change needs positive values", ErrInput, i, x)
		}
	}
	if rng == nil {
		return nil, fmt.Errorf("%w: no random generator; pass rand.New(rand.NewPCG(seed, 0))", ErrInput)
	}
	d := &detector{xs: xs, s: s, rng: rng}
	found := d.bisect()
	return d.report(found), nil
}

// detector holds one Detect's state.
type detector struct {
	xs  []float64
	s   Settings
	rng *rand.Rand
	// perm and col are scratch space of the permutation test.
	perm []int
	col  []float64
}

// found is a change point before the magnitude filter.
type found struct {
	index int
	p, q  float64
}

// dist is the energy distance between two values.
func (d *detector) dist(x, y float64) float64 {
	a := math.Abs(x - y)
	if d.s.Exponent == 1 {
		return a
	}
	return math.Pow(a, d.s.Exponent)
}

// bestSplit returns the split of zs (one segment) that maximizes q̂, and q̂ there; ok is false
// when zs is too short to split.
func (d *detector) bestSplit(zs []float64) (tau int, q float64, ok bool) {
	n := len(zs)
	ms := d.s.MinSize
	if n < 2*ms {
		return 0, 0, false
	}
	// Start with X empty and Y = zs: wL = 0, wR = every pair, b = 0; then move zs[0], zs[1], …
	// from Y to X.
	var wL, wR, b float64
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			wR += d.dist(zs[i], zs[j])
		}
	}
	best, bestTau := math.Inf(-1), 0
	for t := 0; t < n-ms; t++ {
		// Move zs[t] from Y to X.
		var toLeft, toRight float64
		for i := 0; i < t; i++ {
			toLeft += d.dist(zs[i], zs[t])
		}
		for j := t + 1; j < n; j++ {
			toRight += d.dist(zs[t], zs[j])
		}
		wL += toLeft
		wR -= toRight
		b += toRight - toLeft
		m := t + 1 // |X|
		k := n - m // |Y|
		if m < ms {
			continue
		}
		e := 2*b/float64(m*k) - wL/pairs(m) - wR/pairs(k)
		if qq := float64(m*k) / float64(n) * e; qq > best {
			best, bestTau = qq, m
		}
	}
	return bestTau, best, true
}

// pairs is C(n, 2).
func pairs(n int) float64 { return float64(n) * float64(n-1) / 2 }

// bestOver returns the largest q̂ over the segments of ys cut at cuts (sorted), with the segment
// start and split position of the best one; ok is false when no segment can be split.
func (d *detector) bestOver(ys []float64, cuts []int) (tau int, q float64, ok bool) {
	q = math.Inf(-1)
	lo := 0
	for i := 0; i <= len(cuts); i++ {
		hi := len(ys)
		if i < len(cuts) {
			hi = cuts[i]
		}
		if t, qq, can := d.bestSplit(ys[lo:hi]); can && qq > q {
			tau, q, ok = lo+t, qq, true
		}
		lo = hi
	}
	return tau, q, ok
}

// bisect runs the recursive bisection with its permutation tests.
func (d *detector) bisect() []found {
	var cuts []int
	var out []found
	for d.s.MaxChanges == 0 || len(out) < d.s.MaxChanges {
		tau, q, ok := d.bestOver(d.xs, cuts)
		if !ok {
			break
		}
		p, sig := d.permutationP(cuts, q)
		if !sig {
			break
		}
		out = append(out, found{index: tau, p: p, q: q})
		cuts = append(cuts, tau)
		slices.Sort(cuts)
	}
	slices.SortFunc(out, func(a, b found) int { return a.index - b.index })
	return out
}

// permutationP returns the permutation p-value of an observed largest q̂ with the series cut at
// cuts, and whether it is at most Alpha. It stops as soon as p can no longer reach Alpha.
func (d *detector) permutationP(cuts []int, observed float64) (float64, bool) {
	n := len(d.xs)
	if cap(d.col) < n {
		d.col, d.perm = make([]float64, n), make([]int, n)
	}
	ys := d.col[:n]
	copy(ys, d.xs)
	r := d.s.Permutations
	// p ≤ Alpha ⇔ 1 + exceed ≤ Alpha·(1 + r).
	maxExceed := int(math.Floor(d.s.Alpha*float64(r+1)+1e-9)) - 1
	exceed := 0
	for range r {
		lo := 0
		for i := 0; i <= len(cuts); i++ {
			hi := n
			if i < len(cuts) {
				hi = cuts[i]
			}
			seg := ys[lo:hi]
			d.rng.Shuffle(len(seg), func(a, b int) { seg[a], seg[b] = seg[b], seg[a] })
			lo = hi
		}
		if _, q, _ := d.bestOver(ys, cuts); q >= observed {
			exceed++
			if exceed > maxExceed {
				return float64(1+exceed) / float64(1+r), false
			}
		}
	}
	return float64(1+exceed) / float64(1+r), true
}

// report applies the magnitude filter and fills in the means, changes and directions.
func (d *detector) report(fs []found) []ChangePoint {
	for {
		cps := d.describe(fs)
		worst, worstAbs := -1, math.Inf(1)
		for i, cp := range cps {
			if a := math.Abs(cp.Change); a < d.s.MinChange && a < worstAbs {
				worst, worstAbs = i, a
			}
		}
		if worst < 0 {
			return cps
		}
		fs = slices.Delete(fs, worst, worst+1)
	}
}

// describe computes each change point's neighbouring means, change and direction.
func (d *detector) describe(fs []found) []ChangePoint {
	if len(fs) == 0 {
		return nil
	}
	cps := make([]ChangePoint, len(fs))
	for i, f := range fs {
		lo, hi := 0, len(d.xs)
		if i > 0 {
			lo = fs[i-1].index
		}
		if i+1 < len(fs) {
			hi = fs[i+1].index
		}
		before, after := mean(d.xs[lo:f.index]), mean(d.xs[f.index:hi])
		change := (after - before) / math.Abs(before)
		dir := Improvement
		if (change < 0) == d.s.HigherIsBetter {
			dir = Regression
		}
		cps[i] = ChangePoint{Index: f.index, Before: before, After: after, Change: change, P: f.p, Q: f.q, Direction: dir}
	}
	return cps
}

// mean is the arithmetic mean of xs.
func mean(xs []float64) float64 {
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}
