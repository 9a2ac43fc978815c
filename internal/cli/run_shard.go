package cli

import (
	"context"
	"strings"

	"github.com/spf13/pflag"

	"github.com/speedmatrix/speedmatrix/bench"
	"github.com/speedmatrix/speedmatrix/results"
)

// addShardFlags declares run's --shard and --plan.
func addShardFlags(f *pflag.FlagSet, o *runOptions) {
	f.StringVar(&o.shardSpec, "shard", "", "measure only shard `K/N`, e.g. 2/4: shard K of the N that speedmatrix plan --shards N prints for the same settings (whole context rows; speedmatrix merge joins the shards)")
	f.StringVar(&o.planID, "plan", "", "with --shard: refuse to measure unless the plan's id is this one (the plan field of speedmatrix plan's job matrix), so that a runner with other settings or another speedmatrix fails before it measures")
}

// overrideShardFlags copies --shard and --plan into final when given.
func overrideShardFlags(fs *pflag.FlagSet, final, o *runOptions) {
	if fs.Changed("shard") {
		final.shardSpec = o.shardSpec
	}
	if fs.Changed("plan") {
		final.planID = o.planID
	}
}

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
		if o.planID != "" {
			return usagef("--plan %s needs --shard K/N: it checks the plan a shard belongs to", o.planID)
		}
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
	if o.planID != "" && o.planID != s.Plan {
		return usagef("--plan %s: these settings make plan %s; run every shard with the settings (and the speedmatrix version) that speedmatrix plan used", o.planID, s.Plan)
	}
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
