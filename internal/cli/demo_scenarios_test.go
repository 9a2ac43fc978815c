package cli

import (
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/speedmatrix/speedmatrix/calibrate"
	"github.com/speedmatrix/speedmatrix/demo"
	"github.com/speedmatrix/speedmatrix/internal/cli/cmdutil"
	"github.com/speedmatrix/speedmatrix/results"
)

// demoScenario is one of the README's demo scenarios: the head's --head-slowdown as a factor
// on each cell's rate.
type demoScenario struct {
	name, slowdown string
	rate           func(id results.CellID) float64
}

// demoScenarios are the demo's scenarios (issue 33): A/A, decode 1.3× step time from 8
// requests on, 1.25× at one request, prefill 1.2×, and everything 1.05×.
var demoScenarios = []demoScenario{
	{"aa", "", func(results.CellID) float64 { return 1 }},
	{"decode-1.3-batch8", "decode=1.3@batch>=8", func(id results.CellID) float64 {
		if id.Phase == results.PhaseDecode && id.Concurrency >= 8 {
			return 1 / 1.3
		}
		return 1
	}},
	{"decode-1.25-batch1", "decode=1.25@batch==1", func(id results.CellID) float64 {
		if id.Phase == results.PhaseDecode && id.Concurrency == 1 {
			return 1 / 1.25
		}
		return 1
	}},
	{"prefill-1.2", "prefill=1.2", func(id results.CellID) float64 {
		if id.Phase == results.PhasePrefill {
			return 1 / 1.2
		}
		return 1
	}},
	{"all-1.05", "all=1.05", func(results.CellID) float64 { return 1 / 1.05 }},
}

// demoShape keeps the demo's quick matrix of f: contexts 8K and 32K, decode at 1, 8 and 32
// requests, and the two prefill cells.
func demoShape(f *results.File) *results.File {
	out := *f
	out.Prefill, out.Decode = nil, nil
	for _, c := range f.Prefill {
		if c.ContextLabel == "8K" || c.ContextLabel == "32K" {
			out.Prefill = append(out.Prefill, c)
		}
	}
	for _, c := range f.Decode {
		if (c.ContextLabel == "8K" || c.ContextLabel == "32K") && (c.Concurrency == 1 || c.Concurrency == 8 || c.Concurrency == 32) {
			out.Decode = append(out.Decode, c)
		}
	}
	return &out
}

// TestDemoScenarios renders each demo scenario, with 10 and with 1 base run, from synthetic
// runs of the demo's quick matrix (the calibration's generator: the simulator takes minutes per
// scenario on a busy machine), and pins the terminal summary, the comment's headline and the
// check in a golden file each. In every one the summary counts every cell once, the numbers
// shown keep change = head/base − 1 (report's property test holds that over thousands), and the
// demo's --exit-code status is compare's on the same files.
func TestDemoScenarios(t *testing.T) {
	for _, runs := range []int{10, 1} {
		for k, sc := range demoScenarios {
			name := fmt.Sprintf("%s-%dhistory", sc.name, runs)
			t.Run(name, func(t *testing.T) {
				seed := uint64(500 + k)
				m := calibrate.NewMatrix(seed, 1)
				r := rand.New(rand.NewPCG(seed, 3))
				dir := t.TempDir()
				none := func(results.CellID) float64 { return 1 }
				var hist []*results.File
				for _, dr := range demo.Jobs(dir, runs, sc.slowdown) {
					slow := none
					if dr.Side == "head" {
						slow = sc.rate
					}
					f := demoShape(m.SlowedRun(r, calibrate.WorldGaussian, filepath.Base(dr.Path), nil, slow))
					if dr.Side == "head" {
						calibrate.ScalePrefill(f, slow)
					}
					f.Engine.Commit = dr.Commit
					if err := os.MkdirAll(filepath.Dir(dr.Path), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := results.WriteFile(dr.Path, f); err != nil {
						t.Fatal(err)
					}
					if dr.Side == "base" {
						hist = append(hist, f)
					}
				}
				base, err := results.ReadFile(filepath.Join(dir, "base.json"))
				if err != nil {
					t.Fatal(err)
				}
				head, err := results.ReadFile(filepath.Join(dir, "head.json"))
				if err != nil {
					t.Fatal(err)
				}
				d, err := demo.Render(base, head, hist, "base.json", "head.json")
				if err != nil {
					t.Fatal(err)
				}
				var sum strings.Builder
				if err := demo.Summary(&sum, d, demo.SummaryInput{Dir: "DIR", Store: "DIR/store", Slowdown: sc.slowdown, Matrix: "quick", Profile: "synthetic", Speedup: 1, Runs: runs}); err != nil {
					t.Fatal(err)
				}
				c := d.Comparison
				if !strings.Contains(sum.String(), fmt.Sprintf("(%d cells)", len(c.Cells))) {
					t.Errorf("the summary does not count the %d cells once:\n%s", len(c.Cells), sum.String())
				}
				for _, cell := range c.Cells {
					for _, mc := range cell.Metrics {
						if mc.Change != nil && mc.Base != nil && mc.Head != nil {
							if d := *mc.Head / *mc.Base - 1 - mc.Change.Change; d > 0.005 || d < -0.005 {
								t.Errorf("%s %s: head/base − 1 = %.4f, change %.4f", cell.Cell, mc.Metric, *mc.Head / *mc.Base - 1, mc.Change.Change)
							}
						}
					}
				}
				// compare on the demo's files, as a reader repeats it: the history folder holds the
				// earlier runs, the baseline's own run is base.json.
				args := []string{"compare", filepath.Join(dir, "base.json"), filepath.Join(dir, "head.json"), "-o", filepath.Join(dir, "comparison.json")}
				if runs > 1 {
					args = append(args, "--history", filepath.Join(dir, "history"))
				}
				_, stderr, code := runCLI(args...)
				demoCode := ExitCode(cmdutil.CompareExit(&Env{Log: discardLog()}, c))
				if code != demoCode {
					t.Errorf("compare exits %d on the demo's files, demo --exit-code %d (verdict %s)\n%s", code, demoCode, c.Verdict, stderr)
				}
				golden := fmt.Sprintf("%s\n--- comment headline\n%s\n--- check: %s — %s\n--- demo --exit-code: %d, compare: %d\n",
					sum.String(), headline(d.Comment.Body), d.Conclusion, d.Comment.Title, demoCode, code)
				checkGolden(t, filepath.Join("testdata", "demo-scenarios", name+".golden"), golden)
			})
		}
	}
}

// discardLog is a logger that writes nowhere.
func discardLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// checkGolden compares got with the golden file at path, or rewrites it under -update.
func checkGolden(t *testing.T, path, got string) {
	t.Helper()
	if *updateExample {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (rewrite the golden files with -update)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s differs (-want +got; rewrite with -update):\n%s", path, diff)
	}
}

// headline is a comment's headline: its first line that starts with "### ".
func headline(body string) string {
	for l := range strings.SplitSeq(body, "\n") {
		if strings.HasPrefix(l, "### ") {
			return l
		}
	}
	return ""
}
