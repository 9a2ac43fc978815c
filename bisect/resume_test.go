package bisect

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestNext runs every scripted bisection of TestRun a round at a time, as the split workflow
// does (a workflow run per round, the decisions replayed from the recorded rounds between
// them), and checks that it asks for the same rounds and ends with the same result as Run.
func TestNext(t *testing.T) {
	ctx := context.Background()
	for _, tt := range runCases() {
		t.Run(tt.name, func(t *testing.T) {
			cfg := tt.h.config(tt.runners)
			cfg.Budget, cfg.Plain = tt.budget, tt.plain
			want, err := Run(ctx, cfg, tt.h.step)
			if err != nil {
				t.Fatal(err)
			}
			asked := tt.h.asked
			tt.h.asked = nil
			var rounds []Recorded
			for {
				req, res, err := Next(ctx, cfg, rounds)
				if err != nil {
					t.Fatalf("after %d rounds: %v", len(rounds), err)
				}
				if len(res.Rounds) != len(rounds) || res.Steps != len(rounds) {
					t.Fatalf("after %d rounds the result holds %d rounds and %d steps", len(rounds), len(res.Rounds), res.Steps)
				}
				if req == nil {
					if diff := cmp.Diff(want, res); diff != "" {
						t.Errorf("the result a round at a time differs from Run's (-Run +Next):\n%s", diff)
					}
					break
				}
				if res.Statement != "" {
					t.Errorf("a result with a statement before the bisection ended: %q", res.Statement)
				}
				if len(rounds) > len(asked) {
					t.Fatalf("Next asks for round %d; Run measured %d", len(rounds)+1, len(asked))
				}
				ms, err := tt.h.step(ctx, *req)
				if err != nil {
					t.Fatal(err)
				}
				rounds = append(rounds, Recorded{Commits: ms})
			}
			if diff := cmp.Diff(asked, tt.h.asked); diff != "" {
				t.Errorf("rounds asked (-Run +Next):\n%s", diff)
			}
		})
	}
}

// TestNextRefusesAnotherRecord: rounds that are not the ones this bisection asks for (other
// commits, one round too many) are an error, never a result.
func TestNextRefusesAnotherRecord(t *testing.T) {
	ctx := context.Background()
	h := linear(16, map[int]float64{11: 0.9})
	cfg := h.config(2)
	want, err := Run(ctx, cfg, h.step)
	if err != nil {
		t.Fatal(err)
	}
	var all []Recorded
	for _, r := range want.Rounds {
		all = append(all, Recorded{Commits: r.Measurements})
	}
	other := Recorded{Commits: []Measurement{{Commit: name(3), Verdict: Good}}}
	for _, tc := range []struct {
		name   string
		rounds []Recorded
		want   string
	}{
		{"other commits", []Recorded{other}, "the record is not this bisection's"},
		{"a round too many", append(append([]Recorded(nil), all...), other), "rounds recorded, but the bisection ended"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, res, err := Next(ctx, cfg, tc.rounds)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Next: %v, %v, %v; want an error saying %q", req, res, err, tc.want)
			}
		})
	}
}
