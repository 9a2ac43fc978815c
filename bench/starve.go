package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/speedmatrix/speedmatrix/results"
)

// ErrHostStarved is returned (wrapped) when the machine that runs the measurement did not give
// the client, or a simulator on the same machine, the CPU it needed, measurement after
// measurement: what it measured is the machine's load, not the engine's speed, so the run ends
// with the cells measured until then (marked partial) and the error says what to change.
var ErrHostStarved = errors.New("the machine could not keep up with the measurement")

// Lateness is how late a process ran while it measured: the sum over its meter's ticks of how
// much later than asked each woke (Total), the longest single delay (Worst), and each delay
// beyond the slack as the span it lasted (Gaps, in order; the default meter's only).
type Lateness struct {
	Total, Worst time.Duration
	Gaps         []Gap
}

// Gap is a span during which the meter waited for the CPU: from when its tick was due to when
// it ran, by time.Now (the runner's clock unless Runner.Now says otherwise).
type Gap struct{ From, To time.Time }

// around returns the longest gap that overlaps [from, to].
func (l Lateness) around(from, to time.Time) time.Duration {
	var d time.Duration
	for _, g := range l.Gaps {
		if g.To.Before(from) || g.From.After(to) {
			continue
		}
		d = max(d, g.To.Sub(g.From))
	}
	return d
}

// LagMeter measures how late this process runs. Start begins a measurement; the function it
// returns ends it and returns the lateness seen in between.
type LagMeter interface {
	Start() (stop func() Lateness)
}

// lagPeriodMin and lagPeriodMax bound the tick of the default lag meter (a 300th of the window, so that a window
// of minutes does not wake it thousands of times), lagSlack is what of each tick's delay is
// the timer's ordinary jitter and not counted.
const (
	lagPeriodMin = 5 * time.Millisecond
	lagPeriodMax = 100 * time.Millisecond
	lagSlack     = time.Millisecond
)

// tickMeter is the default LagMeter: a goroutine that sleeps its period again and again and
// adds up how much longer each sleep took than asked. A goroutine of this process that wants
// the CPU and waits for it is as late as the client's stream readers and, in-process, the
// simulator's scheduler: a machine busy with other work, or a process that needs more CPU than
// the machine has, shows as lateness. In a testing/synctest bubble it is never late.
type tickMeter struct{ period time.Duration }

// Start starts the ticking goroutine.
func (m tickMeter) Start() func() Lateness {
	lagPeriod := m.period
	stop := make(chan struct{})
	done := make(chan Lateness, 1)
	go func() {
		var l Lateness
		t := time.NewTimer(lagPeriod)
		defer t.Stop()
		last := time.Now()
		for {
			select {
			case <-stop:
				done <- l
				return
			case <-t.C:
			}
			now := time.Now()
			if late := now.Sub(last) - lagPeriod - lagSlack; late > 0 {
				l.Total += late
				l.Worst = max(l.Worst, late)
				l.Gaps = append(l.Gaps, Gap{From: last.Add(lagPeriod), To: now})
			}
			last = now
			t.Reset(lagPeriod)
		}
	}()
	return func() Lateness {
		close(stop)
		return <-done
	}
}

// The thresholds of a starved measurement, as shares of the measurement's span (readiness and
// window, or the wait judged). A client off the CPU for d when its window closes counts none of
// the tokens of those d while the window's length holds them (an in-process simulator, off the
// CPU too, catches up only after): the cell reads up to d/span slower, and a d at the window's
// start reads it faster; a simulator that falls too far behind skips model time outright. A
// wait inside the window biases nothing (the tokens are read late, inside it, and the
// simulator catches up), nor does how long the client waits for the CPU in all (a busy machine
// hands out short slices): the waits at the window's two ends are judged (starveEdge), and any
// wait long enough to be more than a busy machine's (starveWorst); Lateness.Total is reported.
const (
	// starveEdge: the client was off the CPU at the window's opening or closing for this share
	// of the window (30 ms of a 1.5 s window, the in-process simulator's at 20×): a bias
	// beyond the noise a comparison tells from a 3 % change.
	starveEdge = 0.02
	// starveWorst: the client was off the CPU for this share of the span at once.
	starveWorst = 0.15
	// starveLost: the simulator skipped this share of the window's model time, which reads
	// the engine that much slower.
	starveLost = 0.02
)

// starveRetries is how many times a starved decode window is made again, after the machine
// settles, before the run gives up on the machine (ErrHostStarved); scoutRetries the same for
// a prefill, a single request of a fraction of a second that a busy machine starves more often.
const (
	starveRetries = 2
	scoutRetries  = 8
)

// starved says why a measurement of span (the window, or the wait judged) that saw the client
// late by l and the simulator lose lost seconds (negative: not a simulator) is the machine's
// fault; "" when it is not.
func starved(span time.Duration, l Lateness, lost float64) string {
	if span <= 0 {
		return ""
	}
	share := func(d time.Duration) string {
		return strconv.FormatFloat(100*d.Seconds()/span.Seconds(), 'f', 0, 64) + " %"
	}
	switch {
	case lost >= 0 && lost >= starveLost*span.Seconds():
		d := time.Duration(lost * float64(time.Second))
		return fmt.Sprintf("the simulator fell behind the wall clock: %v of the %v window's model time skipped or owed at its ends (%s)", d.Round(time.Millisecond), span.Round(time.Millisecond), share(d))
	case float64(l.Worst) >= starveWorst*float64(span):
		return fmt.Sprintf("the client waited %v at once for the CPU in %v (%s; %v in all)", l.Worst.Round(time.Millisecond), span.Round(time.Millisecond), share(l.Worst), l.Total.Round(time.Millisecond))
	}
	return ""
}

// starvedEdges says why the window [open, close) (close as planned; closed at closed) is the
// machine's fault for a client off the CPU at its opening or closing; "" when it is not.
func starvedEdges(open, close, closed time.Time, l Lateness) string {
	w := close.Sub(open)
	if w <= 0 {
		return ""
	}
	at := func(t0, t1 time.Time) time.Duration { return l.around(t0.Add(-lagPeriodMin), t1.Add(lagPeriodMin)) }
	last := closed
	if last.Before(close) {
		last = close
	}
	edge := max(at(open, open), at(close, last))
	if float64(edge) < starveEdge*float64(w) {
		return ""
	}
	return fmt.Sprintf("the client waited %v for the CPU as its %v window opened or closed (%s)", edge.Round(time.Millisecond), w.Round(time.Millisecond),
		strconv.FormatFloat(100*edge.Seconds()/w.Seconds(), 'f', 0, 64)+" %")
}

// lagMeter returns the run's LagMeter.
func (s *session) lagMeter() LagMeter {
	if s.r.Lag != nil {
		return s.r.Lag
	}
	return tickMeter{period: min(max(s.cfg.Duration/300, lagPeriodMin), lagPeriodMax)}
}

// starveHint says what to change when the machine could not keep up: against a simulator that
// runs faster than its profile, a lower speedup (a quarter, at least 1); otherwise, idle cores.
func (s *session) starveHint() string {
	if ts := s.timeScale; ts > 1 {
		lower := max(1, ts/4)
		return fmt.Sprintf("the simulator runs %s× faster than its profile, and this machine did not give it and the client the CPU that takes: run again with --sim-speedup %s (speedmatrix sim's, against --url), or on idle cores",
			strconv.FormatFloat(ts, 'g', -1, 64), strconv.FormatFloat(lower, 'g', 4, 64))
	}
	return "other work took the CPU this client needs: run again on idle cores (the numbers measured so far are the machine's load, not the engine's speed)"
}

// StarvedError is the ErrHostStarved a run ends with: what could not be measured, why (the
// last try's lateness), and what to change.
type StarvedError struct {
	What, Why, Hint string
	Tries           int
}

// Error says what the machine starved, why, how often, and what to change.
func (e *StarvedError) Error() string {
	return fmt.Sprintf("%v: %s (%s, %d times); %s", ErrHostStarved, e.What, e.Why, e.Tries, e.Hint)
}

// Is makes a StarvedError an ErrHostStarved.
func (e *StarvedError) Is(target error) bool { return target == ErrHostStarved }

// hostStarved returns a StarvedError: what, why and what to change.
func (s *session) hostStarved(what, why string) error {
	return &StarvedError{What: what, Why: why, Hint: s.starveHint(), Tries: 1 + starveRetries}
}

// settle waits, up to settleTries spans of settleSpan, for a span in which the client is not
// starved, so that a measurement made again does not meet the same burst of load.
func (s *session) settle(ctx context.Context) error {
	span := max(s.cfg.Duration/2, settleMin)
	for range settleTries {
		stop := s.lagMeter().Start()
		t := time.NewTimer(span)
		select {
		case <-ctx.Done():
			t.Stop()
			stop()
			return fmt.Errorf("%w: %w", ErrInterrupted, ctx.Err())
		case <-t.C:
		}
		if starved(span, stop(), -1) == "" {
			return nil
		}
	}
	return nil
}

// settleMin and settleTries bound settle's wait.
const (
	settleMin   = 200 * time.Millisecond
	settleTries = 5
)

// simLost returns the seconds of a window the simulator did not deliver on time between two
// scrapes (the window's first and the one after it): the model time it skipped, and how much
// further behind the wall clock it was at the end than at the start (tokens owed, counted in
// no window; a lag that shrank counts too, its tokens were owed to the window before). -1 when
// either scrape lacks the counter (not the built-in simulator).
func simLost(first, last *Sample) float64 {
	if first == nil || last == nil || !first.Counters.SimLost.OK || !last.Counters.SimLost.OK {
		return -1
	}
	lost := max(0, last.Counters.SimLost.V-first.Counters.SimLost.V)
	if b0, b1 := first.Counters.SimBehind, last.Counters.SimBehind; b0.OK && b1.OK {
		lost += max(b1.V-b0.V, b0.V-b1.V)
	}
	return lost
}

// starveScout is the share of a prefill's TTFT the client may spend off the CPU at once before
// the TTFT is the machine's, not the engine's (a client late by d reads the first token up to
// d late); scoutSlack is a delay short enough never to count.
const (
	starveScout = 0.20
	scoutSlack  = 5 * time.Millisecond
)

// scoutLateSlack is how late the simulator's steps may hand out their tokens during a prefill,
// in all, before the machine counts (below it, a timer's ordinary jitter).
const scoutLateSlack = time.Millisecond

// simClock is the simulator's account of a span: the seconds of model time it skipped (lost)
// and by which its steps ran late (late), each -1 where the server does not report it (not
// the built-in simulator).
type simClock struct{ lost, late float64 }

// since returns what the simulator reported between c0 and c.
func (c simClock) since(c0 simClock) simClock {
	d := simClock{lost: -1, late: -1}
	if c.lost >= 0 && c0.lost >= 0 {
		d.lost = max(0, c.lost-c0.lost)
	}
	if c.late >= 0 && c0.late >= 0 {
		d.late = max(0, c.late-c0.late)
	}
	return d
}

// starvedScout says why a prefill trial's TTFT is the machine's fault, from the client's
// lateness and the simulator's account meanwhile (sim: lost and late seconds, negative where
// not reported); "" when it is not. A simulator whose steps ran late by 2 % of the TTFT
// lengthened it that much (a 6 ms stall in a 130 ms prefill at 20× read as a 4.6 % slower
// prefill and blocked the demo against a history whose noise there was 1 %).
func starvedScout(ttft time.Duration, l Lateness, sim simClock) string {
	switch {
	case ttft <= 0:
		return ""
	case sim.lost >= 0 && sim.lost >= starveLost*ttft.Seconds():
		return fmt.Sprintf("the simulator fell behind the wall clock and skipped %v during a %v prefill", time.Duration(sim.lost*float64(time.Second)).Round(time.Millisecond), ttft.Round(time.Millisecond))
	case sim.late >= 0 && sim.late >= starveLost*ttft.Seconds() && sim.late >= scoutLateSlack.Seconds():
		return fmt.Sprintf("the machine kept the simulator off the CPU: its steps handed out tokens %v late in all during a %v prefill", time.Duration(sim.late*float64(time.Second)).Round(100*time.Microsecond), ttft.Round(time.Millisecond))
	case l.Worst >= scoutSlack && float64(l.Worst) >= starveScout*float64(ttft):
		return fmt.Sprintf("the client waited %v at once for the CPU during a %v prefill", l.Worst.Round(time.Millisecond), ttft.Round(time.Millisecond))
	}
	return ""
}

// scoutOnTime sends a scout (scout) and, when the context's prefill is measured and the machine
// starved the scout, sends it again with a new prompt (the first one's prefix is cached) once
// the machine settles, up to scoutRetries times; then it gives up on the machine
// (ErrHostStarved), never on the engine.
func (s *session) scoutOnTime(ctx context.Context, p *ctxPlan, pr Prompt, label string) (results.PrefillTrial, error) {
	tr, sim, err := s.scout(ctx, pr)
	if !p.Prefill {
		return tr, err // it only warms the prefix cache: nothing of it is recorded
	}
	for tries := 0; err == nil; tries++ {
		why := starvedScout(time.Duration(tr.TTFTMs*float64(time.Millisecond)), s.scoutLate, sim)
		if why == "" {
			return tr, nil
		}
		if s.cfg.KeepStarved {
			s.keptStarved("prefill/"+p.Label, why)
			return tr, nil
		}
		if tries >= scoutRetries {
			err := s.hostStarved("the prefill of "+p.Label, why).(*StarvedError)
			err.Tries = 1 + scoutRetries
			return tr, err
		}
		s.log.Warn("the machine starved this prefill: measuring it again, with a new prompt, once the machine settles", "cell", "prefill/"+p.Label, "why", why, "try", tries+2)
		if err := s.settle(ctx); err != nil {
			return tr, err
		}
		if err := s.drain(ctx, "before prefill "+p.Label+" again"); err != nil {
			return tr, err
		}
		if pr, err = s.buildPrompt(ctx, p.Tokens, fmt.Sprintf("%s again %d", label, tries+1)); err != nil {
			return tr, err
		}
		tr, sim, err = s.scout(ctx, pr)
	}
	return tr, err
}

// MeasureLag returns how late this process ran over d (the default LagMeter's ticks), for a
// caller that picks a pace before it measures.
func MeasureLag(ctx context.Context, d time.Duration) Lateness {
	stop := tickMeter{period: lagPeriodMin}.Start()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
	return stop()
}

// KeepsUp says why a machine late by l would starve windows of span (a wait as long as its
// longest, at a window's opening or closing), "" when it would not.
func KeepsUp(span time.Duration, l Lateness) string {
	if float64(l.Worst) < starveEdge*float64(span) {
		return ""
	}
	return fmt.Sprintf("the client waited up to %v at once for the CPU, %s of a %v window", l.Worst.Round(time.Millisecond),
		strconv.FormatFloat(100*l.Worst.Seconds()/span.Seconds(), 'f', 0, 64)+" %", span.Round(time.Millisecond))
}

// KeepStarvedEnv is the environment variable that, set to 1, makes DefaultConfig keep starved
// measurements (Config.KeepStarved).
const KeepStarvedEnv = "SPEEDMATRIX_KEEP_STARVED"

// keepStarvedFromEnv reads KeepStarvedEnv.
func keepStarvedFromEnv() bool { return os.Getenv(KeepStarvedEnv) == "1" }

// keptStarved notes, with Config.KeepStarved, a measurement kept although the machine starved
// it: the run goes on, and the file says how many numbers hold the machine's load.
func (s *session) keptStarved(what, why string) {
	s.starvedKept++
	s.log.Warn("the machine starved a measurement; kept it ("+KeepStarvedEnv+"=1)", "what", what, "why", why)
}

// noteStarved adds the note of the measurements kept although starved.
func (s *session) noteStarved() {
	if s.starvedKept > 0 {
		s.note("%d measurement(s) were kept although this machine starved the client or the simulator while they were made (%s=1): their numbers hold the machine's load as well as the engine's speed", s.starvedKept, KeepStarvedEnv)
	}
}
