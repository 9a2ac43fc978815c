package cli

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/spf13/cobra"

	"github.com/speedmatrix/speedmatrix/bench"
	"github.com/speedmatrix/speedmatrix/results"
)

// shardMatrix is the GitHub Actions job matrix `speedmatrix plan` prints: one include entry per
// shard, for `strategy.matrix: ${{ fromJSON(needs.plan.outputs.matrix) }}`.
type shardMatrix struct {
	Include []shardEntry `json:"include"`
}

// shardEntry is one shard of the job matrix.
type shardEntry struct {
	Shard string `json:"shard"` // K/N, for `run --shard`
	Plan  string `json:"plan"`  // the plan's identity, recorded in every shard's results
	// Contexts are the nominal contexts of the shard's rows; Cells its cells as planned before
	// the server is known (a 1024K row is measured as 1019K on a 1M server).
	Contexts        string  `json:"contexts"`
	Cells           string  `json:"cells"`
	ExpectedMinutes float64 `json:"expected_minutes"`
}

// newPlanCmd builds `speedmatrix plan`.
func newPlanCmd(env *Env) *cobra.Command {
	o := defaultRunOptions()
	var configPath string
	var contexts, concurrency, prefill, cells string
	var shards int
	cmd := &cobra.Command{
		Use:   "plan --shards N [--config speedmatrix.yaml] [matrix flags of run]",
		Short: "Split the matrix into shards for several runners: prints the GitHub Actions job matrix",
		Long: `plan splits the matrix that run would measure with the same settings into N shards and
prints, on one line, the GitHub Actions job matrix of one job per shard:

  {"include":[{"shard":"1/4","plan":"…","contexts":"8K,1024K","cells":"prefill/8K,…","expected_minutes":12.1},…]}

for strategy.matrix: ${{ fromJSON(needs.plan.outputs.matrix) }}. Each job runs
speedmatrix run --shard ${{ matrix.shard }} with the same settings, and one job joins the
shards with speedmatrix merge.

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
			final := defaultRunOptions()
			if configPath != "" {
				if err := readRunConfig(configPath, &final); err != nil {
					return usagef("--config %v", err)
				}
			}
			overrideFromFlags(cmd.Flags(), &final, &o, contexts, concurrency, prefill, cells)
			if !cmd.Flags().Changed("shards") {
				return usagef("--shards is required: how many runners share the matrix, e.g. --shards 4")
			}
			p, err := planShards(final, shards)
			if err != nil {
				return err
			}
			m := shardMatrix{}
			var minutes []string
			for _, s := range p.Shards {
				e := shardEntry{Shard: s.String(), Plan: s.Plan, ExpectedMinutes: roundMinutes(s.Expected.Minutes())}
				var labels, ids []string
				for _, r := range s.Rows {
					labels = append(labels, results.ContextLabel(r))
				}
				for _, c := range s.Cells {
					ids = append(ids, c.String())
				}
				e.Contexts, e.Cells = strings.Join(labels, ","), strings.Join(ids, ",")
				m.Include = append(m.Include, e)
				minutes = append(minutes, fmt.Sprintf("%s %.1f min (%s)", e.Shard, e.ExpectedMinutes, e.Contexts))
			}
			data, err := json.Marshal(m)
			if err != nil {
				return err
			}
			var total, longest float64
			for _, s := range p.Shards {
				total += s.Expected.Minutes()
				longest = math.Max(longest, s.Expected.Minutes())
			}
			env.Log.Info("plan", "plan", p.ID, "shards", len(p.Shards), "rows", len(p.Rows),
				"expected_minutes", strings.Join(minutes, "; "), "longest_minutes", roundMinutes(longest), "total_minutes", roundMinutes(total))
			_, err = fmt.Fprintf(env.Stdout, "%s\n", data)
			return err
		},
	}
	f := cmd.Flags()
	f.IntVar(&shards, "shards", 0, "number of shards (runners), at most the number of context rows")
	f.StringVar(&configPath, "config", "", "read the settings from this YAML file (as run does); flags given on the command line override it")
	f.StringVar(&o.Matrix, "matrix", o.Matrix, "matrix to split: full or quick")
	f.StringVar(&contexts, "contexts", "", "decode contexts, e.g. 8K,32K,1024K (replaces the matrix's)")
	f.StringVar(&concurrency, "concurrency", "", "concurrency levels, e.g. 1,8,32 (replaces the matrix's)")
	f.StringVar(&prefill, "prefill-contexts", "", "prefill contexts measured at full length, e.g. 8K,16K,1019K, or none")
	f.StringVar(&cells, "cells", "", "only these cells, e.g. decode/8K/32,prefill/16K (replaces the matrix)")
	f.DurationVar(&o.Duration, "duration", o.Duration, "length of each decode measurement window")
	f.IntVar(&o.MaxTokens, "max-tokens", o.MaxTokens, "max_tokens of every decode request")
	f.IntVar(&o.Trials, "trials", o.Trials, "measure each cell this many times")
	o.ContextWarmup = new(bool)
	f.BoolVar(o.ContextWarmup, "context-warmup", true, "each context's hidden warm-up request (one more prefill per row)")
	return cmd
}

// roundMinutes rounds to a tenth of a minute.
func roundMinutes(m float64) float64 { return math.Round(m*10) / 10 }

// planShards splits the matrix of the run options o into n shards (bench.PlanShards); errors
// are usage errors. It depends on o as the user gave it, before the simulator shortens the
// window, so that plan and every run --shard of the same settings agree.
func planShards(o runOptions, n int) (bench.ShardPlan, error) {
	cfg, err := benchConfig(o, "", "")
	if err != nil {
		return bench.ShardPlan{}, err
	}
	p, err := bench.PlanShards(cfg, n)
	if err != nil {
		return p, usagef("--shards %d: %v", n, strings.TrimPrefix(err.Error(), fmt.Sprintf("%d shards: ", n)))
	}
	return p, nil
}
