package action

import (
	"context"
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
	for _, r := range rangesOf(st) {
		if err := j.bisectRange(ctx, c, rs, cfg, head, r); err != nil {
			j.log.Warn("bisect", "good", ghbot.ShortSHA(r.good), "bad", ghbot.ShortSHA(r.bad), "err", err)
		}
	}
}

// firstParentsBetween returns good..bad along bad's first parents, oldest first (bad last).
func firstParentsBetween(ctx context.Context, commits store.Commits, good, bad string) ([]string, error) {
	chain, err := commits.Ancestors(ctx, bad, bisectWalk)
	if err != nil {
		return nil, err
	}
	k := slices.Index(chain, good)
	if k < 0 {
		return nil, fmt.Errorf("the last good commit %s is not among the %d first parents of %s", ghbot.ShortSHA(good), bisectWalk, ghbot.ShortSHA(bad))
	}
	out := slices.Clone(chain[:k])
	slices.Reverse(out)
	return out, nil
}

// bisectRange bisects one range and posts what it found.
func (j *job) bisectRange(ctx context.Context, c *ghbot.Client, rs resultStore, cfg config.Config, head *results.File, r bisectRange) error {
	commits, err := firstParentsBetween(ctx, rs.commits, r.good, r.bad)
	if err != nil {
		return err
	}
	if len(commits) < 2 {
		j.log.Info("bisect: nothing to bisect, the first bad commit follows the last good one", "good", ghbot.ShortSHA(r.good), "bad", ghbot.ShortSHA(r.bad))
		return nil
	}
	id := store.ConfigID(head)
	good, _, err := rs.s.Get(ctx, r.good, id)
	if err != nil {
		return fmt.Errorf("the last good commit's results: %w", err)
	}
	s := &botSteps{j: j, rs: rs, cfg: cfg, cells: r.cells, good: r.good, goodFile: good,
		hist: j.history(ctx, rs, good, r.good), pooled: map[string][]*results.File{}}
	if err := s.prepare(); err != nil {
		return err
	}
	bc := bisect.Config{Good: r.good, Commits: commits, Cells: r.cells, Runners: 2,
		Budget: bisect.Budget{Steps: j.cfg.Bisect.Steps, GPUTime: j.cfg.Bisect.Budget}}
	if bad, _, err := rs.s.Get(ctx, r.bad, id); err == nil {
		// The stored results of the first bad commit give the range's whole change.
		if m, err := s.compare([]*results.File{bad}, 1); err == nil && m.Change != nil {
			bc.Total = m.Change
		}
	}
	j.log.Info("bisect: measuring the range of the change point", "good", ghbot.ShortSHA(r.good), "bad", ghbot.ShortSHA(r.bad), "commits", len(commits), "cells", strings.Join(r.cells, ","))
	res, err := bisect.Run(ctx, bc, s.step)
	if err != nil {
		return err
	}
	j.log.Info("bisect: " + res.Statement)
	j.postBisect(ctx, c, id, res)
	return nil
}

// botSteps measures a bisection's commits in the push's job: each commit checked out, built and
// measured as the job measures (Deps.Measure), the named cells only, and compared with the
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
	dir := filepath.Join(os.TempDir(), "speedmatrix-bisect-"+sha[:12])
	if t := j.a.Getenv("RUNNER_TEMP"); t != "" {
		dir = filepath.Join(t, "speedmatrix-bisect-"+sha[:12])
	}
	checkout := j.d.CheckoutBase
	if checkout == nil {
		checkout = GitWorktree
	}
	remove, err := checkout(ctx, s.src, sha, dir)
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
	err = j.d.Measure(ctx, cfg)
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
	th := s.j.cfg.Thresholds()
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
func (j *job) postBisect(ctx context.Context, c *ghbot.Client, id string, res *bisect.Result) {
	body := bisectComment(res, j.runURL)
	issue, _, open, err := c.FindOpenIssue(ctx, j.repo, changePointLabel, changePointConfigMarker(id))
	if err != nil {
		j.log.Warn("bisect: the change-point issue", "err", err)
	}
	if open {
		if _, err := c.Reply(ctx, j.repo, issue, body); err != nil {
			j.log.Warn("bisect: commenting on the change-point issue", "issue", issue, "err", err)
		}
	}
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

// bisectComment is the change-point issue's comment: what was found, then each step's evidence.
func bisectComment(res *bisect.Result, runURL string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n**Bisect** of %s..%s on %s: %s\n\n", bisectMarker, code(ghbot.ShortSHA(res.Good)), code(ghbot.ShortSHA(res.Bad)),
		code(strings.Join(res.Cells, ",")), res.Statement)
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
