package bench

import (
	"slices"
	"time"

	"github.com/speedmatrix/speedmatrix/results"
)

// statusInput is what a decode trial's status is decided from.
type statusInput struct {
	Concurrency int
	// ReadinessTimedOut is set when readiness ended by its timeout; ReadinessQueued when it
	// ended because the server held requests waiting while its running count had stopped
	// rising (readiness.go).
	ReadinessTimedOut, ReadinessQueued bool
	// Running and Waiting are the server's samples inside the window; nil without metrics.
	Running, Waiting []float64
	// At holds when each sample was taken, from the window's start, and Window the window's
	// length: each sample holds until the next one, the last until the window's end. Nil At
	// weighs every sample alike.
	At     []time.Duration
	Window time.Duration
	// Awaiting holds, at each sample, the client's requests in flight that had not yet
	// produced their first token (nil: none); Unseen those the server had ended while the
	// client had not read their end yet (nil: none).
	Awaiting, Unseen []float64
}

// queuedThreshold is the fraction of C that mean running must reach for a valid cell.
const queuedThreshold = 0.95

// The queued rules, as the log and the tests name them.
const (
	ruleTimedOut    = "readiness timed out"
	ruleReadyQueued = "requests waited while running stopped rising"
	ruleMaxRunning  = "max running below concurrency"
	ruleMeanRunning = "mean running below 0.95 × concurrency"
	ruleWaiting     = "requests waiting"
)

// decodeStatus applies the queued rules of the README's "What the numbers mean" to one window;
// why names the rule that fired. A cell is queued when
//
//   - readiness timed out, or ended because the server held requests waiting while its running
//     count had stopped rising;
//   - the server never ran C requests at once (max running < C);
//   - the time-weighted mean of running, where a request of the client that is between two
//     requests (sent, no first token yet; or ended by the server, its end not yet read by the
//     client) counts as running up to C, is below 0.95·C;
//   - requests were waiting in two samples in a row.
//
// No single sample decides: each sample weighs by the time it holds, so a sample that falls in
// the instant between one request's end and the next one's admission weighs a sampling
// period, and the client's own restarts are not the server's queue. One waiting sample is the
// same instant seen from the queue (a restarted request waits a scheduler step before it is
// admitted); a server that cannot run all C keeps requests waiting sample after sample.
func decodeStatus(in statusInput) (s results.Status, why string) {
	c := float64(in.Concurrency)
	switch {
	case in.ReadinessTimedOut:
		return results.StatusQueued, ruleTimedOut
	case in.ReadinessQueued:
		return results.StatusQueued, ruleReadyQueued
	case len(in.Running) > 0 && slices.Max(in.Running) < c:
		return results.StatusQueued, ruleMaxRunning
	}
	judged := make([]float64, len(in.Running))
	for i, r := range in.Running {
		add := 0.0
		if i < len(in.Awaiting) {
			add += in.Awaiting[i]
		}
		if i < len(in.Unseen) {
			add += in.Unseen[i]
		}
		if add > 0 {
			r = min(c, r+add)
		}
		judged[i] = r
	}
	if m, ok := weightedMean(judged, in.At, in.Window); ok && m < queuedThreshold*c {
		return results.StatusQueued, ruleMeanRunning
	}
	if len(in.Waiting) == 1 && in.Waiting[0] > 0 {
		return results.StatusQueued, ruleWaiting // nothing to confirm it with
	}
	for i := 1; i < len(in.Waiting); i++ {
		if in.Waiting[i-1] > 0 && in.Waiting[i] > 0 {
			return results.StatusQueued, ruleWaiting
		}
	}
	return results.StatusValid, ""
}

// weightedMean returns the mean of xs, each weighted by the time it holds: from at[i] to
// at[i+1], the last to window. With at missing or of another length, or no time to weigh by,
// every sample weighs alike. ok is false for no samples.
func weightedMean(xs []float64, at []time.Duration, window time.Duration) (float64, bool) {
	if len(xs) == 0 {
		return 0, false
	}
	if len(at) != len(xs) {
		return mean(xs)
	}
	var sum, weight float64
	for i, x := range xs {
		end := window
		if i+1 < len(at) {
			end = at[i+1]
		}
		w := max(end-at[i], 0).Seconds()
		sum += w * x
		weight += w
	}
	if weight <= 0 {
		return mean(xs)
	}
	return sum / weight, true
}
