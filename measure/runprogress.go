package measure

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/speedmatrix/speedmatrix/bench"
	"github.com/speedmatrix/speedmatrix/internal/textout"
	"github.com/speedmatrix/speedmatrix/report"
	"github.com/speedmatrix/speedmatrix/results"
)

// pickProgress chooses how `run` shows progress on stderr: nothing with --quiet; one line per
// finished cell in ::group:: blocks in GitHub Actions; a progress bar on a terminal; plain lines
// per finished cell otherwise (a log file). A scale above 1 is the built-in simulator's speedup:
// the lines then show rates and TTFT in the profile's time, as the reports do.
func pickProgress(env *Deps, quiet bool, scale float64) bench.Progress {
	switch {
	case quiet:
		return nil
	case env.Getenv("GITHUB_ACTIONS") == "true":
		return &lineProgress{w: env.Stderr, groups: true, scale: scale}
	case isTerminal(env.Stderr):
		return &barProgress{w: env.Stderr, scale: scale}
	}
	return &lineProgress{w: env.Stderr, scale: scale}
}

// inProfileTime returns the note a progress display starts with when its numbers are in a
// simulator profile's time ("" at scale 1).
func inProfileTime(scale float64) string {
	if scale <= 1 {
		return ""
	}
	return fmt.Sprintf(" (rates and TTFT in the simulated profile's time: measured rates ÷ %g, times × %g)", scale, scale)
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// roughly rounds an estimate for people: minutes from ten minutes up, else seconds.
func roughly(d time.Duration) time.Duration {
	if d >= 10*time.Minute {
		return d.Round(time.Minute)
	}
	return d.Round(time.Second)
}

// outcomeLine formats a finished cell in one line, its rates ÷ scale and TTFT × scale (a
// simulator's speedup; 0 or 1: as measured). Window, readiness and drain are this run's wall
// time, never scaled.
func outcomeLine(o bench.CellOutcome, scale float64) string {
	if scale > 1 {
		o.TokPerS, o.TTFTMs = o.TokPerS/scale, o.TTFTMs*scale
	}
	s := fmt.Sprintf("%-18s %s", o.ID.String(), results.StatusDisplay(o.Status))
	switch {
	case o.Status == results.StatusError:
		s += ": " + o.Error
	case o.Status.Measured() && o.ID.Phase == results.PhasePrefill:
		s += fmt.Sprintf(" · %s prompt tok/s · TTFT %s", report.FormatTokPerS(o.TokPerS), report.FormatTTFT(o.TTFTMs))
	case o.Status.Measured():
		s += fmt.Sprintf(" · %s tok/s · TTFT %s", report.FormatTokPerS(o.TokPerS), report.FormatTTFT(o.TTFTMs))
	}
	switch {
	case o.Window > 0:
		// The cell is its window; readiness and drain are waiting, shown as such.
		s += fmt.Sprintf(" · window %.1fs · readiness %.1fs · drain %.1fs", o.Window.Seconds(), o.Readiness.Seconds(), o.Drain.Seconds())
	case o.Elapsed > 0:
		s += fmt.Sprintf(" · %s", o.Elapsed.Round(100*time.Millisecond))
	}
	return s
}

// budgetLine formats a run's time budget in one line: where the wall time went (with the parts
// of readiness and setup the server and the warm-ups imposed), the ratios of wall time to
// measured time without and with those parts, and the measuring process's CPU time per
// window-second.
func budgetLine(b *results.Budget) string {
	sec := func(x float64) string { return fmt.Sprintf("%.1fs", x) }
	s := fmt.Sprintf("time budget: wall %s = windows %s + prefill %s + readiness %s + drain %s + setup %s + other %s",
		time.Duration(b.WallSeconds*float64(time.Second)).Round(time.Second), sec(b.WindowSeconds), sec(b.PrefillSeconds),
		sec(b.ReadinessSeconds), sec(b.DrainSeconds), sec(b.SetupSeconds), sec(b.OtherSeconds))
	if b.AdmissionSeconds > 0 {
		s += fmt.Sprintf("; of the readiness, the server starting the requests %s, the client deciding %s", sec(b.AdmissionSeconds), sec(max(b.ReadinessSeconds-b.AdmissionSeconds, 0)))
	}
	if b.WarmupSeconds > 0 {
		s += fmt.Sprintf("; of the setup, warm-up requests %s", sec(b.WarmupSeconds))
	}
	if b.WallPerMeasured > 0 {
		s += fmt.Sprintf("; wall ÷ (windows + prefill) = %.2f", b.WallPerMeasured)
	}
	if b.WallPerServerBound > 0 && (b.AdmissionSeconds > 0 || b.WarmupSeconds > 0) {
		s += fmt.Sprintf(", ÷ (windows + prefill + warm-up + the server starting requests) = %.2f", b.WallPerServerBound)
	}
	if b.CPUSeconds != nil {
		s += fmt.Sprintf("; CPU %.2f s", *b.CPUSeconds)
		if b.WindowSeconds > 0 {
			s += fmt.Sprintf(" = %.3f CPU-s per window-second", *b.CPUSeconds/b.WindowSeconds)
		}
		if b.CPUIncludesServer {
			s += " (this process, with the in-process simulator)"
		} else {
			s += " (this process)"
		}
	}
	return s
}

// logBudget writes the run's time budget to the log, when the results have one.
func logBudget(log *slog.Logger, f *results.File) {
	if f == nil || f.Run.Budget == nil {
		return
	}
	log.Info(budgetLine(f.Run.Budget))
}

// lineProgress writes one line per finished cell; with groups, the cells of one context sit in
// a GitHub Actions ::group:: block.
type lineProgress struct {
	w      io.Writer
	groups bool
	open   string // the context whose group is open
	done   int
	total  int
	scale  float64 // a simulator's speedup (outcomeLine)
}

func (p *lineProgress) Start(cells []bench.PlannedCell, estimate time.Duration) {
	p.total = len(cells)
	fmt.Fprintf(p.w, "speedmatrix run: %s, about %s%s\n", textout.Plural(len(cells), "cell", "cells"), roughly(estimate), inProfileTime(p.scale))
}

func (p *lineProgress) CellStart(results.CellID, int) {}
func (p *lineProgress) Tokens(int)                    {}

func (p *lineProgress) CellDone(o bench.CellOutcome) {
	if p.groups && o.ID.ContextLabel != p.open {
		if p.open != "" {
			fmt.Fprintln(p.w, "::endgroup::")
		}
		p.open = o.ID.ContextLabel
		fmt.Fprintf(p.w, "::group::context %s\n", p.open)
	}
	if o.Status != results.StatusOverCapacity {
		p.done++
	}
	fmt.Fprintf(p.w, "[%d/%d] %s\n", p.done, p.total, outcomeLine(o, p.scale))
}

func (p *lineProgress) Finish() {
	if p.groups && p.open != "" {
		fmt.Fprintln(p.w, "::endgroup::")
		p.open = ""
	}
}

// barProgress draws a progress bar over the planned cells with the current cell, elapsed and
// remaining time and the live output rate.
type barProgress struct {
	w      io.Writer
	bar    *progressbar.ProgressBar
	tokens atomic.Int64
	mu     sync.Mutex
	cell   string
	phase  string // the decode trial's phase: readiness, window or drain
	stop   chan struct{}
	wg     sync.WaitGroup
	scale  float64 // a simulator's speedup (outcomeLine)
}

func (p *barProgress) Start(cells []bench.PlannedCell, estimate time.Duration) {
	if note := inProfileTime(p.scale); note != "" {
		fmt.Fprintln(p.w, "speedmatrix run:"+note)
	}
	p.bar = progressbar.NewOptions(len(cells),
		progressbar.OptionSetWriter(p.w),
		progressbar.OptionSetDescription("starting"),
		progressbar.OptionShowCount(),
		progressbar.OptionSetElapsedTime(true),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionSetRenderBlankState(true),
		progressbar.OptionThrottle(200*time.Millisecond),
		progressbar.OptionSetWidth(30),
		progressbar.OptionOnCompletion(func() { fmt.Fprintln(p.w) }),
	)
	p.stop = make(chan struct{})
	p.wg.Add(1)
	go p.tick(p.tokens.Load(), time.Now())
}

// tick refreshes the description with the output rate of the last second.
func (p *barProgress) tick(last int64, lastAt time.Time) {
	defer p.wg.Done()
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case now := <-t.C:
			n := p.tokens.Load()
			rate := float64(n-last) / now.Sub(lastAt).Seconds() / max(p.scale, 1)
			last, lastAt = n, now
			p.mu.Lock()
			p.bar.Describe(fmt.Sprintf("%s · %s tok/s", p.described(), report.FormatTokPerS(rate)))
			p.mu.Unlock()
		}
	}
}

func (p *barProgress) CellStart(id results.CellID, trial int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cell = id.String()
	if trial > 1 {
		p.cell += fmt.Sprintf(" trial %d", trial)
	}
	p.phase = ""
	p.bar.Describe(p.described())
}

// Phase shows which phase the decode trial is in.
func (p *barProgress) Phase(_ results.CellID, phase string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.phase = phase
	p.bar.Describe(p.described())
}

// described is the cell and its phase, as the bar shows them; p.mu is held.
func (p *barProgress) described() string {
	if p.phase == "" || p.phase == bench.PhaseWindow {
		return p.cell
	}
	return p.cell + " · " + p.phase
}

func (p *barProgress) Tokens(n int) { p.tokens.Add(int64(n)) }

func (p *barProgress) CellDone(o bench.CellOutcome) {
	if o.Status == results.StatusOverCapacity {
		return // not among the planned cells
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if o.Status == results.StatusError {
		_ = p.bar.Clear()
		fmt.Fprintln(p.w, outcomeLine(o, p.scale))
	}
	_ = p.bar.Add(1)
}

func (p *barProgress) Finish() {
	if p.bar == nil {
		return
	}
	close(p.stop)
	p.wg.Wait()
	_ = p.bar.Finish()
}
