// Package merge is `speedmatrix merge`: its flags, then package merge.
package merge

import (
	"github.com/speedmatrix/speedmatrix/internal/cli/cmdutil"
	"github.com/spf13/cobra"

	"github.com/speedmatrix/speedmatrix/merge"
	"github.com/speedmatrix/speedmatrix/results"
)

// NewCmd builds `speedmatrix merge`.
func NewCmd(env *cmdutil.Env) *cobra.Command {
	var out string
	var opts merge.Options
	cmd := &cobra.Command{
		Use:   "merge SHARD.json... [-o merged.json] [--allow-partial]",
		Short: "Join the results files of a sharded run (run --shard K/N) into one",
		Long: `merge joins the results files of the shards of one plan (speedmatrix plan, then
speedmatrix run --shard K/N on each runner) into the results file a single run of the whole
matrix would have written: cells in a single run's order, the settings the shards share, the
run from the first start to the last end, the budget summed over the shards (the GPU time of
the whole run), every shard's notes once.

Every file is validated as it is read. merge refuses, saying why and naming the files: a file
that is not a shard, shards of different plans, a shard or cell given twice, a missing shard
(--allow-partial merges the rest and marks the result partial), a different engine (commit,
version, build), different hardware (GPU model, count, memory, driver, CUDA, power limit,
locked clocks), a different configuration (config id, or any setting but the URL and the
simulator's seed), a server with another max_model_len, version or max_num_seqs, another
speculative-decoding setup (spec_decode pinned on one shard only, or at another length) or
another speedmatrix version. The GPU time is summed phase by phase.

Without -o the merged file goes to stdout.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var in []merge.Input
			for _, p := range args {
				f, err := results.ReadFile(p)
				if err != nil {
					return err // ReadFile names the file
				}
				in = append(in, merge.Input{Name: p, File: f})
			}
			m, err := merge.Shards(in, opts)
			if err != nil {
				return err
			}
			if m.Run.Partial {
				env.Log.Warn("the merged results are partial", "reason", m.Run.PartialReason)
			}
			if out == "" {
				return results.Write(env.Stdout, m)
			}
			if err := results.WriteOutputFile(out, m); err != nil {
				return err
			}
			env.Log.Info("merged", "shards", len(in), "results", out, "prefill_cells", len(m.Prefill), "decode_cells", len(m.Decode))
			return nil
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "write the merged results file here (default stdout)")
	cmd.Flags().BoolVar(&opts.AllowPartial, "allow-partial", false, "merge the shards given when some are missing, and mark the result partial")
	return cmd
}
