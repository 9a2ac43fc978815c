package results

import (
	"math"
	"time"
)

// MeasurePrice predicts the wall time of measuring cells again on the server a first pass
// measured, from that pass's own time budget: the run's setup once (its per-context warm-up,
// where the settings asked for one, once per context measured), each context's scout once,
// then per decode trial a decode trial's window, drain and bookkeeping (averaged over the
// pass's decode trials) and a readiness share proportional to concurrency × context, and per
// prefill trial a request's time proportional to its context. A pass without a time budget
// (an imported file) is priced at twice its window per trial. The durations are as measured:
// a simulated pass's are its time scale shorter than the profile's.
type MeasurePrice struct {
	budget              bool
	setup, warmup       float64 // seconds; warmup is per context
	perTrial            float64 // seconds per decode trial, readiness aside
	perLoad, perPrefill float64 // seconds per concurrency × context token, per prompt token
	windowOnly          float64
}

// NewMeasurePrice returns the price model of f's first pass.
func NewMeasurePrice(f *File) MeasurePrice {
	p := MeasurePrice{windowOnly: 2 * f.Run.SecondsPerMeasurement}
	b := f.Run.Budget
	if b == nil {
		return p
	}
	p.budget = true
	var trials int
	var load float64 // Σ concurrency × context over decode trials
	contexts := map[int]bool{}
	for _, c := range f.Decode {
		if !c.Status.Measured() {
			continue
		}
		n := max(1, len(c.Trials))
		trials += n
		load += float64(n * c.Concurrency * c.Context)
		contexts[c.Context] = true
	}
	var prefillLoad float64 // Σ context over prefill requests (cells and scouts)
	all := map[int]bool{}
	for ctx := range contexts {
		all[ctx] = true
	}
	for _, c := range f.Prefill {
		if c.Status.Measured() {
			prefillLoad += float64(c.Context)
			all[c.Context] = true
			delete(contexts, c.Context) // its scout was this cell
		}
	}
	for ctx := range contexts {
		prefillLoad += float64(ctx)
	}
	p.perTrial = p.windowOnly
	if trials > 0 {
		p.perTrial = (b.WindowSeconds + b.DrainSeconds + b.OtherSeconds) / float64(trials)
	}
	if load > 0 {
		p.perLoad = b.ReadinessSeconds / load
	}
	if prefillLoad > 0 {
		p.perPrefill = b.PrefillSeconds / prefillLoad
	}
	p.setup = b.SetupSeconds
	if f.Run.Settings != nil && f.Run.Settings.ContextWarmup && len(all) > 0 && b.WarmupSeconds > 0 {
		p.warmup = b.WarmupSeconds / float64(len(all))
		p.setup -= b.WarmupSeconds
	}
	return p
}

// Run returns the predicted wall time of one run measuring cells (CellID strings), trials
// each; a cell that does not parse is priced as a decode trial without readiness.
func (p MeasurePrice) Run(cells []string, trials int) time.Duration {
	if !p.budget {
		return seconds(p.windowOnly * float64(trials*len(cells)))
	}
	s := p.setup
	scouted := map[int]bool{}
	for _, cell := range cells {
		id, err := ParseCellID(cell)
		var ctx int
		if err == nil {
			ctx, err = ParseContext(id.ContextLabel)
		}
		if err != nil {
			s += float64(trials) * p.perTrial
			continue
		}
		if !scouted[ctx] {
			scouted[ctx] = true
			s += p.warmup + p.perPrefill*float64(ctx)
		}
		if id.Phase == PhasePrefill {
			s += float64(trials) * p.perPrefill * float64(ctx)
			continue
		}
		s += float64(trials) * (p.perTrial + p.perLoad*float64(id.Concurrency*ctx))
	}
	return seconds(s)
}

// seconds is s seconds as a duration, rounded to the nanosecond.
func seconds(s float64) time.Duration { return time.Duration(math.Round(s * float64(time.Second))) }
