package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/speedmatrix/speedmatrix/ghbot/ghtest"
)

const (
	groupHead = "2ffea6db159f6b6c47a24e778fb9ef40cf6b1c7d"
	queuedPR  = "929f8209d40f77f4abc622a499c93a83babdbe64" // the PR head named by the group's ref
)

// TestActionMergeGroupReuse: with merge_queue reuse (the default), a group whose PR's check
// succeeded on its head gets success on the group's head under the same name, without a run;
// with merge_queue run it is measured.
func TestActionMergeGroupReuse(t *testing.T) {
	e := newActEnv(t)
	e.srv.AddCheckRun(ghtest.CheckRun{Repo: "octo-org/octo-repo", HeadSHA: queuedPR, Name: "speedmatrix", Status: "completed",
		Conclusion: "success", ExternalID: "speedmatrix", AppID: ghtest.ActionsAppID})
	e.event("merge_group", payload(t, "merge_group/checks_requested.payload.json"))
	out := mustRun(t, e)
	wantOutputs(t, out, map[string]string{"verdict": "reused", "conclusion": "success"})
	c := oneCheck(t, e.srv.State(), groupHead)
	if c.Name != "speedmatrix" || c.Conclusion != "success" || !strings.Contains(c.Title, "pull request #104 succeeded at 929f820") {
		t.Errorf("group check %s %s %q", c.Name, c.Conclusion, c.Title)
	}
	if fileExistsT(filepath.Join(e.dir, "artifact", "results.json")) {
		t.Errorf("a reused verdict measured")
	}

	e.writeConfig(actionConfig("") + "github: {merge_queue: run}\n")
	out = mustRun(t, e)
	wantOutputs(t, out, map[string]string{"verdict": "no_baseline", "conclusion": "neutral"})
	if !fileExistsT(filepath.Join(e.dir, "artifact", "results.json")) {
		t.Errorf("merge_queue run did not measure")
	}
	if c := oneCheck(t, e.srv.State(), groupHead); c.Conclusion != "neutral" {
		t.Errorf("group check after a run: %s", c.Conclusion)
	}
}

// TestActionDecideMode: decide routes /bench, reacts, starts the check and the measuring
// comment, and its outputs pin what the measuring job checks out; it measures nothing.
func TestActionDecideMode(t *testing.T) {
	e := newActEnv(t)
	e.benchComment("/bench rerun prefill/8K decode/8K/8")
	e.vars["INPUT_MODE"] = "decide"
	out := mustRun(t, e)
	wantOutputs(t, out, map[string]string{"run": "true", "verdict": "pending", "sha": prHead, "base-sha": prBase, "pr": "2",
		"kind": "command", "cells": "prefill/8K,decode/8K/8"})
	st := e.srv.State()
	if c := oneCheck(t, st, prHead); c.Status != "in_progress" {
		t.Errorf("check %s, want in_progress until the report", c.Status)
	}
	if b := oneComment(t, st); !strings.Contains(b, "Measuring 2 cells of ec26c3e") || !strings.Contains(b, `"phase":"measuring"`) {
		t.Errorf("comment:\n%s", b)
	}
	if len(st.Reactions) != 1 || fileExistsT(filepath.Join(e.dir, "artifact", "results.json")) {
		t.Errorf("reactions %d; measured %v", len(st.Reactions), fileExistsT(filepath.Join(e.dir, "artifact", "results.json")))
	}
}

// TestActionReportRejectsForgedArtifact: report mode reads meta.json as untrusted data: a
// commit id that is not one, or an unknown kind, posts nothing.
func TestActionReportRejectsForgedArtifact(t *testing.T) {
	for name, meta := range map[string]string{
		"not a sha":    `{"schema":"speedmatrix/action-artifact/v1","head_sha":"main; curl evil","kind":"pull_request"}`,
		"unknown kind": `{"schema":"speedmatrix/action-artifact/v1","head_sha":"` + prHead + `","kind":"deploy"}`,
		"bad cells":    `{"schema":"speedmatrix/action-artifact/v1","head_sha":"` + prHead + `","kind":"pull_request","cells":["$(id)"]}`,
	} {
		t.Run(name, func(t *testing.T) {
			e := newActEnv(t)
			e.event("pull_request", payload(t, "pull_request/opened.payload.json"))
			e.vars["INPUT_MODE"], e.vars["INPUT_SHA"] = "report", prHead
			art := filepath.Join(e.dir, "artifact")
			os.MkdirAll(art, 0o755)
			os.WriteFile(filepath.Join(art, "meta.json"), []byte(meta), 0o644)
			if _, _, err := e.run(context.Background()); err == nil || !strings.Contains(err.Error(), "artifact meta.json") {
				t.Fatalf("err %v, want a refusal of the artifact", err)
			}
			if w := writes(e.srv.State()); len(w) != 0 {
				t.Errorf("writes %+v", w)
			}
		})
	}
}

// TestActionDecidePullRequestTarget: decide routes a pull request that arrives by
// pull_request_target (the trigger whose workflow is the default branch's) as it does one by
// pull_request, and warns only when the GPU job is routed by pull_request, whose workflow the
// pull request itself defines.
func TestActionDecidePullRequestTarget(t *testing.T) {
	for _, tc := range []struct {
		event string
		warn  bool
	}{
		{"pull_request_target", false},
		{"pull_request", true},
	} {
		t.Run(tc.event, func(t *testing.T) {
			e := newActEnv(t)
			e.event(tc.event, payload(t, "pull_request/opened.payload.json"))
			e.vars["INPUT_MODE"] = "decide"
			out, stderr, err := e.run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			wantOutputs(t, out, map[string]string{"run": "true", "verdict": "pending", "sha": prHead, "pr": "2", "kind": "pull_request"})
			if c := oneCheck(t, e.srv.State(), prHead); c.Status != "in_progress" {
				t.Errorf("check %s, want in_progress", c.Status)
			}
			if got := strings.Contains(stderr, "Route pull requests with pull_request_target"); got != tc.warn {
				t.Errorf("warning %v, want %v:\n%s", got, tc.warn, stderr)
			}
		})
	}
}
