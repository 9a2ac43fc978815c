package cli

import (
	"context"
	"time"

	"github.com/speedmatrix/speedmatrix/config"
	"github.com/speedmatrix/speedmatrix/internal/action"
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
		return shardJobs(p), nil
	}
}

// actionMeasureShard is the action's measure mode with the shard and plan inputs: `speedmatrix
// run --shard shard --plan plan` with the configuration c.
func actionMeasureShard(env *Env) func(ctx context.Context, c config.Config, shard, plan string) error {
	return func(ctx context.Context, c config.Config, shard, plan string) error {
		return runCommand(ctx, env, runOptions{Config: c, shardSpec: shard, planID: plan})
	}
}

// priceCells is the action's price of a cell list (a paired run within a budget): the cells of
// the plan of the configuration c, one shard, and their expected time, unrounded, in the
// budget's time (the GPU's; the simulator's profile's). The built-in simulator measures a
// window set in the file for that long on the wall clock, which is speedup times as long in its
// profile's time (the default window is the profile's, shortened to the simulator's speed).
func priceCells(c config.Config) ([]string, time.Duration, error) {
	if c.URL == "" && c.Engine.Serve == nil && c.Duration != defaultRunOptions().Duration {
		s := c.Sim.Speedup
		if s == 0 {
			s = DefaultSimSpeedup
		}
		c.Duration = time.Duration(float64(c.Duration) * s)
	}
	p, err := planShards(runOptions{Config: c}, 1)
	if err != nil {
		return nil, 0, err
	}
	ids := make([]string, 0, len(p.Shards[0].Cells))
	for _, id := range p.Shards[0].Cells {
		ids = append(ids, id.String())
	}
	return ids, p.Shards[0].Expected, nil
}
