package ghbot

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/google/go-github/v66/github"
)

// Dispatch creates a workflow_dispatch event of workflow (the file name under
// .github/workflows, e.g. speedmatrix.yml) on ref (a branch) with inputs: GitHub starts a run
// of that workflow as the file stands on ref. A dispatch made with GITHUB_TOKEN starts a run
// (the one event such a token may start a workflow with besides repository_dispatch); the job
// needs the permission actions: write.
func (c *Client) Dispatch(ctx context.Context, repo Repo, workflow, ref string, inputs map[string]string) error {
	if workflow == "" || strings.ContainsAny(workflow, "/\\") {
		return fmt.Errorf("dispatch: %q is not a workflow file name", workflow)
	}
	ev := github.CreateWorkflowDispatchEventRequest{Ref: ref}
	if len(inputs) > 0 {
		ev.Inputs = map[string]any{}
		for k, v := range inputs {
			ev.Inputs[k] = v
		}
	}
	if _, err := c.gh.Actions.CreateWorkflowDispatchEventByFileName(ctx, repo.Owner, repo.Name, workflow, ev); err != nil {
		return fmt.Errorf("dispatch %s on %s of %s: %w (the job needs permissions: actions: write)", workflow, ref, repo.FullName(), err)
	}
	return nil
}

// CommentByID returns the issue or pull-request comment id of repo with its author; ok is
// false when there is none. As with FindComment, a comment of the bot's login is not proof
// that the bot wrote it (GITHUB_TOKEN is shared by every workflow of the repository).
func (c *Client) CommentByID(ctx context.Context, repo Repo, id int64) (FoundComment, bool, error) {
	cm, resp, err := c.gh.Issues.GetComment(ctx, repo.Owner, repo.Name, id)
	if err != nil {
		if resp != nil && resp.StatusCode == http.StatusNotFound {
			return FoundComment{}, false, nil
		}
		return FoundComment{}, false, fmt.Errorf("comment %d of %s: %w", id, repo.FullName(), err)
	}
	return FoundComment{ID: cm.GetID(), URL: cm.GetHTMLURL(), Body: cm.GetBody(), Author: cm.GetUser().GetLogin()}, true, nil
}

// EditComment replaces the body of comment id (cut to GitHub's limit as UpsertComment cuts,
// with a note linking fullURL, which may be empty).
func (c *Client) EditComment(ctx context.Context, repo Repo, id int64, body, fullURL string) error {
	body, truncated := FitComment(body, fullURL)
	if truncated {
		c.logger.Warn("comment over GitHub's limit: cut", "comment", id, "limit", MaxCommentChars)
	}
	if _, _, err := c.gh.Issues.EditComment(ctx, repo.Owner, repo.Name, id, &github.IssueComment{Body: github.String(body)}); err != nil {
		return fmt.Errorf("edit comment %d of %s: %w", id, repo.FullName(), err)
	}
	return nil
}
