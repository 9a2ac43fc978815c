package ghbot

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/speedmatrix/speedmatrix/ghbot/ghtest"
	"github.com/speedmatrix/speedmatrix/results"
)

// eventsDir holds the octokit/webhooks example payloads (see its SOURCES.md).
const eventsDir = "../testdata/github-events"

var testPolicy = Policy{CheckName: "speedmatrix", TrustLabel: "benchmark"}

// payloadFiles returns every payload under eventsDir, as "event/file.json".
func payloadFiles(t testing.TB) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(eventsDir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".json") {
			rel, _ := filepath.Rel(eventsDir, path)
			files = append(files, filepath.ToSlash(rel))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	return files
}

func readPayload(t testing.TB, rel string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(eventsDir, rel))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// derive returns a payload with fields changed: keys are dotted paths, values JSON values.
func derive(t testing.TB, rel string, set map[string]any) []byte {
	t.Helper()
	return ghtest.DerivePayload(t, readPayload(t, rel), set)
}

// decideCase is one event through ParseEvent and Decide against the fake GitHub of newEnv
// (Hello-World pushed in 2019-05-15T15:00Z, PR #2 at shaA).
type decideCase struct {
	name     string
	event    string
	payload  []byte
	runSHA   string
	seed     func(e *env)
	parseErr string
	err      string
	want     Decision // Reason and Reply are checked by wantReason and wantReply
	reason   string   // substring of Reason
	reply    string   // substring of Reply
	// after Respond: what GitHub holds
	reactions int
	replies   int
}

func writer(users ...string) func(*env) { return writerOn(testRepo, users...) }

func writerOn(repo string, users ...string) func(*env) {
	return func(e *env) {
		for _, u := range users {
			e.srv.SetPermission(repo, u, "write")
		}
	}
}

// withComment seeds the comment of the derived issue_comment payload, then runs seed.
func withComment(seed func(*env)) func(*env) {
	return func(e *env) {
		e.srv.PutComment(ghtest.Comment{ID: 492700400, Repo: testRepo, Issue: 2, User: "Codertocat", Body: "/bench"})
		seed(e)
	}
}

func runDecideCases(t *testing.T, cases []decideCase) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			if tt.seed != nil {
				tt.seed(e)
			}
			ev, err := ParseEvent(tt.event, tt.payload)
			if tt.parseErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.parseErr) {
					t.Fatalf("ParseEvent: %v; want an error containing %q", err, tt.parseErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseEvent: %v", err)
			}
			ev.RunSHA = tt.runSHA
			ctx := context.Background()
			d, err := e.c.Decide(ctx, ev, testPolicy)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("Decide: %+v, %v; want an error containing %q", d, err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Decide: %v", err)
			}
			if !strings.Contains(d.Reason, tt.reason) || !strings.Contains(d.Reply, tt.reply) {
				t.Errorf("Reason %q, Reply %q: want them to contain %q and %q", d.Reason, d.Reply, tt.reason, tt.reply)
			}
			if (d.Do == DoNothing || d.Do == DoRefuse || d.Do == DoActionRequired || d.Do == DoAccept) && d.Reason == "" {
				t.Errorf("%s without a reason", d.Do)
			}
			got := d
			got.Reason, got.Reply = "", ""
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Decision (-want +got):\n%s", diff)
			}
			if err := e.c.Respond(ctx, ev.Repo, d); err != nil {
				t.Fatalf("Respond: %v", err)
			}
			st := e.srv.State()
			replies := 0
			for _, c := range st.Comments {
				if c.User == ActionsBotLogin {
					replies++
					if c.Body != d.Reply {
						t.Errorf("reply %q, want %q", c.Body, d.Reply)
					}
				}
			}
			if len(st.Reactions) != tt.reactions || replies != tt.replies {
				t.Errorf("after Respond: %d reactions, %d replies; want %d, %d", len(st.Reactions), replies, tt.reactions, tt.replies)
			}
			for _, r := range st.Reactions {
				want := "eyes"
				if d.Reaction != "" {
					want = d.Reaction
				}
				if r.Content != want || r.CommentID != d.CommentID {
					t.Errorf("reaction %+v: want %s on comment %d", r, want, d.CommentID)
				}
			}
		})
	}
}

// TestDecideEveryPayload feeds every payload in testdata/github-events through ParseEvent and
// Decide; a payload added without a case here fails the test.
func TestDecideEveryPayload(t *testing.T) {
	p := func(rel string) []byte { return readPayload(t, rel) }
	const (
		prHead   = "ec26c3e57ca3a959ca5aad62de7213c562f8c821"
		prBase   = "f95f852bd8fca8fcc58a9a2d6c842781e32a215e"
		pushSHA  = "6113728f27ae82c7b1a177c8d03f9e96e0adf246"
		checkSHA = "d6fde92930d4715a2b49857d24b940956b26d2d3"
	)
	trustedPR := Decision{Do: DoRun, Kind: RunPullRequest, PR: 2, HeadSHA: prHead, HeadRef: "changes", BaseSHA: prBase, BaseRef: "master", By: "Codertocat"}
	cases := map[string]decideCase{
		"pull_request/opened.payload.json":      {event: "pull_request", seed: writer("Codertocat"), want: trustedPR},
		"pull_request/synchronize.payload.json": {event: "pull_request", seed: writer("Codertocat"), want: trustedPR},
		"pull_request/labeled.payload.json": {event: "pull_request", seed: writer("Codertocat"),
			want: Decision{Do: DoNothing, PR: 2}, reason: `labeled "bug": not the label`},
		"issue_comment/created.payload.json": {event: "issue_comment", want: Decision{Do: DoNothing}, reason: "on an issue"},
		"issue_comment/created.with-installation.payload.json": {event: "issue_comment",
			want: Decision{Do: DoNothing}, reason: "on an issue"},
		"issue_comment/created.on-pull-request.DERIVED.json": {event: "issue_comment", seed: writer("Codertocat"),
			want: Decision{Do: DoNothing}, reason: "no /bench command"},
		"check_run/rerequested.payload.json": {event: "check_run", parseErr: "parse check_run event payload"},
		"check_run/rerequested.timestamps-fixed.DERIVED.json": {event: "check_run",
			want: Decision{Do: DoNothing}, reason: `check run "randscape" is not ours`},
		"check_run/requested_action.payload.json": {event: "check_run",
			want: Decision{Do: DoNothing}, reason: `check run "API Review" is not ours`},
		"check_suite/rerequested.payload.json": {event: "check_suite", want: Decision{Do: DoNothing}, reason: "check_suite rerequested"},
		"merge_group/checks_requested.payload.json": {event: "merge_group", want: Decision{Do: DoRun, Kind: RunMergeGroup,
			HeadSHA: "2ffea6db159f6b6c47a24e778fb9ef40cf6b1c7d", HeadRef: "refs/heads/gh-readonly-queue/main/pr-104-929f8209d40f77f4abc622a499c93a83babdbe64",
			BaseSHA: "380387fbc80638b734a49e1be1c4dfec1c01b33c", BaseRef: "refs/heads/main", By: "Codertocat"}},
		"push/payload.json":                   {event: "push", want: Decision{Do: DoNothing}, reason: "refs/tags/simple-tag: not a branch"},
		"push/with-installation.payload.json": {event: "push", want: Decision{Do: DoNothing}, reason: "not a branch"},
		"push/with-new-branch.payload.json": {event: "push", want: Decision{Do: DoRun, Kind: RunBaseline, HeadSHA: pushSHA,
			HeadRef: "master", By: "Codertocat"}},
		"workflow_dispatch/payload.json": {event: "workflow_dispatch", runSHA: shaC, want: Decision{Do: DoRun, Kind: RunDispatch,
			HeadSHA: shaC, HeadRef: "refs/heads/master", By: "Codertocat", Inputs: map[string]string{"name": "Mona the Octocat"}}},
	}
	var list []decideCase
	for _, rel := range payloadFiles(t) {
		c, ok := cases[rel]
		if !ok {
			t.Errorf("payload %s has no case in TestDecideEveryPayload", rel)
			continue
		}
		if dir := strings.Split(rel, "/")[0]; dir != c.event {
			t.Errorf("payload %s: case says event %s", rel, c.event)
		}
		c.name, c.payload = rel, p(rel)
		list = append(list, c)
		delete(cases, rel)
	}
	for rel := range cases {
		t.Errorf("case %s has no payload file", rel)
	}
	if len(list) < 15 {
		t.Errorf("%d payloads found, want all 15 of testdata/github-events", len(list))
	}
	runDecideCases(t, list)
}

// TestDecideVariants feeds payloads derived from the examples: the trust and pinning rules.
func TestDecideVariants(t *testing.T) {
	const (
		prOpened  = "pull_request/opened.payload.json"
		prLabeled = "pull_request/labeled.payload.json"
		onPR      = "issue_comment/created.on-pull-request.DERIVED.json"
		checkRR   = "check_run/rerequested.timestamps-fixed.DERIVED.json"
		checkRA   = "check_run/requested_action.payload.json"
		afterPush = "2019-05-15T15:20:21Z" // the comment's time; the repo was pushed at 15:00
	)
	trusted := Decision{Do: DoRun, Kind: RunPullRequest, PR: 2, HeadSHA: shaA, HeadRef: "changes", BaseSHA: shaB, BaseRef: "master"}
	comment := func(body string, more map[string]any) []byte {
		set := map[string]any{"comment.body": body, "issue.number": 2}
		for k, v := range more {
			set[k] = v
		}
		return derive(t, onPR, set)
	}
	cmdRun := func(cmd Command, do Do) Decision {
		return Decision{Do: do, Kind: RunCommand, PR: 2, HeadSHA: shaA, HeadRef: "changes", BaseSHA: shaB, BaseRef: "master",
			By: "Codertocat", Command: &cmd, CommentID: 492700400}
	}
	pushTime := time.Date(2019, 5, 15, 15, 0, 0, 0, time.UTC) // the head repository's pushed_at (newEnv)
	labelTime := pushTime.Add(20 * time.Minute)
	labelPayload := derive(t, prLabeled, map[string]any{"label.name": "benchmark", "sender.login": "maintainer",
		"pull_request.head.repo.full_name": "evil/Hello-World"})
	// labelledBy seeds a writer "maintainer" and the label event of user at at.
	labelledBy := func(user string, at time.Time) func(*env) {
		return func(e *env) {
			writer("maintainer")(e)
			e.srv.AddLabelEvent(ghtest.LabelEvent{Repo: testRepo, Number: 2, Label: "benchmark", Actor: user, At: at})
		}
	}
	runDecideCases(t, []decideCase{
		{
			name: "fork PR by a writer needs approval", event: "pull_request", seed: writer("Codertocat"),
			payload: derive(t, prOpened, map[string]any{"pull_request.head.repo.full_name": "evil/Hello-World"}),
			want:    Decision{Do: DoActionRequired, Kind: RunPullRequest, PR: 2, HeadSHA: shaA, HeadRef: "changes", BaseSHA: shaB, BaseRef: "master"},
			reason:  "comes from the fork evil/Hello-World",
		},
		{
			name: "same-repo PR by a read-only author needs approval", event: "pull_request",
			payload: readPayload(t, prOpened),
			want:    Decision{Do: DoActionRequired, Kind: RunPullRequest, PR: 2, HeadSHA: shaA, HeadRef: "changes", BaseSHA: shaB, BaseRef: "master"},
			reason:  "its author Codertocat has read permission. A maintainer with write access who has read the changes at " + shaA + " starts the run: comment `/bench " + shaA + "` on the pull request or add the label `benchmark`",
		},
		{
			name: "admin author runs", event: "pull_request",
			seed:    func(e *env) { e.srv.SetPermission(testRepo, "Codertocat", "admin") },
			payload: readPayload(t, prOpened),
			want:    withBy(trusted, "Codertocat"),
		},
		{
			name: "closed action is ignored", event: "pull_request", seed: writer("Codertocat"),
			payload: derive(t, prOpened, map[string]any{"action": "closed"}),
			want:    Decision{Do: DoNothing, PR: 2}, reason: "pull_request closed",
		},
		{
			name: "trust label by a writer runs the labelled head", event: "pull_request", seed: labelledBy("maintainer", labelTime),
			payload: labelPayload,
			want:    withBy(trusted, "maintainer"),
		},
		{
			// A push after the label: the payload's head may not be the commit the writer saw.
			name: "trust label with a push after it needs approval", event: "pull_request", seed: labelledBy("maintainer", pushTime.Add(-time.Second)),
			payload: labelPayload,
			want:    Decision{Do: DoActionRequired, Kind: RunPullRequest, PR: 2, HeadSHA: shaA, HeadRef: "changes", BaseSHA: shaB, BaseRef: "master"},
			reason:  "may have moved after the label `benchmark` was added",
		},
		{
			name: "trust label in the same second as a push needs approval", event: "pull_request", seed: labelledBy("maintainer", pushTime),
			payload: labelPayload,
			want:    Decision{Do: DoActionRequired, Kind: RunPullRequest, PR: 2, HeadSHA: shaA, HeadRef: "changes", BaseSHA: shaB, BaseRef: "master"},
			reason:  "comment `/bench " + shaA + "` on the pull request",
		},
		{
			name: "trust label whose event is not listed needs approval", event: "pull_request", seed: labelledBy("someone-else", labelTime),
			payload: labelPayload,
			want:    Decision{Do: DoActionRequired, Kind: RunPullRequest, PR: 2, HeadSHA: shaA, HeadRef: "changes", BaseSHA: shaB, BaseRef: "master"},
			reason:  "is not among the pull request's events",
		},
		{
			name: "trust label after which the head moved needs approval", event: "pull_request", seed: func(e *env) {
				labelledBy("maintainer", labelTime)(e)
				e.srv.AddPull(ghtest.Pull{Repo: testRepo, Number: 2, Author: "Codertocat", HeadSHA: shaC, HeadRef: "changes", BaseSHA: shaB, BaseRef: "master"})
			},
			payload: labelPayload,
			want:    Decision{Do: DoActionRequired, Kind: RunPullRequest, PR: 2, HeadSHA: shaA, HeadRef: "changes", BaseSHA: shaB, BaseRef: "master"},
			reason:  "moved from " + shaA + " to " + shaC,
		},
		{
			name: "trust label by a triager does nothing", event: "pull_request",
			payload: derive(t, prLabeled, map[string]any{"label.name": "benchmark", "sender.login": "triager"}),
			want:    Decision{Do: DoNothing, PR: 2}, reason: "added by triager, whose permission is read",
		},
		{
			name: "bad head sha is an error", event: "pull_request", seed: writer("Codertocat"),
			payload: derive(t, prOpened, map[string]any{"pull_request.head.sha": "main; rm -rf /"}),
			err:     "is not a commit id",
		},
		{
			name: "/bench by a writer is taken at the current head", event: "issue_comment", seed: withComment(writer("Codertocat")),
			payload: comment("LGTM\n/bench\n", nil), want: cmdRun(Command{Kind: CommandRun}, DoRun), reactions: 1,
		},
		{
			name: "/bench rerun with cells", event: "issue_comment", seed: withComment(writer("Codertocat")),
			payload:   comment("/bench rerun decode/8K/32", nil),
			want:      cmdRun(Command{Kind: CommandRerun, Cells: []results.CellID{{Phase: results.PhaseDecode, ContextLabel: "8K", Concurrency: 32}}}, DoRun),
			reactions: 1,
		},
		{
			name: "/bench accept records the reason", event: "issue_comment", seed: withComment(writer("Codertocat")),
			payload: comment(`/bench accept "correctness fix, see #1"`, nil),
			want:    cmdRun(Command{Kind: CommandAccept, Reason: "correctness fix, see #1"}, DoAccept), reason: "correctness fix, see #1", reactions: 1,
		},
		{
			// No reply: a comment that mentions them is what any user could make the bot post.
			name: "/bench by a read-only commenter is refused with a reaction", event: "issue_comment", seed: withComment(func(*env) {}),
			payload:   comment("/bench", nil),
			want:      Decision{Do: DoRefuse, PR: 2, By: "Codertocat", CommentID: 492700400, Reaction: "-1"},
			reason:    "Codertocat, whose permission is read, posted a /bench command; only users with write or admin permission on Codertocat/Hello-World may run benchmarks",
			reactions: 1,
		},
		{
			name: "/bench <full sha> of the head pins it though a push came after the comment", event: "issue_comment", seed: func(e *env) {
				writer("Codertocat")(e)
				e.srv.AddRepo(ghtest.Repo{Owner: "Codertocat", Name: "Hello-World", DefaultBranch: "master", PushedAt: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)})
				withComment(func(*env) {})(e)
			},
			payload:   comment("/bench "+strings.ToUpper(shaA), nil),
			want:      cmdRun(Command{Kind: CommandRun, SHA: shaA}, DoRun),
			reactions: 1,
		},
		{
			// A fork can push another commit with the same prefix after the comment (issue 34.2).
			name: "/bench <prefix> of the head with a push after the comment is refused, naming the full id", event: "issue_comment", seed: func(e *env) {
				writer("Codertocat")(e)
				e.srv.AddRepo(ghtest.Repo{Owner: "Codertocat", Name: "Hello-World", DefaultBranch: "master", PushedAt: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)})
			},
			payload: comment("/bench "+shaA[:9], nil),
			want:    Decision{Do: DoRefuse, PR: 2, By: "Codertocat", CommentID: 492700400, Command: &Command{Kind: CommandRun, SHA: shaA[:9]}},
			reason:  "the prefix `" + shaA[:9] + "` could name another commit", reply: "by its full id: `/bench " + shaA + "`", replies: 1,
		},
		{
			name: "/bench accept <prefix> with a push after the comment is refused, naming the full id", event: "issue_comment", seed: func(e *env) {
				writer("Codertocat")(e)
				e.srv.AddRepo(ghtest.Repo{Owner: "Codertocat", Name: "Hello-World", DefaultBranch: "master", PushedAt: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)})
			},
			payload: comment("/bench accept "+shaA[:7]+" known cost", nil),
			want:    Decision{Do: DoRefuse, PR: 2, By: "Codertocat", CommentID: 492700400, Command: &Command{Kind: CommandAccept, SHA: shaA[:7], Reason: "known cost"}},
			reason:  "could name another commit", reply: "`/bench accept " + shaA + " <reason>`", replies: 1,
		},
		{
			name: "/bench accept <full sha> of the head with a push after the comment", event: "issue_comment", seed: func(e *env) {
				writer("Codertocat")(e)
				e.srv.AddRepo(ghtest.Repo{Owner: "Codertocat", Name: "Hello-World", DefaultBranch: "master", PushedAt: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)})
				withComment(func(*env) {})(e)
			},
			payload: comment("/bench accept "+shaA+" known cost", nil),
			want:    cmdRun(Command{Kind: CommandAccept, SHA: shaA, Reason: "known cost"}, DoAccept), reason: "known cost", reactions: 1,
		},
		{
			name: "/bench <sha> that is not the head is refused, naming the head", event: "issue_comment", seed: writer("Codertocat"),
			payload: comment("/bench "+shaC[:7], nil),
			want:    Decision{Do: DoRefuse, PR: 2, By: "Codertocat", CommentID: 492700400, Command: &Command{Kind: CommandRun, SHA: shaC[:7]}},
			reason:  "`" + shaC[:7] + "` is not the head of #2, which is now `" + shaA + "`", reply: "post `/bench " + shaA + "`", replies: 1,
		},
		{
			name: "/bench accept <sha> <reason> of the head", event: "issue_comment", seed: withComment(writer("Codertocat")),
			payload: comment("/bench accept "+shaA[:7]+" known cost", nil),
			want:    cmdRun(Command{Kind: CommandAccept, SHA: shaA[:7], Reason: "known cost"}, DoAccept), reason: "known cost", reactions: 1,
		},
		{
			name: "/bench accept <sha> of an older commit is refused", event: "issue_comment", seed: writer("Codertocat"),
			payload: comment("/bench accept "+shaC[:8]+" known cost", nil),
			want:    Decision{Do: DoRefuse, PR: 2, By: "Codertocat", CommentID: 492700400, Command: &Command{Kind: CommandAccept, SHA: shaC[:8], Reason: "known cost"}},
			reason:  "is not the head of #2", reply: "post `/bench accept " + shaA + " <reason>`", replies: 1,
		},
		{
			name: "/bench after which the head moved is refused", event: "issue_comment", seed: func(e *env) {
				writer("Codertocat")(e)
				e.srv.MovePullHead(testRepo, 2, shaC) // a push after the comment
			},
			payload: comment("/bench", nil),
			want:    Decision{Do: DoRefuse, PR: 2, By: "Codertocat", CommentID: 492700400, Command: &Command{Kind: CommandRun}},
			reason:  "may have moved after your comment", reply: "post the command again, naming the commit you read by its full id: `/bench " + shaC + "`", replies: 1,
		},
		{
			name: "/bench in the same second as a push is refused", event: "issue_comment", seed: writer("Codertocat"),
			payload: comment("/bench", map[string]any{"comment.created_at": "2019-05-15T15:00:00Z"}),
			want:    Decision{Do: DoRefuse, PR: 2, By: "Codertocat", CommentID: 492700400, Command: &Command{Kind: CommandRun}},
			reason:  "may have moved", replies: 1,
		},
		{
			name: "/bench on a closed PR is refused", event: "issue_comment", seed: func(e *env) {
				writer("Codertocat")(e)
				e.srv.AddPull(ghtestPull(2, "closed"))
			},
			payload: comment("/bench", nil),
			want:    Decision{Do: DoRefuse, PR: 2, By: "Codertocat", CommentID: 492700400, Command: &Command{Kind: CommandRun}},
			reason:  "is closed", replies: 1,
		},
		{
			name: "a comment that is not a command is ignored", event: "issue_comment", seed: writer("Codertocat"),
			payload: comment("Thanks, looks faster to me", nil), want: Decision{Do: DoNothing}, reason: "no /bench command",
		},
		{
			name: "a malformed command from a writer gets help", event: "issue_comment", seed: writer("Codertocat"),
			payload: comment("/bench faster please", nil),
			want:    Decision{Do: DoHelp, PR: 2, By: "Codertocat", CommentID: 492700400},
			reason:  "Unknown command `/bench faster`", reply: HelpText, replies: 1,
		},
		{
			// The permission is asked before anything is answered: a reader's malformed command
			// gets a reaction, never a reply that mentions them.
			name: "a malformed command from a reader gets a reaction", event: "issue_comment", seed: withComment(func(*env) {}),
			payload: comment("/bench faster please", nil),
			want:    Decision{Do: DoRefuse, PR: 2, By: "Codertocat", CommentID: 492700400, Reaction: "-1"},
			reason:  "whose permission is read", reactions: 1,
		},
		{
			name: "/bench help", event: "issue_comment", seed: writer("Codertocat"), payload: comment("/bench help", nil),
			want: Decision{Do: DoHelp, PR: 2, By: "Codertocat", CommentID: 492700400}, reply: "speedmatrix commands", replies: 1,
		},
		{
			name: "an edited comment is not a command", event: "issue_comment", seed: writer("Codertocat"),
			payload: comment("/bench", map[string]any{"action": "edited"}), want: Decision{Do: DoNothing}, reason: "only new comments",
		},
		{
			name: "a bot's comment is ignored", event: "issue_comment", seed: writer("Codertocat"),
			payload: comment("/bench", map[string]any{"comment.user.type": "Bot"}), want: Decision{Do: DoNothing}, reason: "by a bot",
		},
		{
			name: "our own comment is ignored", event: "issue_comment",
			payload: comment("/bench help", map[string]any{"comment.user.login": ActionsBotLogin}), want: Decision{Do: DoNothing}, reason: "by a bot",
		},
		{
			name: "check re-run by a writer", event: "check_run", seed: writerOn("github/hello-world", "octocat"),
			payload: derive(t, checkRR, map[string]any{"check_run.name": "speedmatrix"}),
			want:    Decision{Do: DoRun, Kind: RunCheckRun, HeadSHA: "d6fde92930d4715a2b49857d24b940956b26d2d3", By: "octocat"},
		},
		{
			name: "check re-run by a reader is refused", event: "check_run",
			payload: derive(t, checkRR, map[string]any{"check_run.name": "speedmatrix"}),
			want:    Decision{Do: DoRefuse}, reason: "octocat, whose permission is read",
		},
		{
			name: "Accept button", event: "check_run", seed: writerOn("electron/electron", "codebytere"),
			payload: derive(t, checkRA, map[string]any{"check_run.name": "speedmatrix", "requested_action.identifier": "accept"}),
			want: Decision{Do: DoAccept, Kind: RunCheckRun, PR: 26764, HeadSHA: "5bd5f196a46b8222fb7484f05faba41a73cf34bd", HeadRef: "miniak/event-process-id",
				BaseSHA: "45eee468647309e9e6cdb2a88a3b460a59771fef", BaseRef: "master", By: "codebytere",
				Command: &Command{Kind: CommandAccept, Reason: "accepted with the check's Accept button"}},
			reason: "Accept button",
		},
		{
			name: "Re-run button", event: "check_run", seed: writerOn("electron/electron", "codebytere"),
			payload: derive(t, checkRA, map[string]any{"check_run.name": "speedmatrix", "requested_action.identifier": "rerun"}),
			want: Decision{Do: DoRun, Kind: RunCheckRun, PR: 26764, HeadSHA: "5bd5f196a46b8222fb7484f05faba41a73cf34bd", HeadRef: "miniak/event-process-id",
				BaseSHA: "45eee468647309e9e6cdb2a88a3b460a59771fef", BaseRef: "master", By: "codebytere"},
		},
		{
			name: "a foreign button on our check", event: "check_run", seed: writerOn("electron/electron", "codebytere"),
			payload: derive(t, checkRA, map[string]any{"check_run.name": "speedmatrix"}),
			want:    Decision{Do: DoNothing}, reason: `button "lgtm|26764" is not one of ours`,
		},
		{
			name: "push to another branch", event: "push",
			payload: derive(t, "push/with-new-branch.payload.json", map[string]any{"ref": "refs/heads/feature"}),
			want:    Decision{Do: DoNothing}, reason: "push to feature: baselines are measured on the default branch master only",
		},
		{
			name: "push to the default branch over a previous commit", event: "push",
			payload: derive(t, "push/with-new-branch.payload.json", map[string]any{"before": shaB, "created": false}),
			want:    Decision{Do: DoRun, Kind: RunBaseline, HeadSHA: "6113728f27ae82c7b1a177c8d03f9e96e0adf246", HeadRef: "master", BaseSHA: shaB, By: "Codertocat"},
		},
		{
			name: "branch deletion", event: "push",
			payload: derive(t, "push/with-new-branch.payload.json", map[string]any{"after": "0000000000000000000000000000000000000000", "deleted": true}),
			want:    Decision{Do: DoNothing}, reason: "deletes the branch",
		},
		{
			name: "merge group destroyed", event: "merge_group",
			payload: derive(t, "merge_group/checks_requested.payload.json", map[string]any{"action": "destroyed"}),
			want:    Decision{Do: DoNothing}, reason: "only checks_requested",
		},
		{
			name: "dispatch without GITHUB_SHA", event: "workflow_dispatch", payload: readPayload(t, "workflow_dispatch/payload.json"),
			err: "set Event.RunSHA from GITHUB_SHA",
		},
		{
			name: "an event we do not handle", event: "star", payload: []byte(`{"action":"created"}`),
			want: Decision{Do: DoNothing}, reason: `event "star" is not one speedmatrix handles`,
		},
		{
			name: "malformed payload", event: "pull_request", payload: []byte(`{"action": 7}`), parseErr: "parse pull_request event payload",
		},
		{
			name: "payload without its object", event: "pull_request", payload: []byte(`{"action":"opened"}`), parseErr: "no pull_request object",
		},
	})
}

func withBy(d Decision, by string) Decision { d.By = by; return d }

func ghtestPull(n int, state string) ghtest.Pull {
	return ghtest.Pull{Repo: testRepo, Number: n, State: state, Author: "Codertocat", HeadSHA: shaA, HeadRef: "changes", BaseSHA: shaB, BaseRef: "master"}
}

func TestVerifyHead(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	if err := e.c.VerifyHead(ctx, helloRepo, 2, shaA); err != nil {
		t.Fatalf("VerifyHead at the head: %v", err)
	}
	e.clock.Sleep(ctx, time.Minute)
	e.srv.MovePullHead(testRepo, 2, shaC)
	err := e.c.VerifyHead(ctx, helloRepo, 2, shaA)
	if !errors.Is(err, ErrHeadMoved) || !strings.Contains(err.Error(), "approved at "+shaA+" and is now at "+shaC) || !strings.Contains(err.Error(), "/bench "+shaC) {
		t.Errorf("VerifyHead after a push: %v; want ErrHeadMoved naming both commits", err)
	}
}

func TestParseEventFields(t *testing.T) {
	ev, err := ParseEvent("issue_comment", readPayload(t, "issue_comment/created.on-pull-request.DERIVED.json"))
	if err != nil {
		t.Fatal(err)
	}
	want := &Event{
		Name: "issue_comment", Action: "created", Repo: Repo{Owner: "Codertocat", Name: "Hello-World", DefaultBranch: "master"},
		Sender: "Codertocat", InstallationID: 1,
		PullRequest: &PullRequest{Number: 1, State: "open", Author: "Codertocat"},
		Comment: &Comment{ID: 492700400, Body: "/benchmark", Author: "Codertocat",
			CreatedAt: time.Date(2019, 5, 15, 15, 20, 21, 0, time.UTC)},
	}
	if diff := cmp.Diff(want, ev); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func FuzzParseEvent(f *testing.F) {
	for _, rel := range payloadFiles(f) {
		f.Add(strings.Split(rel, "/")[0], readPayload(f, rel))
	}
	e := newEnv(f)
	e.srv.SetPermission(testRepo, "Codertocat", "write")
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, name string, payload []byte) {
		ev, err := ParseEvent(name, payload)
		if err != nil {
			return
		}
		if ev.Name != name {
			t.Fatalf("Name %q, want %q", ev.Name, name)
		}
		ev.RunSHA = shaC
		d, err := e.c.Decide(ctx, ev, testPolicy)
		if err != nil {
			return
		}
		switch d.Do {
		case DoRun, DoAccept, DoActionRequired:
			if !ValidSHA(d.HeadSHA) {
				t.Fatalf("%s with head %q", d.Do, d.HeadSHA)
			}
			if d.BaseSHA != "" && !ValidSHA(d.BaseSHA) {
				t.Fatalf("%s with base %q", d.Do, d.BaseSHA)
			}
			if d.Kind == "" {
				t.Fatalf("%s without a kind", d.Do)
			}
			if d.Kind == RunBaseline && !validRef(d.HeadRef) {
				t.Fatalf("baseline on ref %q", d.HeadRef)
			}
		case DoHelp:
			if d.Reply == "" {
				t.Fatal("help without a reply")
			}
		case DoNothing, DoRefuse:
			if d.Reason == "" {
				t.Fatalf("%s without a reason", d.Do)
			}
		default:
			t.Fatalf("Do %q", d.Do)
		}
	})
}
