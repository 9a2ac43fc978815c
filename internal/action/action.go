package action

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sethvargo/go-githubactions"

	"github.com/speedmatrix/speedmatrix/compare"
	"github.com/speedmatrix/speedmatrix/config"
	"github.com/speedmatrix/speedmatrix/ghbot"
	"github.com/speedmatrix/speedmatrix/internal/textout"
	"github.com/speedmatrix/speedmatrix/measure"
	"github.com/speedmatrix/speedmatrix/report"
	"github.com/speedmatrix/speedmatrix/results"
	"github.com/speedmatrix/speedmatrix/store"
)

// Deps is what the action uses of the outside world.
type Deps struct {
	// Action reads the inputs and the context and writes outputs, the job summary and masks;
	// build it with githubactions.WithGetenv and WithWriter.
	Action *githubactions.Action
	Log    *slog.Logger
	// Measure is what a measurement uses of the outside world: the action measures as
	// `speedmatrix run` does (measure.Run), its shards as run --shard, within a budget as run
	// --baseline (measure.Rerun).
	Measure measure.Deps
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Mode, when set, overrides the mode input (the --mode and --cleanup flags).
	Mode string
	// ClientOptions are added to the GitHub client's (tests: retry policy, transport).
	ClientOptions []ghbot.Option
	// CheckoutBase checks out a commit of the git checkout src into dir for a paired run's base
	// (default GitWorktree, paired.go).
	CheckoutBase func(ctx context.Context, src, sha, dir string) (remove func() error, err error)
}

// Verdicts the verdict output takes besides the comparison's verdicts.
const (
	VerdictSkipped        = "skipped"         // the event asks for nothing
	VerdictRefused        = "refused"         // a command was refused or answered with help
	VerdictActionRequired = "action_required" // an untrusted PR waits for a maintainer
	VerdictAccepted       = "accepted"        // a regression was accepted at this head
	VerdictNoBaseline     = "no_baseline"     // measured; nothing to compare with
	VerdictBaseline       = "baseline"        // measured and kept as the baseline
	VerdictReused         = "reused"          // a merge group reused its PR's success
	VerdictCancelled      = "cancelled"       // the run ended before its results
	VerdictHeadMoved      = "head_moved"      // the PR's head moved before the measurement
	VerdictPending        = "pending"         // decide mode: the measuring job is to run
	VerdictConfigChanged  = "config_changed"  // report mode: the head measured another config than the baseline
	VerdictBaselineError  = "baseline_error"  // the baseline could not be resolved (an API error): the check fails
)

// job is one invocation of the action.
type job struct {
	d   Deps
	a   *githubactions.Action
	log *slog.Logger
	now func() time.Time

	in  Inputs
	cfg config.Config
	ghc *githubactions.GitHubContext
	ev  *ghbot.Event

	repo                ghbot.Repo
	runURL, artifactURL string

	outputs map[string]string
	// started is when the job began (a results file older than that is not this run's).
	started time.Time
	// measured is the run-to-run noise measured on this machine (the store's A/A reruns), set
	// when the baseline came from the store; compare uses it where it exceeds the prior.
	measured map[compare.NoiseKey]float64
	// histByCommit is set when the history handed to compare is in commit order (history).
	histByCommit bool
	// regressed is what the push's change-point issue reports, set by changePoint (bisect.go).
	regressed cpState
}

// plan is what a run measures and where it reports.
type plan struct {
	Kind    ghbot.RunKind
	PR      int
	HeadSHA string
	BaseSHA string
	By      string
	Cells   []string
	// State is the comment's state before this run (nil when none).
	State *State
	// Accepted is the acceptance in force at HeadSHA, read from the bot's own check run there
	// (readAcceptance); nil when none. The comment's state never sets it.
	Accepted *Acceptance
	// Paired, when set, says why the run is paired (/bench paired; paired.go).
	Paired string
}

// outcome is what a measurement and its comparison gave.
type outcome struct {
	Head           *results.File
	ResultsPath    string
	Comparison     *results.Comparison
	ComparisonPath string
	NoBaseline     string
	// ConfigChanged is set when the store's baseline is of another config than the head's
	// (report mode, configChanged): the check fails, NoBaseline says why.
	ConfigChanged bool
	// Unresolved, when set, says why the baseline could not be resolved (a *baselineError):
	// the check fails, nothing was compared.
	Unresolved string
	Baseline   bool
	// Paired is set when the comparison is of a paired run (paired.go).
	Paired *pairedInfo
}

// Run runs the action once: the event of GITHUB_EVENT_NAME and GITHUB_EVENT_PATH, the inputs
// INPUT_*, in the mode the input (or Deps.Mode) names.
func Run(ctx context.Context, d Deps) error {
	j, err := newJob(d)
	if err != nil {
		return err
	}
	switch j.in.Mode {
	case ModeMeasure:
		return j.measureMode(ctx)
	case ModeReport:
		return j.reportMode(ctx)
	case ModeCleanup:
		return j.cleanupMode(ctx)
	case ModePages:
		return j.pagesMode(ctx) // pages.go
	}
	return j.routed(ctx, j.in.Mode == ModeFull)
}

func newJob(d Deps) (*job, error) {
	if d.Action == nil {
		return nil, errors.New("action: no githubactions.Action")
	}
	if d.Log == nil {
		d.Log = slog.Default()
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	j := &job{d: d, a: d.Action, log: d.Log, now: d.Now, outputs: map[string]string{}, started: time.Now()}
	var err error
	if j.in, err = readInputs(d.Action, d.Mode); err != nil {
		return nil, err
	}
	if j.cfg, err = loadConfig(j.in); err != nil {
		return nil, err
	}
	ghc, err := d.Action.Context()
	if err != nil {
		// Context returns what it could read with the error of a malformed variable.
		j.log.Warn("reading the workflow context", "err", err)
	}
	if ghc == nil {
		return nil, fmt.Errorf("read the workflow context: %w", err)
	}
	j.ghc = ghc
	if ghc.EventName == "" || ghc.EventPath == "" {
		return nil, errors.New("GITHUB_EVENT_NAME and GITHUB_EVENT_PATH are not set: speedmatrix action runs inside a GitHub Actions workflow")
	}
	payload, err := os.ReadFile(ghc.EventPath)
	if err != nil {
		return nil, fmt.Errorf("read the event payload: %w", err)
	}
	if j.ev, err = ghbot.ParseEvent(ghc.EventName, payload); err != nil {
		return nil, err
	}
	if ghbot.ValidSHA(ghc.SHA) {
		j.ev.RunSHA = ghc.SHA
	}
	j.repo = j.ev.Repo
	if j.repo.Owner == "" || j.repo.Name == "" {
		owner, name := ghc.Repo()
		j.repo.Owner, j.repo.Name = owner, name
	}
	if j.in.BaselineDir == "" {
		j.in.BaselineDir = defaultBaselineDir(j.repo.FullName())
	}
	if ghc.RunID > 0 && ghc.Repository != "" {
		j.runURL = fmt.Sprintf("%s/%s/actions/runs/%d", strings.TrimRight(ghc.ServerURL, "/"), ghc.Repository, ghc.RunID)
		j.artifactURL = j.runURL + "#artifacts"
	}
	return j, nil
}

// client returns a GitHub client authenticated by the inputs.
func (j *job) client(ctx context.Context) (*ghbot.Client, error) {
	auth, err := ghbot.AuthFromInputs(j.a)
	if err != nil {
		return nil, err
	}
	auth.Scope = tokenScope(j.in.Mode, j.repo.Name)
	opts := append([]ghbot.Option{ghbot.WithActions(j.a), ghbot.WithLogger(j.log)}, j.d.ClientOptions...)
	return ghbot.NewClient(ctx, auth, j.ghc.APIURL, opts...)
}

// tokenScope is what a GitHub App's installation token is asked for in a mode: this repository
// only, and the permissions the mode's calls need (metadata to read the repository and
// permissions; pull_requests for the PR, its comments and reactions; checks for the check run;
// contents to read the store and the commit graph, and in full and report mode to write the data
// branch; issues for the change-point issues a push opens and closes, and for the bisections on
// them; actions in report mode to dispatch a bisection's next round).
func tokenScope(mode, repo string) ghbot.TokenScope {
	var perms map[string]string
	switch mode {
	case ModeDecide:
		perms = map[string]string{"metadata": "read", "pull_requests": "write", "checks": "write", "contents": "read", "issues": "write"}
	case ModeReport:
		perms = map[string]string{"metadata": "read", "pull_requests": "write", "checks": "write", "contents": "write", "issues": "write", "actions": "write"}
	case ModeFull:
		perms = map[string]string{"metadata": "read", "pull_requests": "write", "checks": "write", "contents": "write", "issues": "write"}
	case ModeCleanup:
		perms = map[string]string{"metadata": "read", "pull_requests": "write", "checks": "write"}
	case ModePages:
		perms = map[string]string{"metadata": "read", "contents": "read"}
	default: // measure holds no credentials; anything else asks for as little
		perms = map[string]string{"metadata": "read"}
	}
	s := ghbot.TokenScope{Permissions: perms}
	if repo != "" {
		s.Repositories = []string{repo}
	}
	return s
}

func (j *job) checkName() string { return j.cfg.GitHub.CheckName }

func (j *job) policy() ghbot.Policy {
	return ghbot.Policy{CheckName: j.checkName(), TrustLabel: j.cfg.GitHub.Label}
}

// routed is the full and the decide mode: route the event and act on the decision.
func (j *job) routed(ctx context.Context, full bool) error {
	c, err := j.client(ctx)
	if err != nil {
		return err
	}
	defer j.flushOutputs()
	if !full && j.ev.Name == "pull_request" {
		// The decide mode routes for a GPU job; under pull_request that job is defined by the
		// pull request's merge commit, which can replace it (docs/security.md).
		j.log.Warn("this workflow starts the GPU job from the pull_request trigger, which runs the workflow as the pull request itself defines it: a pull request can add its own job on the GPU runner and skip decide and the commit pin. Route pull requests with pull_request_target instead, as example-gpu.yml does (docs/security.md)")
	}
	if !full {
		if done, err := j.decideBisectRound(ctx, c); done { // a bisection round (bisectsplit.go)
			return err
		}
	}
	if done, err := j.bisectCommand(ctx, c, full); done { // /bench bisect on the change-point issue (bisect.go)
		return err
	}
	d, err := c.Decide(ctx, j.ev, j.policy())
	if err != nil {
		return err
	}
	j.log.Info("decision", "event", j.ev.Name, "action", j.ev.Action, "do", d.Do, "kind", d.Kind, "pr", d.PR, "sha", d.HeadSHA, "reason", d.Reason)
	if err := c.Respond(ctx, j.repo, d); err != nil {
		j.log.Warn("responding to the command", "err", err)
	}
	j.setOutput("run", "false")
	switch d.Do {
	case ghbot.DoNothing:
		j.setOutput("verdict", VerdictSkipped)
		j.summary("speedmatrix: nothing to do for this event (" + d.Reason + ").\n")
		return nil
	case ghbot.DoHelp, ghbot.DoRefuse:
		j.setOutput("verdict", VerdictRefused)
		why := ""
		if d.Do == ghbot.DoRefuse && d.Reason != "" {
			why = " " + code(d.Reason)
		}
		j.summary("speedmatrix: the command was not run." + why + "\n")
		return nil
	case ghbot.DoActionRequired:
		return j.actionRequired(ctx, c, d)
	case ghbot.DoAccept:
		return j.accept(ctx, c, d)
	case ghbot.DoRun:
	default:
		return fmt.Errorf("decision %q is not handled", d.Do)
	}
	p, ok, err := j.planRun(ctx, c, d)
	if err != nil || !ok {
		return err
	}
	return j.run(ctx, c, p, full)
}

func (j *job) actionRequired(ctx context.Context, c *ghbot.Client, d ghbot.Decision) error {
	j.setOutput("verdict", VerdictActionRequired)
	title := "Waiting for a maintainer: benchmarks of this pull request need approval"
	_, err := c.CompleteCheck(ctx, j.repo, d.HeadSHA, j.checkName(), ghbot.CheckUpdate{
		Conclusion: ghbot.ConclusionActionRequired, DetailsURL: j.runURL,
		Output: ghbot.CheckOutput{Title: title, Summary: d.Reason},
	})
	if err != nil {
		// A fork's read-only token cannot write checks: say so, do not fail the workflow.
		j.log.Warn("could not complete the check as action_required (a fork's token is read-only)", "err", err)
	}
	j.summary("### " + title + "\n\n" + d.Reason + "\n")
	return nil
}

// planRun reads the comment's state and turns a run decision into a plan; ok is false when the
// decision was answered without a run (a rerun with nothing to rerun, a reused merge group).
func (j *job) planRun(ctx context.Context, c *ghbot.Client, d ghbot.Decision) (plan, bool, error) {
	p := plan{Kind: d.Kind, PR: d.PR, HeadSHA: d.HeadSHA, BaseSHA: d.BaseSHA, By: d.By}
	if p.PR != 0 {
		if st, ok := j.readState(ctx, c, p.PR); ok {
			p.State = &st
		}
		p.Accepted = j.readAcceptance(ctx, c, p.HeadSHA)
	}
	if d.Command != nil && d.Command.Kind == ghbot.CommandRerun {
		for _, id := range d.Command.Cells {
			p.Cells = append(p.Cells, id.String())
		}
		if len(p.Cells) == 0 && p.State != nil {
			p.Cells = append(p.Cells, p.State.Inconclusive...)
		}
		if p.State != nil && p.State.Paired && p.State.HeadSHA == p.HeadSHA {
			p.Paired = "the last comparison at this head was paired, so `/bench rerun` reruns paired"
		}
		if len(p.Cells) == 0 {
			j.reply(ctx, c, p.PR, fmt.Sprintf("@%s `/bench rerun` has nothing to rerun: the last comparison left no cell undecided. Post `/bench` to measure the whole matrix, or name the cells: `/bench rerun decode/8K/32`.", d.By))
			j.setOutput("verdict", VerdictRefused)
			return p, false, nil
		}
	}
	if d.Command != nil && d.Command.Kind == ghbot.CommandPaired {
		if j.in.Shards > 0 {
			// A paired run serves base and head on one runner in turn; the shards' runners each
			// measure other cells, so there is no pair to make.
			j.reply(ctx, c, p.PR, fmt.Sprintf("@%s `/bench paired` was not run: this workflow splits the matrix into shards (input shards: %d) for several runners, and a paired run serves base and head in turn on one runner. Run the workflow without shards (e.g. by hand with `shards: 0`), or post `/bench` to measure the head against the stored baseline.", d.By, j.in.Shards))
			j.setOutput("verdict", VerdictRefused)
			return p, false, nil
		}
		p.Paired = fmt.Sprintf("%s asked for it with `/bench paired`", code(d.By))
		for _, id := range d.Command.Cells {
			p.Cells = append(p.Cells, id.String())
		}
	}
	if len(j.in.Cells) > 0 && len(p.Cells) == 0 {
		p.Cells = j.in.Cells
	}
	if p.Kind == ghbot.RunMergeGroup && j.cfg.GitHub.MergeQueue == config.MergeQueueReuse {
		reused, err := j.reuseMergeGroup(ctx, c, d)
		if err != nil || reused {
			return p, false, err
		}
	}
	return p, true, nil
}

var queueRefRE = regexp.MustCompile(`/pr-([0-9]+)-([0-9a-f]{40})$`)

// reuseMergeGroup reports the PR's success on the group's head when the group's ref names one
// PR whose check of ours succeeded on its head.
func (j *job) reuseMergeGroup(ctx context.Context, c *ghbot.Client, d ghbot.Decision) (bool, error) {
	m := queueRefRE.FindStringSubmatch(d.HeadRef)
	if m == nil {
		j.log.Info("merge group: its ref names no pull request; measuring", "ref", d.HeadRef)
		return false, nil
	}
	prSHA := m[2]
	cr, ok, err := c.FindCheck(ctx, j.repo, prSHA, j.checkName())
	if err != nil {
		return false, err
	}
	if !ok || cr.Status != "completed" || cr.Conclusion != string(ghbot.ConclusionSuccess) {
		j.log.Info("merge group: the pull request's check did not succeed on its head; measuring", "pr", m[1], "sha", prSHA, "conclusion", cr.Conclusion)
		return false, nil
	}
	title := fmt.Sprintf("Not blocked: pull request #%s succeeded at %s (reused)", m[1], ghbot.ShortSHA(prSHA))
	summary := fmt.Sprintf("The merge group's head %s adds pull request #%s, whose %s check succeeded on its head %s; github.merge_queue is reuse, so that verdict is reported here. Set it to run to measure every merge group.",
		code(ghbot.ShortSHA(d.HeadSHA)), m[1], code(j.checkName()), code(ghbot.ShortSHA(prSHA)))
	if _, err := c.CompleteCheck(ctx, j.repo, d.HeadSHA, j.checkName(), ghbot.CheckUpdate{
		Conclusion: ghbot.ConclusionSuccess, DetailsURL: j.runURL, Output: ghbot.CheckOutput{Title: title, Summary: summary},
	}); err != nil {
		return false, err
	}
	j.setOutput("verdict", VerdictReused)
	j.setOutput("conclusion", string(ghbot.ConclusionSuccess))
	j.summary("### " + title + "\n\n" + summary + "\n")
	return true, nil
}

// run starts the check and the measuring comment, verifies the head, and then measures and
// reports (full) or says what to measure (decide).
func (j *job) run(ctx context.Context, c *ghbot.Client, p plan, full bool) (err error) {
	name := j.checkName()
	measuring := j.render(p, outcome{}, renderInput{Measuring: true})
	if _, err := c.StartCheck(ctx, j.repo, p.HeadSHA, name, ghbot.CheckUpdate{
		DetailsURL: j.runURL, Output: ghbot.CheckOutput{Title: measuring.title, Summary: j.acceptancePrefix(p) + measuring.summary + j.sameNameWarning(c)},
	}); err != nil {
		return err
	}
	done := false
	defer func() {
		if !done { // in decide mode too: an error after the start would leave it in_progress
			j.abort(ctx, c, p, err)
		}
	}()
	if p.PR != 0 && j.cfg.GitHub.Comment == config.CommentAlways {
		st := j.state(p, phaseMeasuring, outcome{}, "")
		if _, err := c.UpsertComment(ctx, j.repo, p.PR, name, st.Line()+"\n"+measuring.body, j.artifactURL); err != nil {
			j.log.Warn("posting the measuring comment", "err", err)
		}
	}
	if p.PR != 0 && p.Kind != ghbot.RunMergeGroup {
		if err := c.VerifyHead(ctx, j.repo, p.PR, p.HeadSHA); err != nil {
			if !errors.Is(err, ghbot.ErrHeadMoved) {
				return err
			}
			j.headMoved(ctx, c, p, err)
			done = true
			return nil
		}
	}
	if !full {
		if err := j.shardOutputs(p); err != nil { // shards.go
			return err
		}
		done = true
		j.setOutput("run", "true")
		j.setOutput("verdict", VerdictPending)
		j.setOutput("sha", p.HeadSHA)
		p.BaseSHA = j.decidePaired(ctx, c, p) // paired.go
		j.setOutput("base-sha", p.BaseSHA)
		j.setOutput("pr", strconv.Itoa(p.PR))
		j.setOutput("kind", string(p.Kind))
		j.setOutput("cells", strings.Join(p.Cells, ","))
		if p.Kind == ghbot.RunBaseline {
			j.setOutput("aa", strconv.FormatBool(j.aaDecide(ctx, j.openStore(c), p.HeadSHA)))
		}
		return nil
	}
	out, err := j.measureCompare(ctx, c, p)
	if err != nil {
		return err
	}
	if err := j.publish(ctx, c, p, out); err != nil {
		return err
	}
	done = true
	return nil
}

// headMoved reports a run that did not start because the PR's head moved.
func (j *job) headMoved(ctx context.Context, c *ghbot.Client, p plan, cause error) {
	why := "The pull request's head moved after the run was approved; nothing was measured. A maintainer who has read the new commits posts `/bench <commit>` again, naming the commit they read by its full id."
	r := j.render(p, outcome{}, renderInput{Cancelled: why})
	if _, err := c.CompleteCheck(ctx, j.repo, p.HeadSHA, j.checkName(), ghbot.CheckUpdate{
		Conclusion: ghbot.ConclusionCancelled, DetailsURL: j.runURL, Output: ghbot.CheckOutput{Title: r.title, Summary: j.acceptancePrefix(p) + r.summary},
	}); err != nil {
		j.log.Warn("completing the check after the head moved", "err", err)
	}
	j.upsertState(ctx, c, p, r.body, j.state(p, phaseCancelled, outcome{}, ""))
	if p.Kind == ghbot.RunCommand {
		j.reply(ctx, c, p.PR, fmt.Sprintf("@%s the benchmark was not run: the head of #%d moved from %s after your command. Read the new commits and post the command again, naming the commit you read by its full id: `/bench <commit>`.", p.By, p.PR, code(p.HeadSHA)))
	}
	j.log.Warn("not measured: the head moved", "err", cause)
	j.setOutput("verdict", VerdictHeadMoved)
	j.setOutput("conclusion", string(ghbot.ConclusionCancelled))
}

// abort completes a started check that would otherwise stay in_progress: cancelled, or
// timed_out when the context's deadline passed.
func (j *job) abort(ctx context.Context, c *ghbot.Client, p plan, cause error) {
	conclusion := ghbot.ConclusionCancelled
	why := "The run stopped before its results."
	var measureErr *measureJobError
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded) || errors.Is(cause, context.DeadlineExceeded):
		conclusion, why = ghbot.ConclusionTimedOut, "The run timed out before its results."
	case ctx.Err() != nil:
		why = "The run was cancelled before its results."
	case errors.As(cause, &measureErr):
		why = measureErr.why(j.runURL)
	case cause != nil:
		why = "The run failed before its results: " + code(firstLine(cause.Error()))
		if exit := serverExit(cause); exit != "" {
			why += " " + exit
		}
	}
	partial := j.partialResults(p)
	if measureErr != nil && measureErr.Partial != nil {
		partial = measureErr.Partial
	}
	if partial != nil {
		n := measuredCells(partial)
		why += fmt.Sprintf(" %d %s measured before it stopped: their results are in the run's artifacts (%s, marked partial) and below.",
			n, textout.Pick(n, "cell was", "cells were"), artifactResults)
	}
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	r := j.render(p, outcome{}, renderInput{Cancelled: why, Head: partial})
	if _, err := c.CompleteCheck(actx, j.repo, p.HeadSHA, j.checkName(), ghbot.CheckUpdate{
		Conclusion: conclusion, DetailsURL: j.runURL, Output: ghbot.CheckOutput{Title: r.title, Summary: j.acceptancePrefix(p) + r.summary, Text: r.text},
	}); err != nil {
		j.log.Error("completing the check of a run that stopped", "err", err)
	}
	j.upsertState(actx, c, p, r.body, j.state(p, phaseCancelled, outcome{}, ""))
	j.setOutput("verdict", VerdictCancelled)
	j.setOutput("conclusion", string(conclusion))
}

// measureCompare measures the plan's commit, keeps its results in the store (a baseline run's
// as the default branch's, any other as the PR's), and compares any other run with its baseline:
// the store's (the merge-base, or its nearest ancestor with results) with the store's history as
// the noise, else the local baseline directory's result of the base commit. c is nil where no
// token can write (the measure mode): the local directory alone. It writes the artifact
// directory.
func (j *job) measureCompare(ctx context.Context, c *ghbot.Client, p plan) (outcome, error) {
	cfg := j.measureConfig(p) // shards.go
	for _, dir := range []string{filepath.Dir(cfg.Output), j.in.ArtifactDir} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return outcome{}, err
		}
	}
	// The action pairs a run by paired.mode (paired.go); an unpaired measurement is the head's only.
	cfg.Paired.Enabled = false
	var warnings []string
	if why, base := j.pairedBefore(ctx, j.openStore(c), p); why != "" { // paired.go
		out, err := j.pairedFirst(ctx, c, cfg, p, pairedInfo{Why: why, BaseSHA: base, Cells: p.Cells})
		if err == nil || !j.pairedFallback(ctx, p, err) {
			return out, err
		}
		warnings = append(warnings, "A paired run (paired.mode) failed, so the head was measured alone: "+code(firstLine(err.Error())))
	}
	j.log.Info("measuring", "sha", p.HeadSHA, "cells", strings.Join(p.Cells, ","), "results", cfg.Output)
	if err := j.measure(ctx, cfg); err != nil {
		return outcome{}, fmt.Errorf("measure %s: %w", ghbot.ShortSHA(p.HeadSHA), err)
	}
	if err := ctx.Err(); err != nil {
		return outcome{}, err
	}
	head, err := results.ReadFile(cfg.Output)
	if err != nil {
		return outcome{}, fmt.Errorf("read the results: %w", err)
	}
	out := outcome{Head: head, ResultsPath: cfg.Output}
	if err := copyFile(cfg.Output, filepath.Join(j.in.ArtifactDir, artifactResults)); err != nil {
		return out, fmt.Errorf("copy the results to the artifact directory: %w", err)
	}
	rs := j.openStore(c)
	if p.Kind == ghbot.RunBaseline {
		stored := j.put(ctx, rs, store.KindDefault, p.HeadSHA, 0, head)
		if !stored || rs.commits == nil {
			// The local directory is the fallback where the store could not be written.
			if err := (dirStore{j.in.BaselineDir}).Put(p.HeadSHA, cfg.Output); err != nil {
				return out, err
			}
		}
		if stored {
			j.changePoint(ctx, c, rs, p.HeadSHA, head)
			j.autoBisect(ctx, c, rs, cfg, head, j.regressed) // bisect.go
		}
		// A/A: the full mode decides with the push's result stored; the measure mode, which
		// cannot read the store, was told by the decide job (input aa).
		due := j.in.AA
		if j.in.Mode != ModeMeasure {
			due = stored && j.aaDue(ctx, rs, store.ConfigID(head), p.HeadSHA)
		}
		if due {
			if again := j.measureAA(ctx, cfg, p.HeadSHA); again != nil && stored {
				j.put(ctx, rs, store.KindAA, p.HeadSHA, 0, again)
			}
		}
		if stored {
			j.prune(ctx, rs, p.HeadSHA)
		}
		out.Baseline = true
		return out, nil
	}
	var base *results.File
	var hist []*results.File
	baseCommit := "" // the stored result's commit, which the PR's stored result cites
	var earlier *results.File
	if p.rerun() {
		// The first pass at this head, which the rerun pools with (rerun.go); the store keeps it
		// as the pull request's result, the rerun's cells go to the artifacts.
		if earlier = j.earlierHead(ctx, rs, p, head); earlier == nil {
			warnings = append(warnings, noEarlierWarning)
		}
	}
	putPR := func(base string) {
		if earlier == nil {
			j.putPR(ctx, rs, p, base, head)
		}
	}
	if j.in.Baseline == "" {
		sb, ok, err := j.storeBaseline(ctx, rs, p, j.seriesFile(p, head))
		var be *baselineError
		switch {
		case errors.As(err, &be):
			// Fail closed: the local directory is not asked either, it would say "no baseline".
			out.Unresolved = be.why()
			putPR("")
			return out, nil
		case ok:
			base, hist, baseCommit = sb.base, sb.hist, sb.commit
			warnings = append(warnings, sb.warnings...)
			if err := results.WriteFile(filepath.Join(j.in.ArtifactDir, artifactBase), base); err != nil {
				return out, err
			}
		case sb.why != "":
			out.NoBaseline = "No baseline in the store: " + sb.why + "."
		}
	}
	putPR(baseCommit)
	if base == nil {
		basePath := j.in.Baseline
		if basePath == "" {
			basePath = dirStore{j.in.BaselineDir}.Get(p.BaseSHA)
		}
		if basePath == "" {
			if out.NoBaseline == "" {
				out.NoBaseline = fmt.Sprintf("No baseline results for the base %s: a push to the default branch measures one (or set the action's baseline input).", code(orDash(ghbot.ShortSHA(p.BaseSHA))))
			}
			if len(warnings) > 0 {
				out.NoBaseline += " " + strings.Join(warnings, " ")
			}
			return out, nil
		}
		out.NoBaseline = ""
		if base, err = results.ReadFile(basePath); err != nil {
			return out, fmt.Errorf("read the baseline: %w", err)
		}
		if err := copyFile(basePath, filepath.Join(j.in.ArtifactDir, artifactBase)); err != nil {
			return out, err
		}
	}
	switch {
	case earlier != nil:
		// The second look, the last: a budgeted job buys no reruns beyond it.
		out, err = j.compareRerun(out, earlier, base, hist, warnings) // rerun.go
	case cfg.Budget > 0:
		out, err = j.budgeted(ctx, cfg, out, base, hist, warnings, p.Cells) // budget.go
	default:
		out, err = j.compareWithHistory(out, base, hist, warnings, p.Cells)
	}
	if err != nil {
		return out, err
	}
	return j.pairedAfter(ctx, rs, cfg, p, out) // paired.go
}

// compareWith compares out.Head with base under the configuration's thresholds.
func (j *job) compareWith(out outcome, base *results.File, cells []string) (outcome, error) {
	return j.compareWithHistory(out, base, nil, nil, cells)
}

// compareInput is what the bot compares: head with base, the history's noise and the measured
// noise, only cells (CellID strings) when any are named.
func (j *job) compareInput(head, base *results.File, hist []*results.File, cells []string) (compare.Input, error) {
	in := compare.Input{Base: []*results.File{base}, Head: []*results.File{head}, BasePath: "base", HeadPath: "head", History: hist, HistoryByCommit: j.histByCommit && len(hist) > 0, MeasuredNoise: j.measured}
	for _, s := range cells {
		id, err := results.ParseCellID(s)
		if err != nil {
			return in, err
		}
		in.Cells = append(in.Cells, id)
	}
	return in, nil
}

// compareWithHistory compares out.Head with base under the configuration's thresholds, the
// noise of each cell taken from hist when it holds enough runs; warnings are added to the
// comparison's.
func (j *job) compareWithHistory(out outcome, base *results.File, hist []*results.File, warnings []string, cells []string) (outcome, error) {
	th := measure.Thresholds(j.cfg)
	// `/bench rerun` measures the head alone against the stored base (rerun.go), a paired
	// comparison's reruns pair again: the advice is for what is measured again.
	th.HeadOnlyReruns = out.Head != nil && out.Head.Run.Pairing == nil
	in, err := j.compareInput(out.Head, base, hist, cells)
	if err != nil {
		return out, err
	}
	cmp, err := compare.Compare(in, th)
	return j.keepComparison(out, cmp, err, warnings) // rerun.go
}

// conclusion maps an outcome to the check's conclusion and the verdict output. A comparison's
// conclusion is its row of results.Outcomes (docs/verdicts.md), changed only by the setting the
// row names: github.fail_on_regression and an acceptance for a regression, github.undecided and
// an acceptance for an unproven matrix; github.no_baseline is publish's (it applies to pull requests only).
func (j *job) conclusion(out outcome, accepted *Acceptance) (ghbot.Conclusion, string) {
	switch {
	case out.Baseline:
		return ghbot.ConclusionSuccess, VerdictBaseline
	case out.Unresolved != "":
		return ghbot.ConclusionFailure, VerdictBaselineError
	case out.ConfigChanged:
		return ghbot.ConclusionFailure, VerdictConfigChanged
	case out.NoBaseline != "" || out.Comparison == nil:
		return ghbot.ConclusionNeutral, VerdictNoBaseline
	}
	o := results.OutcomeOf(out.Comparison.Verdict)
	switch o.Verdict {
	case results.VerdictRegression:
		switch {
		case accepted != nil:
			return ghbot.ConclusionSuccess, VerdictAccepted
		case !j.cfg.GitHub.FailOnRegression:
			return ghbot.ConclusionNeutral, string(o.Verdict)
		}
	case results.VerdictUnproven:
		if accepted != nil {
			return ghbot.ConclusionSuccess, VerdictAccepted
		}
		switch j.cfg.GitHub.Undecided {
		case config.UndecidedNeutral:
			return ghbot.ConclusionNeutral, string(o.Verdict)
		case config.UndecidedSuccess:
			return ghbot.ConclusionSuccess, string(o.Verdict)
		}
		return ghbot.ConclusionFailure, string(o.Verdict)
	}
	return ghbot.Conclusion(o.Check), string(o.Verdict)
}

// render fills the context of a render input and renders it.
func (j *job) render(p plan, out outcome, in renderInput) page {
	in.Repo, in.HeadSHA, in.BaseSHA, in.PR, in.Kind, in.By, in.Cells = j.repo.FullName(), p.HeadSHA, p.BaseSHA, p.PR, p.Kind, p.By, p.Cells
	in.ServerURL, in.RunURL, in.ArtifactURL = strings.TrimRight(j.ghc.ServerURL, "/"), j.runURL, j.artifactURL
	if !in.Measuring && in.Cancelled == "" {
		in.Head, in.Comparison, in.NoBaseline, in.Baseline = out.Head, out.Comparison, out.NoBaseline, out.Baseline
		if out.Unresolved != "" {
			in.Comparison, in.NoBaseline = nil, out.Unresolved
		}
	}
	in.FailOff = !j.cfg.GitHub.FailOnRegression
	in.CheckName = j.checkName()
	if in.Measuring || in.Cancelled != "" {
		return measuringPaired(renderComment(in), p, in) // paired.go
	}
	return withPaired(renderComment(in), out.Paired) // paired.go
}

// state returns the comment's state after this step.
func (j *job) state(p plan, phase string, out outcome, conclusion ghbot.Conclusion) State {
	st := State{Phase: phase, HeadSHA: p.HeadSHA, BaseSHA: p.BaseSHA, RunURL: j.runURL, Conclusion: string(conclusion)}
	st.Accepted = p.Accepted
	if out.Comparison != nil {
		st.Verdict = string(out.Comparison.Verdict)
		st.Regressions = cellsWith(out.Comparison, results.VerdictRegression)
		st.Inconclusive = cellsWith(out.Comparison, results.VerdictInconclusive)
		st.Paired = out.Paired != nil
	}
	return st
}

// publish posts the results: the comment, the completed check, the job summary, the outputs.
func (j *job) publish(ctx context.Context, c *ghbot.Client, p plan, out outcome) error {
	accepted := p.Accepted
	if out.Comparison == nil || !acceptable(string(out.Comparison.Verdict)) {
		accepted = nil
	}
	conclusion, verdict := j.conclusion(out, accepted)
	if (verdict == VerdictNoBaseline || verdict == string(results.VerdictNotComparable)) && p.PR != 0 && j.cfg.GitHub.NoBaseline == config.NoBaselineFailure {
		// A required check passes on neutral: github.no_baseline failure keeps an unmeasured
		// pull request from merging.
		conclusion = ghbot.ConclusionFailure
	}
	comparedNothing := out.Comparison != nil && out.NoBaseline == "" && verdict == string(results.VerdictNotComparable) &&
		(p.PR != 0 || p.Kind == ghbot.RunMergeGroup)
	if comparedNothing {
		// A baseline was found and nothing of the head was compared with it (cells that neither
		// file holds): that proves nothing about the pull request, so it cannot pass.
		conclusion = ghbot.ConclusionFailure
	}
	in := renderInput{Accepted: accepted, Conclusion: conclusion}
	switch {
	case out.Unresolved != "":
		in.Blocked = fmt.Sprintf("Blocked: the baseline of %s could not be resolved, so nothing was compared", ghbot.ShortSHA(p.HeadSHA))
	case out.ConfigChanged:
		in.Blocked = fmt.Sprintf("Blocked: %s measured another config than the default branch's baseline (the config changed), so the merge is blocked until it is measured there", ghbot.ShortSHA(p.HeadSHA))
	case conclusion == ghbot.ConclusionFailure && verdict == VerdictNoBaseline:
		in.Blocked = fmt.Sprintf("Blocked: nothing to compare %s with (github.no_baseline: failure)", ghbot.ShortSHA(p.HeadSHA))
	case comparedNothing:
		in.Blocked = fmt.Sprintf("Blocked: no cell of %s was compared with its baseline, so nothing shows it is not slower", ghbot.ShortSHA(p.HeadSHA))
	}
	r := j.render(p, out, in)
	summary := r.summary
	if out.Comparison != nil && verdict != VerdictNoBaseline {
		// The row of results.Outcomes that decided the conclusion (docs/verdicts.md).
		summary = afterFirstLine(summary, report.VerdictRow(out.Comparison.Verdict))
	}
	st := j.state(p, phaseDone, out, conclusion)
	st.Accepted = accepted
	regressed := len(st.Regressions)
	if p.PR != 0 {
		switch j.cfg.GitHub.Comment {
		case config.CommentAlways:
			j.upsertState(ctx, c, p, r.body, st)
		case config.CommentRegression:
			if regressed > 0 || p.State != nil {
				j.upsertState(ctx, c, p, r.body, st)
			}
		}
	}
	var buttons []ghbot.CheckAction
	if out.Comparison != nil {
		buttons = append(buttons, ghbot.ButtonRerun)
		if conclusion == ghbot.ConclusionFailure && acceptable(string(out.Comparison.Verdict)) {
			buttons = append(buttons, ghbot.ButtonAccept)
		}
	}
	cs := checkState{Accepted: p.Accepted}
	if out.Comparison != nil {
		cs.Verdict = string(out.Comparison.Verdict)
	}
	if _, err := c.CompleteCheck(ctx, j.repo, p.HeadSHA, j.checkName(), ghbot.CheckUpdate{
		Conclusion: conclusion, DetailsURL: j.runURL, Actions: buttons,
		Output: ghbot.CheckOutput{Title: r.title, Summary: cs.line() + "\n" + summary + j.sameNameWarning(c), Text: r.text},
	}); err != nil {
		return err
	}
	j.summary(r.full)
	j.resultOutputs(verdict, conclusion, regressed, out)
	return nil
}

// sameNameWarning returns the paragraph a check posted with the workflow's GITHUB_TOKEN ends
// in when it is to block merges (github.fail_on_regression): branch protection that requires
// a check by name accepts any check of that name made with GITHUB_TOKEN, so a job named like
// it in a workflow a pull request adds could turn the required check green while this one
// fails. A GitHub App's check can be required as the App's (docs/install.md); "" for an App.
func (j *job) sameNameWarning(c *ghbot.Client) string {
	if c == nil || c.Identity().App || !j.cfg.GitHub.FailOnRegression {
		return ""
	}
	return fmt.Sprintf("\n\n> ⚠️ This check is posted with the workflow's `GITHUB_TOKEN`: any workflow job named %s makes a check of the same name, so a pull request that adds one could satisfy a required %s check while this one fails. Authenticate the action as a GitHub App (inputs `app-id`, `installation-id`, `private-key`) and require the App's check ([install.md](https://github.com/speedmatrix/speedmatrix/blob/main/docs/install.md#a-github-app-and-the-required-check)).", code(j.checkName()), code(j.checkName()))
}

func (j *job) resultOutputs(verdict string, conclusion ghbot.Conclusion, regressed int, out outcome) {
	j.setOutput("verdict", verdict)
	j.setOutput("conclusion", string(conclusion))
	j.setOutput("regressions", strconv.Itoa(regressed))
	j.setOutput("results", out.ResultsPath)
	j.setOutput("comparison", out.ComparisonPath)
}

// upsertState writes the comment with its state line first (a comment cut at GitHub's limit
// loses its end), when the comment mode allows one.
func (j *job) upsertState(ctx context.Context, c *ghbot.Client, p plan, body string, st State) {
	if p.PR == 0 || j.cfg.GitHub.Comment == config.CommentNever {
		return
	}
	res, err := c.UpsertComment(ctx, j.repo, p.PR, j.checkName(), st.Line()+"\n"+body, j.artifactURL)
	if err != nil {
		j.log.Warn("writing the pull request comment", "err", err)
		return
	}
	j.setOutput("comment-url", res.URL)
}

// readAcceptance returns the acceptance in force at sha: the one the bot's own check run there
// records (checkState), nil when none or when the run cannot be read.
func (j *job) readAcceptance(ctx context.Context, c *ghbot.Client, sha string) *Acceptance {
	cs, ok := j.readCheckState(ctx, c, sha)
	if !ok || cs.Accepted == nil || cs.Accepted.SHA != sha {
		return nil
	}
	return cs.Accepted
}

// readCheckState reads the state line of the bot's check run on sha.
func (j *job) readCheckState(ctx context.Context, c *ghbot.Client, sha string) (checkState, bool) {
	if !ghbot.ValidSHA(sha) {
		return checkState{}, false
	}
	cr, ok, err := c.FindCheck(ctx, j.repo, sha, j.checkName())
	if err != nil {
		j.log.Warn("reading the check run", "sha", sha, "err", err)
		return checkState{}, false
	}
	if !ok {
		return checkState{}, false
	}
	return parseCheckState(cr.Summary)
}

// acceptancePrefix returns the check state line that carries p's acceptance over a write of the
// check that holds no verdict (a run started, stopped or refused), with its line break; "" when
// there is none.
func (j *job) acceptancePrefix(p plan) string {
	if p.Accepted == nil {
		return ""
	}
	return checkState{Accepted: p.Accepted}.line() + "\n"
}

// readState reads the state of the bot's comment on a PR.
func (j *job) readState(ctx context.Context, c *ghbot.Client, pr int) (State, bool) {
	found, ok, err := c.FindComment(ctx, j.repo, pr, j.checkName())
	if err != nil {
		j.log.Warn("reading the pull request comment", "err", err)
		return State{}, false
	}
	if !ok {
		return State{}, false
	}
	return parseState(found.Body)
}

func (j *job) reply(ctx context.Context, c *ghbot.Client, pr int, text string) {
	if pr == 0 {
		return
	}
	if _, err := c.Reply(ctx, j.repo, pr, text); err != nil {
		j.log.Warn("replying on the pull request", "err", err)
	}
}

// eventSHA returns the commit the event is about, without asking GitHub; "" for a comment.
func (j *job) eventSHA() string {
	var sha string
	switch ev := j.ev; {
	case ev.PullRequest != nil && ev.IsPullRequest():
		sha = ev.PullRequest.HeadSHA
	case ev.Push != nil:
		sha = ev.Push.After
	case ev.MergeGroup != nil:
		sha = ev.MergeGroup.HeadSHA
	case ev.CheckRun != nil:
		sha = ev.CheckRun.HeadSHA
	case ev.Dispatch != nil:
		sha = ev.RunSHA
	}
	if !ghbot.ValidSHA(sha) {
		return ""
	}
	return sha
}

// eventPR returns the PR number the event is about, 0 for none.
func (j *job) eventPR() int {
	switch ev := j.ev; {
	case ev.PullRequest != nil:
		return ev.PullRequest.Number
	case ev.CheckRun != nil && len(ev.CheckRun.PullRequests) == 1:
		return ev.CheckRun.PullRequests[0].Number
	}
	return 0
}

// outputDelimiter is go-githubactions' fixed heredoc delimiter of SetOutput.
const outputDelimiter = "_GitHubActionsFileCommandDelimeter_"

// setOutput records an output; flushOutputs writes them. Only values this package made reach
// here; one with a line break or the delimiter is dropped all the same.
func (j *job) setOutput(k, v string) {
	if !slices.Contains(OutputNames, k) {
		panic("action: output " + k + " is not in OutputNames")
	}
	if strings.ContainsAny(v, "\r\n") || strings.Contains(v, outputDelimiter) {
		j.log.Warn("output dropped: it holds a line break", "output", k)
		return
	}
	j.outputs[k] = v
}

// flushOutputs writes the outputs to GITHUB_OUTPUT, in a fixed order.
func (j *job) flushOutputs() {
	if j.a.Getenv("GITHUB_OUTPUT") == "" {
		j.log.Debug("GITHUB_OUTPUT is not set: outputs not written")
		return
	}
	for _, k := range OutputNames {
		if v, ok := j.outputs[k]; ok {
			j.a.SetOutput(k, v)
		}
	}
}

// summary appends markdown to the job summary.
func (j *job) summary(md string) {
	if j.a.Getenv("GITHUB_STEP_SUMMARY") == "" {
		return
	}
	j.a.AddStepSummary(md)
}

// measure measures as `speedmatrix run` does with cfg and writes cfg.Output.
func (j *job) measure(ctx context.Context, cfg config.Config) error {
	return measure.Run(ctx, measure.Settings{Config: cfg}, j.d.Measure)
}
