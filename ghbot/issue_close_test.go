package ghbot

import (
	"context"
	"testing"

	"github.com/speedmatrix/speedmatrix/ghbot/ghtest"
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

// TestFindOpenIssueAuthor: an issue with the label and the marker that another user opened (a
// copy of the bot's change-point issue, say) is neither found, edited nor closed: the bot
// opens its own.
func TestFindOpenIssueAuthor(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	const marker = "<!-- test:author -->"
	forged := e.srv.AddIssue(ghtest.Issue{Repo: testRepo, Title: "forged", Body: marker + "\nforged", User: "mallory", Labels: []string{"speedmatrix"}})
	if n, _, ok, err := e.c.FindOpenIssue(ctx, helloRepo, "speedmatrix", marker); err != nil || ok {
		t.Fatalf("FindOpenIssue found issue %d by another author (err %v)", n, err)
	}
	if n, err := e.c.CloseIssue(ctx, helloRepo, "speedmatrix", marker, "closing"); err != nil || n != 0 {
		t.Fatalf("CloseIssue closed issue %d by another author (err %v)", n, err)
	}
	mine, created, err := e.c.UpsertIssue(ctx, helloRepo, "speedmatrix", marker, "mine", marker+"\nmine")
	if err != nil || !created || mine == forged {
		t.Fatalf("UpsertIssue: %d, created %v, %v; want a new issue of the bot's", mine, created, err)
	}
	if n, body, ok, err := e.c.FindOpenIssue(ctx, helloRepo, "speedmatrix", marker); err != nil || !ok || n != mine || body != marker+"\nmine" {
		t.Errorf("FindOpenIssue: %d %q %v %v; want the bot's issue %d", n, body, ok, err, mine)
	}
	for _, i := range e.srv.Issues(testRepo) {
		if i.Number == forged && (i.State != "open" || i.Body != marker+"\nforged") {
			t.Errorf("the other author's issue was changed: %+v", i)
		}
	}
}
