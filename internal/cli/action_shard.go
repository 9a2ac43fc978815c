package cli

import (
	"context"
	"strings"

	"github.com/speedmatrix/speedmatrix/config"
	"github.com/speedmatrix/speedmatrix/internal/action"
	"github.com/speedmatrix/speedmatrix/results"
)

// actionPlanShards is the action's decide mode with the shards input: the job matrix of
// `speedmatrix plan --shards n` for the configuration c, in as many shards as c has context
// rows when that is fewer than n (a rerun of a few cells needs fewer runners).
func actionPlanShards(env *Env) func(c config.Config, n int) ([]action.ShardJob, error) {
	return func(c config.Config, n int) ([]action.ShardJob, error) {
		o := runOptions{Config: c}
		one, err := planShards(o, 1)
		if err != nil {
			return nil, err
		}
		if rows := len(one.Rows); n > rows {
			env.Log.Info("fewer context rows than shards asked: one shard per row", "shards", n, "rows", rows)
			n = rows
		}
		p, err := planShards(o, n)
		if err != nil {
			return nil, err
		}
		var jobs []action.ShardJob
		for _, s := range p.Shards {
			var labels, ids []string
			for _, r := range s.Rows {
				labels = append(labels, results.ContextLabel(r))
			}
			for _, id := range s.Cells {
				ids = append(ids, id.String())
			}
			jobs = append(jobs, action.ShardJob{Shard: s.String(), Plan: s.Plan, Contexts: strings.Join(labels, ","),
				Cells: strings.Join(ids, ","), ExpectedMinutes: roundMinutes(s.Expected.Minutes())})
		}
		return jobs, nil
	}
}

// actionMeasureShard is the action's measure mode with the shard and plan inputs: `speedmatrix
// run --shard shard --plan plan` with the configuration c.
func actionMeasureShard(env *Env) func(ctx context.Context, c config.Config, shard, plan string) error {
	return func(ctx context.Context, c config.Config, shard, plan string) error {
		return runCommand(ctx, env, runOptions{Config: c, shardSpec: shard, planID: plan})
	}
}
