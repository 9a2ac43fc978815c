package ghbot

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/speedmatrix/speedmatrix/ghbot/ghtest"
)

func TestUpsertCommentTwiceLeavesOne(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	first, err := e.c.UpsertComment(ctx, helloRepo, 2, "speedmatrix", "measuring…", "")
	if err != nil {
		t.Fatal(err)
	}
	second, err := e.c.UpsertComment(ctx, helloRepo, 2, "speedmatrix", "results", "")
	if err != nil {
		t.Fatal(err)
	}
	third, err := e.c.UpsertComment(ctx, helloRepo, 2, "speedmatrix", "results", "")
	if err != nil {
		t.Fatal(err)
	}
	if !first.Created || second.Created || third.Created || first.ID != second.ID || second.ID != third.ID {
		t.Errorf("results %+v %+v %+v: want one comment created then edited", first, second, third)
	}
	st := e.srv.State()
	got := st.CommentsOn(testRepo, 2)
	if len(got) != 1 || got[0].Body != Marker("speedmatrix")+"\nresults" {
		t.Fatalf("comments %+v: want one holding the marker and the last body", got)
	}
	if n := len(st.CallsTo("PATCH", "/repos/Codertocat/Hello-World/issues/comments/")); n != 1 {
		t.Errorf("%d edits, want 1 (an unchanged body is not sent again)", n)
	}
}

func TestUpsertCommentFindsOnlyItsOwn(t *testing.T) {
	e := newEnv(t)
	marker := Marker("speedmatrix")
	// A human quoting our marker, another bot's comment, our comment for another check, and ours.
	human := e.srv.AddComment(testRepo, 2, "octocat", "quoting:\n"+marker+"\nold")
	other := e.srv.AddComment(testRepo, 2, "other-bot[bot]", marker+"\nnot ours")
	otherCheck := e.srv.AddComment(testRepo, 2, ghtest.ActionsLogin, Marker("speedmatrix / quick")+"\nquick")
	ours := e.srv.AddComment(testRepo, 2, ghtest.ActionsLogin, marker+"\nold")
	res, err := e.c.UpsertComment(context.Background(), helloRepo, 2, "speedmatrix", "new", "")
	if err != nil {
		t.Fatal(err)
	}
	if res.ID != ours || res.Created {
		t.Errorf("result %+v: want comment %d edited", res, ours)
	}
	bodies := map[int64]string{}
	for _, c := range e.srv.State().Comments {
		bodies[c.ID] = c.Body
	}
	want := map[int64]string{human: "quoting:\n" + marker + "\nold", other: marker + "\nnot ours",
		otherCheck: Marker("speedmatrix / quick") + "\nquick", ours: marker + "\nnew"}
	for id, w := range want {
		if bodies[id] != w {
			t.Errorf("comment %d = %q, want %q", id, bodies[id], w)
		}
	}
}

func TestUpsertCommentPaginates(t *testing.T) {
	e := newEnv(t)
	for i := 0; i < 230; i++ {
		e.srv.AddComment(testRepo, 2, "octocat", fmt.Sprintf("comment %d", i))
	}
	ours := e.srv.AddComment(testRepo, 2, ghtest.ActionsLogin, Marker("speedmatrix")+"\nold")
	for i := 0; i < 20; i++ {
		e.srv.AddComment(testRepo, 2, "octocat", "later")
	}
	res, err := e.c.UpsertComment(context.Background(), helloRepo, 2, "speedmatrix", "new", "")
	if err != nil {
		t.Fatal(err)
	}
	if res.ID != ours || res.Created {
		t.Errorf("result %+v: want comment %d (on page 3) edited", res, ours)
	}
	if n := len(e.srv.State().CallsTo("GET", "/repos/Codertocat/Hello-World/issues/2/comments")); n != 3 {
		t.Errorf("%d list calls, want 3 pages of 100", n)
	}
}

func TestUpsertCommentRemovesDuplicates(t *testing.T) {
	e := newEnv(t)
	marker := Marker("speedmatrix")
	keep := e.srv.AddComment(testRepo, 2, ghtest.ActionsLogin, marker+"\na")
	e.srv.AddComment(testRepo, 2, ghtest.ActionsLogin, marker+"\nb")
	res, err := e.c.UpsertComment(context.Background(), helloRepo, 2, "speedmatrix", "c", "")
	if err != nil {
		t.Fatal(err)
	}
	got := e.srv.State().CommentsOn(testRepo, 2)
	if res.Removed != 1 || len(got) != 1 || got[0].ID != keep || got[0].Body != marker+"\nc" {
		t.Errorf("result %+v, comments %+v: want the oldest kept and edited, the other deleted", res, got)
	}
}

func TestMarkerCannotBeClosedByTheCheckName(t *testing.T) {
	m := Marker("x --> <b>")
	if strings.Count(m, "-->") != 1 || !strings.HasSuffix(m, " -->") {
		t.Errorf("Marker = %q: the name closed the HTML comment", m)
	}
}

func TestUpsertCommentCutsOversizedBody(t *testing.T) {
	e := newEnv(t)
	var b strings.Builder
	b.WriteString("# Result 🚀\n\n<details><summary>matrix</summary>\n\n```text\n")
	for b.Len() < 3*MaxCommentChars {
		b.WriteString("| decode/8K/32 | 1234.5 tok/s | é 🚀 |\n")
	}
	res, err := e.c.UpsertComment(context.Background(), helloRepo, 2, "speedmatrix", b.String(), "https://github.com/o/r/actions/runs/1")
	if err != nil {
		t.Fatalf("UpsertComment: %v (the fake refuses bodies over 65,536 characters)", err)
	}
	if !res.Truncated {
		t.Error("Truncated = false")
	}
	body := e.srv.State().Comments[0].Body
	if n := commentLen(body); n > MaxCommentChars {
		t.Errorf("body has %d UTF-16 units", n)
	}
	for _, want := range []string{"\n```\n", "</details>", "[The full report](https://github.com/o/r/actions/runs/1)"} {
		if !strings.Contains(body, want) {
			t.Errorf("cut body lacks %q; its end: %q", want, body[len(body)-300:])
		}
	}
	if !strings.HasPrefix(body, Marker("speedmatrix")+"\n") {
		t.Error("the marker was lost")
	}
}

func TestFitComment(t *testing.T) {
	for _, tt := range []struct {
		name     string
		body     string
		url      string
		wantCut  bool
		wantTail string
	}{
		{name: "fits exactly", body: strings.Repeat("a", MaxCommentChars)},
		{name: "one over", body: strings.Repeat("a\n", MaxCommentChars/2) + "a", wantCut: true, wantTail: "in the run's artifacts."},
		{name: "emoji count twice", body: strings.Repeat("🚀", MaxCommentChars/2+1), wantCut: true},
		{name: "emoji fit", body: strings.Repeat("🚀", MaxCommentChars/2)},
		{name: "no newline at all", body: strings.Repeat("é", MaxCommentChars+5), wantCut: true},
		{name: "a bad link is not linked", body: strings.Repeat("x\n", MaxCommentChars), url: "javascript:alert(1)", wantCut: true, wantTail: "in the run's artifacts."},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, cut := FitComment(tt.body, tt.url)
			if cut != tt.wantCut {
				t.Errorf("cut = %v, want %v", cut, tt.wantCut)
			}
			if n := commentLen(got); n > MaxCommentChars {
				t.Errorf("%d UTF-16 units, over the limit", n)
			}
			if !utf8.ValidString(got) {
				t.Error("invalid UTF-8")
			}
			if !cut && got != tt.body {
				t.Error("a body that fits was changed")
			}
			if !strings.HasSuffix(got, tt.wantTail) {
				t.Errorf("ends %q, want %q", got[len(got)-80:], tt.wantTail)
			}
		})
	}
}

func TestCutBytesKeepsUTF8(t *testing.T) {
	for _, s := range []string{strings.Repeat("é", 40000), strings.Repeat("a🚀", 20000), strings.Repeat("x", 70000)} {
		for _, n := range []int{MaxCheckOutputBytes, 100, 101, 102, 103} {
			got, cut := cutBytes(s, n, "…")
			if !cut || len(got) > n || !utf8.ValidString(got) || !strings.HasSuffix(got, "…") {
				t.Errorf("cutBytes(%d bytes, %d) = %d bytes, cut %v, valid %v", len(s), n, len(got), cut, utf8.ValidString(got))
			}
		}
	}
	if got, cut := cutBytes("short", 10, "…"); cut || got != "short" {
		t.Errorf("cutBytes of a short string = %q, %v", got, cut)
	}
}

func TestReplyAndReact(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	id := e.srv.AddComment(testRepo, 2, "octocat", "/bench")
	for i := 0; i < 2; i++ {
		if err := e.c.React(ctx, helloRepo, id, "eyes"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.c.Reply(ctx, helloRepo, 2, "hello"); err != nil {
		t.Fatal(err)
	}
	st := e.srv.State()
	if len(st.Reactions) != 1 || st.Reactions[0].Content != "eyes" || st.Reactions[0].CommentID != id || st.Reactions[0].User != ghtest.ActionsLogin {
		t.Errorf("reactions %+v: want one eyes by the bot", st.Reactions)
	}
	if n := len(st.CallsTo("POST", fmt.Sprintf("/repos/Codertocat/Hello-World/issues/comments/%d/reactions", id))); n != 2 {
		t.Errorf("%d reaction calls, want 2 (CreateIssueCommentReaction, not the commit-comment endpoint)", n)
	}
	if got := st.CommentsOn(testRepo, 2); len(got) != 2 || got[1].Body != "hello" {
		t.Errorf("comments %+v", got)
	}
}
