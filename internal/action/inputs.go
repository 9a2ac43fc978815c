package action

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/sethvargo/go-githubactions"

	"github.com/speedmatrix/speedmatrix/config"
	"github.com/speedmatrix/speedmatrix/ghbot"
	"github.com/speedmatrix/speedmatrix/results"
)

// The modes of the action (input mode).
const (
	ModeFull    = "full"
	ModeDecide  = "decide"
	ModeMeasure = "measure"
	ModeReport  = "report"
	ModeCleanup = "cleanup"
	ModePages   = "pages"
)

// InputNames are the action's inputs, as action.yml declares them: readInputs and
// ghbot.AuthFromInputs read each (a test keeps the three in step).
var InputNames = []string{
	"mode", "config", "token", "app-id", "installation-id", "private-key", "private-key-file",
	"check-name", "comment", "fail-on-regression", "label", "results", "artifact-dir",
	"baseline", "baseline-dir", "cleanup", "sha", "pr", "base-sha", "cells", "aa", "paired",
	"shards", "shard", "plan", "shard-artifacts", // shards.go
	"measure-result",             // measurefail.go
	"allow-unsandboxed",          // untrusted.go
	"bisect", "bisect-artifacts", // bisectsplit.go
}

// OutputNames are the step outputs the action may write, in the order it writes them.
var OutputNames = []string{
	"verdict", "conclusion", "regressions", "results", "comparison", "comment-url",
	"run", "sha", "base-sha", "pr", "kind", "cells", "aa", "paired",
	"shards", "plan", "matrix", // shards.go
	"site",                    // pages.go
	"bisect", "bisect-matrix", // bisectsplit.go
}

// Inputs are the action's inputs (INPUT_* variables), checked.
type Inputs struct {
	Mode        string
	Config      string // path of speedmatrix.yaml; "" reads ./speedmatrix.yaml when present
	CheckName   string
	Comment     string
	FailOnReg   *bool
	Label       string
	Results     string // head results file
	ArtifactDir string
	Baseline    string // a baseline results file, instead of the store
	BaselineDir string // the local baseline store
	// SHA, PR, BaseSHA and Cells pin what to measure or report (the decide job's outputs).
	SHA     string
	PR      int
	BaseSHA string
	Cells   []string
	// AA, in mode measure, measures a push's commit a second time as an A/A rerun (the decide
	// job's aa output: this push is the store.aa_every-th of its config).
	AA bool
	// Shards, Shard, Plan and ShardArtifacts shard the matrix over several measure jobs
	// (shards.go): decide splits it into Shards, measure measures Shard (K/N) of Plan, report
	// merges the measure jobs' artifact directories ShardArtifacts matches.
	Shards         int
	Shard, Plan    string
	ShardArtifacts string
	// Paired, in mode measure, measures paired: the base commit (base-sha) built and served
	// alternately with the head (the decide job's paired output).
	Paired bool
	// AllowUnsandboxed lets an untrusted measurement run with engine.sandbox: none (the
	// workflow's say, never the measured configuration's: untrusted.go).
	AllowUnsandboxed bool
	// MeasureResult, in mode report, is the measuring job's result as the workflow saw it
	// (needs.measure.result: success, failure, cancelled or skipped), so that a report without
	// results says how that job ended.
	MeasureResult string
	// HasCredentials is set when token, app-id or a private key is given.
	HasCredentials bool
	// Bisect and BisectArtifacts run a bisection a round per workflow run (bisectsplit.go):
	// decide takes the bisection (its comment id, the workflow_dispatch input), report the
	// round the decide job planned (ID/ROUND) and the glob of that round's artifact directories.
	Bisect          bisectInput
	BisectArtifacts string
}

// defaultBaselineDir is the local baseline store when the baseline-dir input is empty: one
// results file per commit, <sha>.json, in the user's cache directory, per repository — never in
// the workspace, where a pull request's checkout could bring its own "baseline".
func defaultBaselineDir(repo string) string {
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	return filepath.Join(dir, "speedmatrix", "baselines", filepath.FromSlash(repo))
}

// readInputs reads and checks the inputs; mode, when not empty, overrides the input (the
// --mode and --cleanup flags).
func readInputs(a *githubactions.Action, mode string) (Inputs, error) {
	in := Inputs{
		Mode:        a.GetInput("mode"),
		Config:      a.GetInput("config"),
		CheckName:   a.GetInput("check-name"),
		Comment:     a.GetInput("comment"),
		Label:       a.GetInput("label"),
		Results:     a.GetInput("results"),
		ArtifactDir: a.GetInput("artifact-dir"),
		Baseline:    a.GetInput("baseline"),
		BaselineDir: a.GetInput("baseline-dir"),
		SHA:         a.GetInput("sha"),
		BaseSHA:     a.GetInput("base-sha"),
	}
	in.HasCredentials = a.GetInput("token") != "" || a.GetInput("app-id") != "" || a.GetInput("private-key") != "" || a.GetInput("private-key-file") != ""
	if mode != "" {
		in.Mode = mode
	}
	if c := a.GetInput("cleanup"); c != "" {
		on, err := strconv.ParseBool(c)
		if err != nil {
			return in, fmt.Errorf("input cleanup: %q is not true or false", c)
		}
		if on {
			in.Mode = ModeCleanup
		}
	}
	if in.Mode == "" {
		// No default: full mode runs pull-request code with the token in one job, so a workflow
		// has to ask for it by name.
		return in, fmt.Errorf("input mode is not set: set it to decide, measure or report (the split workflow, where pull-request code never meets the token), or full, cleanup or pages")
	}
	switch in.Mode {
	case ModeFull, ModeDecide, ModeMeasure, ModeReport, ModeCleanup, ModePages:
	default:
		return in, fmt.Errorf("input mode: %q: want full, decide, measure, report, cleanup or pages", in.Mode)
	}
	if v := a.GetInput("fail-on-regression"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return in, fmt.Errorf("input fail-on-regression: %q is not true or false", v)
		}
		in.FailOnReg = &b
	}
	if in.ArtifactDir == "" {
		in.ArtifactDir = "speedmatrix-artifact"
	}
	if in.Results == "" {
		in.Results = filepath.Join(in.ArtifactDir, "results.json")
	}
	for name, p := range map[string]string{"results": in.Results, "artifact-dir": in.ArtifactDir, "baseline": in.Baseline, "baseline-dir": in.BaselineDir, "config": in.Config} {
		if strings.ContainsAny(p, "\r\n\x00") {
			return in, fmt.Errorf("input %s: a path with a line break or NUL", name)
		}
	}
	for name, s := range map[string]string{"sha": in.SHA, "base-sha": in.BaseSHA} {
		if s != "" && !ghbot.ValidSHA(s) {
			return in, fmt.Errorf("input %s: %q is not a full commit id", name, s)
		}
	}
	if v := a.GetInput("aa"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return in, fmt.Errorf("input aa: %q is not true or false", v)
		}
		in.AA = b
	}
	if v := a.GetInput("paired"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return in, fmt.Errorf("input paired: %q is not true or false", v)
		}
		in.Paired = b
	}
	if v := a.GetInput("allow-unsandboxed"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return in, fmt.Errorf("input allow-unsandboxed: %q is not true or false", v)
		}
		in.AllowUnsandboxed = b
	}
	switch v := a.GetInput("measure-result"); v {
	case "", "success", "failure", "cancelled", "skipped":
		in.MeasureResult = v
	default:
		return in, fmt.Errorf("input measure-result: %q: want success, failure, cancelled or skipped (needs.measure.result)", v)
	}
	if v := a.GetInput("pr"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return in, fmt.Errorf("input pr: %q is not a pull request number", v)
		}
		in.PR = n
	}
	if err := readShardInputs(a, &in); err != nil { // shards.go
		return in, err
	}
	if err := readBisectInputs(a, &in); err != nil { // bisectsplit.go
		return in, err
	}
	if v := a.GetInput("cells"); v != "" {
		cells, err := canonicalCells(config.SplitList(v))
		if err != nil {
			return in, fmt.Errorf("input cells: %w", err)
		}
		in.Cells = cells
	}
	return in, nil
}

// canonicalCells parses cells and writes them back in their canonical form, so that only
// strings this program made travel on (outputs, configuration).
func canonicalCells(list []string) ([]string, error) {
	var out []string
	for _, s := range list {
		id, err := results.ParseCellID(s)
		if err != nil {
			return nil, err
		}
		out = append(out, id.String())
	}
	return out, nil
}

// loadConfig reads the configuration and applies the inputs over it.
func loadConfig(in Inputs) (config.Config, error) {
	path := in.Config
	if path == "" {
		if _, err := os.Stat(config.FileName); err == nil {
			path = config.FileName
		}
	}
	cfg := config.Default()
	if path != "" {
		var err error
		if cfg, err = config.Load(path); err != nil {
			return cfg, fmt.Errorf("config %s: %w", path, err)
		}
	}
	if in.CheckName != "" {
		cfg.GitHub.CheckName = in.CheckName
	}
	if in.Comment != "" {
		cfg.GitHub.Comment = in.Comment
	}
	if in.Label != "" {
		cfg.GitHub.Label = in.Label
	}
	if in.FailOnReg != nil {
		cfg.GitHub.FailOnRegression = *in.FailOnReg
	}
	if err := cfg.Validate(); err != nil {
		return cfg, fmt.Errorf("config with the inputs: %w", err)
	}
	return cfg, nil
}
