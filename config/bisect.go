package config

// Bisect is the bot's bisection of a regression on the default branch (speedmatrix bisect,
// docs/bisect.md): when a push's change point is a regression and more than one commit lies
// between the last good and the first bad measured results, commits of that range are measured
// (the named cells only) until the first bad one is named: in the push's job (mode full), or a
// round per workflow run on Runners − 1 GPU jobs at once (the split workflow).
type Bisect struct {
	// Auto bisects a push's regression change point without being asked (default false: only
	// on a maintainer's /bench bisect).
	Auto bool `yaml:"auto"`
	// Steps is the budget's measurement rounds (a rerun counts; default 12).
	Steps int `yaml:"steps"`
	// Budget is the budget's GPU time of the steps' measurements (0: no bound).
	Budget Duration `yaml:"budget"`
	// Runners is N of a k-ary bisection in the split workflow: each round measures N − 1
	// commits of the range at once, one GPU job each, so the rounds fall as log base N of the
	// range (default 2: one commit a round, plain bisection). Mode full measures in its one job
	// and bisects with 2.
	Runners int `yaml:"runners"`
}

// MaxBisectRunners is the most bisect.runners takes: GitHub runs at most 256 jobs of a matrix.
const MaxBisectRunners = 257

// validate checks the bisect section.
func (b Bisect) validate(v *validator) {
	if b.Steps < 1 {
		v.fail("bisect.steps", "%d: want at least 1 measurement round (12 is the default)", b.Steps)
	}
	if b.Runners < 2 || b.Runners > MaxBisectRunners {
		v.fail("bisect.runners", "%d: want 2 (one GPU job a round, the default) to %d (a job matrix holds at most 256 jobs)", b.Runners, MaxBisectRunners)
	}
	if b.Budget < 0 {
		v.fail("bisect.budget", "%v: want a GPU time of 0 (no bound) or more, e.g. 2h", b.Budget)
	}
}
