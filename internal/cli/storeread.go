package cli

import (
	"context"
	"os"

	"github.com/speedmatrix/speedmatrix/config"
	"github.com/speedmatrix/speedmatrix/store"
)

// existingStore returns a usage error when dir is not a directory: a command that only reads a
// local store (store list, get, prune, compare --store, calibrate --store) must not take a
// mistyped folder for an empty store, nor create one.
func existingStore(dir string) error {
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return usagef("store %s: no such directory; give the folder that speedmatrix baseline or store put wrote (they create it)", dir)
	}
	return nil
}

// openToRead returns the store the flags name, as open does, once a local store's directory is
// known to exist.
func (s *storeFlags) openToRead(ctx context.Context, env *Env, c config.Config) (store.Store, string, error) {
	if s.branch == "" {
		dir := s.dir
		if dir == "" {
			dir = c.Store.Dir
		}
		if dir != "" {
			if err := existingStore(dir); err != nil {
				return nil, "", err
			}
		}
	}
	return s.open(ctx, env, c)
}
