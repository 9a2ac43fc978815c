package bench

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/speedmatrix/speedmatrix/results"
)

// Shard restricts a run to one shard of a sharded plan (PlanShards): the context rows it
// measures, named by their nominal context in tokens. A run with a Shard records the whole
// plan's settings (so that every shard and a single run share one config id) and the shard in
// results.Run.Shard, and measures only the rows of its shard.
type Shard struct {
	Index int    // 1-based
	Count int    // how many shards the plan has
	Plan  string // the plan's identity (PlanShards)
	// Rows are the nominal contexts, in tokens, whose cells this shard measures.
	Rows []int
}

// String returns "K/N".
func (s Shard) String() string { return fmt.Sprintf("%d/%d", s.Index, s.Count) }

// ParseShard reads "K/N" with 1 ≤ K ≤ N.
func ParseShard(s string) (index, count int, err error) {
	k, n, ok := strings.Cut(strings.TrimSpace(s), "/")
	ki, kerr := strconv.Atoi(k)
	ni, nerr := strconv.Atoi(n)
	if !ok || kerr != nil || nerr != nil || ni < 1 || ki < 1 || ki > ni {
		return 0, 0, fmt.Errorf("shard %q: want K/N with 1 ≤ K ≤ N, e.g. 2/4", s)
	}
	return ki, ni, nil
}

// ShardRow is one context row of a plan: every cell of one nominal context (its prefill cell
// and all its decode cells), which one shard measures together so that the prompt's prefix stays
// in the server's cache.
type ShardRow struct {
	Context  int              // nominal context, tokens
	Cells    []results.CellID // in the order a run measures them
	Expected time.Duration
}

// ShardSpec is one shard of a plan.
type ShardSpec struct {
	Shard
	Cells    []results.CellID // the rows' cells, in the order the shard measures them
	Expected time.Duration    // the expected time of its rows (CellCost)
}

// ShardPlan is a matrix split into shards of whole context rows.
type ShardPlan struct {
	ID     string // the plan's identity: a hash of the cells of every shard, the trials and the window
	Rows   []ShardRow
	Shards []ShardSpec
}

// Cost model of PlanShards: what a cell costs in wall time on the server, before the server is
// known. A decode trial costs its window plus decodeOverhead (readiness, stopping the streams
// and draining: the same 2 s the runner's progress estimate uses). A prefill of L tokens costs
// L / (prefillRate / (1 + L/prefillHalf)) — 13K prompt tok/s at short contexts falling to ~10K
// at 1M tokens, as the reference report measured (8K in 671 ms, 1019K in 104 s): longer
// contexts cost more than their length.
const (
	decodeOverhead = 2 * time.Second
	prefillRate    = 13000.0
	prefillHalf    = 3.2e6
)

// PrefillCost returns the expected time of one prefill of tokens tokens.
func PrefillCost(tokens int) time.Duration {
	l := float64(tokens)
	return time.Duration(l / prefillRate * (1 + l/prefillHalf) * float64(time.Second))
}

// rowCost returns the expected time of one context's plan: the hidden context warm-up (when
// cfg sends it), the scout, the further prefill trials of its prefill cell and every decode
// trial with its overhead.
func rowCost(cfg Config, p *ctxPlan) time.Duration {
	return rowPrefillCost(cfg, p) + rowDecodeCost(cfg, p)
}

// rowPrefillCost returns the expected time of one context's prefills in the reference server's
// time: the hidden context warm-up (when cfg sends it), the scout and the further prefill
// trials of its prefill cell.
func rowPrefillCost(cfg Config, p *ctxPlan) time.Duration {
	if p.Skip != "" {
		return 0
	}
	pre := PrefillCost(p.Tokens)
	d := pre // the scout
	if cfg.ContextWarmup {
		d += pre
	}
	if p.Prefill {
		d += time.Duration(cfg.Trials-1) * pre
	}
	return d
}

// rowDecodeCost returns the expected time of one context's decode trials: each its window and
// decodeOverhead.
func rowDecodeCost(cfg Config, p *ctxPlan) time.Duration {
	if p.Skip != "" {
		return 0
	}
	return time.Duration(len(p.Decode)*cfg.Trials) * (cfg.Duration + decodeOverhead)
}

// PlanShards splits the matrix cfg describes into n shards of whole context rows (a nominal
// context's prefill cell and all its decode cells stay in one shard, so that the scout's prefix
// stays cached for its decode cells), balanced by their expected time: rows are handed out
// longest first, each to the shard expected to finish first (ties to the lower shard), and each
// shard measures its rows in ascending context as a single run does. The plan is made before any
// server is known (no trimming to max_model_len, no over-capacity cells), so it depends only on
// cfg: `plan` and every `run --shard K/N` of the same settings compute the same one. n above the
// number of rows is an error that says the maximum.
func PlanShards(cfg Config, n int) (ShardPlan, error) {
	if err := cfg.Check(); err != nil {
		return ShardPlan{}, err
	}
	plan, _ := buildPlan(planInput{Matrix: cfg.Matrix, PrefillFromDecode: cfg.PrefillFromDecode, Cells: cfg.Cells, MaxTokens: cfg.MaxTokens})
	byCtx := map[int]*ShardRow{}
	var rows []*ShardRow
	for _, p := range plan {
		r, ok := byCtx[p.Nominal]
		if !ok {
			r = &ShardRow{Context: p.Nominal}
			byCtx[p.Nominal] = r
			rows = append(rows, r)
		}
		r.Cells = append(r.Cells, cellsOf(p, cfg.Trials)...)
		r.Expected += rowCost(cfg, p)
	}
	slices.SortFunc(rows, func(a, b *ShardRow) int { return cmp.Compare(a.Context, b.Context) })
	if n < 1 {
		return ShardPlan{}, fmt.Errorf("%d shards: want at least 1", n)
	}
	if n > len(rows) {
		return ShardPlan{}, fmt.Errorf("%d shards: this matrix has %d context rows and a shard holds whole rows, so at most %d shards", n, len(rows), len(rows))
	}
	// Longest row first, to the shard expected to finish first.
	order := slices.Clone(rows)
	slices.SortStableFunc(order, func(a, b *ShardRow) int { return cmp.Compare(b.Expected, a.Expected) })
	out := ShardPlan{Shards: make([]ShardSpec, n)}
	for i := range out.Shards {
		out.Shards[i].Shard = Shard{Index: i + 1, Count: n}
	}
	for _, r := range order {
		best := 0
		for i := range out.Shards {
			if out.Shards[i].Expected < out.Shards[best].Expected {
				best = i
			}
		}
		out.Shards[best].Rows = append(out.Shards[best].Rows, r.Context)
		out.Shards[best].Expected += r.Expected
	}
	for _, r := range rows {
		out.Rows = append(out.Rows, *r)
	}
	for i := range out.Shards {
		s := &out.Shards[i]
		slices.Sort(s.Rows)
		for _, c := range s.Rows {
			s.Cells = append(s.Cells, byCtx[c].Cells...)
		}
	}
	out.ID = planID(cfg, out.Shards)
	for i := range out.Shards {
		out.Shards[i].Plan = out.ID
	}
	return out, nil
}

// cellsOf lists the cells of one context's plan in the order the runner measures them.
func cellsOf(p *ctxPlan, trials int) []results.CellID {
	var out []results.CellID
	for _, c := range plannedCells([]*ctxPlan{p}, trials) {
		out = append(out, c.ID)
	}
	return out
}

// planIDLen is the number of hex digits of a plan's identity.
const planIDLen = 12

// planID hashes what a shard's cells depend on: every shard's cells, the trials, the window and
// the context warm-up.
func planID(cfg Config, shards []ShardSpec) string {
	var k struct {
		Shards        [][]string `json:"shards"`
		Trials        int        `json:"trials"`
		Window        float64    `json:"window_seconds"`
		ContextWarmup bool       `json:"context_warmup"`
	}
	for _, s := range shards {
		var ids []string
		for _, c := range s.Cells {
			ids = append(ids, c.String())
		}
		k.Shards = append(k.Shards, ids)
	}
	k.Trials, k.Window, k.ContextWarmup = cfg.Trials, cfg.Duration.Seconds(), cfg.ContextWarmup
	data, _ := json.Marshal(k)
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])[:planIDLen]
}

// shardPlan keeps the contexts of plan that shard measures (all of them without a shard).
func shardPlan(plan []*ctxPlan, shard *Shard) []*ctxPlan {
	if shard == nil {
		return plan
	}
	var out []*ctxPlan
	for _, p := range plan {
		if slices.Contains(shard.Rows, p.Nominal) {
			out = append(out, p)
		}
	}
	return out
}

// shardRecord returns the results file's record of a shard.
func shardRecord(s *Shard) *results.Shard {
	r := &results.Shard{Index: s.Index, Count: s.Count, Plan: s.Plan}
	for _, c := range s.Rows {
		r.Contexts = append(r.Contexts, results.ContextLabel(c))
	}
	return r
}
