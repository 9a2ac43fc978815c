package ghtest_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-github/v66/github"
	"github.com/speedmatrix/speedmatrix/ghbot/ghtest"
)

// client returns a go-github client for github.com that reaches s.
func client(s *ghtest.Server, token string) *github.Client {
	return github.NewClient(&http.Client{Transport: s.Transport()}).WithAuthToken(token)
}

func newServer(t *testing.T, opts ...ghtest.Option) *ghtest.Server {
	s := ghtest.New(t, opts...)
	s.AddToken("tok", ghtest.ActionsLogin)
	s.AddRepo(ghtest.Repo{Owner: "o", Name: "r"})
	return s
}

func TestCommentsPaginateWithLinks(t *testing.T) {
	s := newServer(t)
	for i := 0; i < 45; i++ {
		s.AddComment("o/r", 1, "u", "c")
	}
	gh := client(s, "tok")
	opts := &github.IssueListCommentsOptions{ListOptions: github.ListOptions{PerPage: 20}}
	var sizes []int
	for {
		page, resp, err := gh.Issues.ListComments(context.Background(), "o", "r", 1, opts)
		if err != nil {
			t.Fatal(err)
		}
		sizes = append(sizes, len(page))
		if resp.NextPage == 0 {
			break
		}
		opts.Page = resp.NextPage
	}
	if len(sizes) != 3 || sizes[0] != 20 || sizes[2] != 5 {
		t.Errorf("page sizes %v, want [20 20 5]", sizes)
	}
}

func TestAuthAndRecording(t *testing.T) {
	s := newServer(t)
	_, _, err := client(s, "wrong").Issues.CreateComment(context.Background(), "o", "r", 1, &github.IssueComment{Body: github.String("x")})
	var er *github.ErrorResponse
	if !errors.As(err, &er) || er.Response.StatusCode != http.StatusUnauthorized {
		t.Errorf("bad token: %v, want 401", err)
	}
	if _, _, err := client(s, "tok").Issues.CreateComment(context.Background(), "o", "r", 1, &github.IssueComment{Body: github.String("x")}); err != nil {
		t.Fatal(err)
	}
	st := s.State()
	if len(st.Comments) != 1 || st.Comments[0].User != ghtest.ActionsLogin {
		t.Errorf("comments %+v", st.Comments)
	}
	if len(st.Calls) != 2 || st.Calls[0].Status != 401 || st.Calls[1].Status != 201 || st.Calls[1].Login != ghtest.ActionsLogin ||
		st.Calls[1].Path != "/repos/o/r/issues/1/comments" || !strings.Contains(st.Calls[1].Body, `"body":"x"`) {
		t.Errorf("calls %+v", st.Calls)
	}
}

func TestEnterprisePrefix(t *testing.T) {
	s := newServer(t, ghtest.Enterprise())
	gh, err := github.NewClient(nil).WithAuthToken("tok").WithEnterpriseURLs(s.URL, s.URL)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := gh.Repositories.Get(context.Background(), "o", "r"); err != nil {
		t.Errorf("GET /api/v3/repos/o/r: %v", err)
	}
	if _, _, err := client(s, "tok").Repositories.Get(context.Background(), "o", "r"); err == nil {
		t.Error("GET /repos/o/r without /api/v3 answered by an Enterprise server")
	}
	if got := s.State().Calls[0].Path; got != "/api/v3/repos/o/r" {
		t.Errorf("path %q", got)
	}
}

func TestCheckRunRenamedByEmptyName(t *testing.T) {
	s := newServer(t)
	gh := client(s, "tok")
	ctx := context.Background()
	sha := strings.Repeat("a", 40)
	cr, _, err := gh.Checks.CreateCheckRun(ctx, "o", "r", github.CreateCheckRunOptions{Name: "speedmatrix", HeadSHA: sha, Status: github.String("in_progress")})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := gh.Checks.UpdateCheckRun(ctx, "o", "r", cr.GetID(), github.UpdateCheckRunOptions{Conclusion: github.String("success")}); err != nil {
		t.Fatal(err)
	}
	got := s.State().CheckRuns[0]
	if got.Name != "" || got.Status != "completed" || got.AppID != ghtest.ActionsAppID {
		t.Errorf("run %+v: want it renamed to \"\" (go-github v66 sends the empty name) and completed", got)
	}
	_, _, err = gh.Checks.UpdateCheckRun(ctx, "o", "r", cr.GetID(), github.UpdateCheckRunOptions{Name: "x",
		Output: &github.CheckRunOutput{Title: github.String("t"), Summary: github.String(strings.Repeat("b", 65536))}})
	if err == nil {
		t.Error("a summary of 65,536 bytes was accepted")
	}
}

func TestFaultsAndHeadMoves(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s := newServer(t, ghtest.WithClock(func() time.Time { return now }))
	s.AddPull(ghtest.Pull{Repo: "o/r", Number: 3, HeadSHA: "a", BaseSHA: "b"})
	s.Fail(ghtest.Fault{Method: "GET", Path: "/repos/o/r/pulls/", Status: 502, Times: 2})
	gh := client(s, "tok")
	ctx := context.Background()
	for i := 0; i < 2; i++ {
		if _, _, err := gh.PullRequests.Get(ctx, "o", "r", 3); err == nil {
			t.Fatalf("attempt %d: no injected 502", i)
		}
	}
	s.MovePullHead("o/r", 3, "c")
	pr, _, err := gh.PullRequests.Get(ctx, "o", "r", 3)
	if err != nil || pr.GetHead().GetSHA() != "c" || pr.GetState() != "open" {
		t.Fatalf("after the faults: %+v, %v", pr, err)
	}
	repo, _, err := gh.Repositories.Get(ctx, "o", "r")
	if err != nil || !repo.GetPushedAt().Time.Equal(now) {
		t.Errorf("pushed_at %v, want %v", repo.GetPushedAt(), now)
	}
}

// TestFaultExactAndHang: an Exact fault answers its path only (the commit listing, not a
// commit's check runs); a Hang fault answers nothing until the client gives up.
func TestFaultExactAndHang(t *testing.T) {
	s := newServer(t)
	gh := client(s, "tok")
	s.Fail(ghtest.Fault{Method: "GET", Path: "/repos/o/r/commits", Exact: true, Status: 500, Times: 10})
	ctx := context.Background()
	if _, _, err := gh.Checks.ListCheckRunsForRef(ctx, "o", "r", strings.Repeat("a", 40), nil); err != nil {
		t.Errorf("check runs of a commit: %v; an Exact fault of the listing must not answer them", err)
	}
	if _, resp, err := gh.Repositories.ListCommits(ctx, "o", "r", nil); err == nil || resp == nil || resp.StatusCode != 500 {
		t.Errorf("the listing answered %v, %v; want the injected 500", resp, err)
	}
	s.Fail(ghtest.Fault{Method: "GET", Path: "/repos/o/r/pulls/1", Hang: true})
	hctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if _, _, err := gh.PullRequests.Get(hctx, "o", "r", 1); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a hanging request ended with %v, want the client's deadline", err)
	}
}
