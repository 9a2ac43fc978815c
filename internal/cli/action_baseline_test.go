package cli

import (
	"net/http"
	"strings"
	"testing"

	"github.com/speedmatrix/speedmatrix/ghbot/ghtest"
	"github.com/speedmatrix/speedmatrix/report"
	"github.com/speedmatrix/speedmatrix/results"
)

// failListing makes the fake's commit listing (GET /repos/{o}/{r}/commits) fail for the rest of
// the test: with a 500 (every retry too), or by hanging until the listing's own timeout ends
// the request (in the simulator's time).
func failListing(e *storeEnv, fault string) {
	path := "/repos/" + actRepo + "/commits"
	switch fault {
	case "500":
		e.srv.Fail(ghtest.Fault{Method: http.MethodGet, Path: path, Exact: true, Status: http.StatusInternalServerError, Times: 1000})
	case "timeout":
		// The listing's own timeout (store.DefaultPageTimeout, in the bubble's clock) ends it.
		e.srv.Fail(ghtest.Fault{Method: http.MethodGet, Path: path, Exact: true, Hang: true, Times: 1000})
	}
}

// TestActionBaselineListingFails: the merge-base's own results need no commit listing, so a
// listing that fails (500) or hangs (timeout) still compares with them; when the merge-base has
// none, the failed listing fails the check with the reason (the request, its status, what to
// do), never "no baseline" and never a neutral check.
func TestActionBaselineListingFails(t *testing.T) {
	for _, fault := range []string{"500", "timeout"} {
		t.Run(fault+"/merge-base has results", func(t *testing.T) {
			e := newStoreEnv(t, 0)
			e.simTime = true // the retries' backoff and the timeout pass in the simulator's time
			e.put(prBase)
			failListing(e, fault)
			out, cmp, body := e.runPR()
			if cmp == nil || out["verdict"] == "no_baseline" || out["verdict"] == "baseline_error" {
				t.Fatalf("verdict %q, comparison %v; want the merge-base's results compared\n%s", out["verdict"], cmp != nil, body)
			}
			if strings.Contains(body, "No baseline") {
				t.Errorf("the comment says there is no baseline:\n%s", body)
			}
			// The check's summary quotes the row of its verdict in the one table.
			c := oneCheck(t, e.srv.State(), prHead)
			if !strings.Contains(c.Summary, "**Verdict `"+string(cmp.Verdict)+"`**") || !strings.Contains(c.Summary, report.VerdictsURL) {
				t.Errorf("the check's summary does not quote the row of %s:\n%s", cmp.Verdict, c.Summary)
			}
		})
		t.Run(fault+"/merge-base lacks results", func(t *testing.T) {
			e := newStoreEnv(t, 0)
			e.simTime = true
			e.put(e.a1) // only the listing would find it
			failListing(e, fault)
			out, cmp, body := e.runPR()
			body = strings.ReplaceAll(body, `\`, "") // the comment escapes the reason's markdown
			if cmp != nil || out["verdict"] != "baseline_error" || out["conclusion"] != "failure" {
				t.Fatalf("verdict %q, conclusion %q, comparison %v; want baseline_error, failure, none\n%s", out["verdict"], out["conclusion"], cmp != nil, body)
			}
			checks := checksOn(e.srv.State(), prHead)
			if len(checks) != 1 {
				t.Fatalf("%d check runs on the head, want 1", len(checks))
			}
			c := checks[0]
			c.Summary = strings.ReplaceAll(c.Summary, `\`, "")
			reason := map[string]string{"500": "answered HTTP 500", "timeout": "timed out"}[fault]
			if c.Conclusion != "failure" {
				t.Errorf("check conclusion %q, want failure", c.Conclusion)
			}
			for _, w := range []string{reason, "/commits", "could not be listed", "rerun with /bench", "contents: read"} {
				if !strings.Contains(c.Summary, w) {
					t.Errorf("check summary lacks %q:\n%s", w, c.Summary)
				}
				if !strings.Contains(body, w) {
					t.Errorf("comment lacks %q:\n%s", w, body)
				}
			}
			if !strings.HasPrefix(c.Title, "Blocked: the baseline") {
				t.Errorf("check title %q, want it to say the baseline blocks", c.Title)
			}
			for _, bad := range []string{"No baseline", "nothing is blocked"} {
				if strings.Contains(body, bad) || strings.Contains(c.Summary, bad) {
					t.Errorf("the comment or the check says %q:\n%s", bad, body)
				}
			}
		})
	}
}

// TestActionConfigChangedHeading: a config_changed check fails, and the comment's heading says
// so (the config changed, the merge is blocked), never "⚪ No baseline … nothing is blocked".
func TestActionConfigChangedHeading(t *testing.T) {
	e := newStoreEnv(t, 0)
	e.put(prBase)
	head := scaled(t, 1)
	head.Run.LaunchCommand += " --max-num-seqs 1024"
	reportPR(e.actEnv)
	writeArtifact(t, e.actEnv, prMeta("2"), map[string]*results.File{"results.json": head})
	out := mustRun(t, e.actEnv)
	wantOutputs(t, out, map[string]string{"verdict": "config_changed", "conclusion": "failure"})
	cs := botComments(e.srv.State())
	if len(cs) != 1 {
		t.Fatalf("%d bot comments, want 1", len(cs))
	}
	body := cs[0].Body
	if !strings.Contains(body, "### ❌ Blocked: ec26c3e measured another config") || !strings.Contains(body, "(the config changed), so the merge is blocked") {
		t.Errorf("the comment's heading does not say the config changed and the merge is blocked:\n%s", body)
	}
	for _, bad := range []string{"No baseline", "nothing is blocked", "⚪"} {
		if strings.Contains(body, bad) {
			t.Errorf("the comment of a failed config_changed check says %q:\n%s", bad, body)
		}
	}
}

// TestActionReportBaselineListingFails: the report mode resolves the baseline from the store as
// the full mode does, so a failed listing with no results at the merge-base fails its check
// with the reason too; with the merge-base's results it compares.
func TestActionReportBaselineListingFails(t *testing.T) {
	for _, tc := range []struct {
		name, stored, verdict, conclusion string
	}{
		{"merge-base has results", prBase, "", ""},
		{"merge-base lacks results", "a1", "baseline_error", "failure"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newStoreEnv(t, 0)
			e.simTime = true
			sha := tc.stored
			if sha == "a1" {
				sha = e.a1
			}
			e.put(sha)
			failListing(e, "500")
			reportPR(e.actEnv)
			writeArtifact(t, e.actEnv, prMeta("2"), map[string]*results.File{"results.json": scaled(t, 1)})
			out := mustRun(t, e.actEnv)
			c := oneCheck(t, e.srv.State(), prHead)
			summary := strings.ReplaceAll(c.Summary, `\`, "")
			if tc.verdict == "" {
				if v := out["verdict"]; v == "baseline_error" || v == "no_baseline" || out["comparison"] == "" {
					t.Fatalf("verdict %q, comparison %q; want the merge-base's results compared\n%s", v, out["comparison"], summary)
				}
				return
			}
			wantOutputs(t, out, map[string]string{"verdict": tc.verdict, "conclusion": tc.conclusion})
			if c.Conclusion != tc.conclusion || !strings.Contains(summary, "answered HTTP 500") || !strings.Contains(summary, "rerun with /bench") {
				t.Errorf("check %s:\n%s", c.Conclusion, summary)
			}
		})
	}
}
