package compare

import (
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/speedmatrix/speedmatrix/compare/changepoint"
	"github.com/speedmatrix/speedmatrix/results"
)

// historyNoise is the run-to-run noise a cell-metric's history measures: the sample variance of
// its log values within each level of the series (a shift between levels is a change of the
// engine, not noise), and its degrees of freedom.
type historyNoise struct {
	// n is how many history runs hold the cell-metric; levels how many levels the series has
	// (1 without a change point); shift the first run of the newest level when levels > 1.
	n, levels int
	// v is the pooled within-level variance, df = n − levels its degrees of freedom.
	v, df float64
	// shift is the index (oldest first) of the first run of the newest level.
	shift int
	// at is the engine commit of that run ("" when the file names none).
	at string
	// base is how many of the base's runs count toward MinHistory besides the series.
	base int
	// level are the log values of the newest level (all of them without a change point): the
	// runs the base pools with (the pooled baseline).
	level []float64
}

// usable reports whether the history measures the noise: at least th.MinHistory runs (the
// base's among them: the store's history starts with the baseline), two or more degrees of
// freedom within levels, and a spread.
func (hn historyNoise) usable(th Thresholds) bool {
	return hn.n+hn.base >= th.MinHistory && hn.df >= 2 && hn.v > 0
}

// withBase returns hn counting k runs of the base toward MinHistory that its series leaves out.
func (hn historyNoise) withBase(k int) historyNoise {
	hn.base = k
	return hn
}

// historyLevelSettings are the change-point settings that split a history into levels: the
// detector's defaults (199 permutations, p ≤ 0.01, levels of 3 runs or more) and the metric's δ
// as the smallest shift that counts, as `speedmatrix history` finds them.
func historyLevelSettings(m results.Metric, th Thresholds) changepoint.Settings {
	s := changepoint.DefaultSettings()
	s.MinChange = th.Delta[m]
	s.HigherIsBetter = m.HigherIsBetter()
	if !(s.MinChange > 0 && s.MinChange < 1) {
		s.MinChange = 0
	}
	return s
}

// noiseOfHistory measures the noise of a cell-metric from its history's log values logs, oldest
// first (commits of a run that holds it, in commits). When the series has a sustained shift of at
// least the metric's δ (changepoint.Detect, E-divisive means), the variance is pooled within the
// levels between its change points, on n − levels degrees of freedom: a history that spans a
// regression of the default branch would otherwise count the regression as noise and leave
// every later comparison blind for as long as it lasts. The permutations are seeded from the
// cell-metric, so a comparison is reproducible.
func noiseOfHistory(logs []float64, commits []string, id results.CellID, m results.Metric, th Thresholds) historyNoise {
	hn := historyNoise{n: len(logs), levels: 1, level: logs}
	if len(logs) < 2 {
		return hn
	}
	hn.v, hn.df = varianceOf(logs), float64(len(logs)-1)
	s := historyLevelSettings(m, th)
	if len(logs) < 2*s.MinSize {
		return hn
	}
	values := make([]float64, len(logs))
	for i, l := range logs {
		values[i] = math.Exp(l)
	}
	h := fnv.New64a()
	h.Write([]byte(id.String() + " " + string(m)))
	cps, err := changepoint.Detect(values, s, rand.New(rand.NewPCG(h.Sum64(), 0x5eed)))
	if err != nil || len(cps) == 0 {
		return hn
	}
	cuts := make([]int, 0, len(cps)+2)
	cuts = append(cuts, 0)
	for _, cp := range cps {
		cuts = append(cuts, cp.Index)
	}
	cuts = append(cuts, len(logs))
	var ss float64
	for i := 0; i+1 < len(cuts); i++ {
		seg := logs[cuts[i]:cuts[i+1]]
		mu := meanOf(seg)
		for _, x := range seg {
			ss += (x - mu) * (x - mu)
		}
	}
	hn.levels = len(cps) + 1
	hn.df = float64(len(logs) - hn.levels)
	hn.v = ss / hn.df
	hn.shift = cps[len(cps)-1].Index
	hn.level = logs[hn.shift:]
	if hn.shift < len(commits) {
		hn.at = commits[hn.shift]
	}
	return hn
}

// historyOrder returns the history files oldest first, the order noiseOfHistory reads a series
// in: given newest first along the commits (byCommit), reversed; else by the start of their runs
// (stable: the order given among files without a start), which is the commits' order unless a
// baseline was measured later than its commit.
func historyOrder(files []*results.File, byCommit bool) []*results.File {
	out := slices.Clone(files)
	if byCommit {
		slices.Reverse(out)
		return out
	}
	slices.SortStableFunc(out, func(a, b *results.File) int { return a.Run.Start.Compare(b.Run.Start) })
	return out
}

// historyLevelsWarning says, when the history of some tested cell-metrics shifted, how many and
// from which commit most of them are at their newest level: their noise is measured within the
// levels, and the shift itself is for `speedmatrix history` to show. It is empty otherwise.
func historyLevelsWarning(tests []*pending) string {
	n := 0
	from := map[string]int{}
	for _, p := range tests {
		if nz := p.out.Noise; nz != nil && nz.Levels > 1 {
			n++
			from[nz.LevelFrom]++
		}
	}
	if n == 0 {
		return ""
	}
	best, most := "", 0
	for c, k := range from {
		if k > most || (k == most && c < best) {
			best, most = c, k
		}
	}
	at := ""
	if best != "" {
		at = fmt.Sprintf(", %d of them at a new level from commit %s", most, results.ShortCommit(best))
	}
	return fmt.Sprintf("the base's history shifted in %d cell-metrics (a sustained change of at least δ%s): their noise is the spread within each level of the history, not across the shift; `speedmatrix history` shows the change points", n, at)
}
