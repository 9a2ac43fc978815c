package stats

import (
	"math"
	"sort"
)

// AdjustBH returns Benjamini–Hochberg adjusted p-values (R's p.adjust(p, method = "BH")), in
// the order of p: p_adj(i) = min over j with p_j ≥ p_i of min(1, m·p_j / rank_j). Rejecting every
// hypothesis whose adjusted p-value is at most q controls the false discovery rate at q. NaN
// p-values are kept as NaN and do not count in m.
func AdjustBH(p []float64) []float64 {
	out := make([]float64, len(p))
	var idx []int
	for i, v := range p {
		if math.IsNaN(v) {
			out[i] = math.NaN()
			continue
		}
		idx = append(idx, i)
	}
	m := len(idx)
	sort.SliceStable(idx, func(a, b int) bool { return p[idx[a]] > p[idx[b]] })
	running := 1.0
	for k, i := range idx {
		r := m - k // rank from the smallest
		v := float64(m) / float64(r) * p[i]
		if v < running {
			running = v
		}
		out[i] = math.Min(1, running)
	}
	return out
}
