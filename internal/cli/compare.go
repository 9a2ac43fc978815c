package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/speedmatrix/speedmatrix/compare"
	"github.com/speedmatrix/speedmatrix/compare/calibrate"
	"github.com/speedmatrix/speedmatrix/report"
	"github.com/speedmatrix/speedmatrix/results"
	"github.com/speedmatrix/speedmatrix/store"
)

// newCompareCmd builds `speedmatrix compare`.
func newCompareCmd(env *Env) *cobra.Command {
	var (
		historyDir, out, format, cells string
		storeDir                       string
		historyMax                     int
		thresholds                     []string
		fdr                            float64
		falseAlarm                     float64
		force, minEffect               bool
		look                           int
	)
	def := compare.DefaultThresholds()
	cmd := &cobra.Command{
		Use:   "compare BASE HEAD",
		Short: "Compare two results files cell by cell with statistical verdicts",
		Long: `Compare decides for every cell present in both results files and every metric (prefill:
prompt tok/s and TTFT; decode: total tok/s, per-request tok/s, TTFT, time between tokens)
whether HEAD is a regression, an improvement, unchanged (shown within ±δ) or inconclusive
against BASE, with the relative change, its confidence interval, a p-value and the smallest
change the cell could have detected. A status change from valid to queued, over capacity or
error is a regression by itself. The false discovery rate is controlled over the whole matrix
(Benjamini–Hochberg), and inconclusive cells get rerun advice with a two-look rule.

Noise comes from repeated trials when both sides have them, else from --history (the spread of
each cell across earlier results of the base) or --store (the newest default-branch results of
the base's config id in a results store), from 3 results per cell (the bot waits for
store.min_history, 10: see the README), else from the
window's own samples floored by a prior, else from the prior alone; the output says which, per
cell.

BASE and HEAD may each be several files separated by commas (BASE,BASE_RERUN): their trials
pool cell by cell, as the second look after a rerun needs.

Default thresholds δ: 3% for throughput (prompt_tok_per_s, total_tok_per_s,
per_request_tok_per_s), 5% for latency (ttft_ms, tbt_ms); FDR q = 0.05.

Exit status: 0 no regression, 3 regression found (after writing the output), 1 error,
2 usage.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if format != "text" && format != "markdown" && format != "json" {
				return usagef("--format %q: want text, markdown or json", format)
			}
			th := def
			for _, s := range thresholds {
				if err := th.SetThreshold(s); err != nil {
					return usagef("--threshold: %v", err)
				}
			}
			if !(fdr > 0 && fdr < 1) {
				return usagef("--fdr %v: want a false discovery rate between 0 and 1, e.g. 0.05", fdr)
			}
			th.FDR = fdr
			if !(falseAlarm >= 0 && falseAlarm < 0.5) {
				return usagef("--false-alarm %v: want a rate between 0 and 0.5, e.g. 0.01 (0 turns the cap off)", falseAlarm)
			}
			th.FalseAlarm = falseAlarm
			if look != 1 && look != 2 {
				return usagef("--look %d: want 1 (first comparison) or 2 (after the advised rerun)", look)
			}
			th.Look = look
			th.MinimumEffect = minEffect
			in := compare.Input{Force: force, BasePath: args[0], HeadPath: args[1]}
			if cells != "" {
				for _, s := range strings.Split(cells, ",") {
					id, err := results.ParseCellID(s)
					if err != nil {
						return usagef("--cells: %v", err)
					}
					in.Cells = append(in.Cells, id)
				}
			}
			var err error
			if in.Base, err = readSide(args[0]); err != nil {
				return err
			}
			if in.Head, err = readSide(args[1]); err != nil {
				return err
			}
			if err := checkAskedCells(in.Cells, args[0], args[1], in.Base, in.Head); err != nil { // compare_cells.go
				return err
			}
			var histWarnings []string
			if historyDir != "" && storeDir != "" {
				return usagef("give --history or --store, not both")
			}
			if storeDir != "" {
				if err := existingStore(storeDir); err != nil { // storeread.go
					return err
				}
				st := store.NewDir(storeDir)
				if in.History, err = historyFromStore(cmd.Context(), env, st, in.Base[0], in.Head, historyMax, th.MinHistory); err != nil {
					return err
				}
				var commits int
				var skipped []error
				in.MeasuredNoise, commits, skipped, err = calibrate.StoreNoise(cmd.Context(), st, store.ConfigID(in.Base[0]))
				warnSkipped(env, skipped)
				if err != nil {
					return fmt.Errorf("--store: %w", err)
				}
				if commits > 0 {
					env.Log.Info(fmt.Sprintf("measured noise: A/A runs of %d commits in the store; where it exceeds the prior, compare uses it", commits))
				}
			}
			if historyDir != "" {
				in.History, histWarnings, err = readHistory(historyDir)
				if err != nil {
					return err
				}
			}
			c, err := compare.Compare(in, th)
			if err != nil {
				return err
			}
			c.Warnings = append(c.Warnings, histWarnings...)
			for _, w := range c.Warnings {
				env.Log.Warn("compare: "+w, "base", args[0], "head", args[1])
			}
			if out != "" {
				if err := results.WriteComparisonFile(out, c); err != nil {
					return fmt.Errorf("writing %s: %w", out, err)
				}
			}
			switch format {
			case "json":
				err = results.WriteComparison(env.Stdout, c)
			case "markdown":
				err = report.ComparisonMarkdown(env.Stdout, c)
			default:
				err = report.ComparisonText(env.Stdout, c)
			}
			if err != nil {
				return err
			}
			if c.Verdict == results.VerdictRegression {
				return ErrRegression
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&historyDir, "history", "", "folder of earlier results files of the base (*.json); each cell's spread across them is its noise")
	f.StringVar(&storeDir, "store", "", "results store (speedmatrix store): the newest default-branch results of the base's config id are the history, when there are at least min_history; repeated runs of one commit (A/A reruns) give measured noise, used where it exceeds the prior")
	f.IntVar(&historyMax, "history-max", 10, "with --store, use at most this many default-branch results as history")
	f.StringArrayVar(&thresholds, "threshold", nil, "practical floor δ as METRIC=PERCENT, repeatable (metrics: "+strings.Join(compare.MetricNames(), ", ")+"), e.g. --threshold ttft=10")
	f.Float64Var(&fdr, "fdr", def.FDR, "false discovery rate q over all tested cell-metrics (both looks together)")
	f.Float64Var(&falseAlarm, "false-alarm", def.FalseAlarm, "whole-matrix false-alarm rate to keep besides the FDR: both looks together spend min(fdr, false-alarm); 0 turns this cap off")
	f.BoolVar(&force, "force", false, "compare files of different models, hardware or simulator speedups (the output warns)")
	f.StringVarP(&out, "output", "o", "", "also write the comparison file (speedmatrix/comparison/v1 JSON) to this path")
	f.StringVar(&format, "format", "text", "output on stdout: text (benchstat-like), markdown (the comparison as a markdown page; the bot's pull-request comment is another page, which demo and action write) or json (the comparison file)")
	f.IntVar(&look, "look", 1, "1 for a first comparison; 2 for the comparison of pooled trials after the advised rerun (stricter level, no third look)")
	f.BoolVar(&minEffect, "minimum-effect", false, "test whether a change lies beyond ±δ (H0: |change| ≤ δ) instead of whether it is zero: fewer false alarms when the noise is measured (history, trials), much less power in a first comparison")
	f.StringVar(&cells, "cells", "", "compare only these cells (comma-separated, e.g. decode/8K/1,prefill/8K), as the rerun advice lists them")
	return cmd
}

// historyFromStore returns the history compare uses with --store: the newest default-branch
// results of the base's config id in s (at most max, none when fewer than min), leaving out the
// head's engine commits (a run must not be its own noise).
func historyFromStore(ctx context.Context, env *Env, s store.Store, base *results.File, head []*results.File, max, min int) ([]*results.File, error) {
	var exclude []string
	for _, h := range head {
		if h.Engine.Commit != "" {
			exclude = append(exclude, strings.ToLower(h.Engine.Commit))
		}
	}
	files, _, note, skipped, err := store.History(ctx, s, store.ConfigID(base), store.HistoryOptions{Max: max, Min: min, Exclude: exclude})
	warnSkipped(env, skipped)
	if err != nil {
		return nil, fmt.Errorf("--store: %w", err)
	}
	env.Log.Info(note)
	return files, nil
}

// warnSkipped logs, as warnings, the stored files a reader of optional evidence (history, A/A
// runs) left out because they could not be read; each names the file and how to repair it.
func warnSkipped(env *Env, skipped []error) {
	for _, w := range skipped {
		env.Log.Warn(w.Error())
	}
}

// readSide reads one side's comma-separated results files.
func readSide(arg string) ([]*results.File, error) {
	var fs []*results.File
	for _, p := range strings.Split(arg, ",") {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		f, err := results.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("cannot compare: %w", err)
		}
		fs = append(fs, f)
	}
	if len(fs) == 0 {
		return nil, usagef("no results file in %q", arg)
	}
	return fs, nil
}

// readHistory reads every *.json results file in dir, in name order; files that are not valid
// results files are skipped with a warning.
func readHistory(dir string) ([]*results.File, []string, error) {
	matches, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, nil, err
	}
	if _, err := os.Stat(dir); err != nil {
		return nil, nil, fmt.Errorf("--history: %w", err)
	}
	sort.Strings(matches)
	var fs []*results.File
	var warnings []string
	for _, p := range matches {
		f, err := results.ReadFile(p)
		if err != nil {
			warnings = append(warnings, fmt.Sprintf("history file skipped: %v", err))
			continue
		}
		fs = append(fs, f)
	}
	if len(fs) == 0 {
		warnings = append(warnings, fmt.Sprintf("--history %s holds no readable results file; the prior was used", dir))
	}
	return fs, warnings, nil
}
