// Package quantile computes the order statistics that every stage of speedmatrix reports (the
// runner's cell medians, the simulator's replayed matrix, the statistics' per-trial values), so
// that they agree to the last digit. It is a leaf: it imports nothing of this module.
//
// # Method
//
// Median sorts a copy of its input and takes the middle value, or the mean of the two middle
// values for an even count; it returns NaN for no values, so a caller that can have none must
// say what it does then instead of getting a silent 0. It must not modify its input.
package quantile
