// Package calibrate measures the error rates of package compare on synthetic matrices: how often
// it raises a false alarm when nothing changed (A/A) and how often it detects a slowdown that is
// there (A/B), with the cost in GPU time of the reruns it asks for. `speedmatrix calibrate` and
// the figures of docs/calibration.md come from it.
//
// # Method
//
// A Matrix (generate.go) draws results files as the runner writes them: per-cell run-to-run
// noise with CVs from 0.5 % to 20 %, per-window output-token bins and per-request samples,
// variation between runs as well as within. Run (calibrate.go) compares many such pairs with
// compare.Compare and counts verdicts with Wilson intervals; RunWorld (world*.go) draws from
// noise models compare was not built for (run factors, heavy tails, drift, disturbances, paired
// blocks) and runs whole procedures, the bot's adaptive job (adaptive.Run) included; RunAdvice
// checks that following the rerun advice decides what it promised; RunBudget compares the
// budgeted procedure with a naive one, in detections and in GPU time by the reference server's
// cost model (cost.go). StoreAA and StoreNoise read a real store
// (package store) for the user's own A/A false-alarm rate and measured noise.
//
// Everything is seeded: the same settings give the same figures. The package must not read
// files itself nor measure a server: a store comes in as a store.Store, and the caller writes
// what the reports render. It sits above compare, merge, store and adaptive; nothing below it
// (compare least of all) may import it but tests.
package calibrate
