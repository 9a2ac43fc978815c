package config

// Bisect is the bot's bisection of a regression on the default branch (speedmatrix bisect,
// docs/bisect.md): when a push's change point is a regression and more than one commit lies
// between the last good and the first bad measured results, the push's job measures commits
// of that range (the named cells only) until it names the first bad one.
type Bisect struct {
	// Auto bisects a push's regression change point without being asked (default false: only
	// on a maintainer's /bench bisect).
	Auto bool `yaml:"auto"`
	// Steps is the budget's measurement rounds (a rerun counts; default 12).
	Steps int `yaml:"steps"`
	// Budget is the budget's GPU time of the steps' measurements (0: no bound).
	Budget Duration `yaml:"budget"`
}

// validate checks the bisect section.
func (b Bisect) validate(v *validator) {
	if b.Steps < 1 {
		v.fail("bisect.steps", "%d: want at least 1 measurement round (12 is the default)", b.Steps)
	}
	if b.Budget < 0 {
		v.fail("bisect.budget", "%v: want a GPU time of 0 (no bound) or more, e.g. 2h", b.Budget)
	}
}
