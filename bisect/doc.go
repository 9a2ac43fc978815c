// Package bisect finds the first commit of a default branch's first-parent line that slowed
// the cells a change point or a comparison named: k-ary bisection over noisy measurements.
//
// It is pure: a StepFunc measures commits (build, serve, measure the named cells, compare
// them with the base commit's results by the comparison's own rules: package compare through
// StepVerdict) and Run decides which commits to measure next, within a budget of steps and
// GPU time, with N runners measuring N−1 commits per round (one round is one step).
//
// # Method
//
// The range is the first-parent list good..bad, oldest first: the good commit is known good
// (it is the base every step compares with), the last commit is bad. Each round picks up to
// N−1 commits spread evenly over the open range (lo, hi), the commits strictly between the
// newest good and the oldest bad; with N = 2 it is plain bisection at the midpoint. A step's
// verdict per commit is one of:
//
//   - bad: the comparison found a regression (a cell, row, column or the phase's shift);
//   - good: the comparison passes (exit status 0) and the named cells' mean change is shown
//     better than −δ, or, once the range's whole change T is known, nearer the good level than
//     the bad one (the 95 % interval's low end above T/2 on the log scale, where that is below
//     −δ): a passing commit whose noisy run widens its interval is still placed on the good
//     side of a large slowdown;
//   - undecided: anything else (inconclusive, unproven, incomplete): the commit is measured
//     again in the next round, up to Config.Retries times (each a step), before the
//     bisection treats it as unmeasurable;
//   - skip: the commit did not build or serve; like git bisect skip, the bisection measures a
//     neighbour instead, and a range whose only open commits are skipped (or unmeasurable)
//     ends as a range, not a culprit.
//
// A bad verdict moves hi down to the oldest bad commit, a good one moves lo up to the newest
// good commit below hi. A good commit measured after a bad one contradicts a single step
// change and is noted in the result (an improvement later in the range, or a wrong verdict).
//
// # Two regressions
//
// When the culprit is found, its measured change against the good commit (the geometric mean
// of the deciding metric over the named cells) is set against the whole range's change (the
// bad commit's, measured in the first round unless Config.Total gives it). When the culprit
// explains clearly less than the total — the rest, log(total) − log(culprit), is worse than
// δ and more than z = 2.33 standard errors from zero (a one-sided 1 % test, the standard
// errors taken from the two intervals) — a second regression remains after the culprit, and
// the bisection goes on over culprit..bad. Its steps are still compared with the good commit
// (whose stored results and history decide best), and each is read against the culprit's
// level by the same test: bad when clearly worse than it by more than δ, good when shown not
// worse than it by δ, else undecided. The result lists each regression found, or the range
// left open when the budget ran out.
package bisect
