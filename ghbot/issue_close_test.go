package ghbot

import (
	"context"
	"testing"
)

// TestCloseIssue: CloseIssue comments on and closes the open issue with its marker only, leaves
// an issue of another marker open, and does nothing when none is open; FindOpenIssue sees an
// open one only.
func TestCloseIssue(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	const marker = "<!-- test:close -->"
	other, _, err := e.c.UpsertIssue(ctx, helloRepo, "speedmatrix", "<!-- other -->", "other", "<!-- other -->\nx")
	if err != nil {
		t.Fatal(err)
	}
	if n, err := e.c.CloseIssue(ctx, helloRepo, "speedmatrix", marker, "gone"); err != nil || n != 0 {
		t.Fatalf("with no issue of the marker: %d, %v; want 0", n, err)
	}
	mine, _, err := e.c.UpsertIssue(ctx, helloRepo, "speedmatrix", marker, "mine", marker+"\nbody")
	if err != nil {
		t.Fatal(err)
	}
	if n, body, ok, err := e.c.FindOpenIssue(ctx, helloRepo, "speedmatrix", marker); err != nil || !ok || n != mine || body != marker+"\nbody" {
		t.Fatalf("FindOpenIssue: %d %q %v %v; want issue %d", n, body, ok, err, mine)
	}
	if n, err := e.c.CloseIssue(ctx, helloRepo, "speedmatrix", marker, "recovered at abc"); err != nil || n != mine {
		t.Fatalf("close: %d, %v; want issue %d", n, err, mine)
	}
	for _, i := range e.srv.Issues(testRepo) {
		if want := map[int]string{mine: "closed", other: "open"}[i.Number]; i.State != want {
			t.Errorf("issue %d (%s): %s, want %s", i.Number, i.Title, i.State, want)
		}
	}
	if c := e.srv.State().CommentsOn(testRepo, mine); len(c) != 1 || c[0].Body != "recovered at abc" {
		t.Errorf("comments on the closed issue: %+v", c)
	}
	if _, _, ok, _ := e.c.FindOpenIssue(ctx, helloRepo, "speedmatrix", marker); ok {
		t.Errorf("FindOpenIssue finds the closed issue")
	}
	if n, err := e.c.CloseIssue(ctx, helloRepo, "speedmatrix", marker, "again"); err != nil || n != 0 {
		t.Errorf("closing again: %d, %v; want nothing done", n, err)
	}
}
