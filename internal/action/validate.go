package action

import (
	"fmt"
	"log/slog"
	"math"
	"strings"
	"time"

	"github.com/speedmatrix/speedmatrix/config"
	"github.com/speedmatrix/speedmatrix/internal/textout"
	"github.com/speedmatrix/speedmatrix/measure"
	"github.com/speedmatrix/speedmatrix/results"
	"github.com/speedmatrix/speedmatrix/store"
)

// Validate checks the run settings o as measure.Run does before it measures (errors are
// *measure.SettingsError) and returns what they make a run (and the bot) do, one indented line
// each: `speedmatrix validate`. getenv tells which variables engine.serve names are unset; log
// takes the warnings.
func Validate(o measure.Settings, getenv func(string) string, log *slog.Logger) (string, error) {
	if err := o.Check(); err != nil {
		return "", err
	}
	var b strings.Builder
	switch {
	case o.URL != "":
		fmt.Fprintf(&b, "  measures: the server at %s\n", o.URL)
	case o.Engine.Serve != nil:
		spec, err := measure.EngineBuildSpec(o)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "  measures: engine.serve (%s), built %s from %s\n", strings.Join(o.Engine.Serve.Command, " "), spec.Mode, orDot(o.Engine.Source))
		if missing := missingServeVars(getenv, o); len(missing) > 0 {
			log.Warn("engine.serve names variables this environment does not set; the runner must: " + strings.Join(missing, ", "))
		}
	default:
		name, speedup, err := measure.CheckSimulator(o)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "  measures: the built-in simulator (profile %s, %g× faster; no url and no engine.serve)\n", name, speedup)
	}
	p, err := measure.Plan(o, 1) // plan.go: checks the matrix, the cells and pinned acceptance
	if err != nil {
		return "", err
	}
	var prefill, decode int
	for _, id := range p.Shards[0].Cells {
		if id.Phase == results.PhasePrefill {
			prefill++
		} else {
			decode++
		}
	}
	cells := textout.Plural(prefill, "prefill cell", "prefill cells") + " and " + textout.Plural(decode, "decode cell", "decode cells")
	longest := 0
	for _, r := range p.Rows {
		longest = max(longest, r.Context)
	}
	if o.PrefillContexts == nil && prefill > 0 && longest+o.MaxTokens > referenceMaxModelLen {
		// A longest context that max_model_len trims is measured at both lengths (the
		// reference's 1019K and 1024K): one prefill cell more than the plan, which knows no server.
		cells += fmt.Sprintf("; %d cells on a 1M-token server like the reference's, which trims the longest context: its prefill is measured trimmed and whole", prefill+1+decode)
	}
	fmt.Fprintf(&b, "  matrix: %s (%s), %v windows, %s: about %.0f min (plan's estimate, before the server's KV cache rules cells out)\n",
		o.Matrix, cells, o.Duration, textout.Plural(o.Trials, "trial", "trials"), p.Shards[0].Expected.Minutes())
	budgetLines(log, &b, o, p.Shards[0].Expected)
	return b.String(), nil
}

// referenceMaxModelLen is the reference server's max_model_len (1M tokens), which trims the full
// matrix's longest context to 1019K.
const referenceMaxModelLen = 1 << 20

// budgetLines writes what a pull request's GPU time is against the budget: the first pass's
// estimate (the plan's, first) with the build and model load expected, what is left for
// confirmations and reruns, and, with paired.mode auto or always, the cells a paired run
// affords (the first pull requests, before the store holds store.min_history runs). It warns
// when the first pass cannot fit the budget, or no paired run can.
func budgetLines(log *slog.Logger, b *strings.Builder, o measure.Settings, first time.Duration) {
	if o.Budget <= 0 {
		fmt.Fprintf(b, "  budget: none: the first pass runs as long as it takes (about %.0f min and the build and model load), and nothing is rerun\n", first.Minutes())
		return
	}
	over := BuildLoadEstimate(o.Config)
	need := first + over
	// Whole minutes, as the matrix line and the docs round the plan's estimate: one figure for
	// one quantity (the first pass read "about 41 min" there and "≈ 40.7 min" here).
	firstMin, overMin := math.Round(first.Minutes()), math.Round(over.Minutes())
	fmt.Fprintf(b, "  budget: %.0f min of GPU time a pull request (build, model load, the first pass, confirmations and reruns together); the first pass ≈ %.0f min + build and load ≈ %.0f min (estimate) = %.0f min",
		o.Budget.Minutes(), firstMin, overMin, firstMin+overMin)
	if need <= o.Budget {
		fmt.Fprintf(b, ", leaving ≈ %.0f min for confirmations and reruns\n", math.Round(o.Budget.Minutes())-firstMin-overMin)
	} else {
		b.WriteString(": over the budget\n")
		log.Warn(fmt.Sprintf("budget %.0f min: the first pass alone is expected to take about %.0f min, with build and model load %.0f min; nothing is left for confirmations and reruns, and the job may end at its timeout-minutes: raise budget to at least %.0f min, or measure fewer cells",
			o.Budget.Minutes(), firstMin, firstMin+overMin, math.Ceil(need.Minutes())))
	}
	if o.Paired.Mode == config.PairedModeOff {
		return
	}
	pc := o.Config
	pc.Trials = 1
	ch, err := ChoosePairedCells(pc, measure.PriceCells)
	if err != nil {
		b.WriteString("  paired: no paired run fits the budget\n")
		log.Warn(fmt.Sprintf("paired.mode %s: until the store holds store.min_history default-branch runs, pull requests are measured paired, but %v; they are then measured alone and compared with what the store holds", o.Paired.Mode, err))
		return
	}
	fmt.Fprintf(b, "  paired (paired.mode %s; every pull request until the store holds %d default-branch runs): %s\n", o.Paired.Mode, validateMinHistory(o.Config), ch.Line())
}

// validateMinHistory is store.min_history, or the store's default.
func validateMinHistory(c config.Config) int {
	if c.Store.MinHistory > 0 {
		return c.Store.MinHistory
	}
	return store.DefaultMinHistory
}

// missingServeVars returns the ${NAME}s of engine.serve that the environment does not set
// (PORT is the run's own).
func missingServeVars(getenv func(string) string, o measure.Settings) []string {
	var missing []string
	_, err := o.Engine.Serve.Expanded(func(name string) (string, bool) {
		if name == "PORT" {
			return "0", true
		}
		v := getenv(name)
		if v == "" {
			missing = append(missing, name)
		}
		return "x", true
	})
	if err != nil {
		return append(missing, err.Error())
	}
	return missing
}

// orDot returns s, or "." when it is empty.
func orDot(s string) string {
	if s == "" {
		return "."
	}
	return s
}
