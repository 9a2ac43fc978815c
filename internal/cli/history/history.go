// Package history is `speedmatrix history`: its flags, the results read (a store or a folder),
// then package history and history/pages.
package history

import (
	"fmt"
	"path/filepath"
	"slices"

	"github.com/speedmatrix/speedmatrix/internal/cli/cmdutil"

	"github.com/spf13/cobra"
	"gonum.org/v1/plot/vg"

	"github.com/speedmatrix/speedmatrix/compare"
	"github.com/speedmatrix/speedmatrix/history"
	"github.com/speedmatrix/speedmatrix/history/pages"
	"github.com/speedmatrix/speedmatrix/internal/sitedir"
	"github.com/speedmatrix/speedmatrix/internal/textout"
	"github.com/speedmatrix/speedmatrix/results"
	"github.com/speedmatrix/speedmatrix/store"
)

// NewCmd builds `speedmatrix history`.
func NewCmd(env *cmdutil.Env) *cobra.Command {
	var (
		dir, cellArg, metricArg, svgPath, htmlDir string
		configID, gitDir, ref                     string
		thresholds                                []string
		sf                                        cmdutil.StoreFlags
		o                                         = history.DefaultOptions()
	)
	cmd := &cobra.Command{
		Use:   "history (--store DIR | --branch NAME | --dir DIR) [--cell CELL [--metric METRIC] [--svg OUT.svg]] [--html OUTDIR]",
		Short: "Show trends and change points of the default branch's results",
		Long: `History reads the default branch's results of one configuration, from the results store
(--store DIR, or the data branch --branch speedmatrix-data --repo OWNER/NAME, or the store.dir of
--config) or from a folder of results files (--dir), and looks for sustained shifts in every
cell-metric with E-divisive means (a permutation test at --alpha, and a change of at least the
metric's δ: 3 % for throughput, 5 % for latency, as compare uses; --threshold changes it).

The series is over commits: with a clone of the engine (--git DIR, along the first parents of
--ref, default the clone's default branch: origin/HEAD, else main), or on the data branch (along the repository's default branch, or --ref),
the results are ordered as their commits are on the default branch, so that a baseline measured
later (speedmatrix baseline --commit OLD) takes its commit's place, and results of commits a
force push removed are left out (and counted). Otherwise, and always with --dir, they are ordered
by the time they were measured.

A store may hold several configurations (another model, GPU or matrix): --config-id picks one
(store list shows them); with one, it is used. --html with several and no --config-id writes a
page per configuration (in the folder of its id) and an index.html that lists them.

Without --cell it lists every change point of every cell-metric. With --cell it prints that
cell's series (commit, date, value, status) and its change points; --svg writes its chart.
--html writes a static page (index.html and charts/*.svg, no scripts) with every cell's trend,
the change points and the latest matrix, for GitHub Pages.

Metrics: prompt_tok_per_s, total_tok_per_s, per_request_tok_per_s, ttft_ms, tbt_ms (or
prompt, total, per_request, ttft, tbt); by default total tok/s for decode, prompt tok/s for
prefill.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fromStore := sf.Dir != "" || sf.Branch != "" || sf.ConfigPath != ""
			switch {
			case dir == "" && !fromStore:
				return cmdutil.Usagef("give the results to read: --store DIR (or --branch NAME --repo OWNER/NAME) for the results store, or --dir DIR for a folder of results files")
			case dir != "" && fromStore:
				return cmdutil.Usagef("give --dir or a store (--store, --branch, --config), not both")
			case dir != "" && (configID != "" || gitDir != "" || ref != ""):
				return cmdutil.Usagef("--config-id, --git and --ref read a store: use them with --store or --branch, not --dir")
			}
			var cell results.CellID
			metric := results.Metric("")
			if cellArg != "" {
				var err error
				if cell, err = results.ParseCellID(cellArg); err != nil {
					return cmdutil.Usagef("--cell: %v", err)
				}
				metric = history.MainMetric(cell.Phase)
				if metricArg != "" {
					if metric, err = history.ParseMetric(metricArg); err != nil {
						return cmdutil.Usagef("--metric: %v", err)
					}
					if !slices.Contains(results.Metrics(cell.Phase), metric) {
						return cmdutil.Usagef("--metric %s: a %s cell has no such metric (it has %v)", metric, cell.Phase, results.Metrics(cell.Phase))
					}
				}
			} else if metricArg != "" || svgPath != "" {
				return cmdutil.Usagef("--metric and --svg need --cell, e.g. --cell decode/8K/32")
			}
			th := compare.DefaultThresholds()
			for _, a := range thresholds {
				if err := th.SetThreshold(a); err != nil {
					return cmdutil.Usagef("--threshold: %v", err)
				}
			}
			o.Delta = th.Delta
			if fromStore {
				c, err := sf.Config()
				if err != nil {
					return err
				}
				a, err := sf.OpenAlong(cmd.Context(), env, c, gitDir, ref, true, store.DefaultSeriesDepth)
				if err != nil {
					return err
				}
				sets, err := history.FromStore(cmd.Context(), env.Log, a, history.StoreQuery{ConfigID: configID, All: htmlDir != "" && cellArg == ""})
				if err != nil {
					return err
				}
				if len(sets) > 1 {
					return writeSites(env, sets, o, htmlDir)
				}
				return runHistory(env, sets[0].Files, o, cell, metric, svgPath, htmlDir, sets[0].Order, sets[0].Skipped...)
			}
			files, err := history.ReadDir(env.Log, dir)
			if err != nil {
				return err
			}
			history.Order(files)
			return runHistory(env, files, o, cell, metric, svgPath, htmlDir, textout.Plural(len(files), "result", "results")+" ordered by the time they were measured")
		},
	}
	f := cmd.Flags()
	sf.Add(f)
	f.StringVar(&configID, "config-id", "", "with a store: the configuration whose results to read (store list shows the ids; default: the only one stored)")
	f.StringVar(&gitDir, "git", "", "with a store: a clone of the engine repository, to order the results along its default branch's first parents (default: the clone in the current directory, when the stored commits are on its default branch)")
	f.StringVar(&ref, "ref", "", "with a store: the default branch (or commit) whose first parents order the results (default: the default branch of --git, its origin/HEAD or else main; the repository's default branch with --branch)")
	f.StringVar(&dir, "dir", "", "folder of results files (*.json), one configuration's runs; ordered by run start")
	f.StringVar(&cellArg, "cell", "", "the cell to show, e.g. decode/8K/32 or prefill/8K")
	f.StringVar(&metricArg, "metric", "", "the metric to show (default: total_tok_per_s for decode, prompt_tok_per_s for prefill)")
	f.StringVar(&svgPath, "svg", "", "write the cell's chart to this SVG file")
	f.StringVar(&htmlDir, "html", "", "write the static page (index.html and charts/) into this folder")
	f.StringArrayVar(&thresholds, "threshold", nil, "minimum change reported, METRIC=PERCENT (e.g. total_tok_per_s=2 or latency=8%); repeatable")
	f.Float64Var(&o.ChangePoint.Alpha, "alpha", o.ChangePoint.Alpha, "largest permutation p-value of a change point, per series")
	f.IntVar(&o.ChangePoint.Permutations, "permutations", o.ChangePoint.Permutations, "permutations per significance test")
	f.IntVar(&o.ChangePoint.MinSize, "min-runs", o.ChangePoint.MinSize, "fewest runs at a level before and after a change point")
	f.Uint64Var(&o.Seed, "seed", o.Seed, "seed of the permutations (the same seed gives the same change points)")
	return cmd
}

// runHistory analyzes files and writes what was asked for; order says how files are ordered, and
// skipped names stored results left out because they could not be read (shown on the page; the
// log said them already).
func runHistory(env *cmdutil.Env, files []*results.File, o history.Options, cell results.CellID, metric results.Metric, svgPath, htmlDir, order string, skipped ...string) error {
	if metric != "" {
		s := history.NewSeries(files, cell, metric)
		if s.Values() == 0 && !slices.Contains(history.Cells(files), cell) {
			return cmdutil.Usagef("--cell %s: no results file holds this cell (cells: %v)", cell, history.Cells(files))
		}
		if err := s.Detect(o); err != nil {
			return cmdutil.Usagef("%v", err)
		}
		if err := history.WriteText(env.Stdout, s); err != nil {
			return err
		}
		if svgPath != "" {
			svg, err := s.SVG(8*vg.Inch, 3*vg.Inch)
			if err != nil {
				return err
			}
			if err := results.WriteOutput(svgPath, svg); err != nil {
				return fmt.Errorf("--svg: %w", err)
			}
			env.Log.Info("wrote chart", "path", svgPath)
		}
		if htmlDir == "" {
			return nil
		}
	}
	h, err := history.Analyze(files, o)
	if err != nil {
		return cmdutil.Usagef("%v", err)
	}
	h.Order = order
	for _, w := range h.Warnings {
		env.Log.Warn(w)
	}
	h.Warnings = append(h.Warnings, skipped...)
	if metric == "" {
		if err := history.WriteSummary(env.Stdout, h); err != nil {
			return err
		}
	}
	if htmlDir == "" {
		return nil
	}
	site, err := pages.Site(h)
	if err != nil {
		return err
	}
	return writeSite(env, htmlDir, site)
}

// writeSite writes the files of a site (path relative to htmlDir → contents).
func writeSite(env *cmdutil.Env, htmlDir string, site map[string][]byte) error {
	if err := sitedir.Write(htmlDir, site); err != nil {
		return fmt.Errorf("--html: %w", err)
	}
	env.Log.Info("wrote page", "index", filepath.Join(htmlDir, "index.html"), "files", len(site))
	return nil
}

// writeSites analyzes each configuration's history, prints its change points, and writes a
// page for each and an index of them into htmlDir.
func writeSites(env *cmdutil.Env, sets []history.Set, o history.Options, htmlDir string) error {
	configs, err := history.AnalyzeSets(env.Stdout, env.Log, sets, o)
	if err != nil {
		return err
	}
	site, err := pages.SiteOf(configs)
	if err != nil {
		return err
	}
	return writeSite(env, htmlDir, site)
}
