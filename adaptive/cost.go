package adaptive

import (
	"time"

	"github.com/speedmatrix/speedmatrix/compare"
	"github.com/speedmatrix/speedmatrix/results"
)

// CostModel returns the predicted GPU time of measuring a cell again, from the first pass f:
// overhead (what each rerun measurement adds outside the run, e.g. a server restart) plus one
// run of that cell as results.MeasurePrice prices it (setup and the context's scout once, then
// per trial a decode trial's window, drain, bookkeeping and readiness share, or a prefill
// request). f without a time budget (imported) is priced at twice its window per trial.
func CostModel(f *results.File, overhead time.Duration) compare.CellCost {
	p := results.NewMeasurePrice(f)
	return func(cell string, n int) time.Duration {
		return overhead + p.Run([]string{cell}, n)
	}
}
