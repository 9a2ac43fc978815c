package ghbot

import (
	"context"
	"fmt"

	"github.com/google/go-github/v66/github"
)

// PullsOfCommit returns the numbers of the pull requests GitHub associates with commit sha
// (GET /repos/{o}/{r}/commits/{sha}/pulls: the merged pull request whose merge or squash commit
// it is, or open ones whose head it is), lowest first; none for a commit pushed directly.
func (c *Client) PullsOfCommit(ctx context.Context, repo Repo, sha string) ([]int, error) {
	if !ValidSHA(sha) {
		return nil, fmt.Errorf("pull requests of commit %q: not a full commit id", sha)
	}
	var out []int
	opts := &github.ListOptions{PerPage: 100}
	for {
		prs, resp, err := c.gh.PullRequests.ListPullRequestsWithCommit(ctx, repo.Owner, repo.Name, sha, opts)
		if err != nil {
			return nil, fmt.Errorf("pull requests of commit %s in %s: %w", ShortSHA(sha), repo.FullName(), err)
		}
		for _, p := range prs {
			out = append(out, p.GetNumber())
		}
		if resp == nil || resp.NextPage == 0 {
			return out, nil
		}
		opts.Page = resp.NextPage
	}
}
