package ghbot

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-github/v66/github"
	"github.com/speedmatrix/speedmatrix/ghbot/ghtest"
)

func TestCheckRunSameRunTwiceLeavesOne(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	for i := 0; i < 2; i++ {
		if _, err := e.c.StartCheck(ctx, helloRepo, shaA, "speedmatrix", CheckUpdate{Output: CheckOutput{Title: "measuring…", Summary: "started"}, DetailsURL: "https://example.com/run"}); err != nil {
			t.Fatal(err)
		}
		if got := e.srv.State().CheckRuns; len(got) != 1 || got[0].Status != "in_progress" || got[0].Conclusion != "" {
			t.Fatalf("after start %d: %+v, want one in_progress run", i, got)
		}
		if _, err := e.c.CompleteCheck(ctx, helloRepo, shaA, "speedmatrix", CheckUpdate{Conclusion: ConclusionFailure, Output: CheckOutput{Title: "2 cells slower", Summary: "s", Text: "t"}}); err != nil {
			t.Fatal(err)
		}
	}
	// Another commit and another name get their own runs.
	if _, err := e.c.CompleteCheck(ctx, helloRepo, shaB, "speedmatrix", CheckUpdate{Conclusion: ConclusionSuccess}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.c.CompleteCheck(ctx, helloRepo, shaA, "speedmatrix / quick", CheckUpdate{Conclusion: ConclusionNeutral}); err != nil {
		t.Fatal(err)
	}
	st := e.srv.State()
	onA := st.ChecksOn(testRepo, shaA)
	if len(onA) != 2 || len(st.ChecksOn(testRepo, shaB)) != 1 {
		t.Fatalf("check runs %+v: want 2 on A (one per name) and 1 on B", st.CheckRuns)
	}
	got := onA[0]
	want := ghtest.CheckRun{ID: got.ID, Repo: testRepo, HeadSHA: shaA, Name: "speedmatrix", Status: "completed", Conclusion: "failure",
		ExternalID: CheckExternalID, DetailsURL: "https://example.com/run", AppID: ghtest.ActionsAppID, Title: "2 cells slower", Summary: "s", Text: "t",
		StartedAt: got.StartedAt, CompletedAt: got.CompletedAt}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("check run (-want +got):\n%s", diff)
	}
	// Every update names the run: go-github v66 sends "name" even when empty.
	for _, c := range st.CallsTo("PATCH", "/repos/Codertocat/Hello-World/check-runs/") {
		var body map[string]any
		if err := json.Unmarshal([]byte(c.Body), &body); err != nil || body["name"] == "" || body["name"] == nil {
			t.Errorf("PATCH %s body %s: want a name", c.Path, c.Body)
		}
	}
}

func TestCheckRunNotConfusedWithAJobOfTheSameName(t *testing.T) {
	e := newEnv(t)
	job := e.srv.AddCheckRun(ghtest.CheckRun{Repo: testRepo, HeadSHA: shaA, Name: "speedmatrix", Status: "in_progress", AppID: ghtest.ActionsAppID})
	ctx := context.Background()
	if _, err := e.c.StartCheck(ctx, helloRepo, shaA, "speedmatrix", CheckUpdate{}); err != nil {
		t.Fatal(err)
	}
	if n, err := e.c.CompleteStale(ctx, helloRepo, shaA, "speedmatrix", ConclusionCancelled, CheckOutput{Title: "stopped"}); err != nil || n != 1 {
		t.Fatalf("CompleteStale = %d, %v; want 1", n, err)
	}
	runs := e.srv.State().ChecksOn(testRepo, shaA)
	if len(runs) != 2 {
		t.Fatalf("runs %+v: want the job's and ours", runs)
	}
	for _, r := range runs {
		switch {
		case r.ID == job && r.Status != "in_progress":
			t.Errorf("the workflow job's check run was changed: %+v", r)
		case r.ID != job && (r.Status != "completed" || r.Conclusion != "cancelled"):
			t.Errorf("our run %+v: want completed cancelled", r)
		}
	}
}

func TestCompleteStale(t *testing.T) {
	e := newEnv(t)
	seed := func(status, conclusion, name, sha string) int64 {
		return e.srv.AddCheckRun(ghtest.CheckRun{Repo: testRepo, HeadSHA: sha, Name: name, Status: status, Conclusion: conclusion, ExternalID: CheckExternalID, AppID: ghtest.ActionsAppID})
	}
	stale := seed("in_progress", "", "speedmatrix", shaA)
	queued := seed("queued", "", "speedmatrix", shaA)
	done := seed("completed", "success", "speedmatrix", shaA)
	otherName := seed("in_progress", "", "other", shaA)
	otherSHA := seed("in_progress", "", "speedmatrix", shaB)
	n, err := e.c.CompleteStale(context.Background(), helloRepo, shaA, "speedmatrix", ConclusionCancelled, CheckOutput{Title: "The run stopped", Summary: "No results: the job was cancelled."})
	if err != nil || n != 2 {
		t.Fatalf("CompleteStale = %d, %v; want 2", n, err)
	}
	want := map[int64]string{stale: "completed/cancelled", queued: "completed/cancelled", done: "completed/success", otherName: "in_progress/", otherSHA: "in_progress/"}
	for _, r := range e.srv.State().CheckRuns {
		if got := r.Status + "/" + r.Conclusion; got != want[r.ID] {
			t.Errorf("run %d (%s on %s) = %s, want %s", r.ID, r.Name, r.HeadSHA[:7], got, want[r.ID])
		}
	}
}

func TestCheckOutputCutByBytes(t *testing.T) {
	e := newEnv(t)
	big := strings.Repeat("é🚀", 20000) // 120,000 bytes
	if _, err := e.c.CompleteCheck(context.Background(), helloRepo, shaA, "speedmatrix", CheckUpdate{
		Conclusion: ConclusionSuccess, Output: CheckOutput{Title: "t", Summary: big, Text: big}}); err != nil {
		t.Fatalf("CompleteCheck: %v (the fake refuses fields over 65,535 bytes)", err)
	}
	r := e.srv.State().CheckRuns[0]
	for _, f := range []string{r.Summary, r.Text} {
		if len(f) > MaxCheckOutputBytes || len(f) < MaxCheckOutputBytes-200 || !utf8.ValidString(f) || !strings.HasSuffix(f, cutNote) {
			t.Errorf("field of %d bytes, valid UTF-8 %v", len(f), utf8.ValidString(f))
		}
	}
}

func TestCheckButtons(t *testing.T) {
	buttons := []CheckAction{ButtonRerun, ButtonAccept}
	t.Run("token: dropped", func(t *testing.T) {
		e := newEnv(t)
		if _, err := e.c.CompleteCheck(context.Background(), helloRepo, shaA, "speedmatrix", CheckUpdate{Conclusion: ConclusionFailure, Actions: buttons}); err != nil {
			t.Fatal(err)
		}
		if a := e.srv.State().CheckRuns[0].Actions; len(a) != 0 {
			t.Errorf("actions %+v: want none with GITHUB_TOKEN", a)
		}
	})
	t.Run("app: sent on completion", func(t *testing.T) {
		e := newEnv(t)
		c := e.appClient(t, "")
		ctx := context.Background()
		if _, err := c.StartCheck(ctx, helloRepo, shaA, "speedmatrix", CheckUpdate{Actions: buttons}); err != nil {
			t.Fatal(err)
		}
		if a := e.srv.State().CheckRuns[0].Actions; len(a) != 0 {
			t.Errorf("actions on an in_progress run: %+v", a)
		}
		if _, err := c.CompleteCheck(ctx, helloRepo, shaA, "speedmatrix", CheckUpdate{Conclusion: ConclusionFailure, Actions: buttons}); err != nil {
			t.Fatal(err)
		}
		want := []github.CheckRunAction{
			{Label: "Re-run", Identifier: "rerun", Description: "Measure this commit again"},
			{Label: "Accept", Identifier: "accept", Description: "Accept this regression at this commit"},
		}
		if diff := cmp.Diff(want, e.srv.State().CheckRuns[0].Actions); diff != "" {
			t.Errorf("actions (-want +got):\n%s", diff)
		}
		if got := e.srv.State().CallsTo("GET", "/repos/Codertocat/Hello-World/commits/"+shaA+"/check-runs"); !strings.Contains(got[0].Query, "app_id=77") {
			t.Errorf("list query %q: want app_id=77", got[0].Query)
		}
	})
	t.Run("invalid", func(t *testing.T) {
		e := newEnv(t)
		c := e.appClient(t, "")
		for _, bad := range [][]CheckAction{
			{{Label: "A label far longer than twenty", Identifier: "x", Description: "d"}},
			{{Label: "ok", Identifier: "an-identifier-over-20", Description: "d"}},
			{{Label: "ok", Identifier: "x", Description: strings.Repeat("d", 41)}},
			{ButtonRerun, ButtonAccept, ButtonRerun, ButtonAccept},
		} {
			if _, err := c.CompleteCheck(context.Background(), helloRepo, shaA, "speedmatrix", CheckUpdate{Conclusion: ConclusionFailure, Actions: bad}); err == nil {
				t.Errorf("buttons %+v accepted", bad)
			}
		}
		if n := len(e.srv.State().CheckRuns); n != 0 {
			t.Errorf("%d check runs made with invalid buttons", n)
		}
	})
}

func TestCheckRunValidation(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	if _, err := e.c.CompleteCheck(ctx, helloRepo, shaA, "speedmatrix", CheckUpdate{Conclusion: "great"}); err == nil {
		t.Error("conclusion great accepted")
	}
	if _, err := e.c.StartCheck(ctx, helloRepo, "main", "speedmatrix", CheckUpdate{}); err == nil {
		t.Error("a branch name accepted as the SHA")
	}
	if _, err := e.c.StartCheck(ctx, helloRepo, shaA, "", CheckUpdate{}); err == nil {
		t.Error("an empty name accepted")
	}
	for _, c := range []Conclusion{ConclusionSuccess, ConclusionFailure, ConclusionNeutral, ConclusionCancelled, ConclusionTimedOut, ConclusionActionRequired} {
		if _, err := e.c.CompleteCheck(ctx, helloRepo, shaA, "speedmatrix", CheckUpdate{Conclusion: c}); err != nil {
			t.Errorf("conclusion %s: %v", c, err)
		}
	}
	if runs := e.srv.State().CheckRuns; len(runs) != 1 || runs[0].Conclusion != "action_required" {
		t.Errorf("runs %+v: want one, action_required last", runs)
	}
}
