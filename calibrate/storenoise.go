package calibrate

import (
	"context"

	"github.com/speedmatrix/speedmatrix/compare"
	"github.com/speedmatrix/speedmatrix/store"
)

// StoreNoise returns the run-to-run noise of configID measured in s, for compare.Input's
// MeasuredNoise: the spread of each commit's repeated runs (its default-branch result and its
// A/A reruns), pooled across commits (compare.MeasuredNoise), and how many commits had repeats.
// It returns nil when the store holds no repeated run of the config. A stored run that cannot
// be read is left out and returned in warnings (store.Repeats). `compare --store` and the bot
// both take their measured noise from here.
func StoreNoise(ctx context.Context, s store.Store, configID string) (map[compare.NoiseKey]float64, int, []error, error) {
	groups, _, warnings, err := store.Repeats(ctx, s, configID)
	if err != nil || len(groups) == 0 {
		return nil, 0, warnings, err
	}
	cv, _ := compare.MeasuredNoise(groups)
	return cv, len(groups), warnings, nil
}
