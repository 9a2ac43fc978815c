package action

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/speedmatrix/speedmatrix/config"
	"github.com/speedmatrix/speedmatrix/ghbot"
	"github.com/speedmatrix/speedmatrix/results"
	"github.com/speedmatrix/speedmatrix/store"
)

// lineCommits is a first-parent line of commits, newest first; every branch is its tip.
type lineCommits []string

func (l lineCommits) MergeBase(_ context.Context, base, head string) (string, error) {
	for _, c := range l {
		if c == head {
			return c, nil // head is on the line: it is its own merge-base
		}
	}
	return l[0], nil
}

func (l lineCommits) Ancestors(_ context.Context, from string, limit int) ([]string, error) {
	for i, c := range l {
		if c == from {
			return l[i:min(len(l), i+limit)], nil
		}
	}
	return nil, nil
}

// TestPairedAutoNotWithItself checks paired.mode auto for a run of a commit on the default
// branch itself (workflow_dispatch of the default branch's tip, whose push has not stored its
// results yet): the merge-base is the head, so a paired run would measure the commit against
// itself; it is not paired. A pull request's head off the line still is (the merge-base has no
// stored results).
func TestPairedAutoNotWithItself(t *testing.T) {
	ctx := context.Background()
	tip, parent, pr := strings.Repeat("a", 40), strings.Repeat("b", 40), strings.Repeat("c", 40)
	s := store.NewDir(t.TempDir())
	f := &results.File{Schema: results.SchemaV1, Run: results.Run{Source: results.SourceImported, Tool: results.Tool{Name: "t"}, ServedModel: "m"}, Engine: results.Engine{Commit: parent}}
	if _, err := s.Put(ctx, store.Entry{Commit: parent, Kind: store.KindDefault}, f); err != nil {
		t.Fatal(err)
	}
	j := &job{log: slog.New(slog.NewTextHandler(io.Discard, nil)), repo: ghbot.Repo{DefaultBranch: "main"}}
	j.cfg.Paired.Mode = config.PairedModeAuto
	j.cfg.Store.MinHistory = 1
	rs := resultStore{s: s, commits: lineCommits{tip, parent}}
	if why, base := j.pairedBefore(ctx, rs, plan{Kind: ghbot.RunDispatch, HeadSHA: tip}); why != "" {
		t.Errorf("the default branch's tip: paired (%q, base %s), want not paired: it would be its own base", why, base)
	}
	why, base := j.pairedBefore(ctx, rs, plan{Kind: ghbot.RunPullRequest, PR: 1, HeadSHA: pr, BaseSHA: tip})
	if why == "" || base != tip {
		t.Errorf("a pull request on the tip: paired %q base %s, want paired with base %s", why, base, tip)
	}
}
