package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/speedmatrix/speedmatrix/calibrate"
	"github.com/speedmatrix/speedmatrix/config"
	"github.com/speedmatrix/speedmatrix/internal/action"
	"github.com/speedmatrix/speedmatrix/internal/cli"
)

// quickStartConfig returns the README's quick-start speedmatrix.yaml (the block with the
// budget), written to a file.
func quickStartConfig(t *testing.T) (path string, cfg config.Config) {
	t.Helper()
	for _, doc := range readmeSpeedmatrixYAML(t, readDoc(t, "README.md")) {
		if !strings.Contains(doc, "budget: ") {
			continue
		}
		path = filepath.Join(t.TempDir(), "speedmatrix.yaml")
		if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		cfg = config.Default()
		if err := config.Parse(path, []byte(doc), &cfg); err != nil {
			t.Fatal(err)
		}
		return path, cfg
	}
	t.Fatal("README.md has no speedmatrix.yaml with a budget (the quick start's)")
	return "", cfg
}

// TestREADMECostLine checks the first screen's GPU-time bullet against the cost model: the
// history verdicts need is store.min_history's default runs of build + load + the full matrix
// (the reference server's cost model, within 10 %), and what a pull request gets before it
// exists — a paired run of the cells the quick start's budget affords — is what `validate` of
// the quick start's speedmatrix.yaml says (action.ChoosePairedCells on the plan's prices).
func TestREADMECostLine(t *testing.T) {
	s := strings.Join(strings.Fields(firstScreen(t)), " ")
	m := regexp.MustCompile(`verdicts need (\d+) of them \(` + "`store.min_history`" + `\), ≈ (\d+) × \(build \+ load \+ (\d+) min\)`).FindStringSubmatch(s)
	if m == nil {
		t.Fatal("the first screen does not say what the history costs: verdicts need N of them (`store.min_history`), ≈ N × (build + load + M min)")
	}
	n1, _ := strconv.Atoi(m[1])
	n2, _ := strconv.Atoi(m[2])
	mins, _ := strconv.Atoi(m[3])
	if def := config.Default().Store.MinHistory; n1 != def || n2 != def {
		t.Errorf("the first screen says %d and %d runs of history; store.min_history's default is %d", n1, n2, def)
	}
	model := calibrate.NewMatrix(1, 1).RunCost(calibrate.DefaultCosts(), nil, nil, 1)
	if r := float64(mins) * float64(time.Minute) / float64(model); r < 0.9 || r > 1.1 {
		t.Errorf("the first screen says a history run's matrix takes %d min; the cost model says %v", mins, model.Round(time.Second))
	}

	m = regexp.MustCompile(`measured paired, base and head in one job, on the (\d+) of (\d+) cells the budget affords`).FindStringSubmatch(s)
	if m == nil {
		t.Fatal("the first screen does not say what a pull request gets before the history exists (measured paired … on the N of M cells the budget affords)")
	}
	path, cfg := quickStartConfig(t)
	if cfg.Paired.Mode == config.PairedModeOff {
		t.Fatalf("the quick start's paired.mode is off; the first screen says pull requests are measured paired")
	}
	var stdout, stderr bytes.Buffer
	if err := cli.Run(context.Background(), []string{"validate", "--config", path}, &stdout, &stderr, func(string) string { return "" }); err != nil {
		t.Fatalf("validate the quick start: %v\n%s", err, stderr.String())
	}
	want := regexp.MustCompile(`paired \(paired.mode auto; every pull request until the store holds (\d+) default-branch runs\): (\d+) of the matrix's (\d+) cells fit the budget`).FindStringSubmatch(stdout.String())
	if want == nil {
		t.Fatalf("validate of the quick start states no paired choice:\n%s", stdout.String())
	}
	if m[1] != want[2] || m[2] != want[3] || want[1] != strconv.Itoa(n1) {
		t.Errorf("the first screen says %s of %s cells before %d runs; validate of the quick start says %s of %s before %s", m[1], m[2], n1, want[2], want[3], want[1])
	}
	t.Logf("validate: %s", strings.TrimSpace(stdout.String()))
}

// TestMeasureTimeout checks the example workflows' measure job timeout-minutes against what the
// job measures: a pull request's run within the quick start's budget, and a push's baseline, the
// full matrix with its build and load and, every store.aa_every pushes, its A/A repeat (build +
// 2 × (load + matrix)), with 10 to 40 minutes for the runner's own steps.
func TestMeasureTimeout(t *testing.T) {
	_, cfg := quickStartConfig(t)
	matrix := calibrate.NewMatrix(1, 1).RunCost(calibrate.DefaultCosts(), nil, nil, 1)
	buildLoad := action.BuildLoadEstimate(cfg)
	push := buildLoad + buildLoad/2 + 2*matrix // a build, two loads (one a measurement), two matrices
	need := max(time.Duration(cfg.Budget), push)
	for _, file := range []string{"example-gpu.yml", "example-gpu-sharded.yml"} {
		b, err := os.ReadFile(filepath.Join("..", "..", ".github", "workflows", file))
		if err != nil {
			t.Fatal(err)
		}
		var w struct {
			Jobs map[string]struct {
				TimeoutMinutes int `yaml:"timeout-minutes"`
			} `yaml:"jobs"`
		}
		if err := yaml.Unmarshal(b, &w); err != nil {
			t.Fatal(err)
		}
		got := time.Duration(w.Jobs["measure"].TimeoutMinutes) * time.Minute
		if got < need+10*time.Minute || got > need+40*time.Minute {
			t.Errorf("%s: the measure job's timeout-minutes is %v; it measures at most %v (the budget %v, a push with its A/A repeat %v): want 10 to 40 minutes more",
				file, got, need.Round(time.Minute), time.Duration(cfg.Budget), push.Round(time.Minute))
		}
	}
}
