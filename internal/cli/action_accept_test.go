package cli

import (
	"strings"
	"testing"
)

// newUnprovenEnv is an action whose store holds one baseline run of prBase and no history, and
// whose head is 30 % slower in decode: a slowdown that only the prior bounds, so the check is
// ❓ not proven, so blocked (issue 33's case).
func newUnprovenEnv(t *testing.T) *actEnv {
	t.Helper()
	e := newActEnv(t)
	e.writeConfig(actionConfig(", slowdown: decode=1.3"))
	e.storeBaseline(prBase)
	return e
}

// TestActionAcceptUnproven: a maintainer's /bench accept after ❓ not proven turns the check to
// success, with the reason and the person in the comment and the check, as after ❌; a rerun at
// the same head keeps it.
func TestActionAcceptUnproven(t *testing.T) {
	e := newUnprovenEnv(t)
	e.event("pull_request", payload(t, "pull_request/opened.payload.json"))
	out := mustRun(t, e)
	wantOutputs(t, out, map[string]string{"verdict": "unproven", "conclusion": "failure"})
	st := e.srv.State()
	if c := oneCheck(t, st, prHead); c.Conclusion != "failure" || !strings.Contains(c.Title, "Not proven") {
		t.Fatalf("check before accept: %s %q", c.Conclusion, c.Title)
	}
	const reason = "expected: new kernel trades decode for memory"
	e.benchComment(`/bench accept "` + reason + `"`)
	out = mustRun(t, e)
	wantOutputs(t, out, map[string]string{"verdict": "accepted", "conclusion": "success"})
	st = e.srv.State()
	c := oneCheck(t, st, prHead)
	if c.Conclusion != "success" || !strings.Contains(c.Title, "accepted by Codertocat") {
		t.Errorf("check after accept: %s %q", c.Conclusion, c.Title)
	}
	if !strings.Contains(c.Summary, reason) || !strings.Contains(c.Summary, "Codertocat") {
		t.Errorf("check summary lacks the reason or the person:\n%s", c.Summary)
	}
	b := oneComment(t, st)
	for _, want := range []string{"> **Accepted** by `Codertocat` on ", "`" + reason + "`", `"accepted":{"by":"Codertocat"`} {
		if !strings.Contains(b, want) {
			t.Errorf("comment after accept lacks %q:\n%s", want, b)
		}
	}
	if n := len(replies(st)); n != 0 {
		t.Errorf("%d replies, want none (the accept was taken): %v", n, replies(st))
	}

	// The same head measured again: still unproven, still accepted.
	e.event("pull_request", payload(t, "pull_request/synchronize.payload.json"))
	out = mustRun(t, e)
	wantOutputs(t, out, map[string]string{"verdict": "accepted", "conclusion": "success"})
	st = e.srv.State()
	if c := oneCheck(t, st, prHead); c.Conclusion != "success" || !strings.HasPrefix(c.Title, "Accepted") {
		t.Errorf("check after a rerun at the same head: %s %q", c.Conclusion, c.Title)
	}
	if b := oneComment(t, st); !strings.Contains(b, "> Accepted by [Codertocat]") || strings.Contains(b, "Not proven, so blocked") {
		t.Errorf("the rerun at the same head lost the acceptance:\n%s", b)
	}
}

// TestActionAcceptRefusals: a /bench accept the bot cannot record is answered with what to run
// instead, naming the full commit id.
func TestActionAcceptRefusals(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, e *actEnv)
		want  []string
	}{
		{
			name:  "no results yet",
			setup: func(t *testing.T, e *actEnv) { e.benchComment(`/bench accept "known cost"`) },
			want:  []string{"there are no results at the head `" + prHead + "` yet", "Post `/bench " + prHead + "`", "`/bench accept " + prHead + " <reason>`"},
		},
		{
			name: "the check already passes",
			setup: func(t *testing.T, e *actEnv) {
				e.storeBaseline(prBase)
				e.event("pull_request", payload(t, "pull_request/opened.payload.json"))
				if out := mustRun(t, e); out["conclusion"] != "success" {
					t.Fatalf("the unchanged head's conclusion is %q, want success", out["conclusion"])
				}
				e.benchComment(`/bench accept "known cost"`)
			},
			want: []string{"nothing to accept: the check at `" + prHead + "` already passes", "No command is needed"},
		},
		{
			name: "the results are of an earlier head",
			setup: func(t *testing.T, e *actEnv) {
				e.writeConfig(actionConfig(", slowdown: decode=1.3"))
				e.storeBaseline(prBase)
				e.event("pull_request", payload(t, "pull_request/opened.payload.json"))
				mustRun(t, e)
				e.srv.MovePullHead(actRepo, 2, movedSHA)
				e.benchComment("/bench accept " + movedSHA + " known cost")
			},
			want: []string{"the last results are for `" + prHead + "`, but the head is now `" + movedSHA + "`", "Post `/bench " + movedSHA + "`"},
		},
		{
			// A fork can force-push another commit with the same 7-digit prefix after the
			// comment (issue 34.2): a prefix is pinned only with no push after the comment.
			name: "a prefix after a push",
			setup: func(t *testing.T, e *actEnv) {
				e.srv.MovePullHead(actRepo, 2, movedSHA)
				e.benchComment("/bench accept " + movedSHA[:7] + " known cost")
			},
			want: []string{"the prefix `" + movedSHA[:7] + "` could name another commit", "by its full id: `/bench accept " + movedSHA + " <reason>`"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newActEnv(t)
			tc.setup(t, e)
			out := mustRun(t, e)
			wantOutputs(t, out, map[string]string{"verdict": "refused"})
			rs := replies(e.srv.State())
			if len(rs) != 1 {
				t.Fatalf("%d replies, want 1: %+v", len(rs), rs)
			}
			for _, w := range tc.want {
				if !strings.Contains(rs[0].Body, w) {
					t.Errorf("the reply lacks %q:\n%s", w, rs[0].Body)
				}
			}
		})
	}
}
