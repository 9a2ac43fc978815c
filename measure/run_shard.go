package measure

import (
	"strings"

	"github.com/speedmatrix/speedmatrix/bench"
	"github.com/speedmatrix/speedmatrix/results"
)

// resolveShard turns run's --shard K/N into the rows the run measures: shard K of the plan
// that `speedmatrix plan --shards N` computes from the same settings.
func resolveShard(env *Deps, o *session) error {
	if o.ShardSpec == "" {
		if o.PlanID != "" {
			return settingsf("--plan %s needs --shard K/N: it checks the plan a shard belongs to", o.PlanID)
		}
		return nil
	}
	k, n, err := bench.ParseShard(o.ShardSpec)
	if err != nil {
		return settingsf("--%v", err)
	}
	p, err := planShards(*o, n)
	if err != nil {
		return err
	}
	s := p.Shards[k-1]
	if o.PlanID != "" && o.PlanID != s.Plan {
		return settingsf("--plan %s: these settings make plan %s; run every shard with the settings (and the speedmatrix version) that speedmatrix plan used", o.PlanID, s.Plan)
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
