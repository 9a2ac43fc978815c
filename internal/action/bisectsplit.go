package action

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/sethvargo/go-githubactions"

	"github.com/speedmatrix/speedmatrix/bisect"
	"github.com/speedmatrix/speedmatrix/config"
	"github.com/speedmatrix/speedmatrix/ghbot"
	"github.com/speedmatrix/speedmatrix/internal/textout"
	"github.com/speedmatrix/speedmatrix/results"
	"github.com/speedmatrix/speedmatrix/store"
)

// The split workflow's bisection: one round per workflow run, the decisions replayed between
// them (bisect.Next), so that no job holds the GPU runner and the token at once.
//
//   - It starts on a maintainer's /bench bisect on the change-point issue (the decide job) or,
//     with bisect.auto, when a push's report opens or updates the change-point issue with a
//     regression (the report job). Each range (the last good and first bad measured commits)
//     gets a comment of the bot on the issue whose hidden line <!-- speedmatrix:bisect-state
//     {json} --> is the bisection's record (bisectRecord): the range, the cells, the commit
//     whose stored results every step is compared with, the range's whole change, the budget
//     and every round measured so far. The comment shows the progress, then the result.
//   - decide, given the record (the comment's id: the workflow_dispatch input bisect, or the
//     comment /bench bisect just made), replays the recorded rounds and outputs the next round:
//     bisect (ID/ROUND) and bisect-matrix, one entry per commit to measure (at most
//     bisect.runners − 1), the GPU jobs' strategy.matrix.
//   - each GPU job checks out its entry's commit and measures the entry's cells (mode measure:
//     no token, no API), its artifact named by the entry's index.
//   - report (bisect: ID/ROUND, bisect-artifacts: the glob of the round's artifact
//     directories) reads the artifacts as untrusted data, stores each commit's results as a
//     bisection step (store.KindBisect), decides each commit against the base's stored results
//     and their history (a rerun pooled with the commit's earlier runs of the same search),
//     records the round, and either dispatches the next round (a workflow_dispatch of this
//     workflow on the default branch with the input bisect = ID) or writes the result in the
//     comment and comments on each culprit's pull request. A round whose GPU jobs were
//     cancelled stops the bisection; a failed dispatch leaves it resumable by hand.
//
// The record is read only from a comment of the bot's own login that starts with the bisect
// marker, and it names no commit to measure: the commits are good..bad along bad's first
// parents, read from GitHub's commit graph, and bad must be a first-parent ancestor of the
// default branch within bisectWalk commits. Whatever a record says, only the default branch's
// own commits reach the GPU runner.

// bisectStatePrefix starts the hidden line of a bisection's record in its comment.
const bisectStatePrefix = "<!-- speedmatrix:bisect-state "

// bisectRangeMark is the hidden line every bisection comment on the change-point issue holds
// (both modes): a push does not bisect a range again that one of them bisected.
func bisectRangeMark(good, bad string) string {
	return "<!-- speedmatrix:bisect-range " + good + ".." + bad + " -->"
}

// VerdictBisecting is the verdict output of a decide job that planned a bisection round.
const VerdictBisecting = "bisecting"

// maxRecordReason caps a step's reason in a record (the comment's size stays bounded).
const maxRecordReason = 400

// bisectInput is the bisect input: the record's comment id, and in mode report the round the
// decide job planned.
type bisectInput struct {
	ID    int64
	Round int
}

func (b bisectInput) String() string {
	if b.Round == 0 {
		return strconv.FormatInt(b.ID, 10)
	}
	return fmt.Sprintf("%d/%d", b.ID, b.Round)
}

var bisectInputRE = regexp.MustCompile(`^([1-9][0-9]{0,17})(?:/([1-9][0-9]{0,3}))?$`)

// readBisectInputs reads bisect and bisect-artifacts into in.
func readBisectInputs(a *githubactions.Action, in *Inputs) error {
	in.BisectArtifacts = a.GetInput("bisect-artifacts")
	if strings.ContainsAny(in.BisectArtifacts, "\r\n\x00") {
		return errors.New("input bisect-artifacts: a path with a line break or NUL")
	}
	v := strings.TrimSpace(a.GetInput("bisect"))
	if v == "" {
		if in.BisectArtifacts != "" {
			return errors.New("input bisect-artifacts needs the bisect input (the decide job's bisect output)")
		}
		return nil
	}
	m := bisectInputRE.FindStringSubmatch(v)
	if m == nil {
		return fmt.Errorf("input bisect: %q is not a bisection (its comment id, or ID/ROUND: the decide job's bisect output)", v)
	}
	in.Bisect.ID, _ = strconv.ParseInt(m[1], 10, 64)
	if m[2] != "" {
		in.Bisect.Round, _ = strconv.Atoi(m[2])
	}
	switch {
	case in.Mode == ModeDecide && in.Bisect.Round != 0:
		return fmt.Errorf("input bisect: %q: in mode decide it is the bisection's comment id (the workflow_dispatch input bisect), not ID/ROUND", v)
	case in.Mode == ModeReport && in.Bisect.Round == 0:
		return fmt.Errorf("input bisect: %q: in mode report it is the decide job's bisect output, ID/ROUND", v)
	case in.Mode != ModeDecide && in.Mode != ModeReport:
		return fmt.Errorf("input bisect is for modes decide and report, not %s", in.Mode)
	case in.BisectArtifacts != "" && in.Mode != ModeReport:
		return fmt.Errorf("input bisect-artifacts is for mode report, not %s", in.Mode)
	}
	return nil
}

// bisectRecord is a bisection the split workflow runs a round per workflow run, as its comment
// keeps it. Only values this package made are in it (commit ids, canonical cell ids, numbers,
// verdicts and the comparison's reasons), encoded by encoding/json, which escapes < and >.
type bisectRecord struct {
	Issue  int    `json:"issue"`
	Config string `json:"config"`
	Good   string `json:"good"`
	Bad    string `json:"bad"`
	// Base is the commit whose stored results every step is compared with: Good, or the newest
	// measured commit before it.
	Base    string         `json:"base"`
	Cells   []string       `json:"cells"`
	Runners int            `json:"runners"`
	Steps   int            `json:"steps"`
	Budget  time.Duration  `json:"budget_ns,omitempty"`
	Total   *bisect.Change `json:"total,omitempty"`
	Rounds  []recordRound  `json:"rounds"`
	// Next is the record of the change point's next range, started when this one ends.
	Next int64 `json:"next,omitempty"`
	// Ended says why the bisection ended ("done", or why it stopped); "" while it goes on.
	Ended string `json:"ended,omitempty"`
}

// recordRound is one measured round: the search it belongs to and each commit's measurement as
// the step made it (before bisect reads it against the total or a previous culprit).
type recordRound struct {
	Search int          `json:"search"`
	Steps  []recordStep `json:"steps"`
}

// recordStep is one commit's measurement and the run id of its stored results (store.KindBisect;
// "" when nothing was stored), which a rerun of the commit pools with.
type recordStep struct {
	bisect.Measurement
	Run string `json:"run,omitempty"`
}

var (
	configIDRE = regexp.MustCompile(`^[0-9a-f]{8,64}$`)
	runIDRE    = regexp.MustCompile(`^[A-Za-z0-9._-]{1,100}$`)
)

// line is the record's hidden line.
func (r bisectRecord) line() string {
	b, _ := json.Marshal(r)
	return bisectStatePrefix + string(b) + " -->"
}

// parseBisectRecord reads the record line of a comment body; ok is false when there is none or
// it is not one this package could have written.
func parseBisectRecord(body string) (bisectRecord, bool) {
	_, rest, ok := strings.Cut(body, bisectStatePrefix)
	if !ok {
		return bisectRecord{}, false
	}
	js, _, ok := strings.Cut(rest, " -->")
	if !ok {
		return bisectRecord{}, false
	}
	dec := json.NewDecoder(strings.NewReader(js))
	dec.DisallowUnknownFields()
	var r bisectRecord
	if err := dec.Decode(&r); err != nil || dec.More() || !r.valid() {
		return bisectRecord{}, false
	}
	return r, true
}

// valid checks that every value is one this package makes.
func (r bisectRecord) valid() bool {
	if r.Issue <= 0 || !configIDRE.MatchString(r.Config) || !ghbot.ValidSHA(r.Good) || !ghbot.ValidSHA(r.Bad) || !ghbot.ValidSHA(r.Base) ||
		r.Good == r.Bad || r.Runners < 2 || r.Runners > config.MaxBisectRunners || r.Steps < 1 || r.Budget < 0 || len(r.Cells) == 0 ||
		r.Next < 0 || utf8.RuneCountInString(r.Ended) > maxRecordReason {
		return false
	}
	for _, c := range r.Cells {
		id, err := results.ParseCellID(c)
		if err != nil || id.String() != c {
			return false
		}
	}
	for _, rd := range r.Rounds {
		if rd.Search < 0 || len(rd.Steps) == 0 || len(rd.Steps) > r.Runners-1 {
			return false
		}
		for _, s := range rd.Steps {
			switch s.Verdict {
			case bisect.Bad, bisect.Good, bisect.Undecided, bisect.Skip:
			default:
				return false
			}
			if !ghbot.ValidSHA(s.Commit) || s.Attempt < 1 || s.GPUTime < 0 || (s.Run != "" && !runIDRE.MatchString(s.Run)) ||
				utf8.RuneCountInString(s.Reason) > maxRecordReason || len(s.Cells) > 0 {
				return false
			}
		}
	}
	return true
}

// config is the bisection over commits, good..bad.
func (r bisectRecord) config(commits []string) bisect.Config {
	return bisect.Config{Good: r.Good, Base: r.Base, Commits: commits, Cells: r.Cells, Runners: r.Runners,
		Budget: bisect.Budget{Steps: r.Steps, GPUTime: r.Budget}, Total: r.Total}
}

// recorded is the record's rounds as bisect.Next replays them.
func (r bisectRecord) recorded() []bisect.Recorded {
	out := make([]bisect.Recorded, len(r.Rounds))
	for i, rd := range r.Rounds {
		for _, s := range rd.Steps {
			out[i].Commits = append(out[i].Commits, s.Measurement)
		}
	}
	return out
}

// loadedRecord is a record with its comment's id and the range's commits.
type loadedRecord struct {
	id      int64
	rec     bisectRecord
	commits []string // good..bad along bad's first parents, oldest first
}

// next replays the record: the next round (nil when the bisection has ended) and the result so
// far (the final one, with its statement, once it has ended).
func (lr loadedRecord) next(ctx context.Context) (*bisect.Request, *bisect.Result, error) {
	return bisect.Next(ctx, lr.rec.config(lr.commits), lr.rec.recorded())
}

// loadRecord reads the record of comment id; why says why there is none to run.
func (j *job) loadRecord(ctx context.Context, c *ghbot.Client, rs resultStore, id int64) (loadedRecord, string, error) {
	cm, ok, err := c.CommentByID(ctx, j.repo, id)
	if err != nil {
		return loadedRecord{}, "", err
	}
	if !ok || !strings.EqualFold(cm.Author, c.Identity().Login) || !ghbot.IsOurs(cm.Body, bisectMarker) {
		return loadedRecord{}, fmt.Sprintf("comment %d is not a bisection of this bot's", id), nil
	}
	rec, ok := parseBisectRecord(cm.Body)
	if !ok {
		return loadedRecord{}, fmt.Sprintf("comment %d holds no bisection record this bot could have written", id), nil
	}
	branch := j.repo.DefaultBranch
	if branch == "" {
		branch = "HEAD"
	}
	chain, err := rs.commits.Ancestors(ctx, branch, bisectWalk)
	if err != nil {
		return loadedRecord{}, "", fmt.Errorf("the default branch's commits: %w", err)
	}
	if !slices.Contains(chain, rec.Bad) {
		return loadedRecord{}, fmt.Sprintf("the bisection's bad commit %s is not among the default branch's last %d first-parent commits: only the default branch's own commits are measured", ghbot.ShortSHA(rec.Bad), bisectWalk), nil
	}
	commits, err := firstParentsBetween(ctx, rs.commits, j.mainBranch(), rec.Good, rec.Bad)
	if err != nil {
		return loadedRecord{}, "", err
	}
	if len(commits) < 2 {
		return loadedRecord{}, fmt.Sprintf("the range %s..%s holds %d commit: nothing to bisect", ghbot.ShortSHA(rec.Good), ghbot.ShortSHA(rec.Bad), len(commits)), nil
	}
	return loadedRecord{id: id, rec: rec, commits: commits}, "", nil
}

// recordComment is a record's comment: the marker, the record, the range mark, then what was
// found (head) and the rounds so far.
func (j *job) recordComment(lr loadedRecord, res *bisect.Result, head string) string {
	return bisectMarker + "\n" + lr.rec.line() + "\n" + bisectRangeMark(lr.rec.Good, lr.rec.Bad) + "\n" + bisectBody(res, lr.rec.Base, j.runURL, head)
}

// editRecord writes a record's comment.
func (j *job) editRecord(ctx context.Context, c *ghbot.Client, lr loadedRecord, res *bisect.Result, head string) error {
	return c.EditComment(ctx, j.repo, lr.id, j.recordComment(lr, res, head), j.runURL)
}

// roundText says which commits a round measures.
func roundText(req *bisect.Request, runners int) string {
	var cs []string
	for _, c := range req.Commits {
		s := code(ghbot.ShortSHA(c))
		if req.Attempt[c] > 1 {
			s += " (again: undecided)"
		}
		cs = append(cs, s)
	}
	return fmt.Sprintf("%s (%d %s at once, bisect.runners %d)", strings.Join(cs, ", "), len(cs), textout.Pick(len(cs), "GPU job", "GPU jobs"), runners)
}

// bisectJob is one entry of the decide job's bisect-matrix output: one commit of the round,
// measured by one GPU job.
type bisectJob struct {
	Commit string `json:"commit"`
	Short  string `json:"short"`
	// Index names the job's artifact (speedmatrix-bisect-INDEX: one round per workflow run).
	Index   int    `json:"index"`
	Cells   string `json:"cells"`
	Attempt int    `json:"attempt"`
}

// planRound is the decide mode of a bisection round (a workflow_dispatch with the bisect input,
// or a /bench bisect that just started one): it replays record id and outputs the next round
// (bisect, bisect-matrix), or, when every round is recorded, bisect alone for the report job to
// end it.
func (j *job) planRound(ctx context.Context, c *ghbot.Client, rs resultStore, id int64) error {
	j.setOutput("run", "false")
	lr, why, err := j.loadRecord(ctx, c, rs, id)
	if err != nil {
		return err
	}
	if why != "" {
		j.setOutput("verdict", VerdictRefused)
		j.summary("speedmatrix: no bisection round was run: " + why + ".\n")
		j.log.Warn("bisect: no round", "why", why)
		return nil
	}
	if lr.rec.Ended != "" {
		j.setOutput("verdict", VerdictSkipped)
		j.summary("speedmatrix: the bisection has ended (" + lr.rec.Ended + "); nothing to measure.\n")
		return nil
	}
	next, partial, err := lr.next(ctx)
	if err != nil {
		return err
	}
	round := len(lr.rec.Rounds) + 1
	j.setOutput("verdict", VerdictBisecting)
	j.setOutput("bisect", bisectInput{ID: id, Round: round}.String())
	if next == nil {
		j.summary("speedmatrix: every round of the bisection is measured; the report job writes its result.\n")
		return nil
	}
	var jobs []bisectJob
	for i, sha := range next.Commits {
		jobs = append(jobs, bisectJob{Commit: sha, Short: ghbot.ShortSHA(sha), Index: i + 1, Cells: strings.Join(lr.rec.Cells, ","), Attempt: next.Attempt[sha]})
	}
	b, err := json.Marshal(struct {
		Include []bisectJob `json:"include"`
	}{jobs})
	if err != nil {
		return err
	}
	j.setOutput("bisect-matrix", string(b))
	text := fmt.Sprintf("in progress: round %d measures %s.", round, roundText(next, lr.rec.Runners))
	if err := j.editRecord(ctx, c, lr, partial, text); err != nil {
		j.log.Warn("bisect: the progress comment", "err", err)
	}
	j.log.Info("bisect: round planned", "bisection", id, "round", round, "commits", len(jobs))
	j.summary(fmt.Sprintf("speedmatrix: bisection %d, %s\n", id, text))
	return nil
}

// decideBisectRound is the decide mode of a workflow_dispatch with the bisect input; done is
// false for every other run.
func (j *job) decideBisectRound(ctx context.Context, c *ghbot.Client) (done bool, err error) {
	if j.in.Bisect.ID == 0 {
		return false, nil
	}
	ev := j.ev
	if ev.Dispatch == nil {
		return true, fmt.Errorf("input bisect: a bisection round is a workflow_dispatch run (its input bisect); this run is a %s event: pass ${{ inputs.bisect }}, which is empty for every other event", ev.Name)
	}
	if j.repo.DefaultBranch == "" || ev.Dispatch.Ref != "refs/heads/"+j.repo.DefaultBranch {
		j.setOutput("run", "false")
		j.setOutput("verdict", VerdictRefused)
		j.summary("speedmatrix: a bisection round runs on the default branch's workflow only; this run is on " + code(ev.Dispatch.Ref) + ".\n")
		return true, nil
	}
	rs := j.openStore(c)
	if rs.s == nil || rs.commits == nil {
		return true, errors.New("input bisect: a bisection round needs the results store and the repository's commits")
	}
	return true, j.planRound(ctx, c, rs, j.in.Bisect.ID)
}

// startBisections makes a record on the change-point issue for each range with more than one
// commit to bisect, each linked to the next, and returns their comment ids in order; why lists
// the ranges not started and why.
func (j *job) startBisections(ctx context.Context, c *ghbot.Client, rs resultStore, issue int, id string, ranges []bisectRange) (ids []int64, why []string) {
	var prev *loadedRecord
	var prevRes *bisect.Result
	var prevHead string
	for _, r := range ranges {
		where := code(ghbot.ShortSHA(r.good)) + ".." + code(ghbot.ShortSHA(r.bad))
		commits, err := firstParentsBetween(ctx, rs.commits, j.mainBranch(), r.good, r.bad)
		if err != nil {
			why = append(why, where+": "+code(firstLine(err.Error())))
			continue
		}
		if len(commits) < 2 {
			why = append(why, where+": the first bad commit follows the last good one, nothing to bisect")
			continue
		}
		s, err := j.stepsAgainst(ctx, rs, j.cfg, r.cells, r.good, id)
		if err != nil {
			why = append(why, where+": "+code(firstLine(err.Error())))
			continue
		}
		lr := loadedRecord{commits: commits, rec: bisectRecord{Issue: issue, Config: id, Good: r.good, Bad: r.bad, Base: s.good, Cells: r.cells,
			Runners: j.cfg.Bisect.Runners, Steps: j.cfg.Bisect.Steps, Budget: time.Duration(j.cfg.Bisect.Budget), Rounds: []recordRound{}}}
		if lr.rec.Runners == 2 {
			// One job a round: the bad commit's stored results give the range's change, which
			// saves a round. With more, the first round measures the bad commit beside the
			// others, so that the change the culprit is set against (a second regression) is
			// measured as the steps are, not by a push's job at another time.
			lr.rec.Total = s.total(ctx, r.bad, id)
		}
		next, partial, err := lr.next(ctx)
		if err != nil || next == nil {
			why = append(why, where+": the bisection cannot start")
			continue
		}
		head := fmt.Sprintf("starting: %d commits, the first round measures %s.", len(commits), roundText(next, lr.rec.Runners))
		cid, err := c.Reply(ctx, j.repo, issue, j.recordComment(lr, partial, head))
		if err != nil {
			why = append(why, where+": "+code(firstLine(err.Error())))
			continue
		}
		lr.id = cid
		if prev != nil {
			prev.rec.Next = cid
			if err := j.editRecord(ctx, c, *prev, prevRes, prevHead); err != nil {
				j.log.Warn("bisect: linking the next range", "err", err)
			}
		}
		ids = append(ids, cid)
		prev, prevRes, prevHead = &lr, partial, head
		j.log.Info("bisect: started", "bisection", cid, "good", ghbot.ShortSHA(r.good), "bad", ghbot.ShortSHA(r.bad), "commits", len(commits), "runners", lr.rec.Runners)
	}
	return ids, why
}

// autoBisectSplit starts, when bisect.auto is set, the bisection of each range of the change
// point st not bisected before on its issue, and dispatches its first round (report mode: the
// push's job measures nothing more). Failures are logged: the push's results are stored.
func (j *job) autoBisectSplit(ctx context.Context, c *ghbot.Client, rs resultStore, head *results.File, st cpState) {
	if !j.cfg.Bisect.Auto || c == nil || rs.s == nil || rs.commits == nil || len(st.Series) == 0 {
		return
	}
	id := store.ConfigID(head)
	issue, _, open, err := c.FindOpenIssue(ctx, j.repo, changePointLabel, changePointConfigMarker(id))
	if err != nil || !open {
		j.log.Warn("bisect: no open change-point issue to bisect from", "err", err)
		return
	}
	ranges := j.notBisected(ctx, c, issue, rangesOf(st))
	if len(ranges) == 0 {
		return
	}
	ids, why := j.startBisections(ctx, c, rs, issue, id, ranges)
	for _, w := range why {
		j.log.Warn("bisect: a range not bisected: " + w)
	}
	if len(ids) == 0 {
		return
	}
	if err := j.dispatchRound(ctx, c, ids[0]); err != nil {
		j.log.Warn("bisect: starting the first round", "err", err)
		j.noteDispatchFailed(ctx, c, rs, ids[0], err)
	}
}

// notBisected drops the ranges that a bisection comment on issue already covers (either mode),
// so that the pushes after a change point do not bisect it again.
func (j *job) notBisected(ctx context.Context, c *ghbot.Client, issue int, ranges []bisectRange) []bisectRange {
	cs, err := c.BotComments(ctx, j.repo, issue, "<!-- speedmatrix:bisect-range ")
	if err != nil {
		j.log.Warn("bisect: reading the issue's bisections", "err", err)
		return ranges
	}
	var out []bisectRange
	for _, r := range ranges {
		done := slices.ContainsFunc(cs, func(f ghbot.FoundComment) bool { return strings.Contains(f.Body, bisectRangeMark(r.good, r.bad)) })
		if done {
			j.log.Info("bisect: the range is bisected already", "good", ghbot.ShortSHA(r.good), "bad", ghbot.ShortSHA(r.bad))
			continue
		}
		out = append(out, r)
	}
	return out
}

// startFromCommand is /bench bisect in decide mode: a record per range on the issue, and the
// first one's first round planned in this run (the later ranges follow when it ends).
func (j *job) startFromCommand(ctx context.Context, c *ghbot.Client, rs resultStore, issue int, id string, ranges []bisectRange) (string, error) {
	ids, why := j.startBisections(ctx, c, rs, issue, id, ranges)
	if len(ids) == 0 {
		return "nothing was bisected: " + strings.Join(why, "; "), nil
	}
	for _, w := range why {
		j.log.Warn("bisect: a range not bisected: " + w)
	}
	return "", j.planRound(ctx, c, rs, ids[0])
}

// workflowFile returns this run's workflow file name (GITHUB_WORKFLOW_REF,
// owner/repo/.github/workflows/NAME@ref), which the next round dispatches.
func (j *job) workflowFile() (string, error) {
	ref := j.a.Getenv("GITHUB_WORKFLOW_REF")
	path, _, _ := strings.Cut(ref, "@")
	_, file, ok := strings.Cut(path, "/.github/workflows/")
	if !ok || file == "" || strings.ContainsAny(file, "/\\") {
		return "", fmt.Errorf("GITHUB_WORKFLOW_REF %q names no workflow file of .github/workflows: the next round is dispatched to this workflow", ref)
	}
	return file, nil
}

// dispatchRound starts a round of bisection id: a workflow_dispatch of this workflow on the
// default branch with the input bisect.
func (j *job) dispatchRound(ctx context.Context, c *ghbot.Client, id int64) error {
	wf, err := j.workflowFile()
	if err != nil {
		return err
	}
	if j.repo.DefaultBranch == "" {
		return errors.New("the event names no default branch to dispatch the next round on")
	}
	if err := c.Dispatch(ctx, j.repo, wf, j.repo.DefaultBranch, map[string]string{"bisect": strconv.FormatInt(id, 10)}); err != nil {
		return err
	}
	j.log.Info("bisect: the next round dispatched", "bisection", id, "workflow", wf, "ref", j.repo.DefaultBranch)
	return nil
}

// noteDispatchFailed says in record id's comment that its next round could not be started and
// how a maintainer continues it.
func (j *job) noteDispatchFailed(ctx context.Context, c *ghbot.Client, rs resultStore, id int64, cause error) {
	lr, why, err := j.loadRecord(ctx, c, rs, id)
	if err != nil || why != "" {
		return
	}
	_, partial, err := lr.next(ctx)
	if err != nil {
		return
	}
	head := fmt.Sprintf("paused: the next round could not be started (%s). Continue it by running this workflow by hand on %s with the input `bisect` = `%d`, after giving the job that reports `permissions: actions: write`.",
		code(firstLine(cause.Error())), code(j.repo.DefaultBranch), id)
	if err := j.editRecord(ctx, c, lr, partial, head); err != nil {
		j.log.Warn("bisect: the progress comment", "err", err)
	}
}

// bisectArtifact is one GPU job's artifact directory of a round.
type bisectArtifact struct {
	name string
	m    meta
	f    *results.File // nil when it holds no valid results
	err  error         // why f is nil
	dup  bool          // another artifact names the same commit
}

// roundArtifacts reads the round's artifact directories (the bisect-artifacts glob) as
// untrusted data, by the commit their meta.json names; artifacts of commits the round did not
// ask for are ignored.
func (j *job) roundArtifacts(want []string) (map[string]*bisectArtifact, error) {
	out := map[string]*bisectArtifact{}
	if j.in.BisectArtifacts == "" {
		return out, nil
	}
	dirs, err := filepath.Glob(j.in.BisectArtifacts)
	if err != nil {
		return nil, fmt.Errorf("input bisect-artifacts: %w", err)
	}
	if len(dirs) > config.MaxBisectRunners {
		return nil, fmt.Errorf("input bisect-artifacts matches %d paths, more than a round's %d jobs", len(dirs), config.MaxBisectRunners-1)
	}
	for _, d := range dirs {
		if st, err := os.Stat(d); err != nil || !st.IsDir() {
			continue
		}
		name := filepath.Base(d)
		m, err := readMeta(d)
		if err != nil {
			j.log.Warn("bisect: an artifact without a valid meta.json", "artifact", name, "err", err)
			continue
		}
		if !slices.Contains(want, m.HeadSHA) {
			j.log.Warn("bisect: an artifact of a commit this round did not measure; ignored", "artifact", name, "sha", ghbot.ShortSHA(m.HeadSHA))
			continue
		}
		if a, ok := out[m.HeadSHA]; ok {
			a.dup = true
			continue
		}
		a := &bisectArtifact{name: name, m: m}
		a.f, a.err = readArtifactResults(filepath.Join(d, artifactResults))
		if a.f != nil && a.f.Engine.Commit != "" && a.f.Engine.Commit != m.HeadSHA {
			a.f, a.err = nil, fmt.Errorf("its results are of commit %s", ghbot.ShortSHA(a.f.Engine.Commit))
		}
		out[m.HeadSHA] = a
	}
	return out, nil
}

// stepGPUTime is what a step's results say its measurement took: the job's GPU time, else the
// run's wall time.
func stepGPUTime(f *results.File) time.Duration {
	var d time.Duration
	switch {
	case f.Run.GPUTime != nil && f.Run.GPUTime.TotalSeconds > 0:
		d = time.Duration(f.Run.GPUTime.TotalSeconds * float64(time.Second))
	case !f.Run.Start.IsZero() && f.Run.End.After(f.Run.Start):
		d = f.Run.End.Sub(f.Run.Start)
	}
	return min(max(d, 0), 24*time.Hour)
}

// capReason keeps a reason within maxRecordReason characters.
func capReason(s string) string {
	if utf8.RuneCountInString(s) <= maxRecordReason {
		return s
	}
	r := []rune(s)
	return string(r[:maxRecordReason-1]) + "…"
}

// stepOf decides commit sha of a round from its artifact a (nil when none): a skip when it left
// no results, else its results stored as a bisection step and compared, pooled with its
// earlier runs of the same search.
func (j *job) stepOf(ctx context.Context, rs resultStore, s *botSteps, lr loadedRecord, req *bisect.Request, round int, sha string, a *bisectArtifact) recordStep {
	skip := func(why string) recordStep {
		j.log.Warn("bisect: skipping a commit", "sha", ghbot.ShortSHA(sha), "why", why)
		return recordStep{Measurement: bisect.Measurement{Commit: sha, Verdict: bisect.Skip, Reason: capReason(why), Attempt: req.Attempt[sha]}}
	}
	switch {
	case a == nil:
		return skip(fmt.Sprintf("its GPU job left no results (the round's jobs: %s): it did not build, serve or measure, or its configuration did not load", orDash(j.in.MeasureResult)))
	case a.dup:
		return skip("two artifacts of the round name it; neither is read")
	case a.f == nil && a.m.Error != "":
		return skip("it did not build, serve or measure: " + ghbot.CodeSpan(firstLine(a.m.Error), 200))
	case a.f == nil:
		return skip("its GPU job left no valid results: " + ghbot.CodeSpan(firstLine(a.err.Error()), 200))
	case a.f.Run.Partial:
		st := skip("its server stopped before the cells were measured")
		st.GPUTime = stepGPUTime(a.f)
		return st
	}
	run := fmt.Sprintf("bisect-%d-%d", lr.id, round)
	if !j.putEntry(ctx, rs, store.Entry{Commit: sha, Kind: store.KindBisect, RunID: run}, a.f) {
		run = ""
	}
	pooled := j.earlierRuns(ctx, rs, lr.rec, req.Search, sha)
	pooled = append(pooled, a.f)
	m, err := s.compare(pooled, len(pooled))
	if err != nil {
		return skip("its results could not be compared with the good commit's: " + ghbot.CodeSpan(firstLine(err.Error()), 200))
	}
	m.Commit, m.GPUTime, m.Cells, m.Attempt = sha, stepGPUTime(a.f), nil, req.Attempt[sha]
	m.Reason = capReason(m.Reason)
	j.log.Info("bisect step", "sha", ghbot.ShortSHA(sha), "verdict", m.Verdict, "reason", m.Reason)
	return recordStep{Measurement: m, Run: run}
}

// earlierRuns returns the stored results of commit sha's earlier rounds in search (a rerun pools
// them, as a second look does).
func (j *job) earlierRuns(ctx context.Context, rs resultStore, rec bisectRecord, search int, sha string) []*results.File {
	var runs []string
	for _, rd := range rec.Rounds {
		if rd.Search != search {
			continue
		}
		for _, s := range rd.Steps {
			if s.Commit == sha && s.Run != "" {
				runs = append(runs, s.Run)
			}
		}
	}
	if len(runs) == 0 {
		return nil
	}
	entries, err := rs.s.List(ctx, store.Filter{Kind: store.KindBisect, Commit: sha})
	if err != nil {
		j.log.Warn("bisect: the commit's earlier runs", "sha", ghbot.ShortSHA(sha), "err", err)
		return nil
	}
	var out []*results.File
	for _, run := range runs {
		for _, e := range entries {
			if e.RunID != run {
				continue
			}
			if f, err := rs.s.Open(ctx, e); err == nil {
				out = append(out, f)
			}
			break
		}
	}
	return out
}

// stepsAt returns the steps of a record: compared with its base's stored results and their
// history.
func (j *job) stepsAt(ctx context.Context, rs resultStore, rec bisectRecord) (*botSteps, error) {
	f, _, err := rs.s.Get(ctx, rec.Base, rec.Config)
	if err != nil {
		return nil, fmt.Errorf("the stored results of %s, which every step is compared with: %w", ghbot.ShortSHA(rec.Base), err)
	}
	return &botSteps{j: j, rs: rs, cfg: j.cfg, cells: rec.Cells, good: rec.Base, goodFile: f,
		hist: j.history(ctx, rs, f, rec.Base), pooled: map[string][]*results.File{}}, nil
}

// reportBisect is the report mode of a bisection round (input bisect ID/ROUND): it records the
// round the decide job planned from its GPU jobs' artifacts, then dispatches the next round or
// ends the bisection.
func (j *job) reportBisect(ctx context.Context) error {
	defer j.flushOutputs()
	c, err := j.client(ctx)
	if err != nil {
		return err
	}
	rs := j.openStore(c)
	if rs.s == nil || rs.commits == nil {
		return errors.New("mode report: a bisection round needs the results store and the repository's commits")
	}
	id, round := j.in.Bisect.ID, j.in.Bisect.Round
	lr, why, err := j.loadRecord(ctx, c, rs, id)
	if err != nil {
		return err
	}
	if why != "" {
		return fmt.Errorf("mode report: bisection round %s: %s", j.in.Bisect, why)
	}
	if lr.rec.Ended != "" {
		j.log.Info("bisect: the bisection has ended; the round is not recorded", "bisection", id, "ended", lr.rec.Ended)
		return nil
	}
	if have := len(lr.rec.Rounds); have+1 != round {
		j.log.Warn("bisect: not the bisection's next round (another run recorded it); nothing recorded", "bisection", id, "round", round, "recorded", have)
		return nil
	}
	next, partial, err := lr.next(ctx)
	if err != nil {
		return err
	}
	if next == nil {
		return j.endRecord(ctx, c, lr)
	}
	arts, err := j.roundArtifacts(next.Commits)
	if err != nil {
		return err
	}
	if len(arts) == 0 && j.in.MeasureResult == "cancelled" {
		lr.rec.Ended = fmt.Sprintf("stopped: round %d's GPU jobs were cancelled", round)
		head := lr.rec.Ended + "; nothing of it was recorded. Post `/bench bisect` on this issue to bisect again."
		j.setOutput("verdict", VerdictCancelled)
		return j.editRecord(ctx, c, lr, partial, head)
	}
	s, err := j.stepsAt(ctx, rs, lr.rec)
	if err != nil {
		return err
	}
	rd := recordRound{Search: next.Search}
	for _, sha := range next.Commits {
		rd.Steps = append(rd.Steps, j.stepOf(ctx, rs, s, lr, next, round, sha, arts[sha]))
	}
	lr.rec.Rounds = append(lr.rec.Rounds, rd)
	next, partial, err = lr.next(ctx)
	if err != nil {
		return err
	}
	if next == nil {
		return j.endRecord(ctx, c, lr)
	}
	head := fmt.Sprintf("in progress: %d %s measured; round %d measures %s.", len(lr.rec.Rounds), textout.Pick(len(lr.rec.Rounds), "round", "rounds"), round+1, roundText(next, lr.rec.Runners))
	if err := j.editRecord(ctx, c, lr, partial, head); err != nil {
		return err
	}
	j.setOutput("verdict", VerdictBisecting)
	j.summary(fmt.Sprintf("speedmatrix: bisection %d, round %d recorded; %s\n", id, round, head))
	if err := j.dispatchRound(ctx, c, id); err != nil {
		j.noteDispatchFailed(ctx, c, rs, id, err)
		return fmt.Errorf("mode report: bisection %d: %w", id, err)
	}
	return nil
}

// endRecord writes a bisection's result in its comment, comments on each culprit's pull request,
// and starts the change point's next range.
func (j *job) endRecord(ctx context.Context, c *ghbot.Client, lr loadedRecord) error {
	_, res, err := lr.next(ctx)
	if err != nil {
		return err
	}
	lr.rec.Ended = "done"
	if err := j.editRecord(ctx, c, lr, res, res.Statement); err != nil {
		return err
	}
	j.log.Info("bisect: " + res.Statement)
	j.postCulprits(ctx, c, res, lr.rec.Issue)
	j.setOutput("verdict", VerdictBisected)
	j.summary("speedmatrix: the bisection ended: " + res.Statement + "\n")
	if lr.rec.Next != 0 {
		if err := j.dispatchRound(ctx, c, lr.rec.Next); err != nil {
			return fmt.Errorf("mode report: the change point's next range (bisection %d): %w", lr.rec.Next, err)
		}
	}
	return nil
}
