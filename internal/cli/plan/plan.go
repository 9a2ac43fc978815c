// Package plan is `speedmatrix plan`: --config, --shards and the matrix flags it shares with
// run (cmdutil.MatrixFlags), then measure.Plan printed as a job matrix.
package plan

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/speedmatrix/speedmatrix/internal/cli/cmdutil"
	"github.com/speedmatrix/speedmatrix/measure"
	"github.com/spf13/cobra"
)

// ShardMatrix is the GitHub Actions job matrix `speedmatrix plan` prints: one include entry per
// shard, for `strategy.matrix: ${{ fromJSON(needs.plan.outputs.matrix) }}`.
type ShardMatrix struct {
	Include []measure.ShardJob `json:"include"`
}

// NewCmd builds `speedmatrix plan`: the plan of the matrix that run would measure with the same
// settings (--config and the matrix flags run takes too, cmdutil.MatrixFlags), printed as the
// GitHub Actions job matrix of its shards.
func NewCmd(env *cmdutil.Env) *cobra.Command {
	var shards int
	var configPath string
	var mf cmdutil.MatrixFlags
	cmd := &cobra.Command{
		Use:   "plan --shards N [--config speedmatrix.yaml] [--matrix M] [--contexts LIST] [flags]",
		Short: "Split the matrix into shards for several runners: prints the GitHub Actions job matrix",
		Long: `plan splits the matrix that run would measure with the same settings into N shards and
prints, on one line, the GitHub Actions job matrix of one job per shard:

  {"include":[{"shard":"1/4","index":1,"plan":"…","contexts":"8K,1024K","cells":"prefill/8K,…","expected_minutes":12.1},…]}

for strategy.matrix: ${{ fromJSON(needs.plan.outputs.matrix) }}. Each job runs
speedmatrix run --shard ${{ matrix.shard }} --plan ${{ matrix.plan }} with the same settings
(--plan makes a runner whose settings or speedmatrix version make another plan fail before
it measures), and one job joins the shards with speedmatrix merge. Its flags are those of run that
shape the plan (and --config); run's others (--url, -o, --quiet, …) shape no plan, and plan
refuses them: pass them to run only.

A shard is made of whole context rows (a context's prefill cell and all its decode cells), so
that the scout that warms the prefix cache serves the decode cells after it. Rows are balanced
by their expected time: every decode trial its window plus 2 s (readiness and drain), every
prefill its length at 13K prompt tok/s falling to ~10K at 1M tokens (the reference report's),
twice with the context warm-up; the plan knows no server, so cells a server will find over
capacity count as measured. The split is deterministic: run --shard K/N computes the same from
the same settings and records the plan's identity, which merge checks. N above the number of
rows is an error that says the maximum. The expected time per shard is in the JSON and in the
log on stderr.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !cmd.Flags().Changed("shards") {
				return cmdutil.Usagef("--shards is required: how many runners share the matrix, e.g. --shards 4")
			}
			o := measure.DefaultSettings()
			if configPath != "" {
				if err := cmdutil.ReadRunConfig(configPath, &o); err != nil {
					return cmdutil.Usagef("--config: %v", err)
				}
			}
			mf.Apply(cmd.Flags(), &o)
			return printPlan(env, o, shards)
		},
	}
	f := cmd.Flags()
	f.StringVar(&configPath, "config", "", "read the settings from this YAML file; flags given on the command line override it")
	f.IntVar(&shards, "shards", 0, "number of shards (runners), at most the number of context rows")
	mf.Add(f)
	return cmd
}

// printPlan prints the job matrix of the run options o in n shards (NewCmd).
func printPlan(env *cmdutil.Env, o measure.Settings, n int) error {
	p, err := measure.Plan(o, n)
	if err != nil {
		return err
	}
	m := ShardMatrix{Include: measure.ShardJobs(p)}
	var minutes []string
	var total, longest float64
	for i, s := range p.Shards {
		e := m.Include[i]
		minutes = append(minutes, fmt.Sprintf("%s %.1f min (%s)", e.Shard, e.ExpectedMinutes, e.Contexts))
		total += s.Expected.Minutes()
		longest = math.Max(longest, s.Expected.Minutes())
	}
	data, err := json.Marshal(m)
	if err != nil {
		return err
	}
	env.Log.Info("plan", "plan", p.ID, "shards", len(p.Shards), "rows", len(p.Rows),
		"expected_minutes", strings.Join(minutes, "; "), "longest_minutes", math.Round(longest*10)/10, "total_minutes", math.Round(total*10)/10)
	_, err = fmt.Fprintf(env.Stdout, "%s\n", data)
	return err
}
