package results

import "strconv"

// Shard records that a results file holds one shard of a sharded run (`speedmatrix run --shard
// K/N`): the shard, the plan it belongs to and the context rows it measured. Its settings are the
// whole plan's, so the cells of the other shards are missing from it; `speedmatrix merge` joins
// the shards of one plan into one file without a Shard.
type Shard struct {
	Index int    `json:"index"` // 1-based
	Count int    `json:"count"`
	Plan  string `json:"plan"` // the plan's identity (bench.PlanShards)
	// Contexts are the nominal contexts of the rows this shard measured, e.g. "8K", "1024K".
	Contexts []string `json:"contexts"`
}

// String returns "K/N".
func (s *Shard) String() string { return strconv.Itoa(s.Index) + "/" + strconv.Itoa(s.Count) }

// validateShard checks a shard record.
func (v *validator) validateShard(s *Shard) {
	if s == nil {
		return
	}
	if s.Count < 1 || s.Index < 1 || s.Index > s.Count {
		v.addf("run.shard: shard %d of %d; want 1 ≤ index ≤ count", s.Index, s.Count)
	}
	if s.Plan == "" {
		v.addf("run.shard: plan is empty; it names the plan the shard belongs to")
	}
	if len(s.Contexts) == 0 {
		v.addf("run.shard: contexts is empty; a shard measures at least one context row")
	}
	for _, c := range s.Contexts {
		if _, err := ParseContext(c); err != nil {
			v.addf("run.shard: %v", err)
		}
	}
}
