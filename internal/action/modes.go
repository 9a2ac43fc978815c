package action

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/speedmatrix/speedmatrix/compare"
	"github.com/speedmatrix/speedmatrix/ghbot"
	"github.com/speedmatrix/speedmatrix/measure"
	"github.com/speedmatrix/speedmatrix/results"
	"github.com/speedmatrix/speedmatrix/store"
)

// accept records /bench accept (or the Accept button) in the comment's state and turns the
// check success, when the last results at the pinned head block on a slowdown: a ❌ regression
// or a ❓ unproven one, recorded the same way. A refusal's reply says what to run instead.
func (j *job) accept(ctx context.Context, c *ghbot.Client, d ghbot.Decision) error {
	defer j.flushOutputs()
	reason := d.Reason
	if d.Command != nil && d.Command.Reason != "" {
		reason = d.Command.Reason
	}
	acc := Acceptance{By: d.By, At: j.now().UTC(), SHA: d.HeadSHA, Reason: reason}
	block := acceptanceLine(acc)
	refuse := func(why string) error {
		j.reply(ctx, c, d.PR, fmt.Sprintf("@%s `/bench accept` was not recorded: %s", d.By, why))
		j.setOutput("verdict", VerdictRefused)
		j.summary("speedmatrix: `/bench accept` was not recorded: " + why + "\n")
		return nil
	}
	// What is accepted is what the bot's check run on the head says (checkState): only the bot
	// writes it. The comment's state is read only to rewrite the comment.
	cr, okRun, err := c.FindCheck(ctx, j.repo, d.HeadSHA, j.checkName())
	if err != nil {
		return err
	}
	var cs checkState
	if okRun {
		cs, _ = parseCheckState(cr.Summary)
	}
	var found ghbot.FoundComment
	var st State
	okState := false
	if d.PR != 0 {
		var ok bool
		if found, ok, err = c.FindComment(ctx, j.repo, d.PR, j.checkName()); err != nil {
			return err
		}
		if ok {
			st, okState = parseState(found.Body)
		}
	}
	if why := acceptRefusal(d.HeadSHA, cr, okRun, cs, st, okState); why != "" {
		return refuse(why)
	}
	what := "regression"
	if cs.Verdict == string(results.VerdictUnproven) {
		what = "unproven slowdown"
	}
	title := fmt.Sprintf("Not blocked: %s accepted by %s at %s", what, d.By, ghbot.ShortSHA(d.HeadSHA))
	cs.Accepted = &acc
	if _, err := c.CompleteCheck(ctx, j.repo, d.HeadSHA, j.checkName(), ghbot.CheckUpdate{
		Conclusion: ghbot.ConclusionSuccess, DetailsURL: j.runURL,
		Output: ghbot.CheckOutput{Title: title, Summary: cs.line() + "\n" + block + "\n\nThe results are in the pull request's comment and the run's artifacts; a new push voids the acceptance."},
	}); err != nil {
		return err
	}
	if d.PR != 0 {
		st.Accepted = &acc
		st.Conclusion = string(ghbot.ConclusionSuccess)
		body := withoutState(strings.TrimPrefix(found.Body, ghbot.Marker(j.checkName())+"\n"))
		body = withAcceptance(body, title, block)
		j.upsertState(ctx, c, plan{PR: d.PR}, body, st)
	}
	j.setOutput("verdict", VerdictAccepted)
	j.setOutput("conclusion", string(ghbot.ConclusionSuccess))
	j.summary("### " + title + "\n\n" + block + "\n")
	return nil
}

// acceptable reports whether a verdict blocks on a slowdown an acceptance may lift: a
// regression (❌) or an unproven one (❓).
func acceptable(verdict string) bool {
	return verdict == string(results.VerdictRegression) || verdict == string(results.VerdictUnproven)
}

// acceptRefusal says why /bench accept at head cannot be recorded, and what to run instead; ""
// when it can: the bot's check run cr at head (okRun: one was found) holds a finished verdict an
// acceptance lifts (cs). st is the comment's state (okState: read), used only to name the
// commit the last results are for.
func acceptRefusal(head string, cr ghbot.CheckRun, okRun bool, cs checkState, st State, okState bool) string {
	measure := fmt.Sprintf("`/bench %s`", head)
	then := fmt.Sprintf(", then `/bench accept %s <reason>` if it blocks", head)
	switch {
	case okRun && cr.Status == "completed" && acceptable(cs.Verdict):
		return ""
	case !okRun && okState && st.Phase == phaseDone && st.HeadSHA != "" && st.HeadSHA != head:
		return fmt.Sprintf("the last results are for %s, but the head is now %s; an acceptance holds for one commit. Post %s to measure the head%s.",
			code(st.HeadSHA), code(head), measure, then)
	case !okRun:
		return fmt.Sprintf("there are no results at the head %s yet. Post %s to measure it%s.", code(head), measure, then)
	case cr.Status != "completed":
		return fmt.Sprintf("the head %s is being measured now (its check is %s); wait for its results, then post `/bench accept %s <reason>` if it blocks.",
			code(head), cr.Status, head)
	case cs.Verdict == string(results.VerdictIncomplete):
		return fmt.Sprintf("the results at %s are incomplete: the head lacks data it should hold, and missing data never passes, so there is no measured slowdown to accept. "+
			"Post `/bench rerun` to measure the missing cells again, or %s to measure the whole head%s.", code(head), measure, then)
	case cr.Conclusion == string(ghbot.ConclusionSuccess) || cr.Conclusion == string(ghbot.ConclusionNeutral):
		return fmt.Sprintf("nothing to accept: the check at %s already passes (%s: %s). No command is needed.", code(head), cr.Conclusion, code(cr.Title))
	case cs.Verdict == "" && cr.Conclusion == string(ghbot.ConclusionFailure):
		return fmt.Sprintf("nothing was compared at %s (the check says %s), so there is no measured slowdown to accept. Fix what the check names (a baseline is measured by a push to the default branch), then post %s%s.",
			code(head), code(cr.Title), measure, then)
	}
	return fmt.Sprintf("the last run at %s did not end in results an acceptance lifts (%s: %s). Post %s to measure it again%s.",
		code(head), orDash(cr.Conclusion), code(cr.Title), measure, then)
}

// acceptanceLine renders an acceptance; user text only inside code spans.
func acceptanceLine(a Acceptance) string {
	return fmt.Sprintf("> **Accepted** by %s on %s at %s: %s", code(a.By), a.At.UTC().Format("2006-01-02 15:04 UTC"), code(ghbot.ShortSHA(a.SHA)), code(a.Reason))
}

const (
	acceptOpen  = "<!-- speedmatrix:accepted -->"
	acceptClose = "<!-- /speedmatrix:accepted -->"
)

// withAcceptance rewrites a results comment as accepted: its heading says so and the
// acceptance block follows it (replacing an earlier one).
func withAcceptance(body, title, block string) string {
	if i := strings.Index(body, acceptOpen); i >= 0 {
		if k := strings.Index(body[i:], acceptClose); k >= 0 {
			body = body[:i] + strings.TrimLeft(body[i+k+len(acceptClose):], "\n")
		}
	}
	lines := strings.SplitN(body, "\n", 2)
	rest := ""
	if len(lines) == 2 {
		rest = lines[1]
	}
	if !strings.HasPrefix(lines[0], "### ") {
		rest, lines[0] = body, ""
	}
	return "### 🟢 " + title + "\n\n" + acceptOpen + "\n" + block + "\n" + acceptClose + "\n" + rest
}

// measureMode measures without a token: the job that runs pull-request code.
func (j *job) measureMode(ctx context.Context) error {
	defer j.flushOutputs()
	if j.in.HasCredentials {
		return errors.New("mode measure takes no token or App key: the job that runs pull-request code must hold none; remove token, app-id and private-key from this step and let the report job post")
	}
	p := plan{HeadSHA: j.in.SHA, BaseSHA: j.in.BaseSHA, PR: j.in.PR, Cells: j.in.Cells}
	if p.HeadSHA == "" {
		p.HeadSHA = j.eventSHA()
	}
	if p.HeadSHA == "" {
		return fmt.Errorf("mode measure: no commit to measure for a %s event; pass the decide job's sha output as the sha input", j.ev.Name)
	}
	ev := j.ev
	p.Kind = j.eventKind()
	switch {
	case ev.Push != nil:
		if !j.defaultPush() {
			return fmt.Errorf("mode measure: a push to %s is not to the default branch; baselines are measured there only", ev.Push.Ref)
		}
	case ev.MergeGroup != nil:
		if p.BaseSHA == "" && ghbot.ValidSHA(ev.MergeGroup.BaseSHA) {
			p.BaseSHA = ev.MergeGroup.BaseSHA
		}
	case ev.IsPullRequest() && ev.PullRequest != nil:
		if p.BaseSHA == "" && ghbot.ValidSHA(ev.PullRequest.BaseSHA) {
			p.BaseSHA = ev.PullRequest.BaseSHA
		}
	}
	if p.PR == 0 {
		p.PR = j.eventPR()
	}
	m := meta{HeadSHA: p.HeadSHA, BaseSHA: p.BaseSHA, PR: p.PR, Kind: string(p.Kind), Cells: p.Cells}
	if err := os.MkdirAll(j.in.ArtifactDir, 0o755); err != nil {
		return err
	}
	var out outcome
	err := error(nil)
	if p.Kind != ghbot.RunBaseline {
		// The measured commit's configuration is its author's: it may not loosen the sandbox.
		if err = checkUntrustedEngine(j.cfg, j.in.AllowUnsandboxed, j.a.Getenv); err != nil { // untrusted.go
			err = fmt.Errorf("mode measure: %w", err)
		}
	}
	if err == nil {
		out, err = j.measureOrShard(ctx, p) // shards.go
	}
	if err != nil {
		m.Error = err.Error()
		if werr := writeMeta(j.in.ArtifactDir, m); werr != nil {
			j.log.Error("writing the artifact's meta.json", "err", werr)
		}
		j.setOutput("verdict", VerdictCancelled)
		return err
	}
	m.NoBaseline = out.NoBaseline
	if err := writeMeta(j.in.ArtifactDir, m); err != nil {
		return err
	}
	conclusion, verdict := j.conclusion(out, nil)
	r := j.render(p, out, renderInput{Conclusion: conclusion})
	if err := results.WriteFileAtomic(filepath.Join(j.in.ArtifactDir, artifactComment), []byte(r.body)); err != nil {
		return err
	}
	j.summary(r.full)
	j.resultOutputs(verdict, conclusion, len(cellsWith(out.Comparison, results.VerdictRegression)), out)
	return nil
}

// eventKind returns the kind of run this workflow run's event makes (GitHub's payload, which
// the measure and the report job read alike): what the measure job records in meta.json and
// what the report job holds it to.
func (j *job) eventKind() ghbot.RunKind {
	ev := j.ev
	switch {
	case ev.Push != nil:
		return ghbot.RunBaseline
	case ev.MergeGroup != nil:
		return ghbot.RunMergeGroup
	case ev.Dispatch != nil:
		return ghbot.RunDispatch
	case ev.IsPullRequest() && ev.PullRequest != nil:
		return ghbot.RunPullRequest
	}
	return ghbot.RunCommand
}

// reportMode posts what a measure job left in the artifact directory, read as untrusted data:
// the commit, the pull request and its base come from the inputs (the decide job's outputs),
// never from the artifact; the baseline comes from the store, never from the artifact; every
// file is size-capped (maxArtifactBytes) before it is parsed.
func (j *job) reportMode(ctx context.Context) error {
	if j.in.Bisect.ID != 0 {
		return j.reportBisect(ctx) // a bisection round (bisectsplit.go)
	}
	defer j.flushOutputs()
	pinned := j.in.SHA
	if pinned == "" {
		// The artifact would otherwise name the commit the check and the comment are posted for.
		return errors.New("mode report: the sha input is required: set it to the decide job's sha output (sha: ${{ needs.decide.outputs.sha }}), the commit the measuring job was given")
	}
	c, err := j.client(ctx)
	if err != nil {
		return err
	}
	if done, err := j.mergeShards(ctx, c, pinned); done || err != nil { // shards.go
		return err
	}
	// The pull request and its base: the inputs, else what the event (GitHub's payload, not the
	// artifact) says.
	p := plan{HeadSHA: pinned, PR: j.in.PR, BaseSHA: j.in.BaseSHA}
	if p.PR == 0 {
		p.PR = j.eventPR()
	}
	if p.PR != 0 {
		p.Accepted = j.readAcceptance(ctx, c, p.HeadSHA)
	}
	m, err := readMeta(j.in.ArtifactDir)
	if errors.Is(err, errNoArtifact) {
		j.abort(ctx, c, p, &measureJobError{Result: j.in.MeasureResult})
		return nil
	}
	if err != nil {
		return fmt.Errorf("mode report: %w", err)
	}
	// What to compare is decided, not read: the kind from the event, the cells from the decide
	// job's cells output (the cells input). A meta.json that says otherwise is refused: a cell
	// nobody measured would make the comparison compare nothing, which must not pass.
	p.Kind, p.Cells = j.eventKind(), j.in.Cells
	if ghbot.RunKind(m.Kind) != p.Kind || !slices.Equal(m.Cells, p.Cells) {
		return j.refuseArtifact(ctx, c, p, fmt.Errorf("the artifact's meta.json says kind %s and cells %s, but this run is of kind %s (its event) with cells %s (the decide job's cells output, the cells input); what to compare is decided, never taken from the artifact",
			orDash(m.Kind), orDash(strings.Join(m.Cells, ",")), p.Kind, orDash(strings.Join(p.Cells, ","))))
	}
	if p.Kind == ghbot.RunBaseline && !j.defaultPush() {
		// Only a push to the default branch measures a baseline: a pull request's artifact that
		// says otherwise must not become the default branch's results.
		return fmt.Errorf("mode report: the artifact says kind baseline, but this run's %s event is not a push to the default branch; nothing stored or posted", j.ev.Name)
	}
	if pinned != m.HeadSHA {
		return fmt.Errorf("mode report: the artifact is for %s, but the commit decided on is %s; nothing posted", ghbot.ShortSHA(m.HeadSHA), ghbot.ShortSHA(pinned))
	}
	if p.PR != 0 {
		if st, ok := j.readState(ctx, c, p.PR); ok {
			p.State = &st
		}
	}
	resultsPath := filepath.Join(j.in.ArtifactDir, artifactResults)
	head, err := readArtifactResults(resultsPath)
	var big *tooLargeError
	if errors.As(err, &big) {
		return j.refuseArtifact(ctx, c, p, err)
	}
	if err != nil {
		mf := measureFailure(j.in.MeasureResult, err)
		if mf.Invalid != nil {
			j.log.Error("the artifact's results file is not valid results", "err", err)
		}
		j.abort(ctx, c, p, mf)
		return nil
	}
	if head.Run.Partial {
		// The measuring job stopped early (the server died, the job was cancelled): its cells are
		// shown, never compared, stored or passed.
		j.abort(ctx, c, p, &measureJobError{Result: j.in.MeasureResult, Partial: head})
		return nil
	}
	out := outcome{Head: head, ResultsPath: resultsPath}
	// The report job holds the token, so it keeps the results in the store: a push's as the
	// default branch's, a PR's apart; and a PR's baseline comes from the store alone.
	rs := j.openStore(c)
	var stored storedBase
	var earlier *results.File // a rerun's first pass at this head (rerun.go)
	found := false
	switch {
	case p.Kind == ghbot.RunBaseline:
		if j.put(ctx, rs, store.KindDefault, p.HeadSHA, 0, head) {
			j.changePoint(ctx, c, rs, p.HeadSHA, head)
			j.autoBisectSplit(ctx, c, rs, head, j.regressed) // bisectsplit.go
			j.storeArtifactAA(ctx, rs, p.HeadSHA, head)
			j.prune(ctx, rs, p.HeadSHA)
		}
	default:
		if p.rerun() && !fileExists(filepath.Join(j.in.ArtifactDir, artifactPairedHead)) {
			// The first pass at this head, which the rerun pools with (rerun.go); a paired
			// measurement (reportPaired) is compared as one of its own.
			if earlier = j.earlierHead(ctx, rs, p, head); earlier == nil {
				stored.warnings = append(stored.warnings, noEarlierWarning)
			}
		}
		var err error
		var sb storedBase
		sb, found, err = j.storeBaseline(ctx, rs, p, j.seriesFile(p, head))
		sb.warnings = append(sb.warnings, stored.warnings...)
		stored = sb
		var be *baselineError
		if errors.As(err, &be) {
			out.Unresolved = be.why()
		}
		if earlier == nil {
			j.putPR(ctx, rs, p, stored.commit, head)
		}
	}
	paired, err := j.reportPaired(p, out) // paired.go
	if err != nil {
		if errors.As(err, &big) {
			return j.refuseArtifact(ctx, c, p, err)
		}
		return err
	}
	switch {
	case p.Kind == ghbot.RunBaseline:
		out.Baseline = true
	case paired != nil:
		out = *paired
	case out.Unresolved != "":
		// Fail closed: nothing compared, the check fails with the reason (conclusion).
	case found && earlier != nil:
		if out, err = j.compareRerun(out, earlier, stored.base, stored.hist, stored.warnings); err != nil {
			return err
		}
	case found:
		if out, err = j.compareWithHistory(out, stored.base, stored.hist, stored.warnings, p.Cells); err != nil {
			return err
		}
	default:
		// No baseline of the head's config in the store. The artifact's own base.json is not
		// read: the measuring job ran the pull request's code and could have written any.
		out.NoBaseline = fmt.Sprintf("No baseline in the store for the base %s: a push to the default branch measures one.", code(orDash(ghbot.ShortSHA(p.BaseSHA))))
		if stored.why != "" {
			out.NoBaseline = "No baseline in the store: " + stored.why + "."
		}
		why, err := j.configChanged(ctx, rs, p, head)
		var be *baselineError
		switch {
		case errors.As(err, &be):
			out.NoBaseline, out.Unresolved = "", be.why()
		case why != "":
			out.NoBaseline, out.ConfigChanged = why, true
		}
	}
	return j.publish(ctx, c, p, out)
}

// configChanged says why head cannot be compared when the store holds a default-branch result
// of another config where head's baseline would be (the merge-base or its nearest measured
// ancestor): the pull request changed what is measured (a serve flag, the model, the
// hardware), so its config id has no baseline; "" when there is none of another config either.
func (j *job) configChanged(ctx context.Context, rs resultStore, p plan, head *results.File) (string, error) {
	if rs.s == nil || rs.commits == nil {
		return "", nil
	}
	base := cmp.Or(p.BaseSHA, j.repo.DefaultBranch)
	if base == "" {
		return "", nil
	}
	b, err := store.Resolve(ctx, rs.commits, rs.s, store.Query{Head: p.HeadSHA, Base: base}) // any config
	if err != nil {
		return "", &baselineError{err: err}
	}
	if !b.Found() || b.Entry.ConfigID == store.ConfigID(head) {
		return "", nil
	}
	what := "its setup"
	if in, err := j.compareInput(head, b.File, nil, nil); err == nil {
		var mm *compare.MismatchError
		if _, err := compare.Compare(in, measure.Thresholds(j.cfg)); errors.As(err, &mm) && len(mm.Differences) > 0 {
			what = strings.Join(mm.Differences, "; ")
		}
	}
	// Plain text: the renderer escapes it (it quotes what the results file says).
	return fmt.Sprintf("The head's results are of config %s, but the default branch's baseline at %s is of config %s, so nothing was compared: the pull request changed what is measured (%s). "+
		"The check fails so that a changed setup cannot pass unmeasured; land the setup change on the default branch first (its push measures the new baseline), or measure it there with speedmatrix baseline.",
		shortID(store.ConfigID(head)), ghbot.ShortSHA(b.Commit), shortID(b.Entry.ConfigID), what), nil
}

// shortID returns the first 12 characters of a config id.
func shortID(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

// refuseArtifact completes the check as a failure that says why the artifact was refused
// (a file over maxArtifactBytes); nothing is stored or compared. It returns the reason.
func (j *job) refuseArtifact(ctx context.Context, c *ghbot.Client, p plan, cause error) error {
	title := fmt.Sprintf("Not reported: the artifact for %s was refused", ghbot.ShortSHA(p.HeadSHA))
	why := "The measuring job's artifact was refused, so nothing was compared or stored: " + code(firstLine(cause.Error())) + "."
	if _, err := c.CompleteCheck(ctx, j.repo, p.HeadSHA, j.checkName(), ghbot.CheckUpdate{
		Conclusion: ghbot.ConclusionFailure, DetailsURL: j.runURL,
		Output: ghbot.CheckOutput{Title: title, Summary: j.acceptancePrefix(p) + "### ❌ " + title + "\n\n" + why},
	}); err != nil {
		return err
	}
	j.setOutput("verdict", VerdictRefused)
	j.setOutput("conclusion", string(ghbot.ConclusionFailure))
	j.summary("### ❌ " + title + "\n\n" + why + "\n")
	return fmt.Errorf("mode report: %w", cause)
}

// cleanupMode completes the check runs of ours left queued or in_progress on the commit.
func (j *job) cleanupMode(ctx context.Context) error {
	defer j.flushOutputs()
	c, err := j.client(ctx)
	if err != nil {
		return err
	}
	p := plan{HeadSHA: j.in.SHA, PR: j.in.PR}
	if p.PR == 0 {
		p.PR = j.eventPR()
	}
	if p.PR != 0 {
		if st, ok := j.readState(ctx, c, p.PR); ok {
			p.State = &st
			if p.HeadSHA == "" && st.Phase == phaseMeasuring {
				p.HeadSHA = st.HeadSHA
			}
		}
	}
	if p.HeadSHA == "" {
		p.HeadSHA = j.eventSHA()
	}
	if p.HeadSHA == "" {
		j.log.Info("cleanup: no commit known for this event; nothing to complete")
		return nil
	}
	why := "The run ended before its results (it failed or was cancelled); the cleanup step completed its check."
	r := j.render(p, outcome{}, renderInput{Cancelled: why})
	p.Accepted = j.readAcceptance(ctx, c, p.HeadSHA)
	n, err := c.CompleteStale(ctx, j.repo, p.HeadSHA, j.checkName(), ghbot.ConclusionCancelled, ghbot.CheckOutput{Title: r.title, Summary: j.acceptancePrefix(p) + r.summary})
	if err != nil {
		return err
	}
	j.log.Info("cleanup", "sha", p.HeadSHA, "completed", n)
	if n == 0 {
		return nil
	}
	if p.State != nil && p.State.Phase == phaseMeasuring && p.State.HeadSHA == p.HeadSHA {
		p.BaseSHA = p.State.BaseSHA
		j.upsertState(ctx, c, p, r.body, j.state(p, phaseCancelled, outcome{}, ghbot.ConclusionCancelled))
	}
	j.setOutput("verdict", VerdictCancelled)
	j.setOutput("conclusion", string(ghbot.ConclusionCancelled))
	j.summary("### " + r.title + "\n\n" + why + "\n")
	return nil
}

// defaultPush reports whether the event is a push to the repository's default branch, the one
// event whose results are the default branch's.
func (j *job) defaultPush() bool {
	ev := j.ev
	return ev.Push != nil && ev.Repo.DefaultBranch != "" && ev.Push.Ref == "refs/heads/"+ev.Repo.DefaultBranch
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}
