// Package paired measures the steps of a bisection on one machine: each commit a step asks for
// is checked out of the engine's clone (a git worktree), built and served paired with its base
// (measure.Run with paired ABBA blocks) on the named cells only, and decided with the
// comparison's own rules (bisect.StepVerdict). A commit that does not build or serve is skipped.
//
// It is the StepFunc of `speedmatrix bisect`; the search itself is package bisect's, and it
// must not parse flags.
package paired

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/speedmatrix/speedmatrix/bisect"
	"github.com/speedmatrix/speedmatrix/compare"
	"github.com/speedmatrix/speedmatrix/config"
	"github.com/speedmatrix/speedmatrix/ghbot"
	"github.com/speedmatrix/speedmatrix/internal/usage"
	"github.com/speedmatrix/speedmatrix/measure"
	"github.com/speedmatrix/speedmatrix/results"
)

// Git runs git in an engine's clone (its directory).
type Git string

// Run runs git with args in the clone and returns its trimmed output; a failure says the command and git's stderr.
func (g Git) Run(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = string(g)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git %s in %s: %s (%w)", strings.Join(args, " "), string(g), strings.TrimSpace(stderr.String()), err)
	}
	return strings.TrimSpace(string(out)), nil
}

// RevParse returns the commit rev names in the clone.
func (g Git) RevParse(ctx context.Context, rev string) (string, error) {
	return g.Run(ctx, "rev-parse", "--verify", "--end-of-options", rev+"^{commit}")
}

// FirstParent returns good..bad along bad's first parents, oldest first.
func (g Git) FirstParent(ctx context.Context, good, bad string) ([]string, error) {
	out, err := g.Run(ctx, "rev-list", "--first-parent", "--reverse", good+".."+bad, "--")
	if err != nil {
		return nil, err
	}
	return strings.Fields(out), nil
}

// New returns the steps of a bisection of the clone git: each commit built from a worktree of
// it under work and served paired with its base (base's engine section, blocks a side), measuring
// only cells (parsed cell ids).
func New(deps measure.Deps, git Git, work string, blocks int, base measure.Settings, cells []string) *Steps {
	return &Steps{deps: deps, git: git, work: work, blocks: blocks, base: base, cells: cells, checkouts: map[string]string{}, files: map[string][2][]*results.File{}}
}

// Range returns the commits goodRev and badRev name in the clone and the first-parent line
// good..bad, oldest first, which ends at bad; a revision the clone cannot resolve, or a bad
// commit that is not a first-parent descendant of the good one, is a *usage.Error (--good,
// --bad).
func (g Git) Range(ctx context.Context, goodRev, badRev string) (good, bad string, commits []string, err error) {
	if good, err = g.RevParse(ctx, goodRev); err != nil {
		return "", "", nil, usage.Errorf("--good: %v", err)
	}
	if bad, err = g.RevParse(ctx, badRev); err != nil {
		return "", "", nil, usage.Errorf("--bad: %v", err)
	}
	if commits, err = g.FirstParent(ctx, good, bad); err != nil {
		return "", "", nil, err
	}
	if len(commits) == 0 || commits[len(commits)-1] != bad {
		return "", "", nil, usage.Errorf("--good %s --bad %s: the bad commit is not a first-parent descendant of the good one", goodRev, badRev)
	}
	return good, bad, commits, nil
}

// Steps measures a bisection's commits, each paired with its base on one machine.
type Steps struct {
	deps   measure.Deps
	git    Git
	work   string // the folder of the checkouts (src/) and the results files
	blocks int    // paired blocks a side in each step
	base   measure.Settings
	cells  []string

	mu        sync.Mutex
	checkouts map[string]string
	// files are each search's paired runs of a commit: the base's files and the commit's.
	files map[string][2][]*results.File
}

// checkout returns a worktree of the engine's clone at commit c, made once.
func (p *Steps) checkout(ctx context.Context, c string) (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if dir, ok := p.checkouts[c]; ok {
		return dir, nil
	}
	dir, err := filepath.Abs(filepath.Join(p.work, "src", ghbot.ShortSHA(c)))
	if err != nil {
		return "", err
	}
	if _, err := p.git.Run(ctx, "worktree", "add", "--force", "--detach", dir, c); err != nil {
		return "", err
	}
	p.checkouts[c] = dir
	return dir, nil
}

// Cleanup removes the worktrees.
func (p *Steps) Cleanup(ctx context.Context) {
	for _, dir := range p.checkouts {
		if _, err := p.git.Run(ctx, "worktree", "remove", "--force", dir); err != nil {
			p.deps.Log.Warn("bisect: could not remove a checkout", "dir", dir, "err", err)
		}
	}
}

// Step is the bisect.StepFunc: every commit of req measured at once, one goroutine each.
func (p *Steps) Step(ctx context.Context, req bisect.Request) ([]bisect.Measurement, error) {
	out := make([]bisect.Measurement, len(req.Commits))
	errs := make([]error, len(req.Commits))
	var wg sync.WaitGroup
	for i, c := range req.Commits {
		wg.Go(func() { out[i], errs[i] = p.measure(ctx, req.Base, c, req.Search, req.Attempt[c]) })
	}
	wg.Wait()
	return out, errors.Join(errs...)
}

// measure runs one paired run of commit c against base on the named cells and decides it.
func (p *Steps) measure(ctx context.Context, base, c string, search, attempt int) (bisect.Measurement, error) {
	m := bisect.Measurement{Commit: c}
	baseDir, err := p.checkout(ctx, base)
	if err != nil {
		return m, err
	}
	headDir, err := p.checkout(ctx, c)
	if err != nil {
		return m, err
	}
	o := p.base
	o.Cells = p.cells
	o.Quiet = true
	o.Engine.Source, o.Engine.Commit = headDir, c
	o.Paired.Enabled, o.Paired.Blocks, o.Paired.BaseSource, o.Paired.BaseURL = true, p.blocks, baseDir, ""
	if o.Paired.Scheme == "" {
		o.Paired.Scheme = config.PairedABBA
	}
	o.Output = filepath.Join(p.work, fmt.Sprintf("%s-%s-%d-%d.json", ghbot.ShortSHA(base), ghbot.ShortSHA(c), search, attempt))
	o.Paired.BaseOutput = ""
	start := time.Now()
	err = measure.Run(ctx, o, p.deps)
	m.GPUTime = time.Since(start)
	if err != nil {
		if ctx.Err() != nil {
			return m, ctx.Err()
		}
		msg := err.Error()
		if measure.EngineFailed(err) {
			m.Verdict, m.Reason = bisect.Skip, firstLine(msg)
			p.deps.Log.Warn("bisect: skipping a commit that did not build or serve", "commit", ghbot.ShortSHA(c), "err", firstLine(msg))
			return m, nil
		}
		return m, fmt.Errorf("bisect: measuring %s against %s: %w", ghbot.ShortSHA(c), ghbot.ShortSHA(base), err)
	}
	bf, err := results.ReadFile(measure.BaseOutputPath(o))
	if err != nil {
		return m, err
	}
	hf, err := results.ReadFile(o.Output)
	if err != nil {
		return m, err
	}
	p.mu.Lock()
	key := fmt.Sprintf("%s|%d|%s", base, search, c)
	sides := p.files[key]
	sides[0], sides[1] = append(sides[0], bf), append(sides[1], hf)
	p.files[key] = sides
	p.mu.Unlock()
	ids, err := results.ParseCells(p.cells)
	if err != nil {
		return m, fmt.Errorf("bisect: %w", err)
	}
	th := compare.DefaultThresholds()
	th.Look = min(2, len(sides[1]))
	cmp, err := compare.Compare(compare.Input{Base: sides[0], Head: sides[1], Cells: ids}, th)
	if err != nil {
		return m, fmt.Errorf("bisect: comparing %s with %s: %w", ghbot.ShortSHA(c), ghbot.ShortSHA(base), err)
	}
	v := bisect.StepVerdict(cmp, p.cells)
	v.Commit, v.GPUTime = c, m.GPUTime
	p.deps.Log.Info("bisect step", "commit", ghbot.ShortSHA(c), "base", ghbot.ShortSHA(base), "attempt", attempt, "verdict", v.Verdict, "change", v.Change.Text())
	return v, nil
}

// firstLine returns s up to its first newline.
func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
