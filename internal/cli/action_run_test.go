package cli

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/speedmatrix/speedmatrix/ghbot/ghtest"
)

// TestActionTrustedPRTwice runs a trusted PR's opened event twice: each run starts the check
// in_progress with the run's link, posts the measuring comment, measures, compares with the
// base's stored baseline and completes the check; the second run edits the same comment and
// check run, so PR #2 keeps one comment and its head one check run.
func TestActionTrustedPRTwice(t *testing.T) {
	e := newActEnv(t)
	e.storeBaseline(prBase)
	e.event("pull_request", payload(t, "pull_request/opened.payload.json"))
	for i := 1; i <= 2; i++ {
		out, stderr, err := e.run(context.Background())
		if err != nil {
			t.Fatalf("run %d: %v\n%s", i, err, stderr)
		}
		st := e.srv.State()
		checks := checksOn(st, prHead)
		if len(checks) != 1 {
			t.Fatalf("run %d: %d check runs on the head, want 1: %+v", i, len(checks), checks)
		}
		cr := checks[0]
		if cr.Status != "completed" || cr.Name != "speedmatrix" || cr.ExternalID != "speedmatrix" ||
			cr.DetailsURL != "https://github.com/Codertocat/Hello-World/actions/runs/4242" {
			t.Errorf("run %d: check %+v", i, cr)
		}
		if cr.Conclusion != out["conclusion"] || (cr.Conclusion != "success" && cr.Conclusion != "failure") {
			t.Errorf("run %d: conclusion %q, output %q", i, cr.Conclusion, out["conclusion"])
		}
		comments := botComments(st)
		if len(comments) != 1 {
			t.Fatalf("run %d: %d bot comments, want 1", i, len(comments))
		}
		body := comments[0].Body
		for _, want := range []string{"<!-- speedmatrix:state {", `"phase":"done"`, `"head_sha":"` + prHead, " vs [`", "[The run](https://github.com/Codertocat/Hello-World/actions/runs/4242)"} {
			if !strings.Contains(body, want) {
				t.Errorf("run %d: comment lacks %q:\n%s", i, want, body)
			}
		}
		if out["verdict"] == "" || out["regressions"] == "" || out["results"] != filepath.Join(e.dir, "artifact", "results.json") ||
			out["comparison"] != filepath.Join(e.dir, "artifact", "comparison.json") || !strings.Contains(out["comment-url"], "#issuecomment-") {
			t.Errorf("run %d: outputs %v", i, out)
		}
		for _, f := range []string{"results.json", "comparison.json", "base.json"} {
			if !fileExistsT(filepath.Join(e.dir, "artifact", f)) {
				t.Errorf("run %d: artifact lacks %s", i, f)
			}
		}
	}
	st := e.srv.State()
	// The check went in_progress first, with the run's link, then was completed (per run).
	starts := 0
	for _, c := range st.CallsTo("POST", "/repos/Codertocat/Hello-World/check-runs") {
		var body map[string]any
		json.Unmarshal([]byte(c.Body), &body)
		if body["status"] != "in_progress" || body["head_sha"] != prHead || body["details_url"] == nil {
			t.Errorf("check created with %s", c.Body)
		}
		starts++
	}
	if starts != 1 {
		t.Errorf("%d check runs created, want 1 (the second run updates it)", starts)
	}
	var statuses []string
	for _, c := range st.CallsTo("PATCH", "/repos/Codertocat/Hello-World/check-runs/") {
		var body map[string]any
		json.Unmarshal([]byte(c.Body), &body)
		statuses = append(statuses, body["status"].(string))
		if body["name"] != "speedmatrix" {
			t.Errorf("PATCH without the name: %s", c.Body)
		}
	}
	if strings.Join(statuses, ",") != "completed,in_progress,completed" {
		t.Errorf("check updates %v, want completed, in_progress, completed", statuses)
	}
	// The measuring state was posted before the results.
	edits := st.CallsTo("PATCH", "/repos/Codertocat/Hello-World/issues/comments/")
	posts := st.CallsTo("POST", "/repos/Codertocat/Hello-World/issues/2/comments")
	if len(posts) != 1 || !strings.Contains(posts[0].Body, "Measuring") || !strings.Contains(posts[0].Body, `\"phase\":\"measuring\"`) {
		t.Errorf("first comment post: %+v", posts)
	}
	if len(edits) != 3 {
		t.Errorf("%d comment edits, want 3 (results, measuring, results)", len(edits))
	}
	if len(st.Reactions) != 0 || len(replies(st)) != 0 {
		t.Errorf("a PR event got reactions %v or replies %v", st.Reactions, replies(st))
	}
	_ = ghtest.ActionsLogin
}
