package action

import (
	"context"
	"path/filepath"
	"strings"
	"time"

	"github.com/speedmatrix/speedmatrix/calibrate"
	"github.com/speedmatrix/speedmatrix/compare"
	"github.com/speedmatrix/speedmatrix/config"
	"github.com/speedmatrix/speedmatrix/ghbot"
	"github.com/speedmatrix/speedmatrix/results"
	"github.com/speedmatrix/speedmatrix/store"
)

// resultStore is where the bot keeps results between runs (package store): the configuration's
// store.dir when set (tests, local use), else the repository's data branch (store.branch)
// written through c. Without a client (the measure mode) there is none, and the local baseline
// directory (dirStore) is the fallback.
type resultStore struct {
	s       store.Store
	commits store.Commits
}

// openStore returns the run's store; the zero resultStore when there is none.
func (j *job) openStore(c *ghbot.Client) resultStore {
	var rs resultStore
	if c != nil {
		// Remembered: a push walks its commit's first parents for the change points and again
		// for pruning.
		rs.commits = store.MemoCommits(store.GitHubCommits{GH: c.GitHub(), Owner: j.repo.Owner, Repo: j.repo.Name})
	}
	switch {
	case j.cfg.Store.Dir != "":
		rs.s = store.NewDir(j.cfg.Store.Dir)
	case c != nil:
		var opts []store.BranchOption
		if j.cfg.Store.Branch != "" {
			opts = append(opts, store.WithBranchName(j.cfg.Store.Branch))
		}
		opts = append(opts, store.WithBranchLogger(j.log))
		rs.s = store.NewBranch(c.GitHub(), j.repo.Owner, j.repo.Name, opts...)
	}
	return rs
}

// put stores head as sha's result of kind (pr: the PR's number). A failure is logged, not
// returned: the results are in the artifact whatever the store says.
func (j *job) put(ctx context.Context, rs resultStore, kind store.Kind, sha string, pr int, head *results.File) bool {
	return j.putEntry(ctx, rs, store.Entry{Commit: sha, Kind: kind, PR: pr}, head)
}

// putPR stores head as the result of PR p.PR at its head, citing base, the default-branch commit
// whose stored result it was compared with ("" for none), so that pruning keeps that baseline
// while it keeps this result (store.Entry.Base).
func (j *job) putPR(ctx context.Context, rs resultStore, p plan, base string, head *results.File) {
	if p.PR > 0 {
		j.putEntry(ctx, rs, store.Entry{Commit: p.HeadSHA, Kind: store.KindPR, PR: p.PR, Base: base}, head)
	}
}

// putEntry stores head under the index entry e. A PR's result, and anything the report mode
// stores from an artifact, is indexed at the job's clock: the time in the file is the
// measuring job's to write (a year 9999 would never be pruned).
func (j *job) putEntry(ctx context.Context, rs resultStore, e store.Entry, head *results.File) bool {
	if rs.s == nil {
		return false
	}
	if e.Kind == store.KindPR || j.in.Mode == ModeReport {
		e.Time = j.now().UTC()
	}
	got, err := rs.s.Put(ctx, e, head)
	if err != nil {
		j.log.Warn("storing the results", "kind", e.Kind, "sha", e.Commit, "err", err)
		return false
	}
	j.log.Info("results stored", "kind", got.Kind, "sha", got.Commit, "config_id", got.ConfigID, "path", got.Path, "base", got.Base)
	return true
}

// aaDue reports whether the push of sha is an A/A rerun's turn (store.aa_every): its result is
// the aa_every-th default-branch result of configID, counting the stored ones besides sha's and
// sha's own.
func (j *job) aaDue(ctx context.Context, rs resultStore, configID, sha string) bool {
	n := j.cfg.Store.AAEvery
	if n <= 0 || rs.s == nil {
		return false
	}
	entries, err := rs.s.List(ctx, store.Filter{ConfigID: configID, Kind: store.KindDefault})
	if err != nil {
		j.log.Warn("A/A rerun: listing the store", "err", err)
		return false
	}
	count := 1
	for _, e := range entries {
		if e.Commit != sha {
			count++
		}
	}
	return count%n == 0
}

// aaDecide is the decide job's A/A decision for the push of sha, made before anything is
// measured: the config id is not known yet (it hashes the measured hardware), so the push counts
// as the next result of the config the newest stored default-branch result measured (the
// config of the previous push); with an empty store, as its config's first.
func (j *job) aaDecide(ctx context.Context, rs resultStore, sha string) bool {
	if j.cfg.Store.AAEvery <= 0 || rs.s == nil {
		return false
	}
	latest, err := rs.s.List(ctx, store.Filter{Kind: store.KindDefault, Limit: 1})
	if err != nil {
		j.log.Warn("A/A rerun: listing the store", "err", err)
		return false
	}
	id := "" // an empty store: no entry of any config matches below
	if len(latest) > 0 {
		id = latest[0].ConfigID
	}
	due := j.aaDue(ctx, rs, id, sha)
	j.log.Info("A/A rerun decided", "sha", sha, "every", j.cfg.Store.AAEvery, "config_id", id, "due", due)
	return due
}

// measureAA measures the commit of cfg a second time, right after its first measurement (the
// server that just measured it measures it again, so the pair is a real A/A comparison for
// `speedmatrix calibrate --store` and compare's measured noise), and copies the results to the
// artifact directory as aa.json. nil when it failed (logged: the push's own result stands).
func (j *job) measureAA(ctx context.Context, cfg config.Config, sha string) *results.File {
	cfg.Output = strings.TrimSuffix(cfg.Output, ".json") + ".aa.json"
	j.log.Info("A/A rerun: measuring the same commit again", "sha", sha, "every", j.cfg.Store.AAEvery)
	if err := j.measure(ctx, cfg); err != nil {
		j.log.Warn("A/A rerun: measuring", "sha", sha, "err", err)
		return nil
	}
	again, err := results.ReadFile(cfg.Output)
	if err != nil {
		j.log.Warn("A/A rerun: reading its results", "err", err)
		return nil
	}
	if err := copyFile(cfg.Output, filepath.Join(j.in.ArtifactDir, artifactAA)); err != nil {
		j.log.Warn("A/A rerun: copying its results to the artifact directory", "err", err)
	}
	return again
}

// storeArtifactAA stores the artifact's aa.json (the measure job's A/A rerun of the push of sha)
// as an A/A rerun, when it measured head's config and commit; the report mode's counterpart of
// the full mode's measureAA and put.
func (j *job) storeArtifactAA(ctx context.Context, rs resultStore, sha string, head *results.File) {
	p := filepath.Join(j.in.ArtifactDir, artifactAA)
	if !fileExists(p) {
		return
	}
	again, err := readArtifactResults(p)
	switch {
	case err != nil:
		j.log.Warn("A/A rerun: the artifact's aa.json cannot be read; not stored", "err", err)
	case store.ConfigID(again) != store.ConfigID(head):
		j.log.Warn("A/A rerun: the artifact's aa.json measured another config than results.json; not stored")
	case again.Engine.Commit != "" && !strings.EqualFold(again.Engine.Commit, sha):
		j.log.Warn("A/A rerun: the artifact's aa.json measured another commit; not stored")
	default:
		j.put(ctx, rs, store.KindAA, sha, 0, again)
	}
}

// measuredNoise returns the run-to-run noise of the base's config measured in the store
// (calibrate.StoreNoise: the spread of each commit's default-branch result and A/A reruns,
// pooled); nil when the store holds no repeated run.
func (j *job) measuredNoise(ctx context.Context, rs resultStore, base *results.File) map[compare.NoiseKey]float64 {
	if rs.s == nil || base == nil {
		return nil
	}
	cv, commits, skipped, err := calibrate.StoreNoise(ctx, rs.s, store.ConfigID(base))
	for _, w := range skipped {
		j.log.Warn("measured noise: " + w.Error())
	}
	if err != nil {
		j.log.Warn("measured noise: reading the store's A/A reruns", "err", err)
		return nil
	}
	if commits > 0 {
		j.log.Info("measured noise from the store's A/A reruns; compare uses it where it exceeds the prior", "commits", commits)
	}
	return cv
}

// resolve finds the baseline of head in the store: the merge-base of head and base, or its
// nearest first-parent ancestor with results of head's config id. found is false when there is
// no store, no base or no baseline (b.Reason says why), so that the caller falls back on the
// local baseline directory. An error of the resolution (the compare API or the commit listing
// failing, timing out) is returned as a *baselineError: the caller fails closed, never
// reporting "no baseline" for a baseline it could not look for.
func (j *job) resolve(ctx context.Context, rs resultStore, p plan, head *results.File) (b store.Baseline, found bool, err error) {
	if rs.s == nil || rs.commits == nil {
		return store.Baseline{}, false, nil
	}
	base := p.BaseSHA
	if base == "" {
		base = j.repo.DefaultBranch
	}
	if base == "" {
		return store.Baseline{}, false, nil
	}
	b, err = store.Resolve(ctx, rs.commits, rs.s, store.Query{ConfigID: store.ConfigID(head), Head: p.HeadSHA, Base: base})
	if err != nil {
		j.log.Error("resolving the baseline in the store", "err", err)
		return store.Baseline{}, false, &baselineError{err: err}
	}
	j.log.Info(b.Describe())
	return b, b.Found(), nil
}

// baselineError is a baseline resolution that failed (an API error, a timeout): the check
// fails with its reason and what to do, never neutral and never "no baseline".
type baselineError struct{ err error }

func (e *baselineError) Error() string { return e.err.Error() }
func (e *baselineError) Unwrap() error { return e.err }

// why is the sentence the check and the comment show: what failed and what to do.
func (e *baselineError) why() string {
	return strings.TrimPrefix(firstLine(e.err.Error()), "baseline: ") + ". An error is never taken for a missing baseline, so the check fails. " +
		"What to do: rerun with /bench (or re-run the job) once GitHub answers; if it keeps failing, check that the workflow's token can read the repository's contents (permissions: contents: read)."
}

// storedBase is a baseline from the store with what compare takes beside it.
type storedBase struct {
	commit   string // the default-branch commit whose result base is
	base     *results.File
	hist     []*results.File // compare's history noise (none below min_history)
	warnings []string        // how far back from the merge-base the baseline is
	// why says why the store has no baseline ("" when it could not answer).
	why string
}

// storeBaseline resolves head's baseline in the store (resolve) and, when there is one, reads
// the history and the measured noise (set as j.measured) to compare with it: the one path from
// the store to a comparison of the full, measure and report modes. ok is false when the store
// gave no baseline; err (a *baselineError) when it could not be resolved.
func (j *job) storeBaseline(ctx context.Context, rs resultStore, p plan, head *results.File) (storedBase, bool, error) {
	b, ok, err := j.resolve(ctx, rs, p, head)
	if err != nil || !ok {
		return storedBase{why: b.Reason}, false, err
	}
	sb := storedBase{commit: b.Commit, base: b.File, hist: j.history(ctx, rs, head, b.Commit, p.HeadSHA)}
	if w := b.Warning(); w != "" {
		sb.warnings = append(sb.warnings, w)
	}
	j.measured = j.measuredNoise(ctx, rs, b.File)
	return sb, true, nil
}

// history returns the stored default-branch results of head's config for compare's noise
// (compare.Input.History), without the excluded commits' (the head's); none below the configured
// min_history. They are the baseline commit's and its nearest measured first-parent ancestors'
// (newest first along the commits, j.histByCommit set), or, where the commit graph cannot be
// read, the newest measured (a warning says so).
func (j *job) history(ctx context.Context, rs resultStore, head *results.File, baseline string, exclude ...string) []*results.File {
	j.histByCommit = false
	if rs.s == nil {
		return nil
	}
	opts := store.HistoryOptions{Min: j.cfg.Store.MinHistory, Exclude: exclude, Commits: rs.commits, Tip: baseline}
	if rs.commits == nil || baseline == "" {
		opts.Commits, opts.Tip = nil, ""
	}
	files, _, note, skipped, err := store.History(ctx, rs.s, store.ConfigID(head), opts)
	if err != nil && opts.Commits != nil {
		j.log.Warn("the baseline's ancestors could not be read: the history is the newest measured results", "err", err)
		opts.Commits, opts.Tip = nil, ""
		files, _, note, skipped, err = store.History(ctx, rs.s, store.ConfigID(head), opts)
	}
	for _, w := range skipped {
		j.log.Warn(w.Error())
	}
	if err != nil {
		j.log.Warn("reading the history", "err", err)
		return nil
	}
	j.histByCommit = opts.Commits != nil
	j.log.Info(note)
	return files
}

// prune bounds the store by store.retention after the push of sha stored its results: the
// retention.keep newest default-branch results and keep_aa A/A reruns of each config, and PR
// results for pr_days days (store.Plan, which never removes the newest default-branch result of
// a config: the current baseline). Newest is along sha's first parents (store.Policy.Lineage),
// so that a baseline measured later than its commit (speedmatrix baseline --commit OLD) does not
// push the default branch's latest results out; where the commit graph cannot be read, by the
// time the results were measured (a warning says so). sha's own result is never removed. On the
// data branch it is a commit of its own, retried on a new tip when another writer moved the
// branch first, as every write is. A failure is logged: the push's results are stored.
func (j *job) prune(ctx context.Context, rs resultStore, sha string) {
	r := j.cfg.Store.Retention
	if rs.s == nil || r.Keep == 0 && r.KeepAA == 0 && r.PRDays == 0 {
		return
	}
	p := store.Policy{Keep: r.Keep, KeepAA: r.KeepAA, PRAge: time.Duration(r.PRDays) * 24 * time.Hour, Protect: []string{sha}}
	if r.Keep > 0 {
		p.Lineage = j.lineage(ctx, rs, sha, store.LineageDepth(r.Keep))
	}
	removed, err := rs.s.Prune(ctx, p)
	if err != nil {
		j.log.Warn("pruning the store (store.retention)", "err", err)
		return
	}
	if r.Keep > 0 {
		j.log.Info("store.retention: " + p.Recency("the pushed commit "+ghbot.ShortSHA(sha)))
	}
	if len(removed) > 0 {
		j.log.Info("store pruned (store.retention)", "removed", len(removed), "keep", r.Keep, "keep_aa", r.KeepAA, "pr_days", r.PRDays)
	}
}

// lineage returns sha and its first-parent ancestors, newest first, at most depth; nil (and a
// warning: retention then goes by measurement time) when the commit graph cannot be read.
func (j *job) lineage(ctx context.Context, rs resultStore, sha string, depth int) []string {
	if rs.commits == nil {
		j.log.Warn("store.retention: no commit graph to read (no GitHub client); the newest results are the last measured")
		return nil
	}
	walk, err := rs.commits.Ancestors(ctx, sha, depth)
	if err != nil || len(walk) == 0 {
		j.log.Warn("store.retention: the pushed commit's first parents could not be read; the newest results are the last measured", "sha", sha, "err", err)
		return nil
	}
	return walk
}
