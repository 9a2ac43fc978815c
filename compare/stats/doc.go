// Package stats holds the statistical primitives that gonum lacks and that package compare
// needs: the Mann–Whitney U (Wilcoxon rank-sum) test, Benjamini–Hochberg adjustment, Welch's t
// test on summaries, two one-sided tests (TOST) for equivalence, batch means, and the two-look
// group-sequential boundaries of Lan–DeMets alpha spending. Every function is pure and
// deterministic; the tests check them against published values (R's wilcox.test, p.adjust,
// t.test and qt, and the classic Pocock and O'Brien–Fleming tables). It must not do I/O and must
// not know about results files or verdicts.
package stats
