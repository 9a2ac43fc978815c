package action

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/speedmatrix/speedmatrix/compare"
	"github.com/speedmatrix/speedmatrix/ghbot"
	"github.com/speedmatrix/speedmatrix/measure"
	"github.com/speedmatrix/speedmatrix/results"
	"github.com/speedmatrix/speedmatrix/store"
)

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
