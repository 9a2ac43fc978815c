package action

import (
	"cmp"
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

	"github.com/sethvargo/go-githubactions"

	"github.com/speedmatrix/speedmatrix/config"
	"github.com/speedmatrix/speedmatrix/ghbot"
	"github.com/speedmatrix/speedmatrix/measure"
	"github.com/speedmatrix/speedmatrix/merge"
	"github.com/speedmatrix/speedmatrix/results"
)

// Sharded runs: the matrix measured by several measure jobs at once, each on its own GPU runner,
// joined into one results file before it is compared, stored and posted.
//
//   - decide, with the shards input N, splits what it decided to measure into at most N shards
//     of whole context rows (fewer when the cells have fewer rows; `speedmatrix plan --shards`)
//     and writes the job matrix as the matrix output, for strategy.matrix:
//     {"include":[{"shard":"1/4","index":1,"plan":"…","contexts":…,"cells":…,"expected_minutes":…},…]},
//     and the shards and plan outputs;
//   - measure, with the shard (K/N) and plan inputs, measures that shard of that plan (`run
//     --shard K/N --plan ID`: a runner whose settings make another plan fails before it
//     measures) and writes its artifact directory; it compares nothing (a shard is not the
//     matrix: its page shows the shard's cells) but puts the local baseline of the base commit,
//     when the runner has one, in the artifact as base.json for the report;
//   - report, with the shard-artifacts input (a glob of the measure jobs' artifact directories,
//     as actions/download-artifact lays them out), merges their results (merge.Shards) into the
//     artifact directory and then reports as for one measure job. Shards that do not make one
//     run (other commits, hardware, engine, configuration, plan) complete the check as a
//     failure that says why; a missing shard (its job failed) completes it as cancelled.

// maxShards is the most shards the shards input takes: GitHub runs at most 256 jobs of a matrix.
const maxShards = 256

var (
	shardRE = regexp.MustCompile(`^([1-9][0-9]{0,2})/([1-9][0-9]{0,2})$`)
	planRE  = regexp.MustCompile(`^[0-9a-f]{1,64}$`)
)

// readShardInputs reads shards, shard, plan and shard-artifacts into in.
func readShardInputs(a *githubactions.Action, in *Inputs) error {
	if v := strings.TrimSpace(a.GetInput("shards")); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > maxShards {
			return fmt.Errorf("input shards: %q is not a number of shards from 0 to %d", v, maxShards)
		}
		in.Shards = n
	}
	if v := strings.TrimSpace(a.GetInput("shard")); v != "" {
		m := shardRE.FindStringSubmatch(v)
		if m == nil {
			return fmt.Errorf("input shard: %q is not K/N (the decide job's matrix.shard, e.g. 2/4)", v)
		}
		k, _ := strconv.Atoi(m[1])
		n, _ := strconv.Atoi(m[2])
		if k > n {
			return fmt.Errorf("input shard: %q: shard %d of %d does not exist", v, k, n)
		}
		in.Shard = v
	}
	if v := strings.TrimSpace(a.GetInput("plan")); v != "" {
		if !planRE.MatchString(v) {
			return fmt.Errorf("input plan: %q is not a plan id (the decide job's matrix.plan)", v)
		}
		in.Plan = v
	}
	in.ShardArtifacts = a.GetInput("shard-artifacts")
	if strings.ContainsAny(in.ShardArtifacts, "\r\n\x00") {
		return errors.New("input shard-artifacts: a path with a line break or NUL")
	}
	switch {
	case in.Plan != "" && in.Shard == "":
		return errors.New("input plan needs the shard input: it checks the plan that shard belongs to")
	case in.Shards > 0 && in.Mode != ModeDecide:
		return fmt.Errorf("input shards is for mode decide, not %s: one job measures the whole matrix; the split workflow (decide, measure per shard, report) shares it", in.Mode)
	case in.Shard != "" && in.Mode != ModeMeasure:
		return fmt.Errorf("input shard is for mode measure, not %s: the measure jobs measure the shards, the report job merges them (shard-artifacts)", in.Mode)
	case in.ShardArtifacts != "" && in.Mode != ModeReport:
		return fmt.Errorf("input shard-artifacts is for mode report, not %s", in.Mode)
	}
	return nil
}

// measureConfig is the configuration the plan's commit is measured with.
func (j *job) measureConfig(p plan) config.Config {
	cfg := j.cfg
	cfg.Output = j.in.Results
	if cfg.Engine.Commit == "" {
		cfg.Engine.Commit = p.HeadSHA
	}
	// Only a push to the default branch runs trusted code; the builds of every other run (a
	// pull request, /bench, a merge group, a dispatch) are cached apart and never reused by it.
	cfg.Engine.Trust = "untrusted" // engine.TrustUntrusted
	if p.Kind == ghbot.RunBaseline {
		cfg.Engine.Trust = "trusted" // engine.TrustTrusted
	}
	if len(p.Cells) > 0 {
		cfg.Cells = config.List(p.Cells)
	}
	return cfg
}

// shardOutputs writes, in decide mode with the shards input, the job matrix of the plan's
// shards and the shards and plan outputs.
func (j *job) shardOutputs(p plan) error {
	if j.in.Shards == 0 {
		return nil
	}
	jobs, err := j.planShards(j.measureConfig(p), j.in.Shards)
	if err != nil {
		return fmt.Errorf("input shards: %w", err)
	}
	if len(jobs) == 0 {
		return errors.New("input shards: the plan has no shard")
	}
	b, err := json.Marshal(struct {
		Include []measure.ShardJob `json:"include"`
	}{jobs})
	if err != nil {
		return err
	}
	j.setOutput("shards", strconv.Itoa(len(jobs)))
	j.setOutput("plan", jobs[0].Plan)
	j.setOutput("matrix", string(b))
	j.log.Info("sharded", "shards", len(jobs), "plan", jobs[0].Plan, "asked", j.in.Shards)
	return nil
}

// planShards returns the job matrix of `speedmatrix plan --shards n` for the configuration c,
// in as many shards as c has context rows when that is fewer than n (a rerun of a few cells
// needs fewer runners).
func (j *job) planShards(c config.Config, n int) ([]measure.ShardJob, error) {
	s := measure.Settings{Config: c}
	one, err := measure.Plan(s, 1)
	if err != nil {
		return nil, err
	}
	if rows := len(one.Rows); n > rows {
		j.log.Info("fewer context rows than shards asked: one shard per row", "shards", n, "rows", rows)
		n = rows
	}
	p, err := measure.Plan(s, n)
	if err != nil {
		return nil, err
	}
	return measure.ShardJobs(p), nil
}

// measureOrShard measures the plan's commit: its shard with the shard input, else all of it
// (measureCompare, without a token).
func (j *job) measureOrShard(ctx context.Context, p plan) (outcome, error) {
	if j.in.Shard == "" {
		return j.measureCompare(ctx, nil, p)
	}
	return j.measureShard(ctx, p)
}

// measureShard measures one shard (the shard and plan inputs) and writes it to the artifact
// directory, with the local baseline of the base commit when there is one.
func (j *job) measureShard(ctx context.Context, p plan) (outcome, error) {
	if j.in.AA {
		j.log.Warn("input aa: a sharded run measures no A/A rerun; the push is measured once")
	}
	cfg := j.measureConfig(p)
	for _, dir := range []string{filepath.Dir(cfg.Output), j.in.ArtifactDir} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return outcome{}, err
		}
	}
	j.log.Info("measuring one shard", "sha", p.HeadSHA, "shard", j.in.Shard, "plan", j.in.Plan, "results", cfg.Output)
	if err := measure.Run(ctx, measure.Settings{Config: cfg, ShardSpec: j.in.Shard, PlanID: j.in.Plan}, j.d.Measure); err != nil {
		return outcome{}, fmt.Errorf("measure shard %s of %s: %w", j.in.Shard, ghbot.ShortSHA(p.HeadSHA), err)
	}
	if err := ctx.Err(); err != nil {
		return outcome{}, err
	}
	head, err := results.ReadFile(cfg.Output)
	if err != nil {
		return outcome{}, fmt.Errorf("read the shard's results: %w", err)
	}
	if head.Run.Shard == nil || head.Run.Shard.String() != j.in.Shard {
		return outcome{}, fmt.Errorf("the results of shard %s hold no such shard (a bug; please report it)", j.in.Shard)
	}
	out := outcome{Head: head, ResultsPath: cfg.Output}
	if err := copyFile(cfg.Output, filepath.Join(j.in.ArtifactDir, artifactResults)); err != nil {
		return out, fmt.Errorf("copy the results to the artifact directory: %w", err)
	}
	if p.Kind != ghbot.RunBaseline {
		base := j.in.Baseline
		if base == "" {
			base = dirStore{j.in.BaselineDir}.Get(p.BaseSHA)
		}
		if base != "" {
			if err := copyFile(base, filepath.Join(j.in.ArtifactDir, artifactBase)); err != nil {
				return out, err
			}
		}
	}
	// Not compared: the page shows the shard's own cells; the report compares the merged matrix.
	j.log.Info("measured one shard; the report job merges the shards, then compares", "shard", j.in.Shard, "plan", head.Run.Shard.Plan,
		"prefill_cells", len(head.Prefill), "decode_cells", len(head.Decode))
	return out, nil
}

// shardArtifact is one measure job's artifact directory.
type shardArtifact struct {
	name string // the directory's base name
	dir  string
	m    meta
	f    *results.File
}

// mergeShards, in report mode with the shard-artifacts input, merges the measure jobs' results
// into the artifact directory (results.json, meta.json, base.json), so that the report goes on
// as for one measure job (done false). When the shards do not make one run it completes the
// check as a failure that says why (done true, and the reason as the error); when shards are
// missing, as cancelled (done true). pinned is the commit decided on ("" when none).
func (j *job) mergeShards(ctx context.Context, c *ghbot.Client, pinned string) (done bool, err error) {
	if j.in.ShardArtifacts == "" {
		return false, nil
	}
	dirs, err := filepath.Glob(j.in.ShardArtifacts)
	if err != nil {
		return true, fmt.Errorf("mode report: input shard-artifacts: %w", err)
	}
	if len(dirs) > maxShards {
		return true, fmt.Errorf("mode report: input shard-artifacts matches %d paths, more than the %d shards a plan can have; match the shards' artifact directories only", len(dirs), maxShards)
	}
	own, _ := filepath.Abs(j.in.ArtifactDir)
	var found []shardArtifact
	var lost []string
	for _, d := range dirs {
		if st, err := os.Stat(d); err != nil || !st.IsDir() {
			continue
		}
		if abs, _ := filepath.Abs(d); abs == own {
			continue
		}
		name := filepath.Base(d)
		m, err := readMeta(d)
		switch {
		case errors.Is(err, errNoArtifact):
			lost = append(lost, name+": no meta.json")
			continue
		case err != nil:
			return true, fmt.Errorf("mode report: %s: %w", name, err)
		}
		f, err := readArtifactResults(filepath.Join(d, artifactResults))
		var big *tooLargeError
		if errors.As(err, &big) {
			return true, fmt.Errorf("mode report: %s: %w", name, err)
		}
		if err != nil {
			lost = append(lost, name+": no results")
			continue
		}
		found = append(found, shardArtifact{name: name, dir: d, m: m, f: f})
	}
	if len(found) == 0 {
		j.log.Warn("mode report: no shard's results match shard-artifacts", "pattern", j.in.ShardArtifacts, "lost", strings.Join(lost, "; "))
		return false, nil // the artifact directory then holds no results either: reported as such
	}
	ref := found[0].m
	// The pull request and its base come from the inputs (else the event), never from an
	// artifact: a measuring job could name another pull request's.
	p := plan{HeadSHA: cmp.Or(pinned, ref.HeadSHA), BaseSHA: j.in.BaseSHA, PR: j.in.PR, Kind: ghbot.RunKind(ref.Kind), Cells: ref.Cells}
	if p.PR == 0 {
		p.PR = j.eventPR()
	}
	fail := func(cause error, refused bool) (bool, error) {
		if pinned == "" {
			return true, fmt.Errorf("mode report: %w; nothing posted (set the sha input to the decide job's sha output)", cause)
		}
		if p.PR != 0 {
			if st, ok := j.readState(ctx, c, p.PR); ok {
				p.State = &st
			}
			p.Accepted = j.readAcceptance(ctx, c, p.HeadSHA)
		}
		if !refused {
			j.abort(ctx, c, p, cause)
			return true, nil
		}
		return true, j.refuseShards(ctx, c, p, cause)
	}
	for _, s := range found[1:] {
		if s.m.HeadSHA != ref.HeadSHA || s.m.BaseSHA != ref.BaseSHA || s.m.PR != ref.PR || s.m.Kind != ref.Kind || !slices.Equal(s.m.Cells, ref.Cells) {
			what := "commits"
			if s.m.HeadSHA == ref.HeadSHA {
				what = "runs (base, pull request, kind or cells)"
			}
			return fail(fmt.Errorf("the shards' artifacts are for different %s: %s measured %s, %s measured %s", what,
				found[0].name, ghbot.ShortSHA(ref.HeadSHA), s.name, ghbot.ShortSHA(s.m.HeadSHA)), true)
		}
	}
	var in []merge.Input
	for _, s := range found {
		in = append(in, merge.Input{Name: s.name, File: s.f})
	}
	merged, err := merge.Shards(in, merge.Options{})
	if errors.Is(err, merge.ErrMissing) {
		if len(lost) > 0 {
			err = fmt.Errorf("%w (%s)", err, strings.Join(lost, "; "))
		}
		return fail(fmt.Errorf("a measuring job left no results: %w", err), false)
	}
	if err != nil {
		return fail(err, true)
	}
	if err := os.MkdirAll(j.in.ArtifactDir, 0o755); err != nil {
		return true, err
	}
	if err := results.WriteFile(filepath.Join(j.in.ArtifactDir, artifactResults), merged); err != nil {
		return true, err
	}
	for _, s := range found {
		if b := filepath.Join(s.dir, artifactBase); fileExists(b) {
			if err := copyFile(b, filepath.Join(j.in.ArtifactDir, artifactBase)); err != nil {
				return true, err
			}
			break
		}
	}
	j.log.Info("merged the shards", "shards", len(found), "prefill_cells", len(merged.Prefill), "decode_cells", len(merged.Decode))
	return false, writeMeta(j.in.ArtifactDir, ref)
}

// refuseShards completes the check as a failure, and says in the comment, that the shards
// were not merged and why; it returns the reason.
func (j *job) refuseShards(ctx context.Context, c *ghbot.Client, p plan, cause error) error {
	why := "The shards' results were not merged, so nothing was compared or stored: " + ghbot.CodeSpan(firstLine(cause.Error()), 1000) +
		". Measure every shard of one plan from one decide job, with one engine build, on one kind of machine."
	r := j.render(p, outcome{}, renderInput{Cancelled: why})
	title := fmt.Sprintf("Not merged: the shards for %s do not make one run", ghbot.ShortSHA(p.HeadSHA))
	retitle := func(page string) string {
		_, rest, _ := strings.Cut(page, "\n")
		return "### ❌ " + title + "\n" + rest
	}
	if _, err := c.CompleteCheck(ctx, j.repo, p.HeadSHA, j.checkName(), ghbot.CheckUpdate{
		Conclusion: ghbot.ConclusionFailure, DetailsURL: j.runURL,
		Output: ghbot.CheckOutput{Title: title, Summary: j.acceptancePrefix(p) + retitle(r.summary)},
	}); err != nil {
		return err
	}
	j.upsertState(ctx, c, p, retitle(r.body), j.state(p, phaseDone, outcome{}, ghbot.ConclusionFailure))
	j.setOutput("verdict", VerdictRefused)
	j.setOutput("conclusion", string(ghbot.ConclusionFailure))
	j.summary(retitle(r.full))
	return fmt.Errorf("mode report: the shards were not merged: %w", cause)
}
