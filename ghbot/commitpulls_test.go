package ghbot

import (
	"context"
	"slices"
	"testing"

	"github.com/speedmatrix/speedmatrix/ghbot/ghtest"
)

// TestPullsOfCommit: the merged pull request whose merge commit a default-branch commit is, and
// an open one whose head it is, are found; a commit pushed directly has none.
func TestPullsOfCommit(t *testing.T) {
	e := newEnv(t)
	e.srv.AddPull(ghtest.Pull{Repo: testRepo, Number: 7, State: "closed", Author: "Codertocat", HeadSHA: shaB, HeadRef: "fast", BaseRef: "master", MergeCommitSHA: shaC})
	e.srv.AddPull(ghtest.Pull{Repo: testRepo, Number: 5, Author: "Codertocat", HeadSHA: shaC, HeadRef: "wip", BaseRef: "master"})
	ctx := context.Background()
	for _, tt := range []struct {
		sha  string
		want []int
	}{
		{shaC, []int{5, 7}},
		{shaA, []int{2}},
		{"1111111111111111111111111111111111111111", nil},
	} {
		got, err := e.c.PullsOfCommit(ctx, helloRepo, tt.sha)
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("PullsOfCommit(%s) = %v, %v; want %v", tt.sha[:7], got, err, tt.want)
		}
	}
	if _, err := e.c.PullsOfCommit(ctx, helloRepo, "abc"); err == nil {
		t.Error("a short commit id was looked up")
	}
}
