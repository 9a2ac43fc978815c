package cli

import (
	"bytes"
	"context"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/speedmatrix/speedmatrix/bench"

	"github.com/speedmatrix/speedmatrix/engine"
	"github.com/speedmatrix/speedmatrix/ghbot/ghtest"
	"github.com/speedmatrix/speedmatrix/internal/memnet"
	"github.com/speedmatrix/speedmatrix/results"
)

// The fake GitHub of the action tests: Codertocat/Hello-World (pushed 2019-05-15T15:00Z, before
// the comment of the issue_comment payloads) with PR #2 at prHead on base prBase, as in the
// pull_request payloads; Codertocat has write permission.
const (
	actRepo   = "Codertocat/Hello-World"
	actToken  = "ghs_actiontesttoken"
	prHead    = "ec26c3e57ca3a959ca5aad62de7213c562f8c821"
	prBase    = "f95f852bd8fca8fcc58a9a2d6c842781e32a215e"
	pushAfter = "6113728f27ae82c7b1a177c8d03f9e96e0adf246"
	runSHA    = "0123456789abcdef0123456789abcdef01234567"
	movedSHA  = "89abcdef0123456789abcdef0123456789abcdef"
	eventsDir = "../../testdata/github-events"
)

// actionConfig is a speedmatrix.yaml whose run measures one decode cell of the in-process
// simulator for a second of wall time (about 1 s a run); extra is appended to its sim section.
// It compares with the stored baseline alone (paired.mode off): the tests of paired runs, the
// default (paired.mode auto), use simConfig.
func actionConfig(extra string) string {
	return simConfig(extra) + "paired: {mode: off}\n"
}

// simConfig is actionConfig without its paired section: paired.mode is the default, auto.
func simConfig(extra string) string {
	return "matrix: quick\ncells: [decode/8K/8]\nduration: 1s\nwarmup: 0\nquiet: true\nsim: {speedup: 40" + extra + "}\n"
}

// actEnv is a workflow step of the action against a fake GitHub.
type actEnv struct {
	t    *testing.T
	srv  *ghtest.Server
	dir  string
	vars map[string]string
	// stdout is the last run's standard output (workflow commands).
	stdout string
	// simTime runs the action in a testing/synctest bubble over an in-memory network that
	// serves the fake GitHub too (runSim), so that what it measures of the built-in simulator
	// is the model's time, whatever the machine's load; its baseline (baselineResults) is
	// measured so as well.
	simTime bool
	// simNow is where the last bubble's clock stopped: the next one starts there or at the
	// real time, whichever is later, so that results and comments keep their order.
	simNow time.Time
}

func newActEnv(t *testing.T) *actEnv {
	t.Helper()
	srv := ghtest.New(t, ghtest.Enterprise())
	srv.AddToken(actToken, ghtest.ActionsLogin)
	for _, r := range []ghtest.Repo{
		{Owner: "Codertocat", Name: "Hello-World", DefaultBranch: "master", PushedAt: time.Date(2019, 5, 15, 15, 0, 0, 0, time.UTC)},
		{Owner: "octo-org", Name: "octo-repo", DefaultBranch: "main"},
	} {
		srv.AddRepo(r)
	}
	srv.AddPull(ghtest.Pull{Repo: actRepo, Number: 2, Author: "Codertocat", HeadSHA: prHead, HeadRef: "changes", BaseSHA: prBase, BaseRef: "master"})
	srv.SetPermission(actRepo, "Codertocat", "write")
	srv.SetPermission("octo-org/octo-repo", "Codertocat", "write")
	dir := t.TempDir()
	e := &actEnv{t: t, srv: srv, dir: dir, vars: map[string]string{
		"GITHUB_ACTIONS":      "true",
		"GITHUB_API_URL":      srv.URL,
		"GITHUB_SERVER_URL":   "https://github.com",
		"GITHUB_REPOSITORY":   actRepo,
		"GITHUB_RUN_ID":       "4242",
		"GITHUB_SHA":          runSHA,
		"GITHUB_OUTPUT":       filepath.Join(dir, "github_output"),
		"GITHUB_STEP_SUMMARY": filepath.Join(dir, "step_summary"),
		"INPUT_TOKEN":         actToken,
		"INPUT_MODE":          "full",
		"INPUT_CONFIG":        filepath.Join(dir, "speedmatrix.yaml"),
		"INPUT_ARTIFACT-DIR":  filepath.Join(dir, "artifact"),
		"INPUT_BASELINE-DIR":  filepath.Join(dir, "baselines"),
	}}
	e.writeConfig(actionConfig(""))
	e.simTime = true // what the action measures of the simulator is the model's time, whatever the load (runSim)
	return e
}

func (e *actEnv) writeConfig(s string) {
	e.t.Helper()
	if err := os.WriteFile(e.vars["INPUT_CONFIG"], []byte(s), 0o644); err != nil {
		e.t.Fatal(err)
	}
}

// storeBaseline puts the shared baseline results in the store as sha's.
func (e *actEnv) storeBaseline(sha string) {
	e.t.Helper()
	b, err := os.ReadFile(e.baselineFor())
	if err != nil {
		e.t.Fatal(err)
	}
	dir := e.vars["INPUT_BASELINE-DIR"]
	if err := os.MkdirAll(dir, 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, sha+".json"), b, 0o644); err != nil {
		e.t.Fatal(err)
	}
}

// event sets the event name and writes its payload.
func (e *actEnv) event(name string, payload []byte) {
	e.t.Helper()
	p := filepath.Join(e.dir, "event.json")
	if err := os.WriteFile(p, payload, 0o644); err != nil {
		e.t.Fatal(err)
	}
	e.vars["GITHUB_EVENT_NAME"], e.vars["GITHUB_EVENT_PATH"] = name, p
}

// run runs `speedmatrix action` once with fresh output files and returns its outputs.
func (e *actEnv) run(ctx context.Context, args ...string) (map[string]string, string, error) {
	e.t.Helper()
	for _, k := range []string{"GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY"} {
		os.Remove(e.vars[k])
	}
	var stdout, stderr bytes.Buffer
	var err error
	if e.simTime {
		err = e.runSim(append([]string{"action"}, args...), &stdout, &stderr)
	} else {
		err = Run(ctx, append([]string{"action"}, args...), &stdout, &stderr, func(k string) string { return e.vars[k] })
	}
	e.stdout = stdout.String()
	masked := false
	for _, line := range strings.Split(stdout.String()+stderr.String(), "\n") {
		if line == "::add-mask::"+actToken {
			masked = true
		} else if strings.Contains(line, actToken) {
			e.t.Errorf("the token appears in the step's output: %q", line)
		}
	}
	if e.vars["INPUT_TOKEN"] != "" && !masked && err == nil {
		e.t.Errorf("the token was not masked")
	}
	return readOutputs(e.t, e.vars["GITHUB_OUTPUT"]), stderr.String(), err
}

// runSim runs a command as run does with simTime set: in a testing/synctest bubble whose
// clock first moves to the real time (or to where the last bubble's stopped, if later), over
// an in-memory network on which the fake GitHub is served at its URL's address. The bubble's
// runs cannot be cancelled from outside: its own context ends when it does.
func (e *actEnv) runSim(args []string, stdout, stderr *bytes.Buffer) (err error) {
	e.t.Helper()
	start := time.Now()
	if start.Before(e.simNow) {
		start = e.simNow
	}
	u, perr := url.Parse(e.srv.URL)
	if perr != nil {
		e.t.Fatal(perr)
	}
	synctest.Test(e.t, func(t *testing.T) {
		time.Sleep(time.Until(start)) // the bubble's clock starts in 2000
		n := memnet.New()
		ln, lerr := n.Listen("tcp", u.Host)
		if lerr != nil {
			t.Fatal(lerr)
		}
		hs := &http.Server{Handler: e.srv.Handler()}
		served := make(chan error, 1)
		go func() { served <- hs.Serve(ln) }()
		env := &Env{Stdout: stdout, Stderr: stderr, Getenv: func(k string) string { return e.vars[k] }, Net: n}
		err = RunEnv(t.Context(), env, args)
		if cerr := hs.Close(); cerr != nil {
			t.Errorf("closing the fake GitHub's in-memory server: %v", cerr)
		}
		<-served
		e.simNow = time.Now()
	})
	return err
}

// now returns a time after every result e's runs have stored so far (their bubbles' clocks
// may run ahead of the real time) and before any later run's.
func (e *actEnv) now() time.Time {
	now := time.Now()
	if e.simNow.After(now) {
		now = e.simNow
	}
	e.simNow = now.Add(time.Millisecond)
	return now
}

// readOutputs parses a GITHUB_OUTPUT file of heredoc entries.
func readOutputs(t *testing.T, path string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return map[string]string{}
	}
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	lines := strings.Split(string(b), "\n")
	for i := 0; i < len(lines); i++ {
		k, delim, ok := strings.Cut(lines[i], "<<")
		if !ok {
			continue
		}
		var v []string
		for i++; i < len(lines) && lines[i] != delim; i++ {
			v = append(v, lines[i])
		}
		if len(v) != 1 {
			t.Errorf("output %s has %d lines", k, len(v))
		}
		out[k] = strings.Join(v, "\n")
	}
	return out
}

func payload(t *testing.T, rel string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(eventsDir, rel))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// derived returns a payload with fields set: keys are dotted paths, values JSON values.
func derived(t *testing.T, rel string, set map[string]any) []byte {
	t.Helper()
	return ghtest.DerivePayload(t, payload(t, rel), set)
}

// benchComment is the issue_comment payload on PR #2 with body, the comment seeded in the fake.
func (e *actEnv) benchComment(body string) {
	e.t.Helper()
	const id = 492700400
	created := time.Date(2019, 5, 15, 15, 20, 21, 0, time.UTC)
	e.srv.PutComment(ghtest.Comment{ID: id, Repo: actRepo, Issue: 2, User: "Codertocat", Body: body, CreatedAt: created})
	e.event("issue_comment", derived(e.t, "issue_comment/created.on-pull-request.DERIVED.json",
		map[string]any{"comment.body": body, "issue.number": 2, "comment.id": id}))
}

// measuredOnce is a results file measured once per test binary.
type measuredOnce struct {
	once sync.Once
	path string
	err  error
}

// The shared baseline measured in real time (runBench) and in the simulator's (runSimTime).
var baselineReal, baselineSim measuredOnce

// baselineResults returns a results file of actionConfig(""), measured once per test binary
// in real time.
func baselineResults(t *testing.T) string {
	t.Helper()
	return baselineReal.get(t, false)
}

// baselineFor returns the baseline results of e's runs: measured in the simulator's time when
// e measures so (simTime), else in real time.
func (e *actEnv) baselineFor() string {
	e.t.Helper()
	if e.simTime {
		return baselineSim.get(e.t, true)
	}
	return baselineReal.get(e.t, false)
}

// get measures actionConfig("") the first time (sim: in the simulator's time) and returns the
// results file.
func (m *measuredOnce) get(t *testing.T, sim bool) string {
	t.Helper()
	m.once.Do(func() {
		dir, err := os.MkdirTemp("", "speedmatrix-action-baseline")
		if err != nil {
			m.err = err
			return
		}
		cfgPath := filepath.Join(dir, "speedmatrix.yaml")
		if err := os.WriteFile(cfgPath, []byte(actionConfig("")), 0o644); err != nil {
			m.err = err
			return
		}
		m.path = filepath.Join(dir, "base.json")
		measure := runBench
		if sim {
			measure = runSimTime
		}
		_, stderr, err := measure(t, nil, "run", "--config", cfgPath, "-o", m.path)
		if err != nil {
			m.err = err
			t.Log(stderr)
		}
	})
	if m.err != nil {
		t.Fatalf("measuring the baseline: %v", m.err)
	}
	return m.path
}

// checksOn returns the check runs on sha, in any repository.
func checksOn(st ghtest.State, sha string) []ghtest.CheckRun {
	var out []ghtest.CheckRun
	for _, c := range st.CheckRuns {
		if c.HeadSHA == sha {
			out = append(out, c)
		}
	}
	return out
}

// botComments returns the bot's comments on PR #2 that carry the marker.
func botComments(st ghtest.State) []ghtest.Comment {
	var out []ghtest.Comment
	for _, c := range st.CommentsOn(actRepo, 2) {
		if c.User == ghtest.ActionsLogin && strings.Contains(c.Body, "<!-- speedmatrix:comment check=") {
			out = append(out, c)
		}
	}
	return out
}

// replies returns the bot's unmarked comments on PR #2.
func replies(st ghtest.State) []ghtest.Comment {
	var out []ghtest.Comment
	for _, c := range st.CommentsOn(actRepo, 2) {
		if c.User == ghtest.ActionsLogin && !strings.Contains(c.Body, "<!-- speedmatrix:comment check=") {
			out = append(out, c)
		}
	}
	return out
}

// writes returns the calls that changed something.
func writes(st ghtest.State) []ghtest.Call {
	var out []ghtest.Call
	for _, c := range st.Calls {
		if c.Method != "GET" {
			out = append(out, c)
		}
	}
	return out
}

func wantOutputs(t *testing.T, got map[string]string, want map[string]string) {
	t.Helper()
	for k, v := range want {
		if got[k] != v {
			t.Errorf("output %s = %q, want %q (all: %v)", k, got[k], v, got)
		}
	}
}

func fileExistsT(p string) bool { _, err := os.Stat(p); return err == nil }

var _ = results.VerdictRegression

// TestMain removes the shared baselines' directories after the package's tests.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == engine.ReaperArg {
		engine.Reap(os.Args[2:]) // the test binary is the engines' reaper (engineReaper)
	}
	// The tests measure in real time on a shared machine: a measurement the machine starved is
	// kept with a note, not measured again (bench/starve.go, runsim_starve_test.go judge it).
	os.Setenv(bench.KeepStarvedEnv, "1")
	code := m.Run()
	for _, b := range []*measuredOnce{&baselineReal, &baselineSim} {
		if b.path != "" {
			os.RemoveAll(filepath.Dir(b.path))
		}
	}
	os.Exit(code)
}
