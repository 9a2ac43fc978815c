package ghbot

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/go-github/v66/github"
)

// FoundComment is the bot's comment on a PR as FindComment read it.
type FoundComment struct {
	ID     int64
	URL    string
	Body   string
	Author string // the login that wrote it
}

// FindComment returns the bot's comment on a PR for a check name — the oldest comment written by
// the bot's own login whose body starts with Marker(checkName) (IsOurs), as UpsertComment keeps
// it — or ok false when there is none. With GITHUB_TOKEN another workflow of the repository
// writes as the same login, so the body is not proof that the bot wrote it: read it for what a
// trusted command asks, never for an acceptance or a verdict.
func (c *Client) FindComment(ctx context.Context, repo Repo, pr int, checkName string) (FoundComment, bool, error) {
	marker := Marker(checkName)
	var found *github.IssueComment
	opts := &github.IssueListCommentsOptions{ListOptions: github.ListOptions{PerPage: 100}}
	for {
		page, resp, err := c.gh.Issues.ListComments(ctx, repo.Owner, repo.Name, pr, opts)
		if err != nil {
			return FoundComment{}, false, fmt.Errorf("list comments of %s#%d: %w", repo.FullName(), pr, err)
		}
		for _, cm := range page {
			if strings.EqualFold(cm.GetUser().GetLogin(), c.identity.Login) && IsOurs(cm.GetBody(), marker) &&
				(found == nil || cm.GetID() < found.GetID()) {
				found = cm
			}
		}
		if resp.NextPage == 0 {
			break
		}
		opts.Page = resp.NextPage
	}
	if found == nil {
		return FoundComment{}, false, nil
	}
	return FoundComment{ID: found.GetID(), URL: found.GetHTMLURL(), Body: found.GetBody(), Author: found.GetUser().GetLogin()}, true, nil
}

// FindCheck returns the newest check run of ours named name on sha, or ok false when there is
// none (a merge queue's reuse policy reads the PR's conclusion with it).
func (c *Client) FindCheck(ctx context.Context, repo Repo, sha, name string) (CheckRun, bool, error) {
	runs, err := c.findChecks(ctx, repo, sha, name, "")
	if err != nil || len(runs) == 0 {
		return CheckRun{}, false, err
	}
	return checkRun(runs[0]), true, nil
}

// BotComments returns the comments on issue or pull request n written by the bot's own login
// whose body contains mark, oldest first. As with FindComment, a comment of that login is not
// proof that the bot wrote it.
func (c *Client) BotComments(ctx context.Context, repo Repo, n int, mark string) ([]FoundComment, error) {
	var out []FoundComment
	opts := &github.IssueListCommentsOptions{ListOptions: github.ListOptions{PerPage: 100}}
	for {
		page, resp, err := c.gh.Issues.ListComments(ctx, repo.Owner, repo.Name, n, opts)
		if err != nil {
			return nil, fmt.Errorf("list comments of %s#%d: %w", repo.FullName(), n, err)
		}
		for _, cm := range page {
			if strings.EqualFold(cm.GetUser().GetLogin(), c.identity.Login) && strings.Contains(cm.GetBody(), mark) {
				out = append(out, FoundComment{ID: cm.GetID(), URL: cm.GetHTMLURL(), Body: cm.GetBody(), Author: cm.GetUser().GetLogin()})
			}
		}
		if resp.NextPage == 0 {
			return out, nil
		}
		opts.Page = resp.NextPage
	}
}
