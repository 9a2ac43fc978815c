// Package baseline is `speedmatrix baseline`: its flags, then measure.Baseline into the store
// the store flags name.
package baseline

import (
	"fmt"

	"github.com/speedmatrix/speedmatrix/internal/cli/cmdutil"
	"github.com/speedmatrix/speedmatrix/measure"
	"github.com/speedmatrix/speedmatrix/store"
	"github.com/spf13/cobra"
)

// NewCmd builds `speedmatrix baseline`.
func NewCmd(env *cmdutil.Env) *cobra.Command {
	var sf cmdutil.StoreFlags
	var commit, url, output string
	cmd := &cobra.Command{
		Use:   "baseline --commit SHA [--config speedmatrix.yaml] [--store DIR | --branch NAME]",
		Short: "Measure the server as a default-branch commit's baseline and store the results",
		Long: `baseline measures the server exactly as "speedmatrix run" does with the same configuration
(--config; --url overrides its url; without a url, the built-in simulator), records --commit as
the engine commit, and stores the results as that default-branch commit's baseline: a pull
request whose merge-base (or nearest first-parent ancestor) is that commit then compares with
them. Serve the engine built at that commit first (speedmatrix engine build, engine serve).

The store is read before measuring: a damaged index or an unreachable data branch fails at
once. If storing fails after the run, the results are kept (-o, else
$TMPDIR/speedmatrix-<run-id>.json) and the error says how to store them later with
speedmatrix store put. A commit that already has a result of the configuration keeps it as an
A/A rerun (aa/), so measuring a commit twice gives an A/A pair.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			sha, err := store.FullCommit(ctx, commit, "--commit")
			if err != nil {
				return err
			}
			o := measure.DefaultSettings()
			if sf.ConfigPath != "" {
				if err := cmdutil.ReadRunConfig(sf.ConfigPath, &o); err != nil {
					return cmdutil.Usagef("--config: %v", err)
				}
			}
			s, where, err := sf.Open(ctx, env, o.Config)
			if err != nil {
				return err
			}
			// Read the store before measuring (hours on a GPU): a damaged index or an
			// unreachable data branch fails now, not after the run.
			if _, err := s.List(ctx, store.Filter{Limit: 1}); err != nil {
				return fmt.Errorf("baseline: the %s cannot be read, so nothing was measured: %w", where, err)
			}
			if url != "" {
				o.URL = url
			}
			e, err := measure.Baseline(ctx, o, env.MeasureDeps(), s, measure.BaselineTarget{Commit: sha, Output: output, Where: where, StoreFlags: sf.Text()})
			if err != nil {
				return err
			}
			env.Log.Info("baseline stored", "where", where, "commit", sha, "config_id", e.ConfigID, "path", e.Path)
			fmt.Fprintln(env.Stdout, e.Path)
			return nil
		},
	}
	f := cmd.Flags()
	sf.Add(f)
	f.Lookup("config").Usage = "speedmatrix.yaml: what to measure, as run --config (its url, matrix, engine, …), and its store section (store.dir, retention)"
	f.StringVar(&commit, "commit", "", "the default-branch engine commit being measured (full id, or a revision the local clone resolves)")
	f.StringVar(&url, "url", "", "the server to measure (default: the configuration's url; none: the built-in simulator)")
	f.StringVarP(&output, "output", "o", "", "also keep the results file here")
	return cmd
}
