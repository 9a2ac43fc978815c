package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/speedmatrix/speedmatrix/measure"
)

// shardMatrix is the GitHub Actions job matrix `speedmatrix plan` prints: one include entry per
// shard, for `strategy.matrix: ${{ fromJSON(needs.plan.outputs.matrix) }}`.
type shardMatrix struct {
	Include []measure.ShardJob `json:"include"`
}

// planKey is the context key under which `speedmatrix plan` asks the run command it is built
// from for the plan instead of a run (newRunCmd).
type planKey struct{}

// newPlanCmd builds `speedmatrix plan`: the run command, every flag of it included, that prints
// the plan of its settings instead of measuring them, so that plan and run read the same
// settings the same way.
func newPlanCmd(env *Env) *cobra.Command {
	var shards int
	cmd := newRunCmd(env)
	cmd.Use = "plan --shards N [--config speedmatrix.yaml] [flags of run]"
	cmd.Short = "Split the matrix into shards for several runners: prints the GitHub Actions job matrix"
	cmd.Long = `plan splits the matrix that run would measure with the same settings into N shards and
prints, on one line, the GitHub Actions job matrix of one job per shard:

  {"include":[{"shard":"1/4","index":1,"plan":"…","contexts":"8K,1024K","cells":"prefill/8K,…","expected_minutes":12.1},…]}

for strategy.matrix: ${{ fromJSON(needs.plan.outputs.matrix) }}. Each job runs
speedmatrix run --shard ${{ matrix.shard }} --plan ${{ matrix.plan }} with the same settings
(--plan makes a runner whose settings or speedmatrix version make another plan fail before
it measures), and one job joins the shards with speedmatrix merge. Only the flags below (and
--config) shape the plan; plan accepts run's other flags too (--url, -o, --quiet, …), so that
a workflow can pass both commands the same ones, and ignores them.

A shard is made of whole context rows (a context's prefill cell and all its decode cells), so
that the scout that warms the prefix cache serves the decode cells after it. Rows are balanced
by their expected time: every decode trial its window plus 2 s (readiness and drain), every
prefill its length at 13K prompt tok/s falling to ~10K at 1M tokens (the reference report's),
twice with the context warm-up; the plan knows no server, so cells a server will find over
capacity count as measured. The split is deterministic: run --shard K/N computes the same from
the same settings and records the plan's identity, which merge checks. N above the number of
rows is an error that says the maximum. The expected time per shard is in the JSON and in the
log on stderr.`
	run := cmd.RunE
	cmd.RunE = func(c *cobra.Command, args []string) error {
		if !c.Flags().Changed("shards") {
			return usagef("--shards is required: how many runners share the matrix, e.g. --shards 4")
		}
		c.SetContext(context.WithValue(c.Context(), planKey{}, shards))
		return run(c, args)
	}
	cmd.Flags().IntVar(&shards, "shards", 0, "number of shards (runners), at most the number of context rows")
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if !planFlags[f.Name] {
			f.Hidden = true // run's: accepted, so that a workflow passes plan and run the same flags, but no part of a plan
		}
	})
	return cmd
}

// planFlags are the flags of plan's help: those that shape the plan (the matrix, the window and
// the trials, and --max-tokens, which trims the longest context), --config and --shards. plan
// accepts run's other flags and ignores them.
var planFlags = map[string]bool{
	"config": true, "shards": true, "matrix": true, "contexts": true, "concurrency": true,
	"prefill-contexts": true, "cells": true, "duration": true, "trials": true,
	"context-warmup": true, "max-tokens": true, "help": true,
}

// printPlan prints the job matrix of the run options o in n shards (newPlanCmd).
func printPlan(env *Env, o measure.Settings, n int) error {
	p, err := measure.Plan(o, n)
	if err != nil {
		return err
	}
	m := shardMatrix{Include: measure.ShardJobs(p)}
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
