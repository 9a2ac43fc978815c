package cli

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/speedmatrix/speedmatrix/ghbot/ghtest"
)

// actionCase is one event through `speedmatrix action` (full mode) against the fake GitHub.
type actionCase struct {
	name    string
	event   string
	payload []byte
	setup   func(e *actEnv)
	err     string // substring of the error; "" for none
	// outputs that must hold these values
	outputs map[string]string
	// checkSHA is the commit whose check runs are looked at; "" expects no check run anywhere.
	checkSHA   string
	conclusion string // of the one check run on checkSHA
	comments   int    // the bot's marked comments on PR #2
	replies    int    // its unmarked replies on PR #2
	reactions  int
	measured   bool   // a results file was written
	reply      string // substring of the reply
	check      func(t *testing.T, e *actEnv, st ghtest.State)
}

func runActionCases(t *testing.T, cases []actionCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newActEnv(t) // in the simulator's time (actEnv.simTime), whatever the load
			if tc.setup != nil {
				tc.setup(e)
			}
			if tc.payload != nil {
				e.event(tc.event, tc.payload)
			}
			out, stderr, err := e.run(context.Background())
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want one containing %q", err, tc.err)
				}
			} else if err != nil {
				t.Fatalf("action: %v\n%s", err, stderr)
			}
			wantOutputs(t, out, tc.outputs)
			st := e.srv.State()
			if tc.checkSHA == "" {
				if len(st.CheckRuns) != 0 {
					t.Errorf("check runs %+v, want none", st.CheckRuns)
				}
			} else {
				checks := checksOn(st, tc.checkSHA)
				if len(checks) != 1 {
					t.Fatalf("%d check runs on %s, want 1: %+v", len(checks), tc.checkSHA, st.CheckRuns)
				}
				if checks[0].Status != "completed" || checks[0].Conclusion != tc.conclusion {
					t.Errorf("check %s/%s, want completed/%s (title %q)", checks[0].Status, checks[0].Conclusion, tc.conclusion, checks[0].Title)
				}
				if len(st.CheckRuns) != 1 {
					t.Errorf("%d check runs in all, want 1", len(st.CheckRuns))
				}
			}
			if n := len(botComments(st)); n != tc.comments {
				t.Errorf("%d bot comments, want %d", n, tc.comments)
			}
			rs := replies(st)
			if len(rs) != tc.replies {
				t.Errorf("%d replies, want %d: %+v", len(rs), tc.replies, rs)
			}
			if tc.reply != "" && (len(rs) == 0 || !strings.Contains(rs[0].Body, tc.reply)) {
				t.Errorf("replies %+v, want one containing %q", rs, tc.reply)
			}
			if len(st.Reactions) != tc.reactions {
				t.Errorf("%d reactions, want %d", len(st.Reactions), tc.reactions)
			}
			if got := fileExistsT(filepath.Join(e.dir, "artifact", "results.json")); got != tc.measured {
				t.Errorf("measured %v, want %v", got, tc.measured)
			}
			if tc.check != nil {
				tc.check(t, e, st)
			}
		})
	}
}

// TestActionEveryPayload feeds every payload of testdata/github-events through `speedmatrix
// action`; a payload added without a case fails the test.
func TestActionEveryPayload(t *testing.T) {
	const (
		groupHead = "2ffea6db159f6b6c47a24e778fb9ef40cf6b1c7d"
	)
	skipped := map[string]string{"verdict": "skipped", "run": "false"}
	prRun := actionCase{event: "pull_request", setup: func(e *actEnv) { e.storeBaseline(prBase) },
		checkSHA: prHead, conclusion: "success", comments: 1, measured: true,
		outputs: map[string]string{"conclusion": "success", "regressions": "0"}}
	cases := map[string]actionCase{
		"check_run/requested_action.payload.json":              {event: "check_run", outputs: skipped},
		"check_run/rerequested.payload.json":                   {event: "check_run", err: "parse check_run event payload"},
		"check_run/rerequested.timestamps-fixed.DERIVED.json":  {event: "check_run", outputs: skipped},
		"check_suite/rerequested.payload.json":                 {event: "check_suite", outputs: skipped},
		"issue_comment/created.on-pull-request.DERIVED.json":   {event: "issue_comment", outputs: skipped},
		"issue_comment/created.payload.json":                   {event: "issue_comment", outputs: skipped},
		"issue_comment/created.with-installation.payload.json": {event: "issue_comment", outputs: skipped},
		"merge_group/checks_requested.payload.json": {event: "merge_group", checkSHA: groupHead, conclusion: "neutral", measured: true,
			outputs: map[string]string{"verdict": "no_baseline", "conclusion": "neutral"}},
		"pull_request/labeled.payload.json":     {event: "pull_request", outputs: skipped},
		"pull_request/opened.payload.json":      prRun,
		"pull_request/synchronize.payload.json": prRun,
		"push/payload.json":                     {event: "push", outputs: skipped},
		"push/with-installation.payload.json":   {event: "push", outputs: skipped},
		"push/with-new-branch.payload.json": {event: "push", checkSHA: pushAfter, conclusion: "success", measured: true,
			outputs: map[string]string{"verdict": "baseline", "conclusion": "success"},
			check: func(t *testing.T, e *actEnv, st ghtest.State) {
				// The push's results are on the data branch, as results/<sha>/<config-id>.json.
				found := false
				for p := range e.srv.Files(actRepo, "heads/speedmatrix-data") {
					if strings.HasPrefix(p, "results/"+pushAfter+"/") && strings.HasSuffix(p, ".json") {
						found = true
					}
				}
				if !found {
					t.Errorf("the push's results are not on the data branch: %v", e.srv.Files(actRepo, "heads/speedmatrix-data"))
				}
			}},
		"workflow_dispatch/payload.json": {event: "workflow_dispatch", checkSHA: runSHA, conclusion: "neutral", measured: true,
			outputs: map[string]string{"verdict": "no_baseline", "conclusion": "neutral"}},
	}
	var files []string
	filepath.WalkDir(eventsDir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".json") {
			rel, _ := filepath.Rel(eventsDir, p)
			files = append(files, filepath.ToSlash(rel))
		}
		return err
	})
	sort.Strings(files)
	var list []actionCase
	for _, rel := range files {
		c, ok := cases[rel]
		if !ok {
			t.Errorf("payload %s has no case", rel)
			continue
		}
		c.name, c.payload = rel, payload(t, rel)
		if c.checkSHA == "" && c.err == "" {
			// Nothing to do: nothing may be written to GitHub.
			prev := c.check
			c.check = func(t *testing.T, e *actEnv, st ghtest.State) {
				if w := writes(st); len(w) != 0 {
					t.Errorf("writes %+v, want none", w)
				}
				if prev != nil {
					prev(t, e, st)
				}
			}
		}
		list = append(list, c)
		delete(cases, rel)
	}
	for rel := range cases {
		t.Errorf("case %s has no payload", rel)
	}
	runActionCases(t, list)
}

// TestActionVariants covers trust, commands and the head moving, on derived payloads.
func TestActionVariants(t *testing.T) {
	opened := "pull_request/opened.payload.json"
	runActionCases(t, []actionCase{
		{
			name: "fork PR gets action_required and no run", event: "pull_request",
			payload:  derived(t, opened, map[string]any{"pull_request.head.repo.full_name": "evil/Hello-World"}),
			checkSHA: prHead, conclusion: "action_required",
			outputs: map[string]string{"verdict": "action_required", "run": "false"},
			check: func(t *testing.T, e *actEnv, st ghtest.State) {
				if !strings.Contains(st.CheckRuns[0].Summary, "comes from the fork evil/Hello-World") {
					t.Errorf("summary %q does not say why", st.CheckRuns[0].Summary)
				}
			},
		},
		{
			// A reaction, no reply: any user could otherwise make the bot post comments that
			// mention them (issue 20, item 16).
			name: "/bench from a read-only user runs nothing and reacts", event: "issue_comment",
			setup: func(e *actEnv) {
				e.srv.SetPermission(actRepo, "Codertocat", "read")
				e.benchComment("/bench")
			},
			reactions: 1,
			outputs:   map[string]string{"verdict": "refused", "run": "false"},
			check: func(t *testing.T, e *actEnv, st ghtest.State) {
				if r := st.Reactions[0]; r.Content != "-1" {
					t.Errorf("reaction %q, want -1", r.Content)
				}
				if b, _ := os.ReadFile(e.vars["GITHUB_STEP_SUMMARY"]); !strings.Contains(string(b), "only users with write or admin permission") {
					t.Errorf("job summary %q does not say why", b)
				}
			},
		},
		{
			name: "/bench after which the head moved runs nothing and says why", event: "issue_comment",
			setup: func(e *actEnv) {
				e.benchComment("/bench")
				e.srv.MovePullHead(actRepo, 2, movedSHA)
			},
			replies: 1, reply: "may have moved after your comment",
			outputs: map[string]string{"verdict": "refused"},
		},
		{
			name: "a comment that is not a command does nothing", event: "issue_comment",
			setup:   func(e *actEnv) { e.benchComment("LGTM, but /benchmark it later") },
			outputs: map[string]string{"verdict": "skipped"},
			check: func(t *testing.T, e *actEnv, st ghtest.State) {
				if w := writes(st); len(w) != 0 {
					t.Errorf("writes %+v, want none", w)
				}
			},
		},
		{
			name: "a malformed command gets help", event: "issue_comment",
			setup:   func(e *actEnv) { e.benchComment("/bench fast please") },
			replies: 1, reply: "Unknown command `/bench fast`",
			outputs: map[string]string{"verdict": "refused"},
		},
		{
			name: "/bench by a writer is taken, measured and reported", event: "issue_comment",
			setup:    func(e *actEnv) { e.benchComment("/bench") },
			checkSHA: prHead, conclusion: "neutral", comments: 1, reactions: 1, measured: true,
			outputs: map[string]string{"verdict": "no_baseline", "conclusion": "neutral", "regressions": "0"},
			check: func(t *testing.T, e *actEnv, st ghtest.State) {
				if r := st.Reactions[0]; r.Content != "eyes" || r.CommentID != 492700400 {
					t.Errorf("reaction %+v", r)
				}
				if b := botComments(st)[0].Body; !strings.Contains(b, "No baseline") || !strings.Contains(b, "f95f852") {
					t.Errorf("comment does not say why nothing was compared:\n%s", b)
				}
			},
		},
		{
			name: "the head moved between the decision and the measurement", event: "pull_request",
			payload:  payload(t, opened),
			setup:    func(e *actEnv) { e.srv.MovePullHead(actRepo, 2, movedSHA) },
			checkSHA: prHead, conclusion: "cancelled", comments: 1,
			outputs: map[string]string{"verdict": "head_moved", "conclusion": "cancelled"},
			check: func(t *testing.T, e *actEnv, st ghtest.State) {
				if b := botComments(st)[0].Body; !strings.Contains(b, "head moved") || !strings.Contains(b, `"phase":"cancelled"`) {
					t.Errorf("comment:\n%s", b)
				}
			},
		},
		{
			name: "/bench rerun with nothing undecided says so", event: "issue_comment",
			setup:   func(e *actEnv) { e.benchComment("/bench rerun") },
			replies: 1, reactions: 1, reply: "has nothing to rerun",
			outputs: map[string]string{"verdict": "refused"},
		},
		{
			name: "/bench accept without results is refused", event: "issue_comment",
			setup:   func(e *actEnv) { e.benchComment(`/bench accept "known cost"`) },
			replies: 1, reactions: 1, reply: "there are no results at the head `" + prHead + "` yet",
			outputs: map[string]string{"verdict": "refused"},
		},
		{
			name: "the check's Re-run button (check_run rerequested) by a writer measures its commit", event: "check_run",
			payload: derived(t, "check_run/rerequested.timestamps-fixed.DERIVED.json", map[string]any{"check_run.name": "speedmatrix"}),
			setup: func(e *actEnv) {
				e.srv.AddRepo(ghtest.Repo{Owner: "github", Name: "hello-world", DefaultBranch: "master"})
				e.srv.SetPermission("github/hello-world", "octocat", "write")
			},
			checkSHA: "d6fde92930d4715a2b49857d24b940956b26d2d3", conclusion: "neutral", measured: true,
			outputs: map[string]string{"verdict": "no_baseline"},
		},
		{
			name: "the Re-run button pressed by a reader does nothing", event: "check_run",
			payload: derived(t, "check_run/rerequested.timestamps-fixed.DERIVED.json", map[string]any{"check_run.name": "speedmatrix"}),
			outputs: map[string]string{"verdict": "refused"},
		},
		{
			name: "a bad mode input is an error", event: "pull_request", payload: payload(t, opened),
			setup: func(e *actEnv) { e.vars["INPUT_MODE"] = "everything" },
			err:   `input mode: "everything"`,
		},
	})
	_ = os.Getenv
}
