package calibrate

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/speedmatrix/speedmatrix/compare"
)

// noiseText describes the decode-rate noise model n.
func (n Noise) text() string {
	switch n {
	case NoiseSpec:
		return "speculative decoding (vLLM issue 53436): C=1 8–12 %, C=2 16–24 %, C=4 6–9 %, C≥8 0.4–0.6 %"
	case NoiseNoSpec:
		return "no speculative decoding: C≤4 0.5–2 %, C≥8 0.1–1 %"
	}
	return "C=1 10–20 %, C=2 5–10 %, C=4 2–5 %, C≥8 0.5–1 %"
}

// hours formats d as GPU-hours.
func hours(d time.Duration) string { return fmt.Sprintf("%.2f h", d.Hours()) }

// Write writes the budgeted calibration as text: the settings, one table of both procedures'
// figures side by side, and the detection by slowed row.
func (r *BudgetReport) Write(w io.Writer) error {
	s := r.Settings
	var b strings.Builder
	b.WriteString("Budgeted calibration of speedmatrix compare (synthetic matrices)\n\nSettings\n")
	measured := "both sides"
	if s.StoredBaseline {
		measured = "the head alone: the base's runs come from the store"
	}
	history := "none (prior and within-run batch means)"
	if s.History > 0 {
		history = fmt.Sprintf("%d earlier base runs", s.History)
	}
	for _, row := range [][2]string{
		{"A/A / A/B comparisons", fmt.Sprintf("%d / %d (A/B: each decode row in turn slowed by 2δ), seed %d", s.AA, s.AB, s.Seed)},
		{"decode-rate noise (run to run)", fmt.Sprintf("%s; ×%g (TTFT 10–20 %%, prefill 1–5 %%)", s.Noise.text(), s.NoiseScale)},
		{"history", history},
		{"prior CV of decode rates", s.priorText()},
		{"budgeted procedure", fmt.Sprintf("one run a side, then the advised reruns compare.PlanRerunsFor funds within %s (%s), then the second look", s.Budget, measured)},
		{"naive procedure", fmt.Sprintf("%d trials a side, one comparison spending the whole error budget", s.NaiveTrials)},
		{"GPU time", fmt.Sprintf("%s; %s windows, readiness C × %s + TTFT, %s drain, per context a warm-up and a scout prefill; one run of the matrix a side: %s", measured, s.Costs.Window, s.Costs.Handover, s.Costs.Drain, hours(r.FirstPass/time.Duration(s.sides())))},
	} {
		fmt.Fprintf(&b, "  %-32s %s\n", row[0], row[1])
	}
	b.WriteString("\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	p, n := r.Budgeted, r.Naive
	naive := s.NaiveTrials > 0
	col := func(f func(ProcedureFigures) string) string {
		if !naive {
			return f(p)
		}
		return f(p) + "\t" + f(n)
	}
	head := "\tbudgeted (" + s.Budget.String() + ")"
	if naive {
		head += fmt.Sprintf("\tnaive (%d trials a side)", s.NaiveTrials)
	}
	fmt.Fprintln(tw, head)
	line := func(name string, f func(ProcedureFigures) string) { fmt.Fprintf(tw, "%s\t%s\n", name, col(f)) }
	line("A/A any regression (target ≤ 1 %)", func(f ProcedureFigures) string { return f.AARegression.String() })
	line("A/B slowed row flagged, decidable rows (target ≥ 90 %)", func(f ProcedureFigures) string { return f.ABFlaggedDecidable.String() })
	line("A/B slowed row flagged, all rows", func(f ProcedureFigures) string { return f.ABRowFlagged.String() })
	line("A/B regression outside the row", func(f ProcedureFigures) string { return f.ABFalseOutside.String() })
	line("GPU time per comparison, mean / worst", func(f ProcedureFigures) string {
		return fmt.Sprintf("%s / %s", hours(f.MeanGPU), hours(f.MaxGPU))
	})
	line("  of which reruns, mean / worst", func(f ProcedureFigures) string {
		return fmt.Sprintf("%s / %s", hours(f.MeanRerun), hours(f.MaxRerun))
	})
	line("cell-metrics undecided at the end (mean)", func(f ProcedureFigures) string { return fmt.Sprintf("%.1f %% of %d", f.Undecided*100, r.Tests) })
	line("comparisons leaving advised reruns unpaid", func(f ProcedureFigures) string { return f.OverBudget.String() })
	if naive && n.MeanGPU > 0 {
		fmt.Fprintf(tw, "GPU time budgeted ÷ naive (goal ≤ 0.5), mean / worst\t%.2f / %.2f\n",
			p.MeanGPU.Seconds()/n.MeanGPU.Seconds(), p.MaxGPU.Seconds()/n.MaxGPU.Seconds())
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(&b, "\nA/B decidable within the budget: %s (at either look a cell-metric of the slowed row, or its row test, had the power to detect 2δ)\n", p.ABDecidable)
	b.WriteString("\nBy slowed row\n")
	tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	rh := "row\tdecidable\tbudgeted flagged (decidable)\tbudgeted flagged (all)"
	if naive {
		rh += "\tnaive flagged (decidable)\tnaive flagged (all)"
	}
	fmt.Fprintln(tw, rh)
	short := func(x Rate) string {
		if x.N == 0 {
			return "–"
		}
		return fmt.Sprintf("%.0f %% (%d/%d)", x.P*100, x.K, x.N)
	}
	for i, rr := range p.ByRow {
		l := fmt.Sprintf("%s\t%s\t%s\t%s", rr.Row, short(rr.Decidable), short(rr.Flagged), short(rr.FlaggedAll))
		if naive && i < len(n.ByRow) {
			l += fmt.Sprintf("\t%s\t%s", short(n.ByRow[i].Flagged), short(n.ByRow[i].FlaggedAll))
		}
		fmt.Fprintln(tw, l)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// priorText says which decode-rate prior compare takes for the runs of s.Noise: the runs'
// telemetry shows speculative decoding unpinned under NoiseSpec (Prior.SpecDecodeRate), and no
// speculative decoding otherwise (Prior.DecodeRate).
func (s Settings) priorText() string {
	if s.Noise == NoiseSpec {
		p := s.Thresholds.Prior.SpecDecodeRate
		if len(p) == 0 {
			p = compare.DefaultSpecDecodeRatePrior()
		}
		return priorText(p) + "; the runs show speculative decoding unpinned"
	}
	return priorText(s.Thresholds.Prior.DecodeRate) + "; the runs' counters show no speculative decoding"
}

// priorText formats a decode-rate prior as calibrate --compare prior-decode-rate= takes it.
func priorText(p []compare.ConcurrencyCV) string {
	var parts []string
	for _, e := range p {
		k := "*"
		if e.UpTo > 0 {
			k = strconv.Itoa(e.UpTo)
		}
		parts = append(parts, k+"="+strconv.FormatFloat(e.CV*100, 'f', -1, 64))
	}
	return strings.Join(parts, ",") + " (percent, by concurrency up to)"
}
