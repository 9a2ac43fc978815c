// Package changepoint finds the sustained shifts of a series of measurements taken over commits:
// the first commit of each new level, the level before and after, how sure that it is not noise,
// and whether it made the metric better or worse. It is pure: it reads no files, prints nothing,
// and draws its random permutations from a generator the caller injects, so that the same input
// and seed give the same answer. It must not decide anything about a single pair of runs (package
// compare does that); it looks at a whole history.
//
// # Method
//
// E-divisive with means (Matteson and James 2014), in the form Apache Otava (formerly DataStax
// Hunter; Fleming et al. 2023) and MongoDB's signal processing algorithms (Daly et al. 2020) use
// to find performance changes in continuous integration.
//
// Statistic: for a segment Z_a … Z_{b−1} of the series and a candidate split τ (a+s ≤ τ ≤ b−s, s
// the minimum segment length Settings.MinSize), X = Z_a … Z_{τ−1} (m values) and
// Y = Z_τ … Z_{b−1} (n values), the empirical energy divergence is
//
//	Ê(X, Y; α) = 2/(mn) Σ|X_i − Y_j|^α − C(m,2)⁻¹ Σ_{i<k}|X_i − X_k|^α − C(n,2)⁻¹ Σ_{j<k}|Y_j − Y_k|^α
//
// and the split statistic is q̂(τ) = mn/(m+n) · Ê(X, Y; α), with α = Settings.Exponent in (0, 2)
// (1 by default, as Otava and MongoDB use; Ê is then zero exactly when the two distributions are
// equal, for any distribution with a finite mean). The best split of a segment is the τ that
// maximizes q̂; the right end of Y is the segment's end (κ = b), as in those implementations,
// rather than searched as well. All splits of a segment are evaluated in O(n²) by moving one
// point at a time from Y to X and updating the three sums.
//
// Bisection: start with the whole series as one segment. At each step, take the split with the
// largest q̂ over all current segments, and test it: draw Settings.Permutations (199) random
// permutations of the values within each current segment (the positions of the change points
// found so far are kept), compute the same largest q̂ over all segments of each permuted series,
// and let p = (1 + #{permuted ≥ observed}) / (1 + permutations). The split is a change point when
// p ≤ Settings.Alpha (0.01); it then cuts its segment in two and the search goes on, until a split
// is not significant, no segment can be cut into two of at least MinSize values, or
// Settings.MaxChanges change points were found. Under no change at all the values are
// exchangeable, so the first test, which is the only one that runs, finds a change point with
// probability at most Alpha, whatever the distribution of the noise (heavy tails included): this
// is the false-alarm rate of a whole series, not of one commit. A permutation test stops early as
// soon as its p-value can no longer reach Alpha.
//
// Magnitude: a significant shift can be too small to matter (a long, quiet series detects a
// 0.5 % step). Each change point's relative change is mean(after)/mean(before) − 1, the
// arithmetic means of the segments on its two sides between the neighbouring change points (or
// the ends of the series). While some change point's |relative change| is below Settings.MinChange
// (δ, e.g. compare's 3 % for throughput and 5 % for latency), the smallest one is removed and its
// neighbours' means are recomputed over the merged segment. The p-value reported is the one from
// the step that found the change point.
//
// Direction: with Settings.HigherIsBetter (throughput), a fall is a regression and a rise an
// improvement; for a latency the reverse.
//
// # References
//
//   - D. S. Matteson, N. A. James. A Nonparametric Approach for Multiple Change Point Analysis of
//     Multivariate Data. Journal of the American Statistical Association 109(505):334–345, 2014.
//   - N. A. James, D. S. Matteson. ecp: An R Package for Nonparametric Multiple Change Point
//     Analysis of Multivariate Data. Journal of Statistical Software 62(7), 2015.
//   - D. Daly, W. Brown, H. Ingo, J. O'Leary, D. Bradford. The Use of Change Point Detection to
//     Identify Software Performance Regressions in a Continuous Integration System. ICPE 2020.
//   - M. Fleming, P. Kołaczkowski, I. Kumar, S. Das, S. Tiwari, M. Bhuyan. Hunter: Using Change
//     Point Detection to Hunt for Performance Regressions. ICPE 2023 (now Apache Otava).
//
// # API
//
//	s := changepoint.DefaultSettings()   // 199 permutations, p ≤ 0.01, MinSize 3, no δ
//	s.MinChange, s.HigherIsBetter = 0.03, true
//	cps, err := changepoint.Detect(values, s, rand.New(rand.NewPCG(seed, 0)))
//	// cps[i].Index is the first value of the new level
package changepoint
