package bisect

import (
	"context"
	"errors"
	"fmt"
	"slices"
)

// Resuming a bisection: where the rounds run apart from the decisions (a workflow run per
// round, each round's measurements recorded between them), Next replays the decisions over the
// rounds recorded so far. Run is deterministic given the StepFunc's answers, so the replay
// reaches the same state the bisection was in when each round was asked for.

// Recorded is one round measured so far: the measurements of its commits as the StepFunc
// returned them (before Run reads them against the range's total or a previous culprit).
type Recorded struct {
	Commits []Measurement `json:"measurements"`
}

// pending stops a replay at the first round not recorded yet.
type pending struct{ req Request }

func (p *pending) Error() string { return "bisect: a round not measured yet" }

// Next replays cfg's bisection over rounds, the rounds measured so far, oldest first. While the
// bisection goes on it returns the next round to measure and the result so far (its rounds,
// steps and GPU time; no statement); once it has ended, a nil request and the result. A
// recorded round that is not the one the bisection asks for at that point (other commits), or
// more rounds than it asks for, is an error: the record is not this bisection's.
func Next(ctx context.Context, cfg Config, rounds []Recorded) (*Request, *Result, error) {
	k := 0
	step := func(_ context.Context, req Request) ([]Measurement, error) {
		if k == len(rounds) {
			return nil, &pending{req: req}
		}
		r := rounds[k]
		k++
		var got []string
		for _, m := range r.Commits {
			got = append(got, m.Commit)
		}
		want := slices.Clone(req.Commits)
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			return nil, fmt.Errorf("bisect: round %d recorded commits %v, but the bisection asks for %v there: the record is not this bisection's", k, shortAll(got), shortAll(want))
		}
		return slices.Clone(r.Commits), nil
	}
	b, err := start(cfg, step)
	if err != nil {
		return nil, nil, err
	}
	err = b.search(ctx, b.cfg.Good, nil, b.cfg.Commits)
	var p *pending
	if errors.As(err, &p) {
		return &p.req, b.res, nil
	}
	if err != nil {
		return nil, nil, err
	}
	if k < len(rounds) {
		return nil, nil, fmt.Errorf("bisect: %d rounds recorded, but the bisection ended after %d: the record is not this bisection's", len(rounds), k)
	}
	b.res.Statement = statement(b.res)
	return nil, b.res, nil
}

func shortAll(cs []string) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = short(c)
	}
	return out
}
