package ghbot

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/go-github/v66/github"
)

// UpsertIssue keeps one open issue per marker: it looks for an open issue labelled label whose
// body holds marker (a hidden HTML comment) and edits its title and body, or opens one with the
// label when there is none. body must hold marker. It returns the issue's number and whether
// it was created.
func (c *Client) UpsertIssue(ctx context.Context, repo Repo, label, marker, title, body string) (int, bool, error) {
	if !strings.Contains(body, marker) {
		return 0, false, fmt.Errorf("issue on %s: the body lacks its marker %q", repo.FullName(), marker)
	}
	body, _ = FitComment(body, "")
	opts := &github.IssueListByRepoOptions{State: "open", Labels: []string{label}, ListOptions: github.ListOptions{PerPage: 100}}
	for page := 0; page < 10; page++ {
		issues, resp, err := c.gh.Issues.ListByRepo(ctx, repo.Owner, repo.Name, opts)
		if err != nil {
			return 0, false, fmt.Errorf("list the %s issues of %s: %w", label, repo.FullName(), err)
		}
		for _, i := range issues {
			if i.PullRequestLinks == nil && strings.Contains(i.GetBody(), marker) {
				_, _, err := c.gh.Issues.Edit(ctx, repo.Owner, repo.Name, i.GetNumber(), &github.IssueRequest{Title: github.String(title), Body: github.String(body)})
				if err != nil {
					return 0, false, fmt.Errorf("update issue %s#%d: %w", repo.FullName(), i.GetNumber(), err)
				}
				return i.GetNumber(), false, nil
			}
		}
		if resp == nil || resp.NextPage == 0 {
			break
		}
		opts.Page = resp.NextPage
	}
	i, _, err := c.gh.Issues.Create(ctx, repo.Owner, repo.Name, &github.IssueRequest{Title: github.String(title), Body: github.String(body), Labels: &[]string{label}})
	if err != nil {
		return 0, false, fmt.Errorf("open an issue on %s (the token needs issues: write): %w", repo.FullName(), err)
	}
	return i.GetNumber(), true, nil
}
