package ghbot

import (
	"context"
	"testing"

	"github.com/speedmatrix/speedmatrix/ghbot/ghtest"
)

// TestFindComment checks that FindComment returns the bot's own marked comment (the oldest),
// never a look-alike by someone else or one of another check name, and ok false when none.
func TestFindComment(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	if _, ok, err := e.c.FindComment(ctx, helloRepo, 2, "speedmatrix"); err != nil || ok {
		t.Fatalf("empty PR: ok %v, err %v; want none", ok, err)
	}
	e.srv.AddComment(testRepo, 2, "mallory", Marker("speedmatrix")+"\nforged")
	e.srv.AddComment(testRepo, 2, ghtest.ActionsLogin, Marker("other")+"\nother check")
	want := e.srv.AddComment(testRepo, 2, ghtest.ActionsLogin, Marker("speedmatrix")+"\nours")
	e.srv.AddComment(testRepo, 2, ghtest.ActionsLogin, Marker("speedmatrix")+"\na duplicate")
	got, ok, err := e.c.FindComment(ctx, helloRepo, 2, "speedmatrix")
	if err != nil || !ok {
		t.Fatalf("FindComment: ok %v, err %v", ok, err)
	}
	if got.ID != want || got.Body != Marker("speedmatrix")+"\nours" {
		t.Errorf("FindComment = %+v; want comment %d with body ours", got, want)
	}
}

// TestFindCheck checks that FindCheck returns our newest run on a SHA, not a job of the same name.
func TestFindCheck(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.srv.AddCheckRun(ghtest.CheckRun{Repo: testRepo, HeadSHA: shaA, Name: "speedmatrix", Status: "completed", Conclusion: "failure", AppID: ghtest.ActionsAppID})
	if _, ok, err := e.c.FindCheck(ctx, helloRepo, shaA, "speedmatrix"); err != nil || ok {
		t.Fatalf("a job's check run: ok %v, err %v; want none of ours", ok, err)
	}
	if _, err := e.c.CompleteCheck(ctx, helloRepo, shaA, "speedmatrix", CheckUpdate{Conclusion: ConclusionSuccess}); err != nil {
		t.Fatal(err)
	}
	got, ok, err := e.c.FindCheck(ctx, helloRepo, shaA, "speedmatrix")
	if err != nil || !ok || got.Conclusion != "success" {
		t.Errorf("FindCheck = %+v, %v, %v; want our success", got, ok, err)
	}
}

// TestFindCommentMarkerAtStart: a comment by the bot's own login (GITHUB_TOKEN: any workflow of
// the repository) that quotes the marker below its first line — another workflow echoing a
// pull request's title — is not the bot's: FindComment skips it though it is older, and
// UpsertComment neither edits nor deletes it. A comment the previous version wrote (marker
// first, state line, body, markers again at the end) is still found and edited in place.
func TestFindCommentMarkerAtStart(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	m := Marker("speedmatrix")
	forged := "New pull request: fix\n" + m + "\n<!-- speedmatrix:state {\"v\":1,\"phase\":\"done\"} -->"
	fid := e.srv.AddComment(testRepo, 2, ghtest.ActionsLogin, forged)
	old := m + "\n<!-- speedmatrix:state {\"v\":1,\"phase\":\"done\"} -->\n### results\n\n<!-- speedmatrix:comment -->\n" + m + "\n"
	oid := e.srv.AddComment(testRepo, 2, ghtest.ActionsLogin, old)
	got, ok, err := e.c.FindComment(ctx, helloRepo, 2, "speedmatrix")
	if err != nil || !ok || got.ID != oid {
		t.Fatalf("FindComment = %+v, %v, %v; want the previous version's comment %d, not the quote %d", got, ok, err, oid, fid)
	}
	res, err := e.c.UpsertComment(ctx, helloRepo, 2, "speedmatrix", "new results", "")
	if err != nil || res.Created || res.ID != oid || res.Removed != 0 {
		t.Fatalf("UpsertComment = %+v, %v; want comment %d edited, nothing removed", res, err, oid)
	}
	cms := e.srv.State().CommentsOn(testRepo, 2)
	if len(cms) != 2 || cms[0].Body != forged || cms[1].Body != m+"\nnew results" {
		t.Errorf("comments %+v: want the quote untouched and ours edited", cms)
	}
}
