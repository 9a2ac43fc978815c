// Package calibrate is `speedmatrix calibrate`: its flags, grouped (--compare, --only), then
// package calibrate's synthetic, budgeted, stored or world calibration.
package calibrate

import (
	"io"
	"time"

	"github.com/speedmatrix/speedmatrix/internal/cli/cmdutil"

	"github.com/spf13/cobra"

	"github.com/speedmatrix/speedmatrix/calibrate"
	"github.com/speedmatrix/speedmatrix/report"
	"github.com/speedmatrix/speedmatrix/results"
	"github.com/speedmatrix/speedmatrix/store"
)

// NewCmd builds `speedmatrix calibrate`.
func NewCmd(env *cmdutil.Env) *cobra.Command {
	s := calibrate.DefaultSettings()
	var compareSets, only []string
	var storeDir, configID, format string
	var budget time.Duration
	var specNoise string
	var world, advice bool
	adviceTrials := 1
	pairs := calibrate.DefaultWorldSettings().Pairs
	cmd := &cobra.Command{
		Use:   "calibrate",
		Short: "Measure the false-alarm and detection rates of compare on synthetic matrices",
		Long: `Calibrate measures how often "speedmatrix compare" is wrong, instead of assuming it. It
draws synthetic servers with the reference report's matrix shape and realistic run-to-run noise
(per-cell CVs from 0.5 % to 20 %, per-window output-token bins and per-request samples, variation
between runs as well as within), then runs

  A/A comparisons (two runs of the same server): the share with any regression verdict is the
  false-alarm rate of a whole-matrix comparison (target ≤ 1 %);
  A/B comparisons (one decode row slowed by 2δ): the share in which that row is flagged
  (target ≥ 90 %), and the regressions reported outside it (false discoveries, target ≤ q).

By default each comparison also follows its own rerun advice (the second look), as a user would:
the listed cells measured again, and decode rows that no cell of theirs decides measured whole
for the row test; the output gives the GPU time those reruns cost (30 s windows). The full run
(1000 A/A, 400 A/B) takes a minute or two; the figures are reproducible by --seed. --compare
look=1 stops each at its first look; --compare NAME=VALUE sets the comparisons' other settings
(the FDR, the false-alarm cap, the thresholds, the rerun advice's bounds, the noise prior).

With --budget D it follows the bot's adaptive procedure instead: one run a side, then the
advised reruns that D of GPU time (both sides) pays for, chosen by compare's PlanRerunsFor, then the
second look; and it sets that against --naive-trials fixed trials a side with one comparison, on
the same matrices, in one table: A/A false alarms, detection of the slowed row (on the rows the
budget's measurement could decide, and on all), mean and worst GPU time per comparison (30 s
windows, readiness, drain and per-context prefills at the reference server's speed), and the
cell-metrics left undecided. --spec-noise on|off draws the decode rates' noise from speculative
decoding's published figures or from a server without it.

With --store DIR it instead measures the error rate on this machine: every pair of stored runs
of one commit (default-branch results and A/A reruns, config store.aa_every) is compared as a
real A/A comparison (one look, no history), and the run-to-run noise those runs show is given
per cell-metric next to the prior's. Where it exceeds the prior, compare uses the measured one.

With --world it measures compare against noise it was not built for (docs/calibration.md): full
matrices drawn from each noise model (--only models=…: gaussian, t3, spec, spec-nocounters, drift,
bimodal, and the disturbances stall, throttle, orderdrift, loadnoise), measured by each procedure (--only procedures=…: one, history, trials3, runs3, paired), and
for each the A/A false blocks (the matrix verdict is regression, on which compare fails with
its regression status) and the A/A comparisons left undecided (unproven or incomplete), the
detection of each slowdown shape (--only shapes=…: rows>=32K, row32K, column8, column1, matrix,
decode5) with the share left undecided instead (decode5: and passed), and the shares of A/A cells decided unchanged (of all cells, and of
the prefill and 8+ request cells), unproven and inconclusive, each with its 95 % Wilson interval
and a mark against the targets; --pairs comparisons each (default 1000: about 25 minutes on 2
cores for the whole table).

With --advice it checks the PR comment's rerun advice instead: for world comparisons of one head
run (--only procedures=one or history, default history) whose first look leaves cells undecided, it
follows every /bench rerun the comment advises as the bot runs it (the head alone, --rerun-trials
trials a cell, a job of its own, pooled with the first pass at the second look) and gives the
share of the promised cells decided, against the 80 % the comment's words need (docs/calibration.md).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if world || advice {
				return runWorld(cmd, env, worldFlags{only: only, pairs: pairs, seed: s.Seed, format: format, advice: advice, adviceTrials: adviceTrials})
			}
			for _, kv := range compareSets {
				if err := s.SetCompare(kv); err != nil {
					return err
				}
			}
			if err := s.Check(); err != nil {
				return err
			}
			switch specNoise {
			case "":
			case "on":
				s.Noise = calibrate.NoiseSpec
			case "off":
				s.Noise = calibrate.NoiseNoSpec
			default:
				return cmdutil.Usagef("--spec-noise %q: want on (speculative decoding's run-to-run noise) or off", specNoise)
			}
			if cmd.Flags().Changed("budget") {
				if budget < 0 || s.NaiveTrials < 0 {
					return cmdutil.Usagef("--budget and --naive-trials must not be negative")
				}
				s.Budget = budget
				rep, err := calibrate.RunBudget(cmd.Context(), s)
				if err != nil {
					return err
				}
				return rep.Write(env.Stdout)
			}
			if storeDir != "" {
				if format != "text" && format != "json" {
					return cmdutil.Usagef("--format %q: want text or json", format)
				}
				if err := cmdutil.ExistingStore(storeDir); err != nil {
					return err
				}
				rep, err := calibrate.StoreAA(cmd.Context(), store.NewDir(storeDir), configID, s.Thresholds)
				if err != nil {
					return err
				}
				for _, w := range rep.Warnings {
					env.Log.Warn(w)
				}
				if format == "json" {
					return rep.WriteJSON(env.Stdout)
				}
				return rep.Write(env.Stdout)
			}
			rep, err := calibrate.Run(cmd.Context(), s)
			if err != nil {
				return err
			}
			return rep.Write(env.Stdout)
		},
	}
	f := cmd.Flags()
	f.IntVar(&s.AA, "aa", s.AA, "number of A/A whole-matrix comparisons")
	f.IntVar(&s.AB, "ab", s.AB, "number of A/B whole-matrix comparisons (rows slowed in turn)")
	f.Uint64Var(&s.Seed, "seed", s.Seed, "random seed; the same seed and settings give the same figures")
	f.StringArrayVar(&compareSets, "compare", nil, "a setting of the comparisons' statistics, NAME=VALUE, repeatable: fdr=Q, false-alarm=RATE (0: off), minimum-effect, max-further-trials=N and max-row-trials=N (the rerun advice's; 0 turns the row rerun off), threshold=METRIC=PERCENT (as compare's --threshold), prior-decode-rate=UPTO=PERCENT,…,*=PERCENT (the prior CV of decode rates by concurrency, whatever the runs say of speculative decoding; default compare's, 1=20,2=10,4=5,*=1, or 1=20,2=24,4=9,*=1 where a side served it unpinned or cannot tell), look=1 (do not follow the rerun advice with a second look)")
	f.StringArrayVar(&only, "only", nil, "with --world or --advice: only these noise models, procedures or slowdown shapes, KIND=LIST (models=t3,spec, procedures=one,history, shapes=decode5), repeatable (default all)")
	f.Float64Var(&s.NoiseScale, "noise-scale", s.NoiseScale, "multiply the realistic noise (above 1 the true noise exceeds compare's prior)")
	f.IntVar(&s.Trials, "trials", s.Trials, "runs per side pooled in each comparison")
	f.IntVar(&s.History, "history", s.History, "earlier base runs given to compare as history (0: the prior applies)")
	f.DurationVar(&budget, "budget", s.Budget, "budgeted mode: follow the bot's procedure (first pass, the reruns this much GPU time pays for on both sides, second look) and set it against --naive-trials")
	f.IntVar(&s.NaiveTrials, "naive-trials", s.NaiveTrials, "with --budget: fixed trials a side of the naive procedure to compare with (0: none)")
	f.StringVar(&specNoise, "spec-noise", "", "decode-rate noise model: on (speculative decoding: CV 10 % at C=1, 20 % at 2, 7.5 % at 4, 0.5 % from 8) or off (0.5–2 % at C≤4, 0.1–1 % from 8); default the first calibration's ranges")
	f.BoolVar(&s.StoredBaseline, "stored-baseline", false, "with --budget: the base's runs come from the store, as in the bot's adaptive job; the job measures and reruns the head alone")
	f.StringVar(&storeDir, "store", "", "local store directory: real A/A from the stored runs of one commit instead of synthetic matrices")
	f.StringVar(&configID, "config-id", "", "with --store: the configuration to calibrate (default: the only one stored)")
	f.StringVar(&format, "format", "text", "with --store: text or json; with --world: text, markdown or json")
	f.BoolVar(&world, "world", false, "the world's noise models and procedures instead (see above)")
	f.BoolVar(&advice, "advice", false, "check the PR comment's rerun advice on the world's comparisons (see above); takes --only and --pairs")
	f.IntVar(&adviceTrials, "rerun-trials", adviceTrials, "with --advice: each rerun's trials a cell (the configured trials)")
	f.IntVar(&pairs, "pairs", pairs, "with --world: A/A comparisons, and A/B comparisons per shape, of each model and procedure")
	return cmd
}

// worldFlags are the flags of `calibrate --world` and `calibrate --advice`.
type worldFlags struct {
	only         []string
	format       string
	pairs        int
	seed         uint64
	advice       bool
	adviceTrials int
}

// runWorld runs `speedmatrix calibrate --world`, or with --advice the advice check.
func runWorld(cmd *cobra.Command, env *cmdutil.Env, wf worldFlags) error {
	ws := calibrate.DefaultWorldSettings()
	ws.Seed, ws.Pairs = wf.seed, wf.pairs
	if wf.advice {
		ws.Procedures = []calibrate.Procedure{calibrate.ProcHistory}
	}
	var err error
	for _, kv := range wf.only {
		if err := ws.SetOnly(kv); err != nil {
			return err
		}
	}
	if wf.pairs < 1 {
		return cmdutil.Usagef("--pairs %d: want at least 1", wf.pairs)
	}
	if wf.format != "text" && wf.format != "markdown" && wf.format != "json" {
		return cmdutil.Usagef("--format %q: want text, markdown or json", wf.format)
	}
	if wf.advice {
		for _, p := range ws.Procedures {
			if p != calibrate.ProcOne && p != calibrate.ProcHistory {
				return cmdutil.Usagef("--advice --only procedures=…: %s measures more than one head run; want one or history", p)
			}
		}
		if wf.adviceTrials < 1 {
			return cmdutil.Usagef("--rerun-trials %d: want at least 1", wf.adviceTrials)
		}
	}
	last := -1
	ws.Progress = func(done, total int) {
		if pct := done * 10 / total; pct != last {
			last = pct
			env.Log.Info("calibrate --world", "done", done, "of", total)
		}
	}
	type table interface {
		WriteText(io.Writer) error
		WriteMarkdown(io.Writer) error
		WriteJSON(io.Writer) error
	}
	var rep table
	if wf.advice {
		rep, err = calibrate.RunAdvice(cmd.Context(), calibrate.AdviceSettings{World: ws, Trials: wf.adviceTrials, Advise: advisedCells})
	} else {
		rep, err = calibrate.RunWorld(cmd.Context(), ws)
	}
	if err != nil {
		return err
	}
	switch wf.format {
	case "markdown":
		return rep.WriteMarkdown(env.Stdout)
	case "json":
		return rep.WriteJSON(env.Stdout)
	}
	return rep.WriteText(env.Stdout)
}

// advisedCells returns the cells of each `/bench rerun` the PR comment advises for c.
func advisedCells(c *results.Comparison) [][]string {
	var out [][]string
	for _, g := range report.AdvisedReruns(c) {
		out = append(out, g.Cells)
	}
	return out
}
