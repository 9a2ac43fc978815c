// Package compare is `speedmatrix compare`: its flags, the sides read (and, with a store, the
// head's baseline and history), then package compare and a renderer of report.
package compare

import (
	"fmt"
	"strings"

	"github.com/speedmatrix/speedmatrix/internal/cli/cmdutil"

	"github.com/spf13/cobra"

	"github.com/speedmatrix/speedmatrix/calibrate"
	"github.com/speedmatrix/speedmatrix/compare"
	"github.com/speedmatrix/speedmatrix/config"
	"github.com/speedmatrix/speedmatrix/internal/textout"
	"github.com/speedmatrix/speedmatrix/measure"
	"github.com/speedmatrix/speedmatrix/report"
	"github.com/speedmatrix/speedmatrix/results"
	"github.com/speedmatrix/speedmatrix/store"
)

// NewCmd builds `speedmatrix compare`.
func NewCmd(env *cmdutil.Env) *cobra.Command {
	var (
		historyDir, out, format, cells string
		configPath                     string
		sf                             cmdutil.StoreFlags
		gitDir, baseBranch             string
		historyMax                     int
		thresholds                     []string
		fdr                            float64
		falseAlarm                     float64
		force, minEffect, partial      bool
		look                           int
	)
	def := compare.DefaultThresholds()
	cmd := &cobra.Command{
		Use:   "compare BASE HEAD | compare --store DIR HEAD",
		Short: "Compare two results files cell by cell with statistical verdicts (or a head with its stored baseline)",
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
store.min_history, 10: docs/store.md; --config applies it here too), else from the
window's own samples floored by a prior, else from the prior alone; the output says which, per
cell.

BASE and HEAD may each be several files separated by commas (BASE,BASE_RERUN): their trials
pool cell by cell, as the second look after a rerun needs.

With a store (--store DIR, or the data branch --branch NAME --repo OWNER/NAME) and HEAD alone,
compare finds HEAD's baseline as the bot does for a pull request: the default-branch results of
the merge-base of HEAD's engine commit and the default branch (--base-branch, default the
clone's origin/HEAD, else main) in a clone of the engine (--git DIR, default the current
directory), or of the nearest first-parent ancestor of the merge-base that has results of
HEAD's configuration. stderr says which commit it used and how far back it went, and so does
the comparison's warnings when it is not the merge-base itself; then it prints the store put
command that keeps HEAD as a pull request's result citing that baseline. No baseline is an
error that says why (and which commit speedmatrix baseline --commit should measure).

Default thresholds δ: 3% for throughput (prompt_tok_per_s, total_tok_per_s,
per_request_tok_per_s), 5% for latency (ttft_ms, tbt_ms); FDR q = 0.05. --config
speedmatrix.yaml takes them from the configuration's compare section and store.min_history
instead, so that a local verdict is the bot's.

Exit status, from the verdict table (docs/verdicts.md), after writing the output: 0 the head
passes (unchanged, improvement, inconclusive), 3 regression, 4 undecided: the head cannot pass
and no regression was shown (incomplete: data the head should hold is missing; unproven: a
slowdown neither shown nor ruled out, which store history, a rerun or a paired run decides; not comparable:
no cell measured on both sides). 1 error, 2 usage.`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			fromStore := sf.Dir != "" || sf.Branch != ""
			headOnly := len(args) == 1
			switch {
			case headOnly && !fromStore:
				return cmdutil.Usagef("compare HEAD alone finds its baseline in a results store: give --store DIR (or --branch NAME --repo OWNER/NAME), or compare two files: speedmatrix compare BASE HEAD")
			case !headOnly && (gitDir != "" || baseBranch != ""):
				return cmdutil.Usagef("--git and --base-branch find the baseline of HEAD alone (speedmatrix compare --store DIR HEAD); with BASE HEAD the base is given")
			case historyDir != "" && fromStore:
				return cmdutil.Usagef("give --history or --store (--branch), not both")
			}
			if format != "text" && format != "markdown" && format != "json" && format != commentFormat {
				return cmdutil.Usagef("--format %q: want text, markdown, json or comment", format)
			}
			th, err := compareThresholds(cmd, configPath, fdr, falseAlarm)
			if err != nil {
				return err
			}
			for _, s := range thresholds {
				if err := th.SetThreshold(s); err != nil {
					return cmdutil.Usagef("--threshold: %v", err)
				}
			}
			if look != 1 && look != 2 {
				return cmdutil.Usagef("--look %d: want 1 (first comparison) or 2 (after the advised rerun)", look)
			}
			th.Look = look
			th.MinimumEffect = minEffect
			headPath := args[len(args)-1]
			in := compare.Input{Force: force, HeadPath: headPath, AcceptPartial: partial}
			if cells != "" {
				for _, s := range strings.Split(cells, ",") {
					id, err := results.ParseCellID(s)
					if err != nil {
						return cmdutil.Usagef("--cells: %v", err)
					}
					in.Cells = append(in.Cells, id)
				}
			}
			if in.Head, err = measure.ReadSide(headPath); err != nil {
				return err
			}
			if !headOnly {
				in.BasePath = args[0]
				if in.Base, err = measure.ReadSide(args[0]); err != nil {
					return err
				}
			}
			var (
				st    store.Store
				where string
				hb    store.HeadBaseline
			)
			if fromStore {
				if st, where, err = sf.OpenToRead(cmd.Context(), env, config.Default()); err != nil {
					return err
				}
			}
			if headOnly {
				if hb, err = store.ResolveHead(cmd.Context(), env.Log, st, where, in.Head, headPath, gitDir, baseBranch); err != nil {
					return err
				}
				in.Base, in.BasePath = []*results.File{hb.File}, hb.Entry.Path
			}
			if err := measure.CheckAskedCells(in.Cells, in.BasePath, headPath, in.Base, in.Head); err != nil {
				return err
			}
			var histWarnings []string
			if fromStore {
				var along store.Along
				if headOnly { // the clone that resolved the baseline orders its history too
					along = store.Along{Commits: store.GitCommits{Dir: gitDir}, Tip: hb.Commit}
				}
				if in.History, in.HistoryByCommit, err = store.HeadHistory(cmd.Context(), env.Log, st, in.Base[0], in.Head, historyMax, th.MinHistory, along, hb.HeadCommit); err != nil {
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
					env.Log.Info(fmt.Sprintf("measured noise: A/A runs of %s in the store; compare uses it where it exceeds the prior and no trials or history measure the cell", textout.Plural(commits, "commit", "commits")))
				}
			}
			if historyDir != "" {
				in.History, histWarnings, err = measure.ReadHistory(historyDir)
				if err != nil {
					return err
				}
			}
			if format == commentFormat {
				th.HeadOnlyReruns = rerunsHeadOnly(in.Head) // comment.go: the advice of the bot's comment
			}
			c, err := compare.Compare(in, th)
			if err != nil {
				return err
			}
			c.Warnings = append(c.Warnings, histWarnings...)
			for _, w := range c.Warnings {
				env.Log.Warn("compare: "+w, "base", in.BasePath, "head", headPath)
			}
			if w := hb.Warning(); w != "" { // logged above by Describe
				c.Warnings = append(c.Warnings, w)
			}
			if out != "" {
				if err := results.WriteComparisonOutput(out, c); err != nil {
					return fmt.Errorf("writing %s: %w", out, err)
				}
			}
			switch format {
			case "json":
				err = results.WriteComparison(env.Stdout, c)
			case "markdown":
				err = report.ComparisonMarkdown(env.Stdout, c)
			case commentFormat:
				err = writeComment(env.Stdout, c, in.Head)
			default:
				err = report.ComparisonText(env.Stdout, c)
			}
			if err != nil {
				return err
			}
			if !partial && c.Verdict == results.VerdictIncomplete && anyPartial(in.Head) {
				env.Log.Warn("the head run stopped early (partial); --accept-partial compares the cells it holds and leaves the others out")
			}
			if headOnly {
				env.Log.Info("to keep the head as pull request N's result, citing this baseline (so that store prune keeps it as long): " + storePutHint(&sf, headPath, hb))
			}
			return cmdutil.CompareExit(env, c)
		},
	}
	f := cmd.Flags()
	f.StringVar(&historyDir, "history", "", "folder of earlier results files of the base (*.json); each cell's spread across them is its noise")
	f.StringVar(&sf.Dir, "store", "", "results store (speedmatrix store): the newest default-branch results of the base's config id are the history (with HEAD alone, the baseline's and its first-parent ancestors', along --git), when there are at least min_history; repeated runs of one commit (A/A reruns) give measured noise, used where it exceeds the prior; with HEAD alone, also where its baseline is found")
	f.StringVar(&sf.Branch, "branch", "", "use the data branch of this name on GitHub as the store instead (needs --repo or GITHUB_REPOSITORY, and GITHUB_TOKEN with contents: read)")
	f.StringVar(&sf.Repo, "repo", "", "the GitHub repository OWNER/NAME of --branch (default $GITHUB_REPOSITORY)")
	f.StringVar(&gitDir, "git", "", "with HEAD alone: the clone of the engine whose commit graph gives the merge-base (default: the current directory)")
	f.StringVar(&baseBranch, "base-branch", "", "with HEAD alone: the default branch the head is compared against (default: the clone's origin/HEAD, else main)")
	f.IntVar(&historyMax, "history-max", 10, "with --store, use at most this many default-branch results as history")
	f.StringArrayVar(&thresholds, "threshold", nil, "practical floor δ as METRIC=PERCENT, repeatable (metrics: "+strings.Join(compare.MetricNames(), ", ")+"), e.g. --threshold ttft=10")
	f.Float64Var(&fdr, "fdr", def.FDR, "false discovery rate q over all tested cell-metrics (both looks together)")
	f.Float64Var(&falseAlarm, "false-alarm", def.FalseAlarm, "whole-matrix false-alarm rate to keep besides the FDR: both looks together spend min(fdr, false-alarm); 0 turns this cap off")
	f.BoolVar(&force, "force", false, "compare files of different models, hardware or simulator speedups (the output warns)")
	f.StringVarP(&out, "output", "o", "", "also write the comparison file (speedmatrix/comparison/v1 JSON) to this path")
	f.StringVar(&format, "format", "text", "output on stdout: text (benchstat-like), markdown (the comparison as a markdown page), json (the comparison file) or comment (the pull-request comment the bot would post for this comparison, its rerun advice for the head alone as /bench rerun measures it)")
	f.BoolVar(&partial, "accept-partial", false, "compare a head run that stopped early (partial) on the cells it holds, the others left out with a warning; without it a partial head is incomplete (exit 4)")
	f.IntVar(&look, "look", 1, "1 for a first comparison; 2 for the comparison of pooled trials after the advised rerun (stricter level, no third look)")
	f.BoolVar(&minEffect, "minimum-effect", false, "test whether a change lies beyond ±δ (H0: |change| ≤ δ) instead of whether it is zero: fewer false alarms when the noise is measured (history, trials), much less power in a first comparison")
	f.StringVar(&configPath, "config", "", "speedmatrix.yaml: compare with its compare section (fdr, false_alarm, thresholds) and store.min_history, as the bot does; --fdr, --false-alarm and --threshold given on the command line win")
	f.StringVar(&cells, "cells", "", "compare only these cells (comma-separated, e.g. decode/8K/1,prefill/8K), as the rerun advice lists them")
	return cmd
}

// compareThresholds returns the thresholds compare starts from: compare's defaults, or with
// --config the configuration's (configThresholds, as the bot and run's adaptive job compare),
// with --fdr and --false-alarm applied when given on the command line (or without --config).
func compareThresholds(cmd *cobra.Command, configPath string, fdr, falseAlarm float64) (compare.Thresholds, error) {
	th := compare.DefaultThresholds()
	if configPath != "" {
		c, err := config.Load(configPath)
		if err != nil {
			return th, cmdutil.Usagef("--config: %v", err)
		}
		th = measure.Thresholds(c)
	}
	if configPath == "" || cmd.Flags().Changed("fdr") {
		if !(fdr > 0 && fdr < 1) {
			return th, cmdutil.Usagef("--fdr %v: want a false discovery rate between 0 and 1, e.g. 0.05", fdr)
		}
		th.FDR = fdr
	}
	if configPath == "" || cmd.Flags().Changed("false-alarm") {
		if !(falseAlarm >= 0 && falseAlarm < 0.5) {
			return th, cmdutil.Usagef("--false-alarm %v: want a rate between 0 and 0.5, e.g. 0.01 (0 turns the cap off)", falseAlarm)
		}
		th.FalseAlarm = falseAlarm
	}
	return th, nil
}

// anyPartial reports whether a file of the side is a partial run.
func anyPartial(side []*results.File) bool {
	for _, f := range side {
		if f != nil && f.Run.Partial {
			return true
		}
	}
	return false
}

// warnSkipped logs, as warnings, the stored files a reader of optional evidence (history, A/A
// runs) left out because they could not be read; each names the file and how to repair it.
func warnSkipped(env *cmdutil.Env, skipped []error) {
	for _, w := range skipped {
		env.Log.Warn(w.Error())
	}
}
