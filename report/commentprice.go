package report

import (
	"fmt"
	"strings"

	"github.com/speedmatrix/speedmatrix/internal/textout"
	"github.com/speedmatrix/speedmatrix/results"
)

// What a `/bench rerun CELLS` costs is what the bot does for it: a job that builds the head's
// engine (reused when the runner's cache still holds this commit's build), starts the server
// (the model load) and measures the named cells with the configured trials on the head alone,
// pooled with the first pass stored at this head at the second look; a comparison that was paired reruns
// paired, both sides built, loaded and measured. The measurement is priced by the first pass's
// own time budget (results.MeasurePrice, the price the budgeted bot's reruns use), the build and
// the load by this job's GPU time; all in the profile's time. The head-alone rerun pools with the
// first pass at the second look (internal/action's compareRerun); what it decides is measured by
// `calibrate --advice` (docs/calibration.md) and said so. What the results files do not
// hold (the simulator builds and loads nothing) is said, not guessed.

// rerunPrice is one `/bench rerun`'s GPU time, in the profile's seconds.
type rerunPrice struct {
	cells int
	// sides is 1 (the head alone, against the stored base) or 2 (paired); trials is each side's
	// trials per cell: the run's configured trials.
	sides, trials int
	// measure is the measurement of every side; build and load are per side, known only
	// where known says so.
	measure, build, load float64
	known                bool
	simulated            bool
	// budget is the job's GPU budget (seconds), 0 when none: the rerun job may spend up to
	// it on reruns of its own.
	budget float64
}

// headFile is the file the price reads: the head's, else the base's.
func (m *model) headFile() *results.File {
	if m.x.Head != nil {
		return m.x.Head
	}
	return m.x.Base
}

// priceRerun prices a `/bench rerun` of cells as the bot runs it.
func (m *model) priceRerun(cells []string) rerunPrice {
	p := rerunPrice{cells: len(cells), sides: 1, trials: 1}
	if m.c != nil && m.c.Settings.Pairing != nil {
		p.sides = 2
	}
	f := m.headFile()
	if f == nil {
		return p
	}
	switch {
	case f.Run.Pairing != nil && f.Run.Pairing.Blocks > 0:
		p.trials = f.Run.Pairing.Blocks // a paired run measures every cell once a block
	case f.Run.Settings != nil && f.Run.Settings.Trials > 0:
		p.trials = f.Run.Settings.Trials
	}
	if g := f.Run.GPUTime; g != nil {
		p.budget = g.BudgetSeconds * f.TimeScale()
	}
	scale := f.TimeScale()
	p.simulated = scale != 1
	p.measure = results.NewMeasurePrice(f).Run(cells, p.trials).Seconds() * scale * float64(p.sides)
	if g := f.Run.GPUTime; g != nil && g.BuildSeconds+g.LoadSeconds > 0 {
		p.known = true
		p.build, p.load = g.BuildSeconds*scale, g.LoadSeconds*scale
		if p.sides == 2 {
			p.build, p.load = p.build/2, p.load/2 // the paired job's GPU time holds both sides'
		}
	}
	return p
}

// words is one rerun's price, e.g. "About 24 min of GPU time: the engine build 15 min (none
// if the runner kept this head's), the model load 5 min, the measurement 4 min (3 cells × 1
// trial)."; where the build and load are unknown, the measurement alone (what says why: note).
func (p rerunPrice) words() string {
	detail := textout.Plural(p.cells, "cell", "cells") + " × " + textout.Plural(p.trials, "trial", "trials")
	if p.sides == 2 {
		detail += " × 2 sides"
	}
	if !p.known {
		return fmt.Sprintf("About %s of GPU time for the measurement (%s).", gpuTime(p.measure), detail)
	}
	build := "the engine build " + gpuTime(p.build*float64(p.sides)) + " (none if the runner kept this head's)"
	if p.build == 0 {
		build = "no engine build (this run reused one; an empty cache adds one)"
	}
	total := p.measure + float64(p.sides)*(p.build+p.load)
	return fmt.Sprintf("About %s of GPU time: %s, the model load %s, the measurement %s (%s).", gpuTime(total), build, gpuTime(p.load*float64(p.sides)), gpuTime(p.measure), detail)
}

// note says once what every `/bench rerun` of the advice does and what its price leaves out.
func (p rerunPrice) note() string {
	s := fmt.Sprintf("`/bench rerun` measures them on the head alone, %s each as this run did, pooled with it for the last look; "+
		"calibrated, it decides 5 in 6 such cells, 1 in 5 if runs drift.", textout.Plural(p.trials, "trial", "trials"))
	if p.sides == 2 {
		s = fmt.Sprintf("`/bench rerun` measures the cells again paired, on base and head (%s each, as this run did), a first look of its own: it may decide them, not will.", textout.Plural(p.trials, "trial", "trials"))
	}
	if p.budget > 0 {
		s += " With the job's budget (" + gpuTime(p.budget) + ") it may rerun them further, up to the budget."
	}
	switch {
	case p.known:
	case p.simulated:
		s += " The simulator builds and loads nothing, so the engine build and the model load a GPU job adds are not priced."
	default:
		s += " This run recorded no engine build or model load, so they are not priced."
	}
	return s + "\n"
}

// worstCell is the cell a reproduction starts with: the worst slower cell, else the unproven
// or not-judged cell that moved most; nil when there is none.
func (m *model) worstCell() *cellView {
	for _, vs := range [][]cellView{m.slower, m.unproven, m.notJudged()} {
		if len(vs) > 0 {
			v := vs[0]
			return &v
		}
	}
	return nil
}

// reproduce folds the commands that measure the worst cell alone and compare it with the base's
// results: the server's URL and the new file are placeholders; the window, the output tokens and
// the trials are the head's.
func (m *model) reproduce() string {
	v := m.worstCell()
	f := m.headFile()
	if v == nil || f == nil || v.cell.Cell == "" {
		return ""
	}
	if _, err := results.ParseCellID(v.cell.Cell); err != nil {
		return ""
	}
	id := v.cell.Cell
	args := []string{"speedmatrix run --url <server URL> --cells " + id}
	server := "Start this head's server as the run did"
	if s := f.Run.Settings; s != nil {
		if s.Trials > 0 {
			args = append(args, fmt.Sprintf("--trials %d", s.Trials))
		}
		if s.DurationSeconds > 0 {
			args = append(args, "--duration "+factor(s.DurationSeconds)+"s")
		}
		if s.MaxTokens > 0 {
			args = append(args, fmt.Sprintf("--max-tokens %d", s.MaxTokens))
		}
		if sim := s.Simulator; sim != nil && sim.Profile != "" && safeArg(sim.Profile) {
			server = fmt.Sprintf("Start the simulator the run measured (`speedmatrix sim --profile %s --sim-speedup %s`, with the head's slowdown if it had one)", sim.Profile, factor(f.TimeScale()))
		}
	}
	args = append(args, "-o <new file>.json")
	return fmt.Sprintf("<details><summary>Reproduce %s, %s</summary>\n\n%s, then measure the cell alone and compare it with the base's results from the run's artifacts:\n```\n%s\nspeedmatrix compare <base results>.json <new file>.json --cells %s\n```\n\n</details>\n",
		cellWords(v.cell), worstWhy(v.verdict), server, strings.Join(args, " "), id)
}

// worstWhy says why the reproduced cell was chosen.
func worstWhy(v results.Verdict) string {
	if v == results.VerdictRegression {
		return "the worst slower cell"
	}
	return "the cell not judged that moved most"
}

// safeArg reports whether s can stand in a shell command unquoted.
func safeArg(s string) bool {
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._-/", r)) {
			return false
		}
	}
	return s != ""
}
