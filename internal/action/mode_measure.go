package action

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/speedmatrix/speedmatrix/ghbot"
	"github.com/speedmatrix/speedmatrix/results"
)

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

// defaultPush reports whether the event is a push to the repository's default branch, the one
// event whose results are the default branch's.
func (j *job) defaultPush() bool {
	ev := j.ev
	return ev.Push != nil && ev.Repo.DefaultBranch != "" && ev.Push.Ref == "refs/heads/"+ev.Repo.DefaultBranch
}
