package adaptive

import (
	"time"

	"github.com/speedmatrix/speedmatrix/compare"
	"github.com/speedmatrix/speedmatrix/results"
)

// CostModel returns the predicted GPU time of measuring a cell again, from the first pass f:
// overhead (what each rerun measurement adds outside the run, e.g. a server restart) plus the
// run's setup and the cell's context scout once, plus per trial a decode trial's window, drain
// and bookkeeping (averaged over f's decode trials) and a readiness share proportional to
// concurrency × context, or a prefill request's time proportional to its context. f without a
// time budget (imported) is priced at twice its window per trial.
func CostModel(f *results.File, overhead time.Duration) compare.CellCost {
	sec := func(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
	window := f.Run.SecondsPerMeasurement
	b := f.Run.Budget
	if b == nil {
		return func(cell string, trials int) time.Duration {
			return overhead + sec(2*window*float64(trials))
		}
	}
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
	for _, c := range f.Prefill {
		if c.Status.Measured() {
			prefillLoad += float64(c.Context)
			delete(contexts, c.Context) // its scout was this cell
		}
	}
	for ctx := range contexts {
		prefillLoad += float64(ctx)
	}
	perTrial := sec(2 * window)
	if trials > 0 {
		perTrial = sec((b.WindowSeconds + b.DrainSeconds + b.OtherSeconds) / float64(trials))
	}
	var perLoad, perPrefill float64 // seconds per concurrency × context token, per prompt token
	if load > 0 {
		perLoad = b.ReadinessSeconds / load
	}
	if prefillLoad > 0 {
		perPrefill = b.PrefillSeconds / prefillLoad
	}
	setup := sec(b.SetupSeconds)
	return func(cell string, n int) time.Duration {
		id, err := results.ParseCellID(cell)
		if err != nil {
			return overhead + setup + time.Duration(n)*perTrial
		}
		ctx, err := results.ParseContext(id.ContextLabel)
		if err != nil {
			return overhead + setup + time.Duration(n)*perTrial
		}
		scout := sec(perPrefill * float64(ctx))
		if id.Phase == results.PhasePrefill {
			return overhead + setup + time.Duration(n+1)*scout
		}
		ready := sec(perLoad * float64(id.Concurrency*ctx))
		return overhead + setup + scout + time.Duration(n)*(perTrial+ready)
	}
}
