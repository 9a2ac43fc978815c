package measure

import (
	"time"

	"github.com/speedmatrix/speedmatrix/config"
	"github.com/speedmatrix/speedmatrix/sim"
)

// PriceCells returns what the action prices a paired run within a budget with: the cells of
// the plan of the configuration c, one shard, and their expected time, unrounded, in the
// budget's time (the GPU's; the simulator's profile's). The built-in simulator measures a
// window set in the file for that long on the wall clock, which is speedup times as long in its
// profile's time (the default window is the profile's, shortened to the simulator's speed).
func PriceCells(c config.Config) ([]string, time.Duration, error) {
	if c.URL == "" && c.Engine.Serve == nil && c.Duration != DefaultSettings().Duration {
		s, err := sim.Speedup(c.Sim.Speedup)
		if err != nil {
			return nil, 0, settingsf("sim.speedup %v", err)
		}
		c.Duration = time.Duration(float64(c.Duration) * s)
	}
	p, err := planShards(session{Settings: Settings{Config: c}}, 1)
	if err != nil {
		return nil, 0, err
	}
	ids := make([]string, 0, len(p.Shards[0].Cells))
	for _, id := range p.Shards[0].Cells {
		ids = append(ids, id.String())
	}
	return ids, p.Shards[0].Expected, nil
}
