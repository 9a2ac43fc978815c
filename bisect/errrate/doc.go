// Package errrate measures how often package bisect names the right culprit, on a synthetic
// step model of the comparison: a scripted history of n commits after a good one, one of
// which (drawn uniformly) slows the decode cells at 8 or more requests by a given share; every
// step draws a run of those cells of each measured commit from the calibrated noise model of
// package calibrate (a fresh synthetic server per bisection, its world noise model) and decides
// it with compare.Compare against the good commit's stored run and 10 history runs, as the bot's
// stored-baseline steps do (a rerun pools the commit's runs at the second look). It is pure and
// seeded: the same settings give the same table.
//
// It must not read or write files or measure a server: the caller prints the table.
package errrate
