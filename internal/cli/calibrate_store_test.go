package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/speedmatrix/speedmatrix/calibrate"
	"github.com/speedmatrix/speedmatrix/compare"
	"github.com/speedmatrix/speedmatrix/report"
	"github.com/speedmatrix/speedmatrix/results"
	"github.com/speedmatrix/speedmatrix/store"
)

// TestCalibrateStoreRealAA generates stored runs with the simulator at a run-to-run noise (30 %)
// far above the prior at concurrency 8 (1 %), two commits with three and two runs, and checks
// that `calibrate --store` compares every pair of runs of one commit (4 pairs), reports the
// false-alarm rate and a measured CV above the prior there, and that compare given that
// measured noise uses it (noise source measured) where it otherwise used the prior.
func TestCalibrateStoreRealAA(t *testing.T) {
	// About 4 s: it runs under -short too, being the acceptance test of measured noise.
	ctx := context.Background()
	dir := t.TempDir()
	st := store.NewDir(filepath.Join(dir, "store"))
	commits := []string{strings.Repeat("a", 40), strings.Repeat("b", 40)}
	var files []*results.File
	var paths []string
	for i, runs := range []int{3, 2} {
		for r := range runs {
			seed := fmt.Sprint(10*i + r + 1)
			out := filepath.Join(dir, "run"+seed+".json")
			args := []string{"run", "--contexts", "8K", "--concurrency", "1,8", "--duration", "300ms",
				"--warmup", "0", "--sim-speedup", "40", "--sim-noise", "0.3", "--sim-seed", seed, "--quiet", "-o", out}
			if _, stderr, err := runSimTime(t, nil, args...); err != nil {
				t.Fatalf("run: %v\n%s", err, stderr)
			}
			f := readResults(t, out)
			// The simulator's launch command names its seed, which store.ConfigID hashes (its
			// doc says the seed does not change it); one machine's runs share one command.
			f.Run.LaunchCommand = "speedmatrix sim --noise 0.3"
			if err := results.WriteFile(out, f); err != nil {
				t.Fatal(err)
			}
			paths = append(paths, out)
			e := store.Entry{Commit: commits[i], Kind: store.KindDefault}
			if r > 0 {
				e.Kind, e.RunID = store.KindAA, "rerun"+seed
			}
			if _, err := st.Put(ctx, e, f); err != nil {
				t.Fatal(err)
			}
			files = append(files, f)
		}
	}

	stdout, stderr, err := runBench(t, nil, "calibrate", "--store", filepath.Join(dir, "store"), "--format", "json")
	if err != nil {
		t.Fatalf("calibrate --store: %v\n%s", err, stderr)
	}
	var rep calibrate.StoreReport
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("calibrate --store --format json: %v\n%s", err, stdout)
	}
	if rep.Commits != 2 || rep.Runs != 5 || rep.FalseAlarm.N != 4 {
		t.Errorf("calibrate --store compared %d commits, %d runs, %d pairs; want 2, 5 and 4", rep.Commits, rep.Runs, rep.FalseAlarm.N)
	}
	t.Logf("false alarms: %s", rep.FalseAlarm)
	if len(rep.Alarms) != rep.FalseAlarm.K {
		t.Errorf("%d alarms listed for %d false alarms", len(rep.Alarms), rep.FalseAlarm.K)
	}
	for _, a := range rep.Alarms {
		if a.Commit == "" || a.Base == a.Head || !strings.HasPrefix(a.Base, "results/") && !strings.HasPrefix(a.Base, "aa/") || len(a.Regressed) == 0 {
			t.Errorf("alarm %+v: want the commit, its two stored runs and what regressed", a)
		}
	}
	var above []string
	for _, n := range rep.Noise {
		t.Logf("%s %s: measured CV %.2f %% (df %d), prior %.2f %%", n.Cell, n.Metric, n.CV*100, n.DF, n.PriorCV*100)
		if n.AbovePrior != (n.CV > n.PriorCV) || n.DF != 3 {
			t.Errorf("%s %s: above_prior %v with CV %v and prior %v, df %d (want 3: 2 + 1)", n.Cell, n.Metric, n.AbovePrior, n.CV, n.PriorCV, n.DF)
		}
		if n.AbovePrior {
			above = append(above, n.Cell+" "+string(n.Metric))
		}
	}
	var c8 bool
	for _, a := range above {
		c8 = c8 || strings.HasPrefix(a, "decode/8K/8 ")
	}
	if !c8 {
		t.Fatalf("no concurrency-8 cell-metric measured above the prior at --sim-noise 0.3: %v", above)
	}
	text, _, err := runBench(t, nil, "calibrate", "--store", filepath.Join(dir, "store"))
	t.Logf("calibrate --store:\n%s", text)
	if err != nil || !strings.Contains(text, "False alarms") || !strings.Contains(text, "above prior") ||
		(rep.FalseAlarm.K > 0 && !strings.Contains(text, " vs ")) {
		t.Errorf("calibrate --store text output (err %v) lacks the false-alarm rate or the above-prior cells:\n%s", err, text)
	}

	// compare of two runs of the second commit, with and without the measured noise.
	th := compare.DefaultThresholds()
	in := compare.Input{Base: files[3:4], Head: files[4:5]}
	plain, err := compare.Compare(in, th)
	if err != nil {
		t.Fatal(err)
	}
	in.MeasuredNoise = map[compare.NoiseKey]float64{}
	for _, cell := range plain.Cells {
		for _, m := range cell.Metrics {
			for _, n := range rep.Noise {
				if n.Cell == cell.Cell && n.Metric == m.Metric {
					in.MeasuredNoise[compare.NoiseKey{Cell: cellID(cell), Metric: m.Metric}] = n.CV
				}
			}
		}
	}
	got, err := compare.Compare(in, th)
	if err != nil {
		t.Fatal(err)
	}
	switched := 0
	for i, cell := range got.Cells {
		for j, m := range cell.Metrics {
			before := plain.Cells[i].Metrics[j].Noise
			if m.Noise == nil || before == nil {
				continue
			}
			cv, ok := in.MeasuredNoise[compare.NoiseKey{Cell: cellID(cell), Metric: m.Metric}]
			wasPrior := before.Source == results.NoisePrior || (before.Source == results.NoiseWithin && before.WithinCV != nil && *before.WithinCV < cv)
			if ok && cv > before.CV && wasPrior {
				if m.Noise.Source != results.NoiseMeasured || m.Noise.CV != cv || m.Noise.PriorCV == nil {
					t.Errorf("%s %s: noise %+v with measured CV %v above the prior's %v (source %s before); want source measured", cell.Cell, m.Metric, *m.Noise, cv, before.CV, before.Source)
				}
				switched++
			}
		}
	}
	if switched == 0 {
		t.Errorf("no cell-metric switched to the measured noise")
	}
	t.Logf("%d cell-metrics switched to the measured noise", switched)
	if err := results.ValidateComparison(got); err != nil {
		t.Errorf("comparison with measured noise does not validate: %v", err)
	}

	// compare --store finds the same measured noise in the store by itself.
	stdout, stderr, err = runBench(t, nil, "compare", "--store", filepath.Join(dir, "store"), "--format", "json", paths[3], paths[4])
	if err != nil {
		t.Fatalf("compare --store: %v\n%s", err, stderr)
	}
	fromStore, err := results.DecodeComparison([]byte(stdout))
	if err != nil {
		t.Fatal(err)
	}
	bySource := func(c *results.Comparison) map[string]string {
		out := map[string]string{}
		for _, cell := range c.Cells {
			for _, m := range cell.Metrics {
				if m.Noise != nil {
					out[cell.Cell+" "+string(m.Metric)] = m.Noise.Source
				}
			}
		}
		return out
	}
	if diff := cmp.Diff(bySource(got), bySource(fromStore)); diff != "" {
		t.Errorf("compare --store noise sources differ from compare given the calibrated noise (-want +got):\n%s", diff)
	}

	sch, err := jsonschema.NewCompiler().Compile("../../results/schema/comparison-v1.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	data, err := results.EncodeComparison(got)
	if err != nil {
		t.Fatal(err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if err := sch.Validate(inst); err != nil {
		t.Errorf("a comparison with measured noise does not satisfy the schema: %v", err)
	}
	var b strings.Builder
	if err := report.ComparisonText(&b, got); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "measured noise above the prior") {
		t.Errorf("the rendered comparison does not say the measured noise above the prior was used:\n%s", b.String())
	}
}

// cellID returns the id of a compared cell.
func cellID(c results.CellComparison) results.CellID {
	return results.CellID{Phase: c.Phase, ContextLabel: c.ContextLabel, Concurrency: c.Concurrency}
}
