package sim

import (
	"strings"
	"testing"
	"time"
)

// lateClock is the wall clock whose timers fire extra later than asked: a machine that keeps the
// scheduler loop off the CPU after every sleep.
type lateClock struct{ extra time.Duration }

func (lateClock) Now() time.Time { return time.Now() }

func (c lateClock) NewTimer(d time.Duration) Timer {
	return &lateTimer{realTimer{time.NewTimer(d + c.extra)}, c.extra}
}

type lateTimer struct {
	realTimer
	extra time.Duration
}

func (t *lateTimer) Reset(d time.Duration) { t.realTimer.Reset(d + t.extra) }

// TestLateSteps: a loop kept off the CPU after its sleeps hands out its tokens late, and
// speedmatrix_sim_late_seconds_total says by how much, so that a client can tell the machine's
// delay from the engine's TTFT; nothing is lost (the lag stays under maxLag).
func TestLateSteps(t *testing.T) {
	const extra = 15 * time.Millisecond
	s := startSim(t, func(c *Config) { c.Clock = lateClock{extra} })
	before := value(scrape(t, s)[LateMetric])
	post(t, s.URL()+"/v1/completions", map[string]any{"prompt": strings.Repeat("word ", 2000), "max_tokens": 1})
	fams := scrape(t, s)
	late := value(fams[LateMetric]) - before
	if late < extra.Seconds() {
		t.Errorf("%s grew by %g s over a prefill whose steps each woke %v late, want at least %g", LateMetric, late, extra, extra.Seconds())
	}
	if lost := value(fams[LostMetric]); lost != 0 {
		t.Errorf("%s = %g: a lag under maxLag loses nothing", LostMetric, lost)
	}
}
