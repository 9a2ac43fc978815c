package cli

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/speedmatrix/speedmatrix/ghbot/ghtest"
)

// pushOf runs the action (full mode) on a push of sha to master and wants a baseline verdict.
func (e *storeEnv) pushOf(sha string) string {
	e.t.Helper()
	e.event("push", derived(e.t, "push/with-new-branch.payload.json", map[string]any{"after": sha}))
	out, stderr, err := e.run(context.Background())
	if err != nil || out["verdict"] != "baseline" {
		e.t.Fatalf("push of %s: %v, outputs %v\n%s", sha[:7], err, out, stderr)
	}
	return stderr
}

// changeIssues returns the change-point issues of the fake.
func changeIssues(e *storeEnv) []ghtest.Issue {
	var out []ghtest.Issue
	for _, is := range e.srv.Issues(actRepo) {
		if strings.Contains(is.Body, "<!-- speedmatrix:change-point -->") {
			out = append(out, is)
		}
	}
	return out
}

// TestActionChangePointPushesToDetect: a sustained 20 % fall is reported once 3 results sit at
// the new level (the detector's minimum segment), not before; the issue names the first commit
// of the new level, not the split's last old one nor the newest push, and the size of the fall.
func TestActionChangePointPushesToDetect(t *testing.T) {
	for after := 1; after <= 3; after++ { // results at the new level, the push's own included
		t.Run(fmt.Sprint(after, " after the shift"), func(t *testing.T) {
			e := newStoreEnv(t, 0)
			e.simTime = true // the push's own result at the new level, whatever the load
			for i := range 10 {
				e.putScaled(seqSHA(i+1), 1.25)
			}
			for i := range after - 1 {
				e.putScaled(seqSHA(11+i), 1)
			}
			first := seqSHA(11)
			if after == 1 {
				first = pushAfter
			}
			stderr := e.pushOf(pushAfter)
			issues := changeIssues(e)
			if after < 3 {
				if len(issues) != 0 {
					t.Errorf("an issue after %d results at the new level: %+v", after, issues)
				}
				return
			}
			if len(issues) != 1 || issues[0].State != "open" {
				t.Fatalf("%d issues, want 1 open: %+v\n%s", len(issues), issues, stderr)
			}
			body := issues[0].Body
			want := regexp.MustCompile("first commit of the new level is `" + first[:7] + "`[^\n]*-(19|20|21)\\.[0-9] %")
			if !want.MatchString(body) {
				t.Errorf("the issue does not name the first commit %s and the size of the fall:\n%s", first[:7], body)
			}
			if !strings.Contains(body, "3 results") {
				t.Errorf("the issue does not say how many results a change point needs:\n%s", body)
			}
		})
	}
}

// TestActionChangePointIssueClosedOnRecovery: the issue a regression opened is closed, with a
// comment naming the commit that recovered, once a later change point brings the series back
// to its old level; a push while the series is still low keeps it open.
func TestActionChangePointIssueClosedOnRecovery(t *testing.T) {
	e := newStoreEnv(t, 0)
	e.simTime = true // the pushes' own results at the old level, whatever the load
	for i := range 10 {
		e.putScaled(seqSHA(i+1), 1)
	}
	for i := range 4 {
		e.putScaled(seqSHA(11+i), 0.8)
	}
	recovered := seqSHA(0x100) // the first push back at the old level
	stderr := e.pushOf(recovered)
	issues := changeIssues(e)
	if len(issues) != 1 || issues[0].State != "open" {
		t.Fatalf("after the fall: issues %+v, want 1 open\n%s", issues, stderr)
	}
	// A second push at the old level: 2 results back, fewer than a level needs.
	stderr = e.pushOf(seqSHA(0x101))
	if issues = changeIssues(e); len(issues) != 1 || issues[0].State != "open" {
		t.Fatalf("2 results back: issues %+v, want the one still open\n%s", issues, stderr)
	}
	// One more result at the old level, then a third push: 4 at the old level.
	e.putScaledAt(seqSHA(0x102), 1, e.now()) // after the last push's result, before the next push's
	time.Sleep(5 * time.Millisecond)
	stderr = e.pushOf(seqSHA(0x103))
	issues = changeIssues(e)
	if len(issues) != 1 || issues[0].State != "closed" {
		t.Fatalf("after the recovery: issues %+v, want the one closed\n%s", issues, stderr)
	}
	comments := e.srv.State().CommentsOn(actRepo, issues[0].Number)
	if len(comments) != 1 || !strings.Contains(comments[0].Body, "`"+recovered[:7]+"`") || !strings.Contains(comments[0].Body, "recovered") {
		t.Errorf("closing comments %+v, want one naming %s", comments, recovered[:7])
	}
}

// TestActionChangePointOtherConfigKeepsIssue: pushes of another config (another matrix) without
// a regression neither close nor rewrite the issue of the config that regressed.
func TestActionChangePointOtherConfigKeepsIssue(t *testing.T) {
	e := newStoreEnv(t, 0)
	for i := range 10 {
		e.putScaled(seqSHA(i+1), 1.25)
	}
	for i := range 4 {
		e.putScaled(seqSHA(11+i), 1)
	}
	e.pushOf(pushAfter)
	before := changeIssues(e)
	if len(before) != 1 || before[0].State != "open" {
		t.Fatalf("after the fall: issues %+v, want 1 open", before)
	}
	cfg := strings.Replace(actionConfig(""), "cells: [decode/8K/8]", "cells: [decode/8K/4]", 1)
	e.writeConfig(cfg + "store: {dir: " + e.st.Root() + ", min_history: 3}\n")
	e.pushOf(seqSHA(0x200))
	stderr := e.pushOf(seqSHA(0x201))
	if issues := changeIssues(e); len(issues) != 1 || issues[0].State != "open" || issues[0].Body != before[0].Body {
		t.Errorf("after pushes of another config: issues %+v, want the one still open and as it was\n%s", issues, stderr)
	}
}

// TestActionChangePointAlongCommits: the change points of a push are searched along the pushed
// commit's first parents, not in the order results were measured. Here the slower commits
// c7…c12 were measured first and the older, faster c1…c6 were backfilled after them (speedmatrix
// baseline --commit), and a commit a force push removed from the branch has a fast result: in
// measurement order the series would read slow, then fast (an improvement, no issue); along the
// branch it is fast up to c6 and slow from c7 on, a regression whose first commit is c7.
func TestActionChangePointAlongCommits(t *testing.T) {
	e := newStoreEnv(t, 0)
	day := time.Date(2019, 6, 1, 0, 0, 0, 0, time.UTC)
	parent := prBase
	for i := 1; i <= 12; i++ {
		parent = e.srv.AddCommit(actRepo, ghtest.GitCommit{SHA: seqSHA(i), Message: fmt.Sprint("c", i), Parents: []string{parent}, Date: day.Add(time.Duration(i) * time.Hour)}, nil)
	}
	gone := e.srv.AddCommit(actRepo, ghtest.GitCommit{SHA: seqSHA(0x300), Message: "gone", Parents: []string{seqSHA(9)}, Date: day.Add(20 * time.Hour)}, nil)
	e.srv.AddCommit(actRepo, ghtest.GitCommit{SHA: pushAfter, Message: "pushed", Parents: []string{seqSHA(12)}, Date: day.Add(30 * time.Hour)}, nil)
	for i := 7; i <= 12; i++ {
		e.putScaled(seqSHA(i), 1)
	}
	for i := 1; i <= 6; i++ {
		e.putScaled(seqSHA(i), 1.25)
	}
	e.putScaled(gone, 1.25)
	stderr := e.pushOf(pushAfter)
	issues := changeIssues(e)
	if len(issues) != 1 || issues[0].State != "open" {
		t.Fatalf("%d issues, want 1 open: %+v\n%s", len(issues), issues, stderr)
	}
	if want := "first commit of the new level is `" + seqSHA(7)[:7] + "`"; !strings.Contains(issues[0].Body, want) {
		t.Errorf("the issue does not say %q:\n%s", want, issues[0].Body)
	}
	if !strings.Contains(stderr, "left out results of commits not on the pushed commit's first parents") {
		t.Errorf("the log does not say the force-pushed commit's result was left out:\n%s", stderr)
	}
}
