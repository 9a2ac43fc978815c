package ghbot

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/go-github/v66/github"
)

// findOpenIssue returns the open issue labelled label whose body holds marker and whose author
// is the bot's own login; ok is false when there is none. Anyone who can open an issue can copy
// the label and the marker, so an issue by another author is never read, edited or closed.
func (c *Client) findOpenIssue(ctx context.Context, repo Repo, label, marker string) (*github.Issue, bool, error) {
	opts := &github.IssueListByRepoOptions{State: "open", Labels: []string{label}, ListOptions: github.ListOptions{PerPage: 100}}
	for page := 0; page < 10; page++ {
		issues, resp, err := c.gh.Issues.ListByRepo(ctx, repo.Owner, repo.Name, opts)
		if err != nil {
			return nil, false, fmt.Errorf("list the %s issues of %s: %w", label, repo.FullName(), err)
		}
		for _, i := range issues {
			if i.PullRequestLinks == nil && strings.Contains(i.GetBody(), marker) && strings.EqualFold(i.GetUser().GetLogin(), c.identity.Login) {
				return i, true, nil
			}
		}
		if resp == nil || resp.NextPage == 0 {
			break
		}
		opts.Page = resp.NextPage
	}
	return nil, false, nil
}

// FindOpenIssue returns the number and body of the open issue labelled label whose body holds
// marker and that the bot's login wrote; ok is false when there is none.
func (c *Client) FindOpenIssue(ctx context.Context, repo Repo, label, marker string) (number int, body string, ok bool, err error) {
	i, ok, err := c.findOpenIssue(ctx, repo, label, marker)
	if err != nil || !ok {
		return 0, "", false, err
	}
	return i.GetNumber(), i.GetBody(), true, nil
}

// CloseIssue closes the open issue labelled label whose body holds marker, after commenting
// comment on it (as completed: what it reported is over). It returns the issue's number, 0 when
// no such issue is open (nothing to do).
func (c *Client) CloseIssue(ctx context.Context, repo Repo, label, marker, comment string) (int, error) {
	i, ok, err := c.findOpenIssue(ctx, repo, label, marker)
	if err != nil || !ok {
		return 0, err
	}
	n := i.GetNumber()
	if comment != "" {
		comment, _ = FitComment(comment, "")
		if _, _, err := c.gh.Issues.CreateComment(ctx, repo.Owner, repo.Name, n, &github.IssueComment{Body: github.String(comment)}); err != nil {
			return n, fmt.Errorf("comment on issue %s#%d: %w", repo.FullName(), n, err)
		}
	}
	if _, _, err := c.gh.Issues.Edit(ctx, repo.Owner, repo.Name, n, &github.IssueRequest{State: github.String("closed"), StateReason: github.String("completed")}); err != nil {
		return n, fmt.Errorf("close issue %s#%d (the token needs issues: write): %w", repo.FullName(), n, err)
	}
	return n, nil
}
