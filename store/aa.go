package store

import (
	"context"
)

// AACandidate returns the commit an A/A rerun should re-measure (config.Store.AAEvery): the
// newest default-branch result of configID whose commit holds exactly one stored run (its
// default-branch result and no A/A rerun yet). ok is false when every stored commit already
// has a rerun, or the store holds none.
func AACandidate(ctx context.Context, s Store, configID string) (e Entry, ok bool, err error) {
	defaults, err := s.List(ctx, Filter{ConfigID: configID, Kind: KindDefault})
	if err != nil {
		return Entry{}, false, err
	}
	aa, err := s.List(ctx, Filter{ConfigID: configID, Kind: KindAA})
	if err != nil {
		return Entry{}, false, err
	}
	reruns := map[string]int{}
	for _, x := range aa {
		reruns[x.Commit]++
	}
	for _, d := range defaults { // newest first
		if reruns[d.Commit] == 0 {
			return d, true, nil
		}
	}
	return Entry{}, false, nil
}
