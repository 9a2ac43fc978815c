package action

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/speedmatrix/speedmatrix/config"
	"github.com/speedmatrix/speedmatrix/ghbot"
	"github.com/speedmatrix/speedmatrix/internal/numfmt"
	"github.com/speedmatrix/speedmatrix/internal/textout"
	"github.com/speedmatrix/speedmatrix/measure"
	"github.com/speedmatrix/speedmatrix/results"
	"github.com/speedmatrix/speedmatrix/store"
)

// Files of a paired run in the artifact directory: each side of `run --paired`, and, when the
// paired run followed a first comparison with the stored baseline, that comparison.
const (
	artifactPairedHead      = "paired-head.json"
	artifactPairedBase      = "paired-base.json"
	artifactFirstComparison = "comparison.first.json"
)

// pairedInfo is what the comment and the check say about a paired run.
type pairedInfo struct {
	// Why says why the run is paired (a command, paired.mode, what the store lacked).
	Why string
	// BaseSHA is the commit built and served as the base (the merge-base).
	BaseSHA string
	// Cells are the cells measured paired; empty for the whole matrix.
	Cells []string
	// Scheme and Blocks are the paired run's (results.Pairing).
	Scheme string
	Blocks int
	// Head and Base are the GPU time of each side's build (nil when not recorded).
	Head, Base *results.GPUTime
	// First is the comparison with the stored baseline that left Cells undecided (rule 3 of
	// pairedBefore's doc); nil when the run was paired from the start.
	First *results.Comparison
	// Choice is, in a job with a budget, the cells the budget afforded and what they were
	// expected to cost (pairedcells.go); nil without a budget, or when cells were named.
	Choice *PairedChoice
	// Budget is the job's budget (wall time), 0 when none: the GPU time is stated against it.
	Budget time.Duration
}

// pairedBefore decides, before anything is measured, whether a pull request's run is paired —
// the base built from the merge-base and served on this runner alternately with the head (ABBA
// blocks, `run --paired`) instead of compared with the stored baseline — and returns why ("" for
// not) and the base commit to build. The rule:
//
//  1. `/bench paired` by a maintainer (plan.Paired; or `/bench rerun` after a paired comparison
//     at the same head), the measure mode's input paired (the decide job applied this rule), or
//     paired.mode always (or paired.enabled, run's switch): paired.
//  2. paired.mode auto, with a store: paired when the stored baseline cannot decide — the store
//     holds no default-branch result, none at the merge-base itself (an older one would count
//     the commits between as the change), or fewer than store.min_history results of the config
//     (too few for the run-to-run noise; default store.DefaultMinHistory). The config is the
//     newest stored default-branch result's, as for the A/A decision (the head's is not known
//     before it is measured). Never where the head is its own merge-base (a commit of the base
//     branch itself): a paired run would measure it against itself.
//  3. paired.mode auto, after a first comparison with the stored baseline: the cells it left
//     slower or inconclusive are measured paired, and that paired comparison is the verdict
//     (pairedAfter) — except in a job with a budget, whose adaptive reruns are how it decides
//     within the budget (a paired run would go past it).
//
// Without a store (the measure mode, which holds no token) rule 2 is the decide job's.
func (j *job) pairedBefore(ctx context.Context, rs resultStore, p plan) (why, base string) {
	if p.Kind == ghbot.RunBaseline {
		return "", ""
	}
	switch {
	case p.Paired != "":
		return p.Paired, j.mergeBase(ctx, rs, p)
	case j.in.Paired:
		return "the decide job asked for it (input paired)", p.BaseSHA
	case j.cfg.Paired.Mode == config.PairedModeAlways:
		return "paired.mode is always", j.mergeBase(ctx, rs, p)
	case j.cfg.Paired.Enabled:
		return "paired.enabled is true", j.mergeBase(ctx, rs, p)
	case j.cfg.Paired.Mode != config.PairedModeAuto || rs.s == nil:
		return "", ""
	}
	if mb := j.mergeBase(ctx, rs, p); mb != "" && strings.EqualFold(mb, p.HeadSHA) {
		// The head is on the base branch (a dispatch of its tip): the merge-base is the head
		// itself, and a paired run would measure the commit against itself.
		j.log.Info("paired.mode auto: the head is its own merge-base; not paired", "sha", p.HeadSHA)
		return "", ""
	}
	latest, err := rs.s.List(ctx, store.Filter{Kind: store.KindDefault, Limit: 1})
	if err != nil {
		j.log.Warn("paired.mode auto: listing the store; not paired", "err", err)
		return "", ""
	}
	if len(latest) == 0 {
		return "paired.mode is auto and the store holds no default-branch results (no baseline, no history)", j.mergeBase(ctx, rs, p)
	}
	id := latest[0].ConfigID
	if rs.commits != nil {
		b, err := store.Resolve(ctx, rs.commits, rs.s, store.Query{ConfigID: id, Head: p.HeadSHA, Base: j.baseRef(p)})
		switch {
		case err != nil:
			j.log.Warn("paired.mode auto: resolving the baseline; not paired", "err", err)
			return "", ""
		case !b.Found():
			return "paired.mode is auto and the store has no baseline: " + b.Reason, orSHA(b.MergeBase, p.BaseSHA)
		case b.Distance > 0:
			return fmt.Sprintf("paired.mode is auto and the merge-base %s has no stored results (the nearest are %d %s before it)",
				code(ghbot.ShortSHA(b.MergeBase)), b.Distance, textout.Pick(b.Distance, "commit", "commits")), b.MergeBase
		}
		base = b.MergeBase
	}
	entries, err := rs.s.List(ctx, store.Filter{ConfigID: id, Kind: store.KindDefault})
	if err != nil {
		j.log.Warn("paired.mode auto: listing the history; not paired", "err", err)
		return "", ""
	}
	n := 0
	for _, e := range entries {
		if e.Commit != p.HeadSHA {
			n++
		}
	}
	if min := j.minHistory(); n < min {
		return fmt.Sprintf("paired.mode is auto and the store holds %d default-branch %s of this config, fewer than store.min_history (%d)",
			n, textout.Pick(n, "result", "results"), min), orSHA(base, p.BaseSHA)
	}
	return "", ""
}

// minHistory is store.min_history, or the store's default.
func (j *job) minHistory() int {
	if n := j.cfg.Store.MinHistory; n > 0 {
		return n
	}
	return store.DefaultMinHistory
}

// baseRef is what the merge-base is taken with: the PR's base commit, else the default branch.
func (j *job) baseRef(p plan) string {
	if p.BaseSHA != "" {
		return p.BaseSHA
	}
	return j.repo.DefaultBranch
}

// mergeBase returns the merge-base of the plan's head and base from the store's commit graph,
// else the plan's base commit.
func (j *job) mergeBase(ctx context.Context, rs resultStore, p plan) string {
	if rs.commits == nil || j.baseRef(p) == "" {
		return p.BaseSHA
	}
	mb, err := rs.commits.MergeBase(ctx, j.baseRef(p), p.HeadSHA)
	if err != nil || !ghbot.ValidSHA(mb) {
		j.log.Warn("paired: the merge-base is unknown; building the pull request's base commit", "err", err, "base", p.BaseSHA)
		return p.BaseSHA
	}
	return mb
}

func orSHA(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// pairedAfter is rule 3 of pairedBefore: with paired.mode auto, the cells the first comparison
// with the stored baseline left slower or inconclusive are measured paired, and the paired
// comparison of those cells becomes the outcome (the first is kept in the artifacts as
// comparison.first.json, and a warning says what it decided of the other cells). A paired run
// that fails leaves the first comparison, with a warning; a cancelled one returns the error.
func (j *job) pairedAfter(ctx context.Context, rs resultStore, cfg config.Config, p plan, out outcome) (outcome, error) {
	if j.cfg.Paired.Mode != config.PairedModeAuto || out.Comparison == nil || out.Paired != nil {
		return out, nil
	}
	if cfg.Budget > 0 {
		j.log.Info("paired.mode auto: a job with a budget decides with its adaptive reruns; no paired run after the first comparison", "budget", cfg.Budget)
		return out, nil
	}
	cells, why := pairedCells(out.Comparison)
	if len(cells) == 0 {
		return out, nil
	}
	if err := copyFile(out.ComparisonPath, filepath.Join(j.in.ArtifactDir, artifactFirstComparison)); err != nil {
		j.log.Warn("keeping the first comparison in the artifacts", "err", err)
	}
	info := pairedInfo{Why: why, BaseSHA: j.mergeBase(ctx, rs, p), Cells: cells, First: out.Comparison}
	j.log.Info("paired run of the cells the stored baseline did not decide", "cells", strings.Join(cells, ","), "base", info.BaseSHA)
	po, err := j.measurePaired(ctx, cfg, p, info)
	if err != nil {
		if ctx.Err() != nil {
			return out, err
		}
		j.log.Warn("the paired run failed; the comparison with the stored baseline stands", "err", err)
		out.Comparison.Warnings = append(out.Comparison.Warnings, "A paired run of the undecided cells (paired.mode auto) failed: "+code(firstLine(err.Error())))
		return out, nil
	}
	if po.Comparison == nil {
		return out, nil
	}
	var other []string
	for _, v := range []results.Verdict{results.VerdictImprovement, results.VerdictUnchanged, results.VerdictNotComparable} {
		if n := len(cellsWith(out.Comparison, v)); n > 0 {
			other = append(other, fmt.Sprintf("%d %s", n, strings.ReplaceAll(string(v), "_", " ")))
		}
	}
	if len(other) > 0 {
		po.Comparison.Warnings = append(po.Comparison.Warnings, fmt.Sprintf("The comparison with the stored baseline decided the other cells (%s): %s in the run's artifacts.",
			strings.Join(other, ", "), artifactFirstComparison))
		if err := results.WriteComparisonFile(po.ComparisonPath, po.Comparison); err != nil {
			return po, fmt.Errorf("write the comparison: %w", err)
		}
	}
	po.ResultsPath = out.ResultsPath
	return po, nil
}

// pairedCells returns the cells of c a paired run after it measures — the slower, the unproven
// (a slowdown only the prior bounds: what a paired run is for) and the inconclusive — and why.
func pairedCells(c *results.Comparison) (cells []string, why string) {
	slower := cellsWith(c, results.VerdictRegression)
	unproven := cellsWith(c, results.VerdictUnproven)
	undecided := cellsWith(c, results.VerdictInconclusive)
	cells = append(append(append([]string{}, slower...), unproven...), undecided...)
	why = fmt.Sprintf("paired.mode is auto and the comparison with the stored baseline left %d %s slower and %d inconclusive",
		len(slower), textout.Pick(len(slower), "cell", "cells"), len(undecided))
	if len(unproven) > 0 {
		why = fmt.Sprintf("paired.mode is auto and the comparison with the stored baseline left %d %s slower, %d unproven (a slowdown only the prior bounds) and %d inconclusive",
			len(slower), textout.Pick(len(slower), "cell", "cells"), len(unproven), len(undecided))
	}
	return cells, why
}

// measurePaired measures the plan's head and the base commit info.BaseSHA alternately in blocks
// through measure.Run with paired enabled (the code path of `speedmatrix run --paired`, paired.*
// of the configuration: blocks, scheme), the base built from a checkout of that commit
// (paired.base_source, else a git worktree of engine.source made here) where the engine is
// built and served, and compares the two sides (compare pairs them). Each side's file goes to the
// artifact directory (paired-head.json, paired-base.json).
func (j *job) measurePaired(ctx context.Context, cfg config.Config, p plan, info pairedInfo) (outcome, error) {
	pc := cfg
	pc.Paired.Enabled, pc.Trials, pc.Budget = true, 1, 0
	if len(info.Cells) > 0 {
		pc.Cells = config.List(info.Cells)
	}
	stem := strings.TrimSuffix(cfg.Output, ".json")
	pc.Output, pc.Paired.BaseOutput = stem+".paired-head.json", stem+".paired-base.json"
	// Each side's commit is set below: the head's would otherwise be recorded for both.
	pc.Engine.Commit = j.cfg.Engine.Commit
	src, cleanup, err := j.baseSource(ctx, cfg, info.BaseSHA)
	if err != nil {
		return outcome{}, err
	}
	defer cleanup()
	pc.Paired.BaseSource = src
	if cfg.Budget > 0 && len(info.Cells) == 0 {
		// The whole matrix, paired, within the budget: the cells it affords (pairedcells.go).
		cc := pc
		cc.Budget = cfg.Budget
		ch, err := ChoosePairedCells(cc, j.priceCells)
		if err != nil {
			return outcome{}, err
		}
		pc.Paired.Blocks = ch.Blocks
		if !ch.Whole {
			info.Cells = ch.Cells
			pc.Cells = config.List(ch.Cells)
		}
		info.Choice = &ch
		j.log.Info("paired run within the budget", "choice", ch.Line(), "cells", strings.Join(ch.Cells, ","))
	} else if err := j.fitPairedBlocks(&pc, cfg.Budget); err != nil {
		return outcome{}, err
	}
	j.log.Info("measuring paired", "head", p.HeadSHA, "base", info.BaseSHA, "blocks", pc.Paired.Blocks, "scheme", pc.Paired.Scheme, "cells", strings.Join(info.Cells, ","))
	if err := j.measure(ctx, pc); err != nil {
		return outcome{}, fmt.Errorf("paired run of %s and its base %s: %w", ghbot.ShortSHA(p.HeadSHA), ghbot.ShortSHA(info.BaseSHA), err)
	}
	var sides [2]*results.File
	for i, s := range []struct{ path, sha, artifact string }{
		{pc.Output, p.HeadSHA, artifactPairedHead}, {pc.Paired.BaseOutput, info.BaseSHA, artifactPairedBase},
	} {
		f, err := results.ReadFile(s.path)
		if err != nil {
			return outcome{}, fmt.Errorf("read the paired run's results: %w", err)
		}
		if f.Engine.Commit == "" {
			f.Engine.Commit = s.sha
			if err := results.WriteFile(s.path, f); err != nil {
				return outcome{}, err
			}
		}
		if err := copyFile(s.path, filepath.Join(j.in.ArtifactDir, s.artifact)); err != nil {
			return outcome{}, fmt.Errorf("copy the paired run's results to the artifact directory: %w", err)
		}
		sides[i] = f
	}
	head, base := sides[0], sides[1]
	if pr := head.Run.Pairing; pr != nil {
		info.Scheme, info.Blocks = pr.Scheme, pr.Blocks
	}
	info.Head, info.Base = head.Run.GPUTime, base.Run.GPUTime
	out, err := j.compareWithHistory(outcome{Head: head, ResultsPath: pc.Output}, base, nil, nil, info.Cells)
	if err != nil {
		return out, err
	}
	out.Paired = &info
	if out.Comparison != nil {
		// The report mode reads no baseline from an artifact but this one, which is the point of
		// a paired run: say whose job measured it.
		out.Comparison.Warnings = append(out.Comparison.Warnings, "The base was measured by the pull request's own measuring job (a paired run, base and head served alternately on one runner), not taken from the store: this comparison is only as trustworthy as that job.")
		info.Budget = head.WallTime(cfg.Budget)
		out.Comparison.GPUTime = pairedGPUTime(info.Head, info.Base, info.Budget)
		if err := results.WriteComparisonFile(out.ComparisonPath, out.Comparison); err != nil {
			return out, fmt.Errorf("write the comparison: %w", err)
		}
	}
	return out, nil
}

// priceCells returns the cells of cfg's plan and their expected time (measure.PriceCells),
// each cell once.
func (j *job) priceCells(cfg config.Config) ([]string, time.Duration, error) {
	cells, d, err := measure.PriceCells(cfg)
	if err != nil {
		return nil, 0, err
	}
	var out []string
	for _, c := range cells {
		if c != "" && !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out, d, nil
}

// pairedGPUTime is the GPU time of both sides of a paired run together, against the job's
// budget (wall time; 0 for none); nil when neither side recorded one.
func pairedGPUTime(head, base *results.GPUTime, budget time.Duration) *results.GPUTime {
	if head == nil && base == nil {
		return nil
	}
	var g results.GPUTime
	g.Add(head)
	g.Add(base)
	g.BudgetSeconds = budget.Seconds()
	return &g
}

// baseSource returns the checkout of the base commit that a paired run builds and serves like
// engine.source: paired.base_source when the configuration names one; nothing where nothing is
// built (the built-in simulators, or base_url and url); else a git worktree of engine.source
// (default: the workspace) at sha, fetched from origin when the checkout lacks it (a shallow
// clone), removed by cleanup.
func (j *job) baseSource(ctx context.Context, cfg config.Config, sha string) (string, func(), error) {
	none := func() {}
	switch {
	case cfg.Paired.BaseSource != "":
		return cfg.Paired.BaseSource, none, nil
	case cfg.Paired.BaseURL != "" && cfg.URL != "":
		return "", none, nil
	case cfg.URL != "":
		return "", none, errors.New("a paired run needs the base served too: url names one server; set paired.base_url, or measure with engine.serve so that the base is built from the merge-base")
	case cfg.Engine.Serve == nil:
		return "", none, nil // two built-in simulators
	case !ghbot.ValidSHA(sha):
		return "", none, fmt.Errorf("a paired run builds the base commit, but it is unknown (%q): pass the decide job's base-sha output as the base-sha input", sha)
	}
	src := cfg.Engine.Source
	if src == "" {
		src = "."
	}
	dir := j.checkoutDir("base", sha)
	j.log.Info("paired: checking out the base commit", "sha", sha, "source", src, "dir", dir)
	remove, err := j.checkout()(ctx, src, sha, dir)
	if err != nil {
		return "", none, fmt.Errorf("check out the base commit %s for the paired run: %w", ghbot.ShortSHA(sha), err)
	}
	return dir, func() {
		if err := remove(); err != nil {
			j.log.Warn("removing the base checkout", "dir", dir, "err", err)
		}
	}, nil
}

// GitWorktree checks out sha of the git checkout src into dir as a detached worktree, fetching
// the commit from origin first when src lacks it (a shallow clone); remove deletes the worktree.
func GitWorktree(ctx context.Context, src, sha, dir string) (remove func() error, err error) {
	git := func(ctx context.Context, args ...string) error {
		cmd := exec.CommandContext(ctx, "git", append([]string{"-C", src}, args...)...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			return fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, bytes.TrimSpace(out))
		}
		return nil
	}
	if git(ctx, "cat-file", "-e", sha+"^{commit}") != nil {
		if err := git(ctx, "fetch", "--no-tags", "--depth=1", "origin", sha); err != nil {
			return nil, fmt.Errorf("the checkout %s lacks the commit and fetching it failed: %w", src, err)
		}
	}
	if err := os.RemoveAll(dir); err != nil {
		return nil, err
	}
	_ = git(ctx, "worktree", "prune")
	if err := git(ctx, "worktree", "add", "--detach", "--force", dir, sha); err != nil {
		return nil, err
	}
	return func() error { return git(context.WithoutCancel(ctx), "worktree", "remove", "--force", dir) }, nil
}

// pairedLine says, for the comment and the check, that the comparison is paired, how, why, and
// the GPU time of each side's build.
func pairedLine(info *pairedInfo) string {
	var b strings.Builder
	scheme := orDash(info.Scheme)
	fmt.Fprintf(&b, "**Paired A/B** (%s, %d %s per side): the base %s (the merge-base) was built on this runner too and served alternately with the head, so that drift cancels",
		scheme, info.Blocks, textout.Pick(info.Blocks, "block", "blocks"), code(orDash(ghbot.ShortSHA(info.BaseSHA))))
	if len(info.Cells) > 0 {
		fmt.Fprintf(&b, "; cells %s", code(strings.Join(info.Cells, ",")))
	}
	fmt.Fprintf(&b, ". Why: %s.", info.Why)
	if info.Choice != nil {
		b.WriteString(" Cells: " + info.Choice.Line() + ".")
	}
	if info.Head != nil || info.Base != nil {
		b.WriteString(" GPU time: head " + gpuSide(info.Head) + "; base " + gpuSide(info.Base))
		if g := pairedGPUTime(info.Head, info.Base, 0); g != nil {
			b.WriteString("; together " + seconds(g.TotalSeconds))
			if info.Budget > 0 {
				b.WriteString(" of a " + seconds(info.Budget.Seconds()) + " budget")
			}
		}
		b.WriteString(".")
	}
	return b.String()
}

// gpuSide formats one side's GPU time by phase.
func gpuSide(g *results.GPUTime) string {
	if g == nil {
		return "not recorded"
	}
	return fmt.Sprintf("%s (build %s, load %s, measuring %s)", seconds(g.TotalSeconds), seconds(g.BuildSeconds), seconds(g.LoadSeconds), seconds(g.MeasureSeconds))
}

// seconds formats a duration in seconds for the comment.
func seconds(s float64) string {
	if s < 60 {
		return numfmt.Fixed(s, 1) + " s"
	}
	return numfmt.Fixed(s/60, 1) + " min"
}

// measuringPaired says on the measuring page of a run asked to be paired that it is.
func measuringPaired(r page, p plan, in renderInput) page {
	if !in.Measuring || p.Paired == "" {
		return r
	}
	line := "**Paired A/B** (ABBA): the base (the merge-base) is built on this runner too and served alternately with the head. Why: " + p.Paired + "."
	r.body, r.summary, r.full = afterFirstLine(r.body, line), afterFirstLine(r.summary, line), afterFirstLine(r.full, line)
	return r
}

// withPaired adds the paired line to a rendered page (after its headline) and says so in the
// check's title.
func withPaired(r page, info *pairedInfo) page {
	if info == nil {
		return r
	}
	line := pairedLine(info)
	r.body, r.summary, r.full = afterFirstLine(r.body, line), afterFirstLine(r.summary, line), afterFirstLine(r.full, line)
	r.title += " (paired A/B, " + orDash(info.Scheme) + ")"
	return r
}

// pairedFirst is a run paired from the start (pairedBefore): the paired run, its head kept as the
// run's results (results.json, and the store's result of the PR) and compared with its base.
func (j *job) pairedFirst(ctx context.Context, c *ghbot.Client, cfg config.Config, p plan, info pairedInfo) (outcome, error) {
	j.log.Info("paired run", "why", info.Why, "base", info.BaseSHA)
	out, err := j.measurePaired(ctx, cfg, p, info)
	if err != nil {
		return out, err
	}
	if err := copyFile(out.ResultsPath, filepath.Join(j.in.ArtifactDir, artifactResults)); err != nil {
		return out, fmt.Errorf("copy the results to the artifact directory: %w", err)
	}
	if p.PR > 0 {
		j.putPR(ctx, j.openStore(c), p, "", out.Head) // its base was measured in the run, not taken from the store
	}
	return out, nil
}

// pairedFallback reports whether a paired run that failed with err is followed by the head's
// measurement alone: only when paired.mode asked for it (a maintainer's command, or the decide
// job's input, fails with the reason) and the job was not cancelled.
func (j *job) pairedFallback(ctx context.Context, p plan, err error) bool {
	if p.Paired != "" || j.in.Paired || ctx.Err() != nil {
		return false
	}
	j.log.Warn("the paired run failed; measuring the head alone and comparing with the stored baseline", "err", err)
	return true
}

// decidePaired is the decide mode's part of pairedBefore: it sets the output paired, and
// returns the base commit the measuring job is to check out (the merge-base when paired).
func (j *job) decidePaired(ctx context.Context, c *ghbot.Client, p plan) string {
	if j.in.Shards > 0 {
		// Shards measure on several runners: no runner serves both sides (a /bench paired was
		// refused before this; paired.mode measures unpaired).
		j.setOutput("paired", "false")
		return p.BaseSHA
	}
	why, base := j.pairedBefore(ctx, j.openStore(c), p)
	j.setOutput("paired", fmt.Sprint(why != ""))
	if why == "" {
		return p.BaseSHA
	}
	j.log.Info("the measuring job is to run paired", "why", why, "base", base)
	if ghbot.ValidSHA(base) {
		return base
	}
	return p.BaseSHA
}

// reportPaired is the report mode's paired comparison: when the artifact holds both sides of
// one paired run (paired-head.json, paired-base.json) of the pinned head, it compares them
// under this configuration; nil when the artifact holds no paired run. The files are untrusted
// data: read with results.ReadFile, checked to be the two sides of one paired run, the head's
// commit the pinned one and the base's the base-sha input when both are known. (The measuring
// job runs the pull request's code, so it could write any head results already; measuring the
// base there too adds no way to fake a verdict that results.json alone did not give.)
func (j *job) reportPaired(p plan, first outcome) (*outcome, error) {
	hp, bp := filepath.Join(j.in.ArtifactDir, artifactPairedHead), filepath.Join(j.in.ArtifactDir, artifactPairedBase)
	if p.Kind == ghbot.RunBaseline || !fileExists(hp) || !fileExists(bp) {
		return nil, nil
	}
	head, err := readArtifactResults(hp)
	if err != nil {
		return nil, fmt.Errorf("mode report: the artifact's %s: %w", artifactPairedHead, err)
	}
	base, err := readArtifactResults(bp)
	if err != nil {
		return nil, fmt.Errorf("mode report: the artifact's %s: %w", artifactPairedBase, err)
	}
	hpr, bpr := head.Run.Pairing, base.Run.Pairing
	switch {
	case hpr == nil || bpr == nil || hpr.ID != bpr.ID || hpr.Side != "head" || bpr.Side != "base":
		return nil, fmt.Errorf("mode report: %s and %s are not the head and base of one paired run; nothing posted", artifactPairedHead, artifactPairedBase)
	case head.Engine.Commit != "" && !strings.EqualFold(head.Engine.Commit, p.HeadSHA):
		return nil, fmt.Errorf("mode report: %s measured %s, not the pinned head %s; nothing posted", artifactPairedHead, ghbot.ShortSHA(head.Engine.Commit), ghbot.ShortSHA(p.HeadSHA))
	case p.BaseSHA != "" && base.Engine.Commit != "" && !strings.EqualFold(base.Engine.Commit, p.BaseSHA):
		return nil, fmt.Errorf("mode report: %s measured %s, not the base %s the decide job named (base-sha); nothing posted", artifactPairedBase, ghbot.ShortSHA(base.Engine.Commit), ghbot.ShortSHA(p.BaseSHA))
	}
	info := pairedInfo{Why: "the measuring job ran paired", Scheme: hpr.Scheme, Blocks: hpr.Blocks, Head: head.Run.GPUTime, Base: base.Run.GPUTime, Cells: p.Cells}
	if ghbot.ValidSHA(base.Engine.Commit) {
		info.BaseSHA = base.Engine.Commit
	}
	if len(p.Cells) == 0 && j.cfg.Budget > 0 {
		// The measuring job chose the cells the budget affords (measurePaired): say which, and
		// by what rule when this configuration makes the same choice.
		info.Budget = head.WallTime(j.cfg.Budget)
		measured := fileCells(head)
		pc := j.cfg
		pc.Trials = 1
		if ch, err := ChoosePairedCells(pc, j.priceCells); err == nil && !ch.Whole && slices.Equal(sortedCopy(ch.Cells), sortedCopy(measured)) {
			info.Choice, info.Cells = &ch, ch.Cells
		} else if err == nil && !ch.Whole {
			info.Cells = measured
		}
	}
	out, err := j.compareWithHistory(outcome{Head: head, ResultsPath: first.ResultsPath}, base, nil, nil, p.Cells)
	if err != nil {
		return nil, err
	}
	out.Paired = &info
	if out.Comparison != nil {
		out.Comparison.GPUTime = pairedGPUTime(info.Head, info.Base, info.Budget)
		if err := results.WriteComparisonFile(out.ComparisonPath, out.Comparison); err != nil {
			return nil, fmt.Errorf("write the comparison: %w", err)
		}
	}
	return &out, nil
}

// fitPairedBlocks lowers the paired run's blocks per side to what the job's budget affords:
// each block measures the run's cells once on one side, for the time `speedmatrix plan` expects
// of them (windows, readiness, prefill; not the model loads), so 2 × blocks of it must fit. A
// paired run needs 2 blocks a side (pairs to estimate the noise from): when the budget affords
// fewer, it is refused with what it would cost (paired.mode then measures the head alone; a
// /bench paired fails with the reason). No budget, or no way to price the cells: unchanged.
func (j *job) fitPairedBlocks(pc *config.Config, budget time.Duration) error {
	if budget <= 0 {
		return nil
	}
	jobs, err := j.planShards(*pc, 1)
	return fitBlocks(j.log, pc, budget, jobs, err)
}

// fitBlocks is fitPairedBlocks once the cells are priced: jobs is their plan in one shard, err
// why they could not be.
func fitBlocks(log *slog.Logger, pc *config.Config, budget time.Duration, jobs []measure.ShardJob, err error) error {
	if err != nil || len(jobs) != 1 || jobs[0].ExpectedMinutes <= 0 {
		log.Warn("paired run within the budget: the cells could not be priced; blocks unchanged", "err", err)
		return nil
	}
	block := time.Duration(jobs[0].ExpectedMinutes * float64(time.Minute))
	afford := int(budget / (2 * block))
	switch {
	case afford < 2:
		return fmt.Errorf("a paired run needs at least 2 blocks a side, about %v of GPU time (4 × %v for the cells, model loads not counted), more than the budget %v: raise budget, or name fewer cells (/bench paired CELLS)",
			(4 * block).Round(time.Minute), block.Round(time.Second), budget)
	case afford < pc.Paired.Blocks:
		log.Warn("paired run: fewer blocks a side to fit the budget", "blocks", afford, "configured", pc.Paired.Blocks, "budget", budget, "per_block_per_side", block.Round(time.Second))
		pc.Paired.Blocks = afford
	}
	return nil
}

// fileCells returns the cells a results file holds (prefill and decode, measured or not).
func fileCells(f *results.File) []string {
	var out []string
	for i := range f.Prefill {
		out = append(out, f.Prefill[i].ID().String())
	}
	for i := range f.Decode {
		out = append(out, f.Decode[i].ID().String())
	}
	return out
}

// sortedCopy returns a sorted copy of s.
func sortedCopy(s []string) []string {
	c := slices.Clone(s)
	slices.Sort(c)
	return c
}
