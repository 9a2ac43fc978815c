package bisect

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// Verdict is what one step says of one commit.
type Verdict string

// The step verdicts.
const (
	Bad       Verdict = "bad"       // the comparison with the base found a regression
	Good      Verdict = "good"      // unchanged or improved: every decided cell within ±δ
	Undecided Verdict = "undecided" // neither: measured again within the budget
	Skip      Verdict = "skip"      // the commit did not build or serve
)

// Change is a relative change (commit/base − 1) of the deciding metric with its confidence
// interval, all fractions (−0.1 is 10 % slower for a rate).
type Change struct {
	Change float64 `json:"change"`
	Low    float64 `json:"low"`
	High   float64 `json:"high"`
}

// CellChange is one named cell's evidence in a step.
type CellChange struct {
	Cell    string  `json:"cell"`
	Verdict string  `json:"verdict"` // the comparison's verdict of the cell
	Change  *Change `json:"change,omitempty"`
}

// Measurement is one step's outcome for one commit.
type Measurement struct {
	Commit  string  `json:"commit"`
	Verdict Verdict `json:"verdict"`
	// Reason says why (the comparison's verdict and reason, or why it did not build or serve).
	Reason string `json:"reason,omitempty"`
	// Passed is set when the comparison passed (exit status 0: no regression shown or
	// suspected), whatever its interval.
	Passed bool `json:"passed,omitempty"`
	// Change is the deciding metric's geometric-mean change over the named cells against the
	// base; nil when nothing was compared.
	Change  *Change       `json:"change,omitempty"`
	Cells   []CellChange  `json:"cells,omitempty"`
	GPUTime time.Duration `json:"gpu_time_ns"`
	// Attempt is 1 for a commit's first measurement against this base, 2 for the next.
	Attempt int `json:"attempt"`
}

// Request is what one step measures: Commits, each compared with Base (the good commit);
// Attempt gives each commit's attempt number in this search (1 the first time, higher when an
// undecided commit is measured again, so that the step pools the earlier measurements as a
// second look does); Search counts the searches before this one (a later search looks for a
// further regression after a culprit: a step pools a commit's runs within one search only).
type Request struct {
	Base    string
	Search  int
	Commits []string
	Attempt map[string]int
}

// StepFunc measures req.Commits (at most Config.Runners − 1 of them, at once) and returns one
// Measurement per commit, in any order. An error stops the bisection; a commit that cannot be
// built or served is a Measurement with Verdict Skip, not an error.
type StepFunc func(ctx context.Context, req Request) ([]Measurement, error)

// Budget bounds a bisection: Steps rounds and GPUTime of measurement (0: no bound).
type Budget struct {
	Steps   int           `json:"steps,omitempty"`
	GPUTime time.Duration `json:"gpu_time_ns,omitempty"`
}

// Config is one bisection.
type Config struct {
	// Good is the known-good commit (the base of every step); Commits the first-parent list
	// good..bad oldest first, not holding Good, its last element the bad commit.
	Good    string
	Commits []string
	// Base is the commit whose results every step is compared with: Good (the default), or an
	// earlier measured commit when Good itself has no results (every commit between them
	// taken as good).
	Base string
	// Cells are the cells measured, for the record (the StepFunc measures them).
	Cells []string
	// Runners is how many commits can be measured at once plus one (k-ary bisection measures
	// Runners − 1 points a round); at least 2.
	Runners int
	Budget  Budget
	// Retries is how many more times an undecided commit is measured (default 1: the
	// comparison's second look); Plain turns reruns off and reads every verdict but bad as
	// good, as `git bisect run` reads a comparison's exit status.
	Retries int
	Plain   bool
	// Total is the whole range's change (good → bad) when the caller has it already (the
	// change point's comparison); nil measures the bad commit in the first round.
	Total *Change
	// Delta is the practical floor δ of the deciding metric (default 0.03): a rest smaller
	// than δ is no second regression.
	Delta float64
}

// Round is one step: the commits measured at once and what they gave.
type Round struct {
	Number int    `json:"number"`
	Base   string `json:"base"`
	// After is the commit the search started after: the good commit, or the previous
	// regression's culprit whose level the verdicts are relative to.
	After        string        `json:"after"`
	Measurements []Measurement `json:"measurements"`
}

// Regression is one regression found in the range.
type Regression struct {
	// Culprit is the first bad commit when the bisection narrowed to one; else empty and
	// Range holds the commits that may hold it (oldest first).
	Culprit string   `json:"culprit,omitempty"`
	Range   []string `json:"range,omitempty"`
	// After is the last good commit before it (for a later regression: the last commit at the
	// previous culprit's level); Base the good commit every step was compared with.
	After string `json:"after"`
	Base  string `json:"base"`
	// Change is the culprit's measured change against Base; Step its own share (for the first
	// regression the same; for a later one the change beyond the previous culprit's); nil when
	// no culprit.
	Change *Change `json:"change,omitempty"`
	Step   *Change `json:"step,omitempty"`
	// Skipped are the commits of Range that did not build or serve; Unmeasurable those that
	// stayed undecided after every retry.
	Skipped      []string `json:"skipped,omitempty"`
	Unmeasurable []string `json:"unmeasurable,omitempty"`
	// Budget is set when the budget ran out before Range narrowed to one commit.
	Budget bool `json:"budget_spent,omitempty"`
}

// Result is the outcome of a bisection.
type Result struct {
	Good    string   `json:"good"`
	Bad     string   `json:"bad"`
	Cells   []string `json:"cells,omitempty"`
	Total   *Change  `json:"total,omitempty"`
	Runners int      `json:"runners"`
	// Regressions are the regressions found, in commit order; empty when the bad commit did
	// not measure bad (NotReproduced).
	Regressions []Regression `json:"regressions"`
	// SecondRemains is set when a regression's culprit explains clearly less than the total
	// and the budget ran out before the rest was bisected; Rest is the unexplained change.
	SecondRemains bool    `json:"second_remains,omitempty"`
	Rest          *Change `json:"rest,omitempty"`
	NotReproduced bool    `json:"not_reproduced,omitempty"`
	// BadVerdict is the bad commit's verdict when it was not bad (NotReproduced).
	BadVerdict Verdict       `json:"bad_verdict,omitempty"`
	Rounds     []Round       `json:"rounds"`
	Steps      int           `json:"steps"`
	GPUTime    time.Duration `json:"gpu_time_ns"`
	Notes      []string      `json:"notes,omitempty"`
	// Statement is what was found, in one or more sentences.
	Statement string `json:"statement"`
}

// state is one search over a range.
type state struct {
	after    string
	commits  []string // index 0 is after; the rest the range oldest first
	lo, hi   int      // newest good, oldest bad
	attempts map[int]int
	pending  map[int]bool // undecided, to measure again
	closed   map[int]Verdict
	meas     map[int]Measurement // the newest measurement of each index
	// level is the previous culprit's change in a later search (nil in the first); search
	// counts the searches before this one.
	level  *Change
	search int
}

func newState(after string, rng []string) *state {
	return &state{after: after, commits: append([]string{after}, rng...), lo: 0, hi: len(rng),
		attempts: map[int]int{}, pending: map[int]bool{}, closed: map[int]Verdict{}, meas: map[int]Measurement{}}
}

// open returns the indices strictly between lo and hi that can still be measured.
func (s *state) open() []int {
	var out []int
	for i := s.lo + 1; i < s.hi; i++ {
		if _, done := s.closed[i]; !done {
			out = append(out, i)
		}
	}
	return out
}

// pick returns up to k indices to measure: pending reruns first, then commits spread evenly
// over the open range.
func (s *state) pick(k int) []int {
	var out []int
	for _, i := range s.open() {
		if s.pending[i] && len(out) < k {
			out = append(out, i)
		}
	}
	var fresh []int
	for _, i := range s.open() {
		if !s.pending[i] && s.attempts[i] == 0 {
			fresh = append(fresh, i)
		}
	}
	n := min(k-len(out), len(fresh))
	for j := 1; j <= n; j++ {
		out = append(out, fresh[j*len(fresh)/(n+1)])
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Run bisects cfg's range with step and returns what it found. Errors are the StepFunc's,
// ctx's, or a bad configuration.
func Run(ctx context.Context, cfg Config, step StepFunc) (*Result, error) {
	b, err := start(cfg, step)
	if err != nil {
		return nil, err
	}
	if err := b.search(ctx, b.cfg.Good, nil, b.cfg.Commits); err != nil {
		return nil, err
	}
	b.res.Statement = statement(b.res)
	return b.res, nil
}

// start checks cfg, fills its defaults and returns the bisection before its first round.
func start(cfg Config, step StepFunc) (*run, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	if cfg.Retries == 0 && !cfg.Plain {
		cfg.Retries = 1
	}
	if cfg.Plain {
		cfg.Retries = 0
	}
	if cfg.Delta == 0 {
		cfg.Delta = 0.03
	}
	if cfg.Base == "" {
		cfg.Base = cfg.Good
	}
	return &run{cfg: cfg, step: step, res: &Result{Good: cfg.Good, Bad: cfg.Commits[len(cfg.Commits)-1], Cells: cfg.Cells, Runners: cfg.Runners, Total: cfg.Total}}, nil
}

func (c Config) check() error {
	switch {
	case c.Good == "":
		return errors.New("bisect: no good commit")
	case len(c.Commits) == 0:
		return fmt.Errorf("bisect: no commit between good %s and bad: the range good..bad is empty", short(c.Good))
	case c.Runners < 2:
		return fmt.Errorf("bisect: runners %d: want at least 2 (one measures the base's side, the others the range's commits)", c.Runners)
	case c.Retries < 0, c.Budget.Steps < 0, c.Budget.GPUTime < 0:
		return errors.New("bisect: retries and budget must not be negative")
	}
	seen := map[string]bool{c.Good: true}
	for _, x := range c.Commits {
		if x == "" || seen[x] {
			return fmt.Errorf("bisect: commit %q is empty or listed twice in the range", x)
		}
		seen[x] = true
	}
	return nil
}

type run struct {
	cfg  Config
	step StepFunc
	res  *Result
}

// spent reports whether the budget allows no further round.
func (b *run) spent() bool {
	return (b.cfg.Budget.Steps > 0 && b.res.Steps >= b.cfg.Budget.Steps) ||
		(b.cfg.Budget.GPUTime > 0 && b.res.GPUTime >= b.cfg.Budget.GPUTime)
}

// measure runs one round on indices idx of s.
func (b *run) measure(ctx context.Context, s *state, idx []int) error {
	req := Request{Base: b.cfg.Base, Search: s.search, Attempt: map[string]int{}}
	byCommit := map[string]int{}
	for _, i := range idx {
		s.attempts[i]++
		c := s.commits[i]
		req.Commits = append(req.Commits, c)
		req.Attempt[c] = s.attempts[i]
		byCommit[c] = i
	}
	ms, err := b.step(ctx, req)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	b.res.Steps++
	round := Round{Number: b.res.Steps, Base: b.cfg.Base, After: s.after}
	got := map[string]bool{}
	for _, m := range ms {
		i, ok := byCommit[m.Commit]
		if !ok || got[m.Commit] {
			return fmt.Errorf("bisect: the step returned commit %q it was not asked for, or twice", m.Commit)
		}
		got[m.Commit] = true
		m.Attempt = s.attempts[i]
		if s.level != nil {
			m = relative(m, s.level, b.cfg.Delta)
		} else {
			m = nearerGood(m, b.res.Total, b.cfg.Delta)
		}
		if b.cfg.Plain && m.Verdict == Undecided {
			m.Verdict = Good
			m.Reason = strings.TrimSpace("plain bisection reads it as good: " + m.Reason)
		}
		b.res.GPUTime += m.GPUTime
		round.Measurements = append(round.Measurements, m)
		s.meas[i] = m
	}
	for c := range byCommit {
		if !got[c] {
			return fmt.Errorf("bisect: the step returned no measurement of commit %s", short(c))
		}
	}
	slices.SortFunc(round.Measurements, func(x, y Measurement) int { return byCommit[x.Commit] - byCommit[y.Commit] })
	b.res.Rounds = append(b.res.Rounds, round)
	for _, m := range round.Measurements {
		b.apply(s, byCommit[m.Commit], m)
	}
	return nil
}

// apply moves s's bounds by one measurement.
func (b *run) apply(s *state, i int, m Measurement) {
	delete(s.pending, i)
	switch m.Verdict {
	case Bad:
		s.closed[i] = Bad
		if i < s.hi {
			s.hi = i
		}
	case Good:
		s.closed[i] = Good
	case Skip:
		s.closed[i] = Skip
	default:
		if s.attempts[i] <= b.cfg.Retries {
			s.pending[i] = true
		} else {
			s.closed[i] = Undecided
		}
	}
	// lo is the newest good below hi; a good above hi contradicts one step change.
	for j, v := range s.closed {
		if v != Good {
			continue
		}
		if j < s.hi && j > s.lo {
			s.lo = j
		}
	}
	if m.Verdict == Good && i > s.hi {
		b.note(fmt.Sprintf("commit %s measured good after the bad commit %s: an improvement later in the range, or one wrong verdict", short(m.Commit), short(s.commits[s.hi])))
	}
}

func (b *run) note(n string) {
	if !slices.Contains(b.res.Notes, n) {
		b.res.Notes = append(b.res.Notes, n)
	}
}

// search bisects rng, the commits after after (the good commit, or the previous regression's
// culprit), every step compared with the good commit: level is nil in the first search; in a
// later one it is the previous culprit's change, and a commit is bad when it is clearly worse
// than that level (relative).
func (b *run) search(ctx context.Context, after string, level *Change, rng []string) error {
	s := newState(after, rng)
	s.level, s.search = level, len(b.res.Regressions)
	bad := len(rng)
	total := b.cfg.Total
	if level != nil {
		total = b.res.Total
	}
	if total == nil {
		// The first round measures the bad commit too: the whole range's change.
		idx := append([]int{bad}, s.pick(b.cfg.Runners-2)...)
		if err := b.measureUntilDecided(ctx, s, idx); err != nil {
			return err
		}
		m, ok := s.meas[bad]
		if s.closed[bad] != Bad {
			b.res.NotReproduced, b.res.BadVerdict = true, s.closed[bad]
			if ok {
				b.note(fmt.Sprintf("the bad commit %s measured %s against %s: %s", short(rng[bad-1]), m.Verdict, short(b.cfg.Base), m.Reason))
			}
			return nil
		}
		total = m.Change
		b.res.Total = total
	}
	for s.hi-s.lo > 1 && len(s.open()) > 0 && !b.spent() {
		idx := s.pick(b.cfg.Runners - 1)
		if len(idx) == 0 {
			break
		}
		if err := b.measure(ctx, s, idx); err != nil {
			return err
		}
	}
	reg := Regression{After: s.commits[s.lo], Base: b.cfg.Base}
	for i := s.lo + 1; i <= s.hi; i++ {
		reg.Range = append(reg.Range, s.commits[i])
		switch s.closed[i] {
		case Skip:
			reg.Skipped = append(reg.Skipped, s.commits[i])
		case Undecided:
			reg.Unmeasurable = append(reg.Unmeasurable, s.commits[i])
		}
	}
	if len(reg.Range) == 1 {
		reg.Culprit, reg.Range = reg.Range[0], nil
		if m, ok := s.meas[s.hi]; ok {
			reg.Change = m.Change
			reg.Step = m.Change
			if level != nil {
				reg.Step, _ = secondRegression(m.Change, level, b.cfg.Delta)
			}
		}
		if level != nil {
			b.res.SecondRemains = false // the rest has its culprit
		}
	} else if len(s.open()) > 0 {
		reg.Budget = true
	}
	b.res.Regressions = append(b.res.Regressions, reg)
	if reg.Culprit == "" || s.hi == bad {
		return nil
	}
	rest, second := secondRegression(total, reg.Change, b.cfg.Delta)
	if !second {
		return nil
	}
	b.res.Rest, b.res.SecondRemains = rest, true
	b.note(fmt.Sprintf("culprit %s explains %s of the range's %s; the rest, %s, is a further regression after it", short(reg.Culprit), pct(reg.Change.Change), pct(total.Change), pct(rest.Change)))
	if b.spent() {
		return nil
	}
	return b.search(ctx, reg.Culprit, reg.Change, rng[s.hi:])
}

// nearerGood reads an undecided m whose comparison passed as good when its change is shown
// nearer the good level than the bad one: the 95 % interval's low end above half the range's
// whole change total (on the log scale), or above −δ where that is lower. A commit the
// comparison passes but whose interval is wider than δ (a noisy run) is so still placed on the
// good side of a large slowdown.
func nearerGood(m Measurement, total *Change, delta float64) Measurement {
	if m.Verdict != Undecided || !m.Passed || m.Change == nil || total == nil {
		return m
	}
	half := math.Min(math.Log1p(-delta), math.Log1p(total.Change)/2)
	if math.Log1p(m.Change.Low) > half {
		m.Verdict = Good
		m.Reason = fmt.Sprintf("the comparison passes and the cells' change %s (95 %% interval %s to %s) is shown nearer the good level than the range's %s", pct(m.Change.Change), pct(m.Change.Low), pct(m.Change.High), pct(total.Change))
	}
	return m
}

// relative reads m, a commit's comparison with the good commit, against level, the previous
// culprit's change: bad when the commit is worse than level by more than δ and clearly
// (secondRegression), good when it is shown not worse than level by δ (the 95 % interval of the
// difference above −δ), else undecided.
func relative(m Measurement, level *Change, delta float64) Measurement {
	if m.Verdict == Skip || m.Change == nil {
		return m
	}
	d, worse := secondRegression(m.Change, level, delta)
	switch {
	case worse:
		m.Verdict = Bad
	case d.Low > -delta:
		m.Verdict = Good
	default:
		m.Verdict = Undecided
	}
	m.Reason = fmt.Sprintf("%s against the previous culprit's level (%s; the comparison with the good commit: %s)", pct(d.Change), m.Verdict, m.Reason)
	return m
}

// measureUntilDecided measures idx, then measures the bad commit (idx[0]) again while it is
// undecided and retries and budget allow.
func (b *run) measureUntilDecided(ctx context.Context, s *state, idx []int) error {
	if err := b.measure(ctx, s, idx); err != nil {
		return err
	}
	bad := idx[0]
	for s.pending[bad] && !b.spent() {
		next := []int{bad}
		for _, i := range s.pick(b.cfg.Runners - 1) {
			if i != bad && len(next) < b.cfg.Runners-1 {
				next = append(next, i)
			}
		}
		if err := b.measure(ctx, s, next); err != nil {
			return err
		}
	}
	if s.pending[bad] {
		delete(s.pending, bad)
		s.closed[bad] = Undecided
	}
	return nil
}

// zSecond is the one-sided 1 % normal quantile that the rest must clear to be a second
// regression.
const zSecond = 2.326

// secondRegression returns the change the culprit leaves unexplained (total ÷ culprit on the
// log scale) and whether it is a second regression: worse than δ and more than zSecond
// standard errors beyond zero. Rates are better higher: a regression is a negative change.
func secondRegression(total, culprit *Change, delta float64) (*Change, bool) {
	if total == nil || culprit == nil {
		return nil, false
	}
	lt, lc := math.Log1p(total.Change), math.Log1p(culprit.Change)
	se := math.Hypot(logSE(total), logSE(culprit))
	d := lt - lc
	rest := &Change{Change: math.Expm1(d), Low: math.Expm1(d - 1.96*se), High: math.Expm1(d + 1.96*se)}
	return rest, d < math.Log1p(-delta) && (se == 0 || -d/se > zSecond)
}

// logSE is the standard error on the log scale of a change with a 95 % interval.
func logSE(c *Change) float64 {
	if c.High <= -1 || c.Low <= -1 {
		return 0
	}
	return (math.Log1p(c.High) - math.Log1p(c.Low)) / (2 * 1.96)
}

// short returns a commit's first 7 characters.
func short(c string) string {
	if len(c) > 7 {
		return c[:7]
	}
	return c
}

// pct formats a change as "−10.2 %".
func pct(x float64) string { return fmt.Sprintf("%+.1f %%", 100*x) }
