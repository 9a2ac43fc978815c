package calibrate

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/speedmatrix/speedmatrix/compare"
	"github.com/speedmatrix/speedmatrix/results"
)

// windowSeconds is the synthetic matrix's measurement window (NewMatrix's Windows × 1 s bins).
const windowSeconds = 30

// SettingsTable returns the settings of a calibration as rows of (setting, value), for the
// README and the command's output.
func (s Settings) SettingsTable() [][2]string {
	th := s.Thresholds
	plan, _ := th.Plan()
	pct := func(f float64) string { return strconv.FormatFloat(f*100, 'f', -1, 64) + " %" }
	look := "first comparison only"
	if s.TwoLook {
		look = "first comparison, then the advised rerun and second look"
	}
	history := "none (prior and within-run batch means)"
	if s.History > 0 {
		history = fmt.Sprintf("%d earlier base runs", s.History)
	}
	p := th.Prior
	var rates []string
	for _, e := range p.DecodeRate {
		upTo := "> " + strconv.Itoa(prevUpTo(p.DecodeRate, e))
		if e.UpTo > 0 {
			upTo = "≤ " + strconv.Itoa(e.UpTo)
		}
		rates = append(rates, fmt.Sprintf("C %s: %s", upTo, pct(e.CV)))
	}
	return [][2]string{
		{"A/A comparisons", strconv.Itoa(s.AA)},
		{"A/B comparisons", fmt.Sprintf("%d (each decode row in turn slowed: rates −%s, TTFT +%s)", s.AB, pct(2*th.Delta[results.MetricTotalTokPerS]), pct(2*th.Delta[results.MetricTTFT]))},
		{"seed", strconv.FormatUint(s.Seed, 10)},
		{"matrix", "8 contexts × 8 concurrency levels, 43 decode cells measured (21 over capacity), 9 prefill cells; 190 cell-metrics"},
		{"true run-to-run CV (drawn per cell)", fmt.Sprintf("decode rates C=1 10–20 %%, C=2 5–10 %%, C=4 2–5 %%, C≥8 0.5–1 %%; TTFT 10–20 %%; prefill 1–5 %%; ×%g", s.NoiseScale)},
		{"within-run share of the variance", "20–60 % per cell (1 s bins as AR(1), φ = 0.3; per-request samples)"},
		{"runs per side", strconv.Itoa(max(1, s.Trials))},
		{"history", history},
		{"looks", look},
		{"rerun limits", fmt.Sprintf("%d further trials a cell; %d further runs of a whole row that no cell of its decides", th.MaxFurtherTrials, th.MaxRowTrials)},
		{"δ throughput / latency", pct(th.Delta[results.MetricTotalTokPerS]) + " / " + pct(th.Delta[results.MetricTTFT])},
		{"FDR q / false-alarm cap", fmt.Sprintf("%g / %g: both looks spend %g (BH at %.3g, then %.3g; %s spending)", th.FDR, th.FalseAlarm, th.Budget(), plan.Level1, plan.Level2, th.Spending)},
		{"unchanged", fmt.Sprintf("TOST at %g", th.EquivalenceAlpha)},
		{"prior CV", fmt.Sprintf("decode rates %s; decode TTFT %s; prefill %s", strings.Join(rates, ", "), pct(p.DecodeTTFT), pct(p.Prefill))},
	}
}

func prevUpTo(list []compare.ConcurrencyCV, _ compare.ConcurrencyCV) int {
	last := 0
	for _, x := range list {
		if x.UpTo > 0 {
			last = x.UpTo
		}
	}
	return last
}

// Write writes the report as text: the settings table, then the figures after the first look
// and after both, with the targets.
func (r *Report) Write(w io.Writer) error {
	var b strings.Builder
	b.WriteString("Calibration of speedmatrix compare (synthetic matrices)\n\nSettings\n")
	for _, row := range r.Settings.SettingsTable() {
		fmt.Fprintf(&b, "  %-38s %s\n", row[0], row[1])
	}
	fig := func(title string, f Figures) {
		fmt.Fprintf(&b, "\n%s\n", title)
		fmt.Fprintf(&b, "  A/A with any regression verdict (target ≤ 1 %%):      %s\n", f.AARegression)
		fmt.Fprintf(&b, "  A/A with any improvement verdict:                     %s\n", f.AAImprovement)
		fmt.Fprintf(&b, "  A/B with the slowed row flagged (target ≥ 90 %%):      %s\n", f.ABRowFlagged)
		for _, rr := range f.ByRow {
			fmt.Fprintf(&b, "    row %-6s %s\n", rr.Row, rr.Rate)
		}
		fmt.Fprintf(&b, "  A/B share of the slowed row's cells flagged:          %.1f %%\n", f.ABRowCellsFlagged*100)
		fmt.Fprintf(&b, "  A/B with a regression outside the row:                %s\n", f.ABFalseOutside)
		fmt.Fprintf(&b, "  A/B false discovery proportion (target ≤ q = %g):   %.2f %%\n", r.Settings.Thresholds.FDR, f.ABFDP*100)
	}
	fig("After the first comparison", r.First)
	if r.Settings.TwoLook {
		fig("After the advised second look (either look counts)", r.Both)
		fmt.Fprintf(&b, "  comparisons with a rerun: %s; mean advised further trials: %.1f\n", r.Reruns, r.MeanRerunTrials)
		fmt.Fprintf(&b, "  whole rows measured again: %.2f per comparison; mean advised further runs of such a row: %.1f\n", r.RowReruns, r.MeanRowTrials)
		fmt.Fprintf(&b, "  rerun cost per comparison: mean %.0f windows (%.1f GPU-hours at %d s a window), at most %d (%.1f h)\n",
			r.MeanWindows, r.MeanWindows*windowSeconds/3600, windowSeconds, r.MaxWindows, float64(r.MaxWindows)*windowSeconds/3600)
		fmt.Fprintf(&b, "    of which whole rows: mean %.0f windows (%.1f GPU-hours); single cells: %.0f windows (%.1f GPU-hours)\n",
			r.MeanRowWindows, r.MeanRowWindows*windowSeconds/3600, r.MeanWindows-r.MeanRowWindows, (r.MeanWindows-r.MeanRowWindows)*windowSeconds/3600)
	}
	fmt.Fprintf(&b, "\nA/A first comparisons: %.1f %% of cell-metrics unchanged, %.1f %% inconclusive (of %d tested).\n", r.AAUnchanged*100, r.AAInconclusive*100, r.Tests)
	_, err := io.WriteString(w, b.String())
	return err
}
