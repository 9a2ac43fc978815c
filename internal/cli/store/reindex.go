package store

import (
	"github.com/speedmatrix/speedmatrix/internal/cli/cmdutil"
	"github.com/spf13/cobra"

	"github.com/speedmatrix/speedmatrix/store"
)

// newStoreReindexCmd builds `speedmatrix store reindex`, with the store command's flags sf.
func newStoreReindexCmd(env *cmdutil.Env, sf *cmdutil.StoreFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "reindex --store DIR",
		Short: "Rebuild a local store's index.json from the results files it holds",
		Long: `reindex rebuilds index.json of a local store (--store DIR, or the configuration's store.dir)
from the files under results/, pr/ and aa/: each file's commit, config id, kind and pull
request come from its path, its run id and time from the file (the run's end, else its start),
as store put records them. Files that cannot be read as results files are skipped, each with a
warning, and listed. The new index replaces the old one atomically; entries of the old index
that are still readable keep their time, run id and a PR result's baseline commit.

On a data branch (--branch) the index is restored from the branch's history instead
(git log BRANCH -- index.json).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if sf.Branch != "" {
				return cmdutil.Usagef("store reindex rebuilds a local folder's index; on the data branch %s, restore index.json from the branch's history (git log %s -- index.json)", sf.Branch, sf.Branch)
			}
			c, err := sf.Config()
			if err != nil {
				return err
			}
			dir := sf.Dir
			if dir == "" {
				dir = c.Store.Dir
			}
			if dir == "" {
				return cmdutil.Usagef("no store: give --store DIR, or store.dir in --config")
			}
			if err := cmdutil.ExistingStore(dir); err != nil {
				return err
			}
			entries, skipped, err := store.NewDir(dir).Reindex(cmd.Context())
			if err != nil {
				return err
			}
			return store.WriteReindex(env.Stdout, env.Log, dir, entries, skipped)
		},
	}
}
