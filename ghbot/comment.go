package ghbot

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/google/go-github/v66/github"

	"github.com/speedmatrix/speedmatrix/report"
)

// MaxCommentChars is GitHub's limit on an issue or PR comment body.
const MaxCommentChars = 65536

// Marker returns the hidden line that marks the bot's comment for a check name: the line the
// comment's renderer writes (report.CheckMarker), the name query-escaped so that it cannot close
// the HTML comment.
func Marker(checkName string) string {
	return report.CheckMarker(checkName)
}

// IsOurs reports whether a comment body is laid out as UpsertComment writes it: the marker as
// its first line. Every version of the bot put it there (and the renderer repeats it at the
// end), so comments of earlier versions are found and edited; a comment by the same login that
// quotes the marker elsewhere (another workflow echoing a pull request's title or body) is not.
func IsOurs(body, marker string) bool {
	return body == marker || strings.HasPrefix(body, marker+"\n") || strings.HasPrefix(body, marker+"\r\n")
}

// CommentResult is what UpsertComment did.
type CommentResult struct {
	ID      int64
	URL     string // the comment's html_url
	Created bool   // a new comment was posted (else the existing one was edited or left as it was)
	// Truncated is set when the body had to be cut to fit MaxCommentChars.
	Truncated bool
	// Removed counts duplicate comments of ours that were deleted.
	Removed int
}

// UpsertComment keeps exactly one comment of the bot per PR and check name, holding body: it
// lists the PR's comments (all pages), takes those written by the bot's own login whose body
// starts with Marker(checkName) (IsOurs: a comment that only quotes the marker is not ours, and
// is neither edited nor deleted), edits the oldest in place (or leaves it when the body is unchanged) and
// deletes the others (left by a retried POST or a concurrent run); with none it posts one.
// body is rendered markdown; the marker is prepended. A body over MaxCommentChars is cut at a
// line, its open code fences and <details> closed, with a note linking fullURL (the full report,
// e.g. the run's artifact page; may be empty): the renderer should fold so that this never
// happens.
func (c *Client) UpsertComment(ctx context.Context, repo Repo, pr int, checkName, body, fullURL string) (CommentResult, error) {
	marker := Marker(checkName)
	full, truncated := FitComment(marker+"\n"+body, fullURL)
	if truncated {
		c.logger.Warn("PR comment over GitHub's limit: cut", "pr", pr, "limit", MaxCommentChars)
	}
	res := CommentResult{Truncated: truncated}
	var ours []*github.IssueComment
	opts := &github.IssueListCommentsOptions{ListOptions: github.ListOptions{PerPage: 100}}
	for {
		page, resp, err := c.gh.Issues.ListComments(ctx, repo.Owner, repo.Name, pr, opts)
		if err != nil {
			return res, fmt.Errorf("list comments of %s#%d: %w", repo.FullName(), pr, err)
		}
		for _, cm := range page {
			if strings.EqualFold(cm.GetUser().GetLogin(), c.identity.Login) && IsOurs(cm.GetBody(), marker) {
				ours = append(ours, cm)
			}
		}
		if resp.NextPage == 0 {
			break
		}
		opts.Page = resp.NextPage
	}
	if len(ours) == 0 {
		cm, _, err := c.gh.Issues.CreateComment(ctx, repo.Owner, repo.Name, pr, &github.IssueComment{Body: github.String(full)})
		if err != nil {
			return res, fmt.Errorf("post comment on %s#%d: %w", repo.FullName(), pr, err)
		}
		res.ID, res.URL, res.Created = cm.GetID(), cm.GetHTMLURL(), true
		return res, nil
	}
	keep := ours[0]
	for _, cm := range ours[1:] {
		if cm.GetID() < keep.GetID() {
			keep = cm
		}
	}
	res.ID, res.URL = keep.GetID(), keep.GetHTMLURL()
	if keep.GetBody() != full {
		cm, _, err := c.gh.Issues.EditComment(ctx, repo.Owner, repo.Name, keep.GetID(), &github.IssueComment{Body: github.String(full)})
		if err != nil {
			return res, fmt.Errorf("edit comment %d on %s#%d: %w", keep.GetID(), repo.FullName(), pr, err)
		}
		if cm.GetHTMLURL() != "" {
			res.URL = cm.GetHTMLURL()
		}
	}
	for _, cm := range ours {
		if cm.GetID() == keep.GetID() {
			continue
		}
		if _, err := c.gh.Issues.DeleteComment(ctx, repo.Owner, repo.Name, cm.GetID()); err != nil {
			return res, fmt.Errorf("delete duplicate comment %d on %s#%d: %w", cm.GetID(), repo.FullName(), pr, err)
		}
		res.Removed++
	}
	return res, nil
}

// Reply posts a new, unmarked comment on a PR (answers to commands).
func (c *Client) Reply(ctx context.Context, repo Repo, pr int, text string) (int64, error) {
	text, _ = FitComment(text, "")
	cm, _, err := c.gh.Issues.CreateComment(ctx, repo.Owner, repo.Name, pr, &github.IssueComment{Body: github.String(text)})
	if err != nil {
		return 0, fmt.Errorf("reply on %s#%d: %w", repo.FullName(), pr, err)
	}
	return cm.GetID(), nil
}

// React adds a reaction ("eyes", "+1", "rocket", …) to an issue or PR comment.
func (c *Client) React(ctx context.Context, repo Repo, commentID int64, content string) error {
	if _, _, err := c.gh.Reactions.CreateIssueCommentReaction(ctx, repo.Owner, repo.Name, commentID, content); err != nil {
		return fmt.Errorf("react %q to comment %d on %s: %w", content, commentID, repo.FullName(), err)
	}
	return nil
}

// commentLen counts a body as GitHub's limit does, conservatively: in UTF-16 code units (an
// emoji counts two), never fewer than characters.
func commentLen(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

// FitComment returns body unchanged when it is within MaxCommentChars, else cut to fit: at the
// last line break that leaves room, with open code fences and <details> blocks closed and a
// note that links fullURL (an http(s) URL; otherwise the note names no link).
func FitComment(body, fullURL string) (string, bool) {
	if commentLen(body) <= MaxCommentChars {
		return body, false
	}
	note := "\n\n---\n✂️ This comment was cut at GitHub's limit of 65,536 characters."
	if u, err := url.Parse(fullURL); err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != "" {
		note += " [The full report](" + u.String() + ")."
	} else {
		note += " The full report is in the run's artifacts."
	}
	budget := MaxCommentChars - commentLen(note)
	for {
		kept := prefixUnits(body, budget)
		if i := strings.LastIndexByte(kept, '\n'); i > 0 {
			kept = kept[:i]
		}
		out := kept + closers(kept) + note
		if commentLen(out) <= MaxCommentChars {
			return out, true
		}
		budget -= commentLen(out) - MaxCommentChars
	}
}

// prefixUnits returns the longest prefix of s of at most n UTF-16 units.
func prefixUnits(s string, n int) string {
	units := 0
	for i, r := range s {
		units += utf16.RuneLen(r)
		if units > n {
			return s[:i]
		}
	}
	return s
}

// closers returns what closes the fenced code block and <details> elements left open in s.
func closers(s string) string {
	fence := ""
	details := 0
	for _, line := range strings.Split(s, "\n") {
		t := strings.TrimSpace(line)
		if f := fenceOf(t); f != "" {
			switch {
			case fence == "":
				fence = f
			case strings.HasPrefix(f, fence):
				fence = ""
			}
			continue
		}
		if fence != "" {
			continue
		}
		details += strings.Count(t, "<details") - strings.Count(t, "</details>")
	}
	var b strings.Builder
	if fence != "" {
		b.WriteString("\n" + fence)
	}
	for ; details > 0; details-- {
		b.WriteString("\n\n</details>")
	}
	return b.String()
}

// cutBytes returns s cut to at most n bytes at a UTF-8 boundary; when it cuts, the end is
// replaced by note (which must be shorter than n).
func cutBytes(s string, n int, note string) (string, bool) {
	if len(s) <= n {
		return s, false
	}
	end := n - len(note)
	if end < 0 {
		end = 0
	}
	for end > 0 && !utf8.RuneStart(s[end]) {
		end--
	}
	return s[:end] + note, true
}
