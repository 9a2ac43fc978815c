package main

import (
	"math"
	"regexp"
	"strconv"
	"testing"

	"github.com/speedmatrix/speedmatrix/bench"
	"github.com/speedmatrix/speedmatrix/calibrate"
)

// TestDocsMatrixFigures: the full matrix has one time and one cell count wherever a user reads
// them (README.md, docs/*.md, demo --help): the time is the reference server's cost model
// rounded to the minute, which the plan's estimate (what plan and validate print) rounds to
// as well, and the cells are the reference report's 73, prefill at 9 context lengths. Before,
// the pages said 41, 33 or 40.7 min and validate 8 prefill cells.
func TestDocsMatrixFigures(t *testing.T) {
	model := calibrate.NewMatrix(1, 1).RunCost(calibrate.DefaultCosts(), nil, nil, 1)
	minutes := int(math.Round(model.Minutes()))
	plan, err := bench.PlanShards(bench.DefaultConfig(), 1)
	if err != nil {
		t.Fatal(err)
	}
	if got := int(math.Round(plan.Shards[0].Expected.Minutes())); got != minutes {
		t.Errorf("plan's estimate of the full matrix rounds to %d min, the cost model's (%v) to %d", got, model, minutes)
	}
	docs := userDocs(t)
	// The example workflows' comments too: a user copies them (the sharded one said ≈ 40 min).
	for _, p := range []string{"internal/cli/demo/demo.go", ".github/workflows/example-gpu.yml", ".github/workflows/example-gpu-sharded.yml"} {
		docs = append(docs, userDoc{Path: p, Text: readDoc(t, p)})
	}
	timeRE := regexp.MustCompile(`(?:full|reference) matrix[^.;]{0,60}?(?:≈|about) (\d+(?:\.\d+)?) min`)
	cellsRE := regexp.MustCompile(`(?:full|reference) matrix[^.;]{0,40}?\b(\d+) cells`)
	prefillRE := regexp.MustCompile(`prefill at (\d+) context lengths`)
	stale := regexp.MustCompile(`\b40\.7 min|\b33 min|\b8 prefill cells`)
	found := 0
	for _, d := range docs {
		text := regexp.MustCompile(`\s+`).ReplaceAllString(d.Text, " ")
		for _, m := range timeRE.FindAllStringSubmatch(text, -1) {
			found++
			if m[1] != strconv.Itoa(minutes) {
				t.Errorf("%s: %q: the full matrix takes about %d min by the cost model (%v)", d.Path, m[0], minutes, model)
			}
		}
		for _, m := range cellsRE.FindAllStringSubmatch(text, -1) {
			found++
			if m[1] != "73" {
				t.Errorf("%s: %q: the full matrix is 73 cells on the reference server", d.Path, m[0])
			}
		}
		for _, m := range prefillRE.FindAllStringSubmatch(text, -1) {
			if m[1] != "9" {
				t.Errorf("%s: %q: the reference matrix has prefill at 9 context lengths", d.Path, m[0])
			}
		}
		if m := stale.FindString(text); m != "" {
			t.Errorf("%s: %q: a stale figure of the full matrix", d.Path, m)
		}
	}
	if found < 3 {
		t.Errorf("found %d figures of the full matrix in the docs; the test's patterns no longer match them", found)
	}
}
