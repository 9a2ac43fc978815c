package calibrate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/speedmatrix/speedmatrix/compare"
	"github.com/speedmatrix/speedmatrix/internal/textout"
	"github.com/speedmatrix/speedmatrix/results"
	"github.com/speedmatrix/speedmatrix/store"
)

// StoreReport is a real A/A calibration from the runs a store holds (`speedmatrix calibrate
// --store`): every pair of stored runs of one commit compared as base and head, and the
// run-to-run noise those runs show next to the prior.
type StoreReport struct {
	ConfigID string `json:"config_id"`
	// Commits counts the commits with at least two runs; Runs their runs.
	Commits int `json:"commits"`
	Runs    int `json:"runs"`
	// FalseAlarm is the share of the pairs' comparisons (one look, no history) with a
	// regression verdict, with its 95 % Wilson interval.
	FalseAlarm Rate `json:"false_alarm"`
	// Noise is the measured run-to-run CV of every cell-metric with at least one degree of
	// freedom, next to the prior's.
	Noise []MeasuredNoise `json:"noise"`
	// Alarms are the pairs whose comparison had a regression verdict: which runs and what
	// regressed, so that a false alarm can be looked into.
	Alarms []Alarm `json:"alarms,omitempty"`
	// Warnings name the stored runs left out because they could not be read.
	Warnings []string `json:"warnings,omitempty"`
}

// Alarm is one A/A pair of stored runs of one commit that compare called a regression.
type Alarm struct {
	Commit string `json:"commit"`
	// Base and Head are the store paths of the two runs, in the order compared.
	Base string `json:"base"`
	Head string `json:"head"`
	// Regressed lists the cell-metrics (and row tests) with a regression verdict, with the change.
	Regressed []string `json:"regressed"`
}

// MeasuredNoise is the run-to-run CV of one cell-metric measured in a store.
type MeasuredNoise struct {
	Cell   string         `json:"cell"`
	Metric results.Metric `json:"metric"`
	// CV is the within-commit spread of the log values, pooled across commits, with DF
	// degrees of freedom.
	CV      float64 `json:"cv"`
	DF      int     `json:"df"`
	PriorCV float64 `json:"prior_cv"`
	// AbovePrior says that compare, given this measurement, uses it instead of the prior.
	AbovePrior bool `json:"above_prior"`
}

// StoreAA runs the real A/A calibration of configID (empty: the only config id the store holds
// runs of) on the default-branch results and A/A reruns in s. A config id the store holds no
// such runs of is an error naming the ones it holds; a stored run that cannot be read is left
// out, and named in the report's Warnings.
func StoreAA(ctx context.Context, s store.Store, configID string, th compare.Thresholds) (*StoreReport, error) {
	var entries []store.Entry
	for _, k := range []store.Kind{store.KindDefault, store.KindAA} {
		es, err := s.List(ctx, store.Filter{Kind: k})
		if err != nil {
			return nil, fmt.Errorf("calibrate --store: %w", err)
		}
		entries = append(entries, es...)
	}
	runs := map[string]int{}
	var ids []string
	for _, e := range entries {
		if runs[e.ConfigID] == 0 {
			ids = append(ids, e.ConfigID)
		}
		runs[e.ConfigID]++
	}
	sort.Strings(ids)
	held := make([]string, len(ids))
	for i, id := range ids {
		held[i] = fmt.Sprintf("%s (%s)", id, textout.Plural(runs[id], "run", "runs"))
	}
	switch {
	case len(ids) == 0:
		return nil, errors.New("calibrate --store: the store holds no default-branch results nor A/A reruns; store a commit's runs (speedmatrix baseline, store put) first")
	case configID == "" && len(ids) > 1:
		return nil, fmt.Errorf("calibrate --store: the store holds runs of %d configurations (%s); pick one with --config-id", len(ids), strings.Join(held, ", "))
	case configID == "":
		configID = ids[0]
	case runs[configID] == 0:
		return nil, fmt.Errorf("calibrate --store: no such config in the store: %s; it holds runs of %s", configID, strings.Join(held, ", "))
	}
	groups, used, skipped, err := store.Repeats(ctx, s, configID)
	if err != nil {
		return nil, fmt.Errorf("calibrate --store: %w", err)
	}
	rep := &StoreReport{ConfigID: configID, Commits: len(groups)}
	for _, w := range skipped {
		rep.Warnings = append(rep.Warnings, w.Error())
	}
	alarms, pairs := 0, 0
	for g, files := range groups {
		rep.Runs += len(files)
		for i := range files {
			for j := i + 1; j < len(files); j++ {
				cmp, err := compare.Compare(compare.Input{Base: files[i : i+1], Head: files[j : j+1]}, th)
				if err != nil {
					return nil, fmt.Errorf("calibrate --store: commit %s, runs %s and %s: %w", used[g][i].Commit, used[g][i].Path, used[g][j].Path, err)
				}
				pairs++
				if cmp.Verdict == results.VerdictRegression {
					alarms++
					rep.Alarms = append(rep.Alarms, Alarm{Commit: used[g][i].Commit, Base: used[g][i].Path, Head: used[g][j].Path, Regressed: regressed(cmp)})
				}
			}
		}
	}
	if pairs == 0 {
		why := ""
		if len(skipped) > 0 {
			why = fmt.Sprintf(" that can be read (left out: %s)", strings.Join(rep.Warnings, "; "))
		}
		return nil, fmt.Errorf("calibrate --store: no commit of config %s has two stored runs%s; store A/A reruns (config store.aa_every) or measure a commit twice", configID, why)
	}
	rep.FalseAlarm = rate(alarms, pairs)
	cv, df := compare.MeasuredNoise(groups)
	for k, v := range cv {
		p := th.Prior.CV(k.Cell, k.Metric)
		rep.Noise = append(rep.Noise, MeasuredNoise{Cell: k.Cell.String(), Metric: k.Metric, CV: v, DF: df[k], PriorCV: p, AbovePrior: v > p})
	}
	sort.Slice(rep.Noise, func(i, j int) bool {
		a, b := rep.Noise[i], rep.Noise[j]
		if a.Cell != b.Cell {
			return a.Cell < b.Cell
		}
		return a.Metric < b.Metric
	})
	return rep, nil
}

// WriteJSON writes the report as indented JSON.
func (r *StoreReport) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// Write writes the report as text: the false-alarm rate and a table of the measured noise.
func (r *StoreReport) Write(w io.Writer) error {
	above := 0
	for _, n := range r.Noise {
		if n.AbovePrior {
			above++
		}
	}
	fmt.Fprintf(w, "Real A/A from the store, config %s: %d commits with %d runs, %d pairs compared (one look, no history)\n", r.ConfigID, r.Commits, r.Runs, r.FalseAlarm.N)
	fmt.Fprintf(w, "False alarms (any regression verdict): %s\n", r.FalseAlarm)
	for _, a := range r.Alarms {
		fmt.Fprintf(w, "  commit %s: %s vs %s: %s\n", results.ShortCommit(a.Commit), a.Base, a.Head, strings.Join(a.Regressed, "; "))
	}
	fmt.Fprintf(w, "Measured run-to-run noise above the prior in %d of %d cell-metrics; compare uses the measured noise there (df is its degrees of freedom: with 1 or 2 the measured CV is a rough estimate; more A/A reruns tighten it).\n\n", above, len(r.Noise))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "cell\tmetric\tmeasured CV\tdf\tprior CV\t\t")
	for _, n := range r.Noise {
		flag := ""
		if n.AbovePrior {
			flag = "above prior"
		}
		fmt.Fprintf(tw, "%s\t%s\t%.2f %%\t%d\t%.2f %%\t%s\t\n", n.Cell, n.Metric, n.CV*100, n.DF, n.PriorCV*100, flag)
	}
	return tw.Flush()
}

// regressed lists the regressions of a comparison: each cell-metric as "cell metric ±x.x %",
// then each row test.
func regressed(c *results.Comparison) []string {
	var out []string
	for _, cell := range c.Cells {
		for _, m := range cell.Metrics {
			if m.Verdict != results.VerdictRegression {
				continue
			}
			ch := ""
			if m.Change != nil {
				ch = fmt.Sprintf(" %+.1f %%", 100*m.Change.Change)
			}
			out = append(out, fmt.Sprintf("%s %s%s", cell.Cell, m.Metric, ch))
		}
	}
	for _, r := range c.Rows {
		if r.Verdict == results.VerdictRegression {
			out = append(out, "row "+r.ContextLabel)
		}
	}
	return out
}
