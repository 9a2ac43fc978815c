// Package compare decides, cell by cell and metric by metric, whether a head results file is
// slower, faster, the same as, or not distinguishable from a base results file, and how sure
// that is. It estimates each cell-metric's relative change on the log scale with a Welch t
// interval, takes the run-to-run noise from repeated trials, the base's history, within-run
// batch means floored by a prior, or the prior alone (and says which), controls the false
// discovery rate over the whole matrix with Benjamini–Hochberg, shows "unchanged" by TOST within
// a practical floor δ, and plans reruns of inconclusive cells with a two-look group-sequential
// rule. It is pure: it reads no files and prints nothing (see package report for rendering and
// internal/cli for the command).
package compare
