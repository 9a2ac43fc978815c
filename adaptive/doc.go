// Package adaptive decides a comparison inside a GPU budget: after a first pass it compares
// the head with the baseline, buys with what is left of the budget the reruns most likely per
// minute to turn an open slowdown into a regression verdict (compare.PlanRerunsFor: cells whose
// estimate points to a slowdown, rows whose pooled test is close), measures them on the head
// (the advice is for head trials against the stored base: compare.Thresholds.HeadOnlyReruns),
// and compares once more on the pooled trials at the second look's level (the sequential rule
// compare already plans).
//
//	out, err := adaptive.Run(ctx, adaptive.Job{Compare: in, Thresholds: th, Budget: 45*time.Minute,
//		GPU: spent, Measure: measure})
//
// The price of a rerun is predicted from the first pass's own time budget (CostModel): its
// setup and scouts once per measurement, then per decode trial the window, the drain and a
// readiness share that grows with concurrency × context, per prefill trial the measured time
// of a prefill request of that length. A rerun starts only when its predicted price fits in
// what is left, and runs under a deadline at the end of the budget, so the job never spends
// past it whatever the prediction said; what is not bought is reported with its price.
//
// The package measures nothing itself: the caller's Measure runs the cells (the CLI against
// the server of the first pass, the bot through its measure step). It writes no file.
package adaptive
