package action

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/sethvargo/go-githubactions"

	"github.com/speedmatrix/speedmatrix/compare"
	"github.com/speedmatrix/speedmatrix/config"
	"github.com/speedmatrix/speedmatrix/ghbot"
	"github.com/speedmatrix/speedmatrix/measure"
	"github.com/speedmatrix/speedmatrix/results"
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

var queueRefRE = regexp.MustCompile(`/pr-([0-9]+)-([0-9a-f]{40})$`)

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

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}
