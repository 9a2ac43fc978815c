package ghbot

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseBisectCommand(t *testing.T) {
	for _, tt := range []struct {
		body    string
		want    Command
		wantErr string
	}{
		{body: "/bench bisect", want: Command{Kind: CommandBisect}},
		{body: "/bench BISECT 1A2B3C4..5d6e7f8", want: Command{Kind: CommandBisect, Good: "1a2b3c4", Bad: "5d6e7f8"}},
		{body: "/bench bisect 1a2b3c4", wantErr: "is not a range"},
		{body: "/bench bisect 1a2b..5d6e7f8", wantErr: "at least 7 hex digits"},
		{body: "/bench bisect 1a2b3c4..5d6e7f8 now", wantErr: "is not a range"},
	} {
		got, err := ParseCommand(tt.body)
		var ce *CommandError
		switch {
		case tt.wantErr != "":
			if !errors.As(err, &ce) || !strings.Contains(ce.Problem, tt.wantErr) {
				t.Errorf("%q: error %v, want one saying %q", tt.body, err, tt.wantErr)
			}
		case err != nil || got.Kind != tt.want.Kind || got.Good != tt.want.Good || got.Bad != tt.want.Bad:
			t.Errorf("%q: %+v, %v; want %+v", tt.body, got, err, tt.want)
		}
	}
	if !strings.Contains(HelpText, "/bench bisect") {
		t.Error("the help does not list /bench bisect")
	}
}

// TestIssueCommentNumber: a comment on an issue (not a pull request) carries the issue's number.
func TestIssueCommentNumber(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "testdata", "github-events", "issue_comment", "created.payload.json"))
	if err != nil {
		t.Fatal(err)
	}
	ev, err := ParseEvent("issue_comment", data)
	if err != nil {
		t.Fatal(err)
	}
	if !ev.OnIssue || ev.Issue != 1 || ev.PullRequest != nil {
		t.Errorf("on issue %v, issue %d, pull request %+v; want issue 1", ev.OnIssue, ev.Issue, ev.PullRequest)
	}
}
