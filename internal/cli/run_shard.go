package cli

import (
	"context"
	"strings"

	"github.com/speedmatrix/speedmatrix/bench"
	"github.com/speedmatrix/speedmatrix/results"
)

// shardUsage is the help of run's --shard flag.
const shardUsage = "measure only shard K of N of the plan `speedmatrix plan --shards N` prints for the same settings, e.g. 2/4 (whole context rows; speedmatrix merge joins the shards)"

// shardStep is runCommand's first step: for `speedmatrix plan` it prints the plan and says the
// command is done; for run --shard K/N it resolves the shard's rows into o.
func shardStep(ctx context.Context, env *Env, o *runOptions) (done bool, err error) {
	if n, ok := ctx.Value(planKey{}).(int); ok {
		return true, printPlan(env, *o, n)
	}
	return false, resolveShard(env, o)
}

// resolveShard turns run's --shard K/N into the rows the run measures: shard K of the plan
// that `speedmatrix plan --shards N` computes from the same settings.
func resolveShard(env *Env, o *runOptions) error {
	if o.shardSpec == "" {
		return nil
	}
	k, n, err := bench.ParseShard(o.shardSpec)
	if err != nil {
		return usagef("--%v", err)
	}
	p, err := planShards(*o, n)
	if err != nil {
		return err
	}
	s := p.Shards[k-1]
	var labels []string
	for _, r := range s.Rows {
		labels = append(labels, results.ContextLabel(r))
	}
	env.Log.Info("measuring one shard of the plan", "shard", s.String(), "plan", s.Plan, "contexts", strings.Join(labels, ","),
		"cells", len(s.Cells), "expected_minutes", roundMinutes(s.Expected.Minutes()))
	shard := s.Shard
	o.shard = &shard
	return nil
}
