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
	if i, ok, err := c.findOpenIssue(ctx, repo, label, marker); err != nil {
		return 0, false, err
	} else if ok {
		if _, _, err := c.gh.Issues.Edit(ctx, repo.Owner, repo.Name, i.GetNumber(), &github.IssueRequest{Title: github.String(title), Body: github.String(body)}); err != nil {
			return 0, false, fmt.Errorf("update issue %s#%d: %w", repo.FullName(), i.GetNumber(), err)
		}
		return i.GetNumber(), false, nil
	}
	i, _, err := c.gh.Issues.Create(ctx, repo.Owner, repo.Name, &github.IssueRequest{Title: github.String(title), Body: github.String(body), Labels: &[]string{label}})
	if err != nil {
		return 0, false, fmt.Errorf("open an issue on %s (the token needs issues: write): %w", repo.FullName(), err)
	}
	return i.GetNumber(), true, nil
}
