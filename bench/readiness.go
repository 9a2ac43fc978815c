package bench

import "time"

// Readiness decides when a decode trial's window opens: as soon as its outcome is known.
//
//   - Valid: every one of the C streams has produced a token, and the server reports
//     running ≥ C and waiting = 0 (without running/waiting metrics: every stream has produced a
//     token). This is the contract's readiness, checked at once when the last stream produces
//     its first token, then at every poll.
//   - Queued: all C requests are in flight, and for plateauPolls polls in a row (at least
//     plateauPolls × Timeouts.Poll) the server has reported requests waiting while its running
//     count did not rise and every request it ran had produced a token. The last condition is
//     what makes the plateau safe against chunked prefill admitting requests one at a time at
//     long contexts: a request being prefilled counts as running before its first token, so
//     while one is being admitted running exceeds the streams that have produced, and the
//     plateau starts again; a server at its ceiling runs only requests that produce tokens
//     while others wait. The span is a few polls, not a fraction of the time running took to
//     rise, because that rise is paced by the server's front end passing requests one at a time
//     (about 0.6 s each on the reference server: 14 s to reach 23 running), not by admission,
//     and waiting a fraction of it would cost seconds per queued cell for nothing. For the same
//     reason the verdict does not wait for the rest of the C requests to pass the front end
//     (at C = 128 another 61 s on the reference server): a request waiting at the running
//     ceiling already shows the queue, the window measures the ceiling's rate, and requests
//     still in the front end when the window closes are cancelled with the others (vLLM drops
//     a disconnected request's queued work; so does the simulator).
//   - The readiness timeout is the last resort, for servers without running/waiting metrics
//     (or whose counts never settle): the cell is then marked queued.
//
// The window opens at once in every case; a queued cell is measured like a valid one.
type readiness struct {
	c       int
	span    time.Duration
	metrics bool // the server reports running and waiting

	since   time.Time // when the current plateau began; zero when none
	running float64   // the running count the plateau holds
	polls   int       // observations inside the plateau
}

// plateauPolls is how many polls in a row a queued plateau must hold.
const plateauPolls = 3

// readyOutcome is what an observation decided.
type readyOutcome int

const (
	notReady readyOutcome = iota
	readyValid
	readyQueued
)

// readyView is one observation of the trial: the client's streams and, when HasQueue, a scrape.
type readyView struct {
	At       time.Time
	Produced int // streams that have produced a token since the trial began
	InFlight int // streams with a request in flight
	Awaiting int // requests in flight that have not produced their first token yet
	HasQueue bool
	Running  float64
	Waiting  float64
}

// newReadiness returns the readiness of a trial of c streams polled every poll.
func newReadiness(c int, poll time.Duration, metrics bool) *readiness {
	return &readiness{c: c, span: plateauPolls * poll, metrics: metrics}
}

// observe takes one observation and says whether the window may open.
func (r *readiness) observe(v readyView) readyOutcome {
	c := float64(r.c)
	if v.Produced >= r.c && (!r.metrics || v.HasQueue && v.Running >= c && v.Waiting == 0) {
		return readyValid
	}
	if !v.HasQueue {
		return notReady // a failed scrape neither starts nor ends a plateau
	}
	producing := float64(v.InFlight - v.Awaiting)
	holding := v.InFlight >= r.c && v.Waiting > 0 && v.Running >= 1 && v.Running <= producing
	switch {
	case !holding:
		r.since, r.polls = time.Time{}, 0
		return notReady
	case r.since.IsZero() || v.Running > r.running:
		r.since, r.running, r.polls = v.At, v.Running, 1
		return notReady
	}
	r.polls++
	if r.polls > plateauPolls && v.At.Sub(r.since) >= r.span {
		return readyQueued
	}
	return notReady
}
