package action

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/speedmatrix/speedmatrix/ghbot"
	"github.com/speedmatrix/speedmatrix/results"
	"github.com/speedmatrix/speedmatrix/store"
)

// accept records /bench accept (or the Accept button) in the comment's state and turns the
// check success, when the last results are a regression at the pinned head.
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
		return nil
	}
	var found ghbot.FoundComment
	var st State
	if d.PR != 0 {
		var ok, okState bool
		var err error
		if found, ok, err = c.FindComment(ctx, j.repo, d.PR, j.checkName()); err != nil {
			return err
		}
		if ok {
			st, okState = parseState(found.Body)
		}
		switch {
		case !okState || st.Phase != phaseDone:
			return refuse(fmt.Sprintf("there are no results at the head %s yet. Post `/bench` first.", code(ghbot.ShortSHA(d.HeadSHA))))
		case st.HeadSHA != d.HeadSHA:
			return refuse(fmt.Sprintf("the last results are for %s, but the head is now %s; an acceptance holds for one commit. Post `/bench` to measure the head first.", code(ghbot.ShortSHA(st.HeadSHA)), code(ghbot.ShortSHA(d.HeadSHA))))
		case st.Verdict != string(results.VerdictRegression):
			return refuse(fmt.Sprintf("the results at %s show no regression to accept.", code(ghbot.ShortSHA(d.HeadSHA))))
		}
	}
	title := fmt.Sprintf("Not blocked: regression accepted by %s at %s", d.By, ghbot.ShortSHA(d.HeadSHA))
	if _, err := c.CompleteCheck(ctx, j.repo, d.HeadSHA, j.checkName(), ghbot.CheckUpdate{
		Conclusion: ghbot.ConclusionSuccess, DetailsURL: j.runURL,
		Output: ghbot.CheckOutput{Title: title, Summary: block + "\n\nThe results are in the pull request's comment and the run's artifacts; a new push voids the acceptance."},
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
	switch {
	case ev.Push != nil:
		p.Kind = ghbot.RunBaseline
		if !j.defaultPush() {
			return fmt.Errorf("mode measure: a push to %s is not to the default branch; baselines are measured there only", ev.Push.Ref)
		}
	case ev.MergeGroup != nil:
		p.Kind = ghbot.RunMergeGroup
		if p.BaseSHA == "" && ghbot.ValidSHA(ev.MergeGroup.BaseSHA) {
			p.BaseSHA = ev.MergeGroup.BaseSHA
		}
	case ev.Dispatch != nil:
		p.Kind = ghbot.RunDispatch
	case ev.IsPullRequest() && ev.PullRequest != nil:
		p.Kind = ghbot.RunPullRequest
		if p.BaseSHA == "" && ghbot.ValidSHA(ev.PullRequest.BaseSHA) {
			p.BaseSHA = ev.PullRequest.BaseSHA
		}
	default:
		p.Kind = ghbot.RunCommand
	}
	if p.PR == 0 {
		p.PR = j.eventPR()
	}
	m := meta{HeadSHA: p.HeadSHA, BaseSHA: p.BaseSHA, PR: p.PR, Kind: string(p.Kind), Cells: p.Cells}
	if err := os.MkdirAll(j.in.ArtifactDir, 0o755); err != nil {
		return err
	}
	out, err := j.measureOrShard(ctx, p) // shards.go
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
	if err := os.WriteFile(filepath.Join(j.in.ArtifactDir, artifactComment), []byte(r.body), 0o644); err != nil {
		return err
	}
	j.summary(r.full)
	j.resultOutputs(verdict, conclusion, len(cellsWith(out.Comparison, results.VerdictRegression)), out)
	return nil
}

// reportMode posts what a measure job left in the artifact directory, read as untrusted data.
func (j *job) reportMode(ctx context.Context) error {
	defer j.flushOutputs()
	c, err := j.client(ctx)
	if err != nil {
		return err
	}
	pinned := j.in.SHA
	if pinned == "" {
		pinned = j.eventSHA()
	}
	if done, err := j.mergeShards(ctx, c, pinned); done || err != nil { // shards.go
		return err
	}
	m, err := readMeta(j.in.ArtifactDir)
	if errors.Is(err, errNoArtifact) {
		if pinned == "" {
			return fmt.Errorf("mode report: %s holds no results and no commit is known (set the sha input)", j.in.ArtifactDir)
		}
		p := plan{HeadSHA: pinned, PR: j.in.PR, BaseSHA: j.in.BaseSHA}
		if p.PR == 0 {
			p.PR = j.eventPR()
		}
		j.abort(ctx, c, p, &measureJobError{Result: j.in.MeasureResult})
		return nil
	}
	if err != nil {
		return fmt.Errorf("mode report: %w", err)
	}
	p := plan{HeadSHA: m.HeadSHA, BaseSHA: m.BaseSHA, PR: m.PR, Kind: ghbot.RunKind(m.Kind), Cells: m.Cells}
	if j.in.PR != 0 {
		p.PR = j.in.PR
	}
	if j.in.BaseSHA != "" {
		p.BaseSHA = j.in.BaseSHA
	}
	if p.Kind == ghbot.RunBaseline && !j.defaultPush() {
		// Only a push to the default branch measures a baseline: a pull request's artifact that
		// says otherwise must not become the default branch's results.
		return fmt.Errorf("mode report: the artifact says kind baseline, but this run's %s event is not a push to the default branch; nothing stored or posted", j.ev.Name)
	}
	switch {
	case pinned != "" && pinned != m.HeadSHA:
		return fmt.Errorf("mode report: the artifact is for %s, but the commit decided on is %s; nothing posted", ghbot.ShortSHA(m.HeadSHA), ghbot.ShortSHA(pinned))
	case pinned == "" && p.PR != 0:
		// The artifact names the commit: post only if it is the PR's head.
		if err := c.VerifyHead(ctx, j.repo, p.PR, m.HeadSHA); err != nil {
			return fmt.Errorf("mode report: %w", err)
		}
	case pinned == "":
		return errors.New("mode report: no commit to report on: set the sha input to the decide job's sha output")
	}
	if p.PR != 0 {
		if st, ok := j.readState(ctx, c, p.PR); ok {
			p.State = &st
		}
	}
	resultsPath := filepath.Join(j.in.ArtifactDir, artifactResults)
	head, err := results.ReadFile(resultsPath)
	if err != nil {
		mf := measureFailure(j.in.MeasureResult, err)
		if mf.Invalid != nil {
			j.log.Error("the artifact's results file is not valid results", "err", err)
		}
		j.abort(ctx, c, p, mf)
		return nil
	}
	out := outcome{Head: head, ResultsPath: resultsPath}
	// The report job holds the token, so it keeps the results in the store: a push's as the
	// default branch's, a PR's apart; and a PR's baseline comes from the store when it has one.
	rs := j.openStore(c)
	var stored storedBase
	found := false
	switch {
	case p.Kind == ghbot.RunBaseline:
		if j.put(ctx, rs, store.KindDefault, p.HeadSHA, 0, head) {
			j.changePoint(ctx, c, rs, p.HeadSHA, head)
			j.storeArtifactAA(ctx, rs, p.HeadSHA, head)
			j.prune(ctx, rs, p.HeadSHA)
		}
	default:
		stored, found = j.storeBaseline(ctx, rs, p, head)
		j.putPR(ctx, rs, p, stored.commit, head)
	}
	paired, err := j.reportPaired(p, out) // paired.go
	if err != nil {
		return err
	}
	switch basePath := filepath.Join(j.in.ArtifactDir, artifactBase); {
	case p.Kind == ghbot.RunBaseline:
		out.Baseline = true
	case paired != nil:
		out = *paired
	case found:
		if out, err = j.compareWithHistory(out, stored.base, stored.hist, stored.warnings, p.Cells); err != nil {
			return err
		}
	case fileExists(basePath):
		base, err := results.ReadFile(basePath)
		if err != nil {
			return fmt.Errorf("mode report: the artifact's base.json: %w", err)
		}
		if out, err = j.compareWith(out, base, p.Cells); err != nil {
			return err
		}
	default:
		out.NoBaseline = fmt.Sprintf("The measuring job found no baseline results for the base %s: a push to the default branch measures one.", code(orDash(ghbot.ShortSHA(p.BaseSHA))))
	}
	return j.publish(ctx, c, p, out)
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
	n, err := c.CompleteStale(ctx, j.repo, p.HeadSHA, j.checkName(), ghbot.ConclusionCancelled, ghbot.CheckOutput{Title: r.title, Summary: r.summary})
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
