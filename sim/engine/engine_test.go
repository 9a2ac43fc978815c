package engine

import (
	"fmt"
	"math"
	"testing"
	"time"

	"gonum.org/v1/gonum/stat/distuv"
)

// testConfig is a small engine: 16-token blocks, no speculative decoding, a flat speed.
func testConfig() Config {
	return Config{
		MaxNumSeqs: 4, MaxNumBatchedTokens: 256, BlockSize: 16, NumBlocks: 64, MaxModelLen: 4096,
		Timing: Timing{
			Prefill: []Point{{X: 1000, Y: 0.1}},
			Decode:  []Point{{X: 1, Y: 0.010}, {X: 8, Y: 0.020}},
		},
		Seed: 1,
	}
}

// prompt returns a request with a prompt of n tokens; equal tags give equal prompts.
func prompt(tag uint64, n, maxTokens int) *Request {
	hashes := make([]uint64, n/16)
	h := HashKey(tag)
	for i := range hashes {
		h = HashKey(h, uint64(i))
		hashes[i] = h
	}
	return &Request{PromptLen: n, Hashes: hashes, MaxTokens: maxTokens, IgnoreEOS: true}
}

// checkInvariants verifies the engine's bookkeeping after a step.
func checkInvariants(t *testing.T, e *Engine) {
	t.Helper()
	p := e.pool
	refs := make([]int32, len(p.ref))
	for _, r := range e.running {
		if got, want := len(r.blocks)*e.cfg.BlockSize, r.computed; got < want {
			t.Fatalf("request %d has KV for %d tokens but %d computed", r.id, got, want)
		}
		for _, b := range r.blocks {
			refs[b]++
		}
	}
	for _, r := range append(e.waiting, e.frontend...) {
		if len(r.blocks) != 0 {
			t.Fatalf("request %d holds blocks while not running", r.id)
		}
	}
	free := 0
	for b := p.head; b >= 0; b = p.next[b] {
		free++
		if p.ref[b] != 0 {
			t.Fatalf("block %d is in the free queue with %d references", b, p.ref[b])
		}
	}
	for b, n := range refs {
		if p.ref[b] != n {
			t.Fatalf("block %d: reference count %d, held by %d requests", b, p.ref[b], n)
		}
	}
	if free != p.nfree || p.used()+p.nfree != len(p.ref) {
		t.Fatalf("free queue has %d blocks, counter says %d", free, p.nfree)
	}
	if p.used() > e.cfg.NumBlocks {
		t.Fatalf("%d blocks in use, capacity %d", p.used(), e.cfg.NumBlocks)
	}
	for h, b := range p.cache {
		if !p.hashed[b] || p.hash[b] != h {
			t.Fatalf("prefix cache entry %x points at block %d that does not hold it", h, b)
		}
	}
	limit := e.cfg.MaxNumSeqs
	if e.cfg.MaxRunning > 0 {
		limit = min(limit, e.cfg.MaxRunning)
	}
	if len(e.running) > limit {
		t.Fatalf("%d requests running, limit %d", len(e.running), limit)
	}
	tokens := 0
	for _, pl := range e.plan {
		if pl.to < 0 {
			tokens += 1 + e.cfg.NumSpecTokens
		} else {
			tokens += pl.to - pl.from
		}
	}
	if tokens > e.cfg.MaxNumBatchedTokens {
		t.Fatalf("step scheduled %d tokens, budget %d", tokens, e.cfg.MaxNumBatchedTokens)
	}
}

// run steps the engine until it is idle, checking invariants, and returns the outputs by
// request and the virtual time.
func run(t *testing.T, e *Engine, now time.Duration, arrivals map[time.Duration][]*Request) (map[*Request][]int, time.Duration) {
	t.Helper()
	got := map[*Request][]int{}
	for steps := 0; ; steps++ {
		for at, reqs := range arrivals {
			if at <= now {
				for _, r := range reqs {
					if err := e.Submit(r, at); err != nil {
						t.Fatal(err)
					}
				}
				delete(arrivals, at)
			}
		}
		res := e.Step(now)
		checkInvariants(t, e)
		if res.Duration == 0 {
			next := res.NextReady
			for at := range arrivals {
				if next < 0 || at < next {
					next = at
				}
			}
			if next < 0 {
				return got, now
			}
			now = max(now, next)
			continue
		}
		now += res.Duration
		for _, o := range res.Outputs {
			got[o.Req] = append(got[o.Req], o.Tokens)
		}
		if steps > 1e6 {
			t.Fatal("engine did not finish")
		}
	}
}

func sum(xs []int) int {
	s := 0
	for _, x := range xs {
		s += x
	}
	return s
}

func TestRandomWorkloadInvariants(t *testing.T) {
	cfg := testConfig()
	cfg.NumSpecTokens = 3
	cfg.Acceptance = []float64{0.4, 0.3, 0.2, 0.1}
	cfg.MaxRunning = 3
	cfg.NumBlocks = 40
	e, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	arrivals := map[time.Duration][]*Request{}
	var all []*Request
	for i := range 60 {
		r := prompt(uint64(i%5), 16+(i*37)%300, 1+(i*53)%120)
		at := time.Duration(i) * 7 * time.Millisecond
		arrivals[at] = append(arrivals[at], r)
		all = append(all, r)
	}
	got, _ := run(t, e, 0, arrivals)
	for _, r := range all {
		if n := sum(got[r]); n != r.MaxTokens {
			t.Errorf("request %d got %d tokens, want max_tokens %d", r.id, n, r.MaxTokens)
		}
	}
	st := e.Stats()
	if st.Preemptions == 0 {
		t.Error("a KV cache of 40 blocks should have forced preemptions")
	}
	if st.PrefixHits == 0 {
		t.Error("repeated prompts should have hit the prefix cache")
	}
	if st.UsedBlocks != 0 || st.Running != 0 || st.Waiting != 0 {
		t.Errorf("idle engine still holds %d blocks, %d running, %d waiting", st.UsedBlocks, st.Running, st.Waiting)
	}
}

func TestQueueingExactlyAtSeatLimit(t *testing.T) {
	for _, n := range []int{3, 4, 5, 7} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			e, _ := New(testConfig()) // max_num_seqs 4
			for i := range n {
				if err := e.Submit(prompt(uint64(100+i), 32, 50), 0); err != nil {
					t.Fatal(err)
				}
			}
			e.Step(0)
			checkInvariants(t, e)
			st := e.Stats()
			if want := min(n, 4); st.Running != want || st.Waiting != n-want {
				t.Fatalf("%d requests: running %d waiting %d, want %d and %d", n, st.Running, st.Waiting, want, n-want)
			}
		})
	}
}

func TestQueueingExactlyAtKVCapacity(t *testing.T) {
	// 10 blocks of 16 tokens; each prompt of 64 tokens needs 4 blocks.
	cfg := testConfig()
	cfg.NumBlocks = 10
	cfg.MaxNumSeqs = 8
	for _, tt := range []struct{ n, running int }{{2, 2}, {3, 2}} {
		e, _ := New(cfg)
		for i := range tt.n {
			_ = e.Submit(prompt(uint64(200+i), 64, 5), 0)
		}
		e.Step(0)
		checkInvariants(t, e)
		if st := e.Stats(); st.Running != tt.running || st.Waiting != tt.n-tt.running {
			t.Errorf("%d prompts of 4 blocks in 10: running %d waiting %d, want %d and %d", tt.n, st.Running, st.Waiting, tt.running, tt.n-tt.running)
		}
	}
	// The same prompt three times shares its blocks: all three fit.
	e, _ := New(cfg)
	first := prompt(300, 64, 1)
	_ = e.Submit(first, 0)
	run(t, e, 0, nil)
	for range 3 {
		_ = e.Submit(prompt(300, 64, 5), time.Second)
	}
	e.Step(time.Second)
	checkInvariants(t, e)
	if st := e.Stats(); st.Running != 3 || st.Waiting != 0 || st.UsedBlocks > 4+3 {
		t.Errorf("shared prompt: running %d waiting %d blocks %d, want 3, 0 and at most 7", st.Running, st.Waiting, st.UsedBlocks)
	}
}

func TestPreemptionWhenDecodeOutgrowsKV(t *testing.T) {
	cfg := testConfig()
	cfg.NumBlocks = 10 // 160 tokens
	a, b := prompt(1, 64, 60), prompt(2, 64, 60)
	e, _ := New(cfg)
	got, _ := run(t, e, 0, map[time.Duration][]*Request{0: {a, b}})
	if st := e.Stats(); st.Preemptions == 0 {
		t.Fatal("two requests growing to 124 tokens each cannot share 160 tokens of KV without preemption")
	}
	if sum(got[a]) != 60 || sum(got[b]) != 60 {
		t.Fatalf("preempted requests must still deliver every token: %d and %d of 60", sum(got[a]), sum(got[b]))
	}
}

func TestPrefixHitSkipsPrefill(t *testing.T) {
	cfg := testConfig()
	cfg.NumBlocks = 4096
	cfg.MaxNumBatchedTokens = 8192
	cfg.MaxModelLen = 1 << 20
	e, _ := New(cfg)
	ttft := func(r *Request, at time.Duration) time.Duration {
		if err := e.Submit(r, at); err != nil {
			t.Fatal(err)
		}
		now := at
		for range 1000 {
			res := e.Step(now)
			checkInvariants(t, e)
			if res.Duration == 0 {
				if res.NextReady < 0 {
					break
				}
				now = res.NextReady
				continue
			}
			now += res.Duration
			for _, o := range res.Outputs {
				if o.Req == r {
					return now - at
				}
			}
		}
		t.Fatal("no first token")
		return 0
	}
	cold := ttft(prompt(7, 20000, 1), 0)
	before := e.Stats()
	warm := ttft(prompt(7, 20000, 1), time.Hour)
	after := e.Stats()
	if hits := after.PrefixHits - before.PrefixHits; hits != 20000-16 {
		t.Errorf("repeated 20000-token prompt hit %d tokens, want %d (every block but the last, which is recomputed to sample)", hits, 20000-16)
	}
	if warm*50 > cold {
		t.Errorf("cached prompt TTFT %v, cold %v: the hit should skip nearly all prefill", warm, cold)
	}
	// Chunked prefill: 20000 tokens at 8192 per step take three steps.
	if steps := before.Steps; steps != 3 {
		t.Errorf("cold prefill of 20000 tokens took %d steps, want 3 chunks of at most 8192", steps)
	}
}

func TestTokensPerStepFollowAcceptance(t *testing.T) {
	cfg := testConfig()
	cfg.NumSpecTokens = 3
	cfg.Acceptance = []float64{0.1, 0.2, 0.3, 0.4}
	cfg.NumBlocks = 4096
	cfg.MaxModelLen = 1 << 20
	e, _ := New(cfg)
	r := prompt(9, 16, 40000)
	got, _ := run(t, e, 0, map[time.Duration][]*Request{0: {r}})
	chunks := got[r][1 : len(got[r])-1] // the first token comes from prefill, the last step may be cut short
	counts := make([]float64, 4)
	for _, n := range chunks {
		counts[n-1]++
	}
	chi2 := func(p []float64) float64 {
		s := 0.0
		for j, c := range counts {
			exp := p[j] * float64(len(chunks))
			s += (c - exp) * (c - exp) / exp
		}
		return s
	}
	dist := distuv.ChiSquared{K: 3}
	if pv := 1 - dist.CDF(chi2(cfg.Acceptance)); pv < 0.001 {
		t.Errorf("tokens per step %v do not follow the acceptance distribution (p = %.2g)", counts, pv)
	}
	// The same test rejects a distribution that is off by 0.05 per outcome.
	if pv := 1 - dist.CDF(chi2([]float64{0.15, 0.25, 0.25, 0.35})); pv > 0.001 {
		t.Errorf("the chi-square check cannot tell a wrong distribution (p = %.2g)", pv)
	}
	st := e.Stats()
	if st.SpecDraftTokens != 3*st.SpecDrafts || st.SpecAccepted > st.SpecDraftTokens {
		t.Errorf("spec counters inconsistent: %+v", st)
	}
	mean := float64(40000-1) / float64(len(got[r])-1)
	if want := cfg.MeanTokensPerStep(); math.Abs(mean-want) > 0.05 {
		t.Errorf("mean tokens per step %.3f, want %.3f", mean, want)
	}
}

func TestSeedAndNoise(t *testing.T) {
	durations := func(seed uint64, cv float64) []time.Duration {
		cfg := testConfig()
		cfg.Seed, cfg.NoiseCV = seed, cv
		e, _ := New(cfg)
		var ds []time.Duration
		_ = e.Submit(prompt(1, 64, 50), 0)
		now := time.Duration(0)
		for {
			res := e.Step(now)
			if res.Duration == 0 {
				if res.NextReady < 0 {
					return ds
				}
				now = res.NextReady
				continue
			}
			ds = append(ds, res.Duration)
			now += res.Duration
		}
	}
	same := func(a, b []time.Duration) bool { return fmt.Sprint(a) == fmt.Sprint(b) }
	if !same(durations(1, 0.1), durations(1, 0.1)) {
		t.Error("the same seed must give the same step times")
	}
	if same(durations(1, 0.1), durations(2, 0.1)) {
		t.Error("different seeds must give different step times under noise")
	}
	if !same(durations(1, 0), durations(2, 0)) {
		t.Error("without noise the seed must not change step times")
	}
}

func TestSlowdownHook(t *testing.T) {
	total := func(f func(Phase, float64, int) float64) time.Duration {
		cfg := testConfig()
		cfg.Slowdown = f
		e, _ := New(cfg)
		_, end := run(t, e, 0, map[time.Duration][]*Request{0: {prompt(1, 64, 100)}})
		return end
	}
	base := total(nil)
	slow := total(func(p Phase, _ float64, _ int) float64 {
		if p == PhaseDecode {
			return 2
		}
		return 1
	})
	if r := float64(slow) / float64(base); r < 1.9 || r > 2.0 {
		t.Errorf("decode ×2 made the request %.2f× slower, want just under 2 (prefill unchanged)", r)
	}
}

func TestAbortFreesBlocks(t *testing.T) {
	e, _ := New(testConfig())
	r := prompt(1, 64, 1000)
	_ = e.Submit(r, 0)
	e.Step(0)
	e.Step(time.Second)
	if e.Stats().UsedBlocks == 0 {
		t.Fatal("a running request must hold blocks")
	}
	if !e.Abort(r) || e.Abort(r) {
		t.Fatal("Abort must report a live request once")
	}
	checkInvariants(t, e)
	if st := e.Stats(); st.UsedBlocks != 0 || st.Running != 0 || st.Aborted != 1 {
		t.Fatalf("after abort: %+v", st)
	}
}

func TestSubmitValidation(t *testing.T) {
	e, _ := New(testConfig())
	for _, r := range []*Request{{PromptLen: 0, MaxTokens: 1}, {PromptLen: 10, MaxTokens: 0}, {PromptLen: 4000, MaxTokens: 100}} {
		if err := e.Submit(r, 0); err == nil {
			t.Errorf("Submit(%d prompt, %d max) accepted", r.PromptLen, r.MaxTokens)
		}
	}
}

func BenchmarkStepBatch32(b *testing.B) {
	cfg := testConfig()
	cfg.MaxNumSeqs, cfg.NumBlocks, cfg.NumSpecTokens = 32, 1<<16, 7
	cfg.MaxModelLen = 1 << 30
	cfg.Acceptance = []float64{0.3, 0.2, 0.15, 0.1, 0.08, 0.07, 0.05, 0.05}
	e, _ := New(cfg)
	for i := range 32 {
		_ = e.Submit(prompt(uint64(i), 1024, 1<<29), 0)
	}
	now := time.Duration(0)
	for b.Loop() {
		res := e.Step(now)
		now += res.Duration + time.Millisecond
	}
}

// TestAbortReleasesFrontend checks that requests aborted while they wait for the frontend's
// one-at-a-time stage give up their turn: a request submitted after them is handed over as if
// they had never come, while one already being served keeps the stage busy until it is done.
func TestAbortReleasesFrontend(t *testing.T) {
	cfg := testConfig()
	cfg.Timing.FrontendBase = 0.5
	e, _ := New(cfg)
	var rs []*Request
	for i := range 4 {
		r := prompt(uint64(i), 64, 10)
		if err := e.Submit(r, 0); err != nil {
			t.Fatal(err)
		}
		rs = append(rs, r)
	}
	late := prompt(9, 64, 10)
	if err := e.Submit(late, 200*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	// At 0.2 s the first request is being served (0 … 0.5 s), the other three wait their turn.
	for _, r := range rs {
		if !e.Abort(r) {
			t.Fatalf("request %d was not live", r.ID())
		}
	}
	if got := e.Stats().Frontend; got != 1 {
		t.Fatalf("%d requests in the frontend, want 1", got)
	}
	res := e.Step(200 * time.Millisecond)
	if want := time.Second; res.NextReady != want {
		t.Errorf("the late request reaches the scheduler at %v, want %v (after the served one's 0.5 s, then its own)", res.NextReady, want)
	}
	checkInvariants(t, e)
	// A request submitted once the stage is idle again starts at once.
	e.Step(time.Second)
	r := prompt(10, 64, 10)
	_ = e.Submit(r, 3*time.Second)
	if r.readyAt != 3500*time.Millisecond {
		t.Errorf("a request submitted to an idle frontend at 3 s is ready at %v, want 3.5s", r.readyAt)
	}
}
