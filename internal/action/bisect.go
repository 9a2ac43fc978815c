package action

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/speedmatrix/speedmatrix/bisect"
	"github.com/speedmatrix/speedmatrix/compare"
	"github.com/speedmatrix/speedmatrix/config"
	"github.com/speedmatrix/speedmatrix/ghbot"
	"github.com/speedmatrix/speedmatrix/measure"
	"github.com/speedmatrix/speedmatrix/results"
	"github.com/speedmatrix/speedmatrix/store"
)

// bisectWalk is how many first parents of the first bad commit are walked to find the last good
// one: a range longer than that is not bisected.
const bisectWalk = 512

// bisectMarker marks the bot's bisection comments.
const bisectMarker = "<!-- speedmatrix:bisect -->"

// bisectRange is one change point's range: the last good and the first bad measured commits,
// and the cells whose series shifted between them.
type bisectRange struct {
	good, bad string
	cells     []string
}

// rangesOf groups the change point's regressions by their range, in the order first reported.
func rangesOf(st cpState) []bisectRange {
	var out []bisectRange
	for _, s := range st.Series {
		if s.Last == "" || s.First == "" {
			continue
		}
		k := slices.IndexFunc(out, func(r bisectRange) bool { return r.good == s.Last && r.bad == s.First })
		if k < 0 {
			out = append(out, bisectRange{good: s.Last, bad: s.First})
			k = len(out) - 1
		}
		if !slices.Contains(out[k].cells, s.Cell) {
			out[k].cells = append(out[k].cells, s.Cell)
		}
	}
	return out
}

// autoBisect bisects, when bisect.auto is set, each range of the change point st whose last good
// and first bad measured commits have more than one commit between them (the first bad one
// included): the push's job measures the range's commits, the shifted cells only, until it names
// the first bad commit, and posts it on the change-point issue and on the culprit's pull request.
// Failures are logged: the push's own results are stored.
func (j *job) autoBisect(ctx context.Context, c *ghbot.Client, rs resultStore, cfg config.Config, head *results.File, st cpState) {
	if !j.cfg.Bisect.Auto || c == nil || rs.s == nil || rs.commits == nil {
		return
	}
	id := store.ConfigID(head)
	ranges := rangesOf(st)
	if issue, _, open, err := c.FindOpenIssue(ctx, j.repo, changePointLabel, changePointConfigMarker(id)); err == nil && open {
		ranges = j.notBisected(ctx, c, issue, ranges) // a later push does not bisect a range again
	}
	for _, r := range ranges {
		if err := j.bisectRange(ctx, c, rs, cfg, id, r); err != nil {
			j.log.Warn("bisect", "good", ghbot.ShortSHA(r.good), "bad", ghbot.ShortSHA(r.bad), "err", err)
		}
	}
}

// firstParentsBetween returns good..bad along the first-parent line of branch (the default
// branch), oldest first (bad last). Both commits must be on that line within bisectWalk commits
// of its tip, good before bad, whatever named them (a change point, a record, a command): only
// the default branch's own commits are measured, never a commit a pull request brought in.
func firstParentsBetween(ctx context.Context, commits store.Commits, branch, good, bad string) ([]string, error) {
	chain, err := commits.Ancestors(ctx, branch, bisectWalk)
	if err != nil {
		return nil, fmt.Errorf("the default branch's commits: %w", err)
	}
	b := slices.Index(chain, bad)
	if b < 0 {
		return nil, fmt.Errorf("the first bad commit %s is not among the last %d first-parent commits of the default branch %s: only the default branch's own commits are bisected", bad, bisectWalk, branch)
	}
	g := slices.Index(chain, good)
	if g < 0 {
		return nil, fmt.Errorf("the last good commit %s is not among the last %d first-parent commits of the default branch %s: only the default branch's own commits are bisected", good, bisectWalk, branch)
	}
	if g <= b { // newest first: good must come after bad in the chain
		return nil, fmt.Errorf("the last good commit %s is not before the first bad commit %s on the default branch %s", good, bad, branch)
	}
	out := slices.Clone(chain[b:g])
	slices.Reverse(out)
	return out, nil
}

// mainBranch returns the default branch, whose first-parent line bisections walk ("HEAD" when
// the event does not name it).
func (j *job) mainBranch() string {
	if j.repo.DefaultBranch == "" {
		return "HEAD"
	}
	return j.repo.DefaultBranch
}

// bisectRange bisects one range and posts what it found.
func (j *job) bisectRange(ctx context.Context, c *ghbot.Client, rs resultStore, cfg config.Config, id string, r bisectRange) error {
	commits, err := firstParentsBetween(ctx, rs.commits, j.mainBranch(), r.good, r.bad)
	if err != nil {
		return err
	}
	if len(commits) < 2 {
		j.log.Info("bisect: nothing to bisect, the first bad commit follows the last good one", "good", ghbot.ShortSHA(r.good), "bad", ghbot.ShortSHA(r.bad))
		return nil
	}
	s, err := j.stepsAgainst(ctx, rs, cfg, r.cells, r.good, id)
	if err != nil {
		return err
	}
	if err := s.prepare(); err != nil {
		return err
	}
	bc := bisect.Config{Good: r.good, Base: s.good, Commits: commits, Cells: r.cells, Runners: 2,
		Budget: bisect.Budget{Steps: j.cfg.Bisect.Steps, GPUTime: j.cfg.Bisect.Budget}, Total: s.total(ctx, r.bad, id)}
	j.log.Info("bisect: measuring the range of the change point", "good", ghbot.ShortSHA(r.good), "bad", ghbot.ShortSHA(r.bad), "commits", len(commits), "cells", strings.Join(r.cells, ","))
	res, err := bisect.Run(ctx, bc, s.step)
	if err != nil {
		return err
	}
	j.log.Info("bisect: " + res.Statement)
	j.postBisect(ctx, c, id, res, s.good)
	return nil
}

// stepsAgainst returns the steps of a bisection of good..: compared with the stored results of
// good, or of the newest commit before it that has results of config id, and their history.
func (j *job) stepsAgainst(ctx context.Context, rs resultStore, cfg config.Config, cells []string, good, id string) (*botSteps, error) {
	against, f, err := storedAtOrBefore(ctx, rs, good, id)
	if err != nil {
		return nil, err
	}
	return &botSteps{j: j, rs: rs, cfg: cfg, cells: cells, good: against, goodFile: f,
		hist: j.history(ctx, rs, f, against), pooled: map[string][]*results.File{}}, nil
}

// total returns the range's whole change: the stored results of the first bad commit bad
// compared with the good ones; nil when there are none (the bisection then measures bad first).
func (s *botSteps) total(ctx context.Context, bad, id string) *bisect.Change {
	f, _, err := s.rs.s.Get(ctx, bad, id)
	if err != nil {
		return nil
	}
	m, err := s.compare([]*results.File{f}, 1)
	if err != nil {
		return nil
	}
	return m.Change
}

// storedAtOrBefore returns the newest commit at or before good along its first parents that has
// stored default-branch results of config id, and those results: the base every step is
// compared with (a range named by /bench bisect may start at a commit never measured).
func storedAtOrBefore(ctx context.Context, rs resultStore, good, id string) (string, *results.File, error) {
	chain, err := rs.commits.Ancestors(ctx, good, bisectWalk)
	if err != nil {
		return "", nil, err
	}
	for _, c := range chain {
		f, _, err := rs.s.Get(ctx, c, id)
		if err == nil {
			return c, f, nil
		}
		if !errors.Is(err, store.ErrNotFound) {
			return "", nil, fmt.Errorf("the results of %s: %w", ghbot.ShortSHA(c), err)
		}
	}
	return "", nil, fmt.Errorf("no stored default-branch results of config %s at or within %d first parents before the good commit %s: measure it first (speedmatrix baseline --commit)", id, bisectWalk, ghbot.ShortSHA(good))
}

// botSteps measures a bisection's commits in the push's job: each commit checked out, built and
// measured as the job measures (measure.Run), the named cells only, and compared with the
// last good commit's stored results and their history by the configuration's thresholds; each
// measurement is stored as a bisection step (store.KindBisect).
type botSteps struct {
	j        *job
	rs       resultStore
	cfg      config.Config
	cells    []string
	good     string
	goodFile *results.File
	hist     []*results.File
	// src is the engine's checkout, rel the configuration's path inside it ("" when the
	// configuration is not in the checkout: the job's is used for every commit).
	src, rel string
	pooled   map[string][]*results.File // a commit's runs in one search
	n        int
}

// prepare finds the checkout and the configuration's place in it.
func (s *botSteps) prepare() error {
	// The engine's checkout: engine.source, else the configuration's folder (the workspace).
	s.src = s.cfg.Engine.Source
	if s.src == "" {
		s.src = filepath.Dir(s.j.in.Config)
	}
	if s.src == "" {
		s.src = "."
	}
	if s.j.in.Config == "" {
		return nil
	}
	src, err := filepath.Abs(s.src)
	if err != nil {
		return err
	}
	cfgPath, err := filepath.Abs(s.j.in.Config)
	if err != nil {
		return err
	}
	if rel, err := filepath.Rel(src, cfgPath); err == nil && !strings.HasPrefix(rel, "..") {
		s.rel = rel
	}
	return nil
}

// step is the bisect.StepFunc: one commit at a time on this runner.
func (s *botSteps) step(ctx context.Context, req bisect.Request) ([]bisect.Measurement, error) {
	var out []bisect.Measurement
	for _, sha := range req.Commits {
		m, err := s.measure(ctx, req.Search, sha)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

// measure measures commit sha once more and compares its runs of this search with the good
// commit's.
func (s *botSteps) measure(ctx context.Context, search int, sha string) (bisect.Measurement, error) {
	j := s.j
	skip := func(why string) (bisect.Measurement, error) {
		j.log.Warn("bisect: skipping a commit", "sha", ghbot.ShortSHA(sha), "why", why)
		return bisect.Measurement{Commit: sha, Verdict: bisect.Skip, Reason: why}, nil
	}
	dir := j.checkoutDir("bisect", sha)
	remove, err := j.checkout()(ctx, s.src, sha, dir)
	if err != nil {
		return skip("it could not be checked out: " + firstLine(err.Error()))
	}
	defer func() {
		if err := remove(); err != nil {
			j.log.Warn("bisect: removing the checkout", "dir", dir, "err", err)
		}
	}()
	cfg := s.cfg
	if s.rel != "" {
		if _, err := os.Stat(filepath.Join(dir, s.rel)); err == nil {
			// The commit's own configuration: what the commit serves is its to say.
			if cfg, err = config.Load(filepath.Join(dir, s.rel)); err != nil {
				return skip("its configuration does not load: " + firstLine(err.Error()))
			}
		}
	}
	s.n++
	cfg.Cells = s.cells
	cfg.Paired.Enabled = false
	cfg.Engine.Commit = sha
	if cfg.Engine.Source != "" {
		cfg.Engine.Source = dir
	}
	cfg.Output = filepath.Join(j.in.ArtifactDir, "bisect", fmt.Sprintf("%s-%d.json", ghbot.ShortSHA(sha), s.n))
	if err := os.MkdirAll(filepath.Dir(cfg.Output), 0o755); err != nil {
		return bisect.Measurement{}, err
	}
	start := j.now()
	err = j.measure(ctx, cfg)
	gpu := j.now().Sub(start)
	if ctx.Err() != nil {
		return bisect.Measurement{}, ctx.Err()
	}
	if err != nil {
		m, _ := skip("it did not build, serve or measure: " + firstLine(err.Error()))
		m.GPUTime = gpu
		return m, nil
	}
	f, err := results.ReadFile(cfg.Output)
	if err != nil {
		return bisect.Measurement{}, fmt.Errorf("bisect: the results of %s: %w", ghbot.ShortSHA(sha), err)
	}
	if f.Run.Partial {
		m, _ := skip("its server stopped before the cells were measured")
		m.GPUTime = gpu
		return m, nil
	}
	j.putEntry(ctx, s.rs, store.Entry{Commit: sha, Kind: store.KindBisect, RunID: f.Run.ID, Time: j.now().UTC()}, f)
	key := fmt.Sprintf("%d|%s", search, sha)
	s.pooled[key] = append(s.pooled[key], f)
	m, err := s.compare(s.pooled[key], len(s.pooled[key]))
	if err != nil {
		return bisect.Measurement{}, err
	}
	m.Commit, m.GPUTime = sha, gpu
	j.log.Info("bisect step", "sha", ghbot.ShortSHA(sha), "verdict", m.Verdict, "reason", m.Reason)
	return m, nil
}

// compare decides heads (runs of one commit) against the last good commit's stored results and
// their history.
func (s *botSteps) compare(heads []*results.File, look int) (bisect.Measurement, error) {
	th := measure.Thresholds(s.j.cfg)
	th.Look = min(2, look)
	in := compare.Input{Base: []*results.File{s.goodFile}, Head: heads, BasePath: "base", HeadPath: "head", History: s.hist, HistoryByCommit: s.j.histByCommit && len(s.hist) > 0}
	for _, c := range s.cells {
		id, err := results.ParseCellID(c)
		if err != nil {
			return bisect.Measurement{}, err
		}
		in.Cells = append(in.Cells, id)
	}
	cmp, err := compare.Compare(in, th)
	if err != nil {
		return bisect.Measurement{}, fmt.Errorf("bisect: comparing with %s: %w", ghbot.ShortSHA(s.good), err)
	}
	return bisect.StepVerdict(cmp, s.cells), nil
}

// postBisect posts res on the change-point issue of config id and on each culprit's pull request.
func (j *job) postBisect(ctx context.Context, c *ghbot.Client, id string, res *bisect.Result, against string) {
	body := bisectComment(res, against, j.runURL)
	issue, _, open, err := c.FindOpenIssue(ctx, j.repo, changePointLabel, changePointConfigMarker(id))
	if err != nil {
		j.log.Warn("bisect: the change-point issue", "err", err)
	}
	if open {
		if _, err := c.Reply(ctx, j.repo, issue, body); err != nil {
			j.log.Warn("bisect: commenting on the change-point issue", "issue", issue, "err", err)
		}
	}
	j.postCulprits(ctx, c, res, issue)
}

// postCulprits comments on each pull request GitHub associates with a culprit of res; issue is
// the change-point issue the comment cites (0 for none).
func (j *job) postCulprits(ctx context.Context, c *ghbot.Client, res *bisect.Result, issue int) {
	for _, g := range res.Regressions {
		if g.Culprit == "" {
			continue
		}
		prs, err := c.PullsOfCommit(ctx, j.repo, g.Culprit)
		if err != nil {
			j.log.Warn("bisect: the culprit's pull request", "sha", ghbot.ShortSHA(g.Culprit), "err", err)
			continue
		}
		for _, pr := range prs {
			if _, err := c.Reply(ctx, j.repo, pr, culpritComment(res, g, issue)); err != nil {
				j.log.Warn("bisect: commenting on the culprit's pull request", "pr", pr, "err", err)
			}
		}
	}
}

// bisectComment is the change-point issue's comment: what was found, then each step's evidence;
// against is the commit whose stored results the steps were compared with.
func bisectComment(res *bisect.Result, against, runURL string) string {
	return bisectMarker + "\n" + bisectRangeMark(res.Good, res.Bad) + "\n" + bisectBody(res, against, runURL, res.Statement)
}

// bisectBody is a bisection's comment after its marker: head (what was found, or how far it
// is), then each step's evidence so far.
func bisectBody(res *bisect.Result, against, runURL, head string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "**Bisect** of %s..%s on %s: %s\n\n", code(ghbot.ShortSHA(res.Good)), code(ghbot.ShortSHA(res.Bad)),
		code(strings.Join(res.Cells, ",")), head)
	if against != res.Good {
		fmt.Fprintf(&b, "The good commit has no stored results: every step was compared with those of %s, the newest measured commit before it.\n\n", code(ghbot.ShortSHA(against)))
	}
	b.WriteString("| Step | Commit | Against | Verdict | Change of the cells (95 % interval) | GPU time |\n|---|---|---|---|---|---|\n")
	for _, rd := range res.Rounds {
		for _, m := range rd.Measurements {
			fmt.Fprintf(&b, "| %d | %s | %s | %s | %s | %s |\n", rd.Number, code(ghbot.ShortSHA(m.Commit)), code(ghbot.ShortSHA(rd.Base)),
				verdictText(m), changeCell(m.Change), m.GPUTime.Round(time.Second))
		}
	}
	for _, n := range res.Notes {
		fmt.Fprintf(&b, "\nNote: %s\n", n)
	}
	b.WriteString("\nEach step measured the named cells only and was decided by the comparison's own rules against the last good commit's stored results (docs/bisect.md); its results are stored as bisection steps of those commits, never as the default branch's history.\n")
	if runURL != "" {
		fmt.Fprintf(&b, "\n[The run](%s)\n", runURL)
	}
	return b.String()
}

// culpritComment is the culprit pull request's comment.
func culpritComment(res *bisect.Result, g bisect.Regression, issue int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n**speedmatrix bisect** names this pull request's commit %s as the first bad commit of a slowdown of the default branch", bisectMarker, code(ghbot.ShortSHA(g.Culprit)))
	if issue > 0 {
		fmt.Fprintf(&b, " (#%d)", issue)
	}
	fmt.Fprintf(&b, ": %s against %s on %s, after %d steps.\n\n%s\n", changeCell(g.Change), code(ghbot.ShortSHA(g.Base)), code(strings.Join(res.Cells, ",")), res.Steps, res.Statement)
	return b.String()
}

// verdictText is a step's verdict with its reason where it did not decide.
func verdictText(m bisect.Measurement) string {
	if m.Verdict == bisect.Skip || m.Verdict == bisect.Undecided {
		return fmt.Sprintf("%s: %s", m.Verdict, strings.ReplaceAll(m.Reason, "|", "/"))
	}
	return string(m.Verdict)
}

// changeCell formats a change with its interval; "–" for none.
func changeCell(c *bisect.Change) string {
	if c == nil {
		return "–"
	}
	return fmt.Sprintf("%+.1f %% (%+.1f to %+.1f %%)", 100*c.Change, 100*c.Low, 100*c.High)
}

// VerdictBisected is the verdict output of a /bench bisect the job ran.
const VerdictBisected = "bisected"

// bisectCommand answers /bench bisect on the change-point issue; done is false for every other
// event and comment (Decide routes them). A writer's command bisects the issue's range (or the
// range it names): in this job (mode full), or a round per workflow run (mode decide starts it
// and plans its first round: bisectsplit.go); the culprit is posted on the issue and its pull
// request as the automatic bisection's is. Anyone else's gets a -1 reaction, before anything else.
func (j *job) bisectCommand(ctx context.Context, c *ghbot.Client, full bool) (done bool, err error) {
	ev := j.ev
	if !ev.OnIssue || ev.Comment == nil || ev.Action != "created" || ev.Comment.IsBot || strings.EqualFold(ev.Comment.Author, c.Identity().Login) {
		return false, nil
	}
	cmd, perr := ghbot.ParseCommand(ev.Comment.Body)
	if perr != nil || cmd.Kind != ghbot.CommandBisect {
		return false, nil
	}
	j.setOutput("run", "false")
	author := ev.Comment.Author
	refuse := func(why string) (bool, error) {
		j.setOutput("verdict", VerdictRefused)
		j.summary("speedmatrix: /bench bisect was not run. " + why + "\n")
		if _, err := c.Reply(ctx, j.repo, ev.Issue, fmt.Sprintf("@%s %s", author, why)); err != nil {
			j.log.Warn("bisect: replying", "issue", ev.Issue, "err", err)
		}
		return true, nil
	}
	level, err := c.Permission(ctx, j.repo, author)
	if err != nil {
		return true, err
	}
	if level != ghbot.PermAdmin && level != ghbot.PermWrite {
		j.setOutput("verdict", VerdictRefused)
		j.log.Info("bisect: a command by a user without write permission; reacted, not answered", "user", author, "permission", level)
		return true, c.React(ctx, j.repo, ev.Comment.ID, "-1")
	}
	rs := j.openStore(c)
	if rs.s == nil || rs.commits == nil {
		return refuse("`/bench bisect` needs the results store and the repository's commits, and this job has neither: set `store` in the default branch's speedmatrix.yaml (docs/store.md) and post the command again.")
	}
	n, body, open, err := c.FindOpenIssue(ctx, j.repo, changePointLabel, changePointMarker)
	if err != nil {
		return true, err
	}
	st, ok := parseCPState(body)
	if !open || n != ev.Issue || !ok {
		return refuse("`/bench bisect` bisects what the open change-point issue reports: post it there.")
	}
	ranges := rangesOf(st)
	if cmd.Good != "" {
		r, why := j.namedRange(ctx, rs, cmd, st)
		if why != "" {
			return refuse(why)
		}
		ranges = []bisectRange{r}
	}
	if len(ranges) == 0 {
		return refuse("the change-point issue names no range of a last good and a first bad commit to bisect; name one: `/bench bisect <good>..<bad>`.")
	}
	if err := c.React(ctx, j.repo, ev.Comment.ID, "eyes"); err != nil {
		j.log.Warn("bisect: reacting", "err", err)
	}
	if !full {
		// The split workflow: the GPU jobs measure a round, the report job records it and
		// dispatches the next (bisectsplit.go).
		why, err := j.startFromCommand(ctx, c, rs, n, st.Config, ranges)
		if why != "" {
			return refuse(why)
		}
		return true, err
	}
	for _, r := range ranges {
		if err := j.bisectRange(ctx, c, rs, j.cfg, st.Config, r); err != nil {
			return refuse(fmt.Sprintf("the bisection of %s..%s failed: %s. Name a range of the default branch's first-parent commits instead: `/bench bisect <good>..<bad>`.", code(r.good), code(r.bad), code(firstLine(err.Error()))))
		}
	}
	j.setOutput("verdict", VerdictBisected)
	j.summary("speedmatrix: /bench bisect ran; the change-point issue has what it found.\n")
	return true, nil
}

// namedRange resolves /bench bisect good..bad to commits of the default branch's first-parent
// line (good before bad); the cells are every cell the issue reports. why says what is wrong.
func (j *job) namedRange(ctx context.Context, rs resultStore, cmd ghbot.Command, st cpState) (bisectRange, string) {
	chain, err := rs.commits.Ancestors(ctx, j.mainBranch(), bisectWalk)
	if err != nil {
		return bisectRange{}, "the default branch's commits could not be read: " + code(firstLine(err.Error()))
	}
	find := func(prefix string) (int, string) {
		at := -1
		for i, c := range chain {
			if strings.HasPrefix(c, prefix) {
				if at >= 0 {
					return -1, fmt.Sprintf("%s names more than one commit of the default branch: give more digits", code(prefix))
				}
				at = i
			}
		}
		if at < 0 {
			return -1, fmt.Sprintf("%s is not among the default branch's last %d first-parent commits: name commits of the default branch, `/bench bisect <good>..<bad>`", code(prefix), bisectWalk)
		}
		return at, ""
	}
	g, why := find(cmd.Good)
	if why != "" {
		return bisectRange{}, why
	}
	b, why := find(cmd.Bad)
	if why != "" {
		return bisectRange{}, why
	}
	if g <= b { // newest first: good must come after bad in the chain
		return bisectRange{}, fmt.Sprintf("%s is not before %s on the default branch: give `/bench bisect <good>..<bad>`, the older commit first", code(cmd.Good), code(cmd.Bad))
	}
	r := bisectRange{good: chain[g], bad: chain[b]}
	for _, s := range st.Series {
		if !slices.Contains(r.cells, s.Cell) {
			r.cells = append(r.cells, s.Cell)
		}
	}
	return r, ""
}

// checkoutDir returns where commit sha is checked out for what ("base": a paired run's base,
// "bisect": a bisection's step): under RUNNER_TEMP, else the temporary directory.
func (j *job) checkoutDir(what, sha string) string {
	name := "speedmatrix-" + what + "-" + sha[:12]
	if t := j.a.Getenv("RUNNER_TEMP"); t != "" {
		return filepath.Join(t, name)
	}
	return filepath.Join(os.TempDir(), name)
}

// checkout returns how a commit is checked out: Deps.CheckoutBase, else GitWorktree.
func (j *job) checkout() func(ctx context.Context, src, sha, dir string) (func() error, error) {
	if j.d.CheckoutBase != nil {
		return j.d.CheckoutBase
	}
	return GitWorktree
}
