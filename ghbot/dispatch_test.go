package ghbot

import (
	"context"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/speedmatrix/speedmatrix/ghbot/ghtest"
)

// TestDispatch: a dispatch on a branch is what GitHub holds afterwards (workflow, ref, inputs,
// the token's login); one on a ref that is no branch, or of a path instead of a file name, is an
// error and holds nothing.
func TestDispatch(t *testing.T) {
	e := newEnv(t)
	e.srv.SetRef(testRepo, "heads/master", shaA)
	ctx := context.Background()
	if err := e.c.Dispatch(ctx, helloRepo, "speedmatrix.yml", "master", map[string]string{"bisect": "1234"}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ workflow, ref string }{
		{"speedmatrix.yml", "no-such-branch"},
		{"../other.yml", "master"},
		{"", "master"},
	} {
		if err := e.c.Dispatch(ctx, helloRepo, tc.workflow, tc.ref, nil); err == nil {
			t.Errorf("Dispatch(%q, %q): no error", tc.workflow, tc.ref)
		}
	}
	want := []ghtest.Dispatch{{Repo: testRepo, Workflow: "speedmatrix.yml", Ref: "master", Inputs: map[string]string{"bisect": "1234"}, Login: ghtest.ActionsLogin}}
	if diff := cmp.Diff(want, e.srv.State().Dispatches, cmpopts.IgnoreFields(ghtest.Dispatch{}, "At")); diff != "" {
		t.Errorf("dispatches (-want +got):\n%s", diff)
	}
}

// TestCommentByID: a comment is read with its author; a missing one is not found, without an
// error; an edit replaces its body, cut to GitHub's limit.
func TestCommentByID(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	id := e.srv.AddComment(testRepo, 7, ghtest.ActionsLogin, "state")
	got, ok, err := e.c.CommentByID(ctx, helloRepo, id)
	if err != nil || !ok || got.Body != "state" || got.Author != ghtest.ActionsLogin || got.ID != id {
		t.Errorf("CommentByID = %+v, %v, %v", got, ok, err)
	}
	if _, ok, err := e.c.CommentByID(ctx, helloRepo, id+100); ok || err != nil {
		t.Errorf("a missing comment: ok %v, err %v", ok, err)
	}
	if err := e.c.EditComment(ctx, helloRepo, id, strings.Repeat("x", MaxCommentChars+10), ""); err != nil {
		t.Fatal(err)
	}
	got, _, _ = e.c.CommentByID(ctx, helloRepo, id)
	if n := utf8.RuneCountInString(got.Body); n > MaxCommentChars || !strings.HasPrefix(got.Body, "xxx") {
		t.Errorf("the edited comment holds %d characters, want it cut to at most %d", n, MaxCommentChars)
	}
}
