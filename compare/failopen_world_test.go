package compare_test

import (
	"compress/gzip"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/speedmatrix/speedmatrix/calibrate"
	"github.com/speedmatrix/speedmatrix/compare"
	"github.com/speedmatrix/speedmatrix/results"
)

// worldCase draws one run of the base, ten history runs and one head run of a synthetic server
// under model w, the head slowed by shape and its run's factor set to headFactor, and compares.
func worldCase(t *testing.T, w calibrate.WorldModel, seed uint64, shape calibrate.Shape, headFactor float64) *results.Comparison {
	t.Helper()
	m := calibrate.NewMatrix(500+seed, 1)
	r := rand.New(rand.NewPCG(seed, 11))
	var hist []*results.File
	for i := range 10 {
		hist = append(hist, m.WorldRunAt(r, w, fmt.Sprintf("hist-%d", i+1), 1, "", 1))
	}
	base := m.WorldRunAt(r, w, "base", 1, "", 1)
	head := m.WorldRunAt(r, w, "head", 1, shape, headFactor)
	c, err := compare.Compare(compare.Input{Base: []*results.File{base}, Head: []*results.File{head}, History: hist}, compare.DefaultThresholds())
	if err != nil {
		t.Fatal(err)
	}
	checkSpans(t, c)
	return c
}

// checkSpans fails when a cell-metric's reason says its interval spans ±δ while the interval
// it prints lies wholly beyond δ (it read "−8.7 % (95 % CI −10.5 … −6.8 %) spans ±3 %").
func checkSpans(t *testing.T, c *results.Comparison) {
	t.Helper()
	d := map[results.Metric]float64{}
	for _, m := range c.Settings.Metrics {
		d[m.Metric] = m.Delta
	}
	for _, cell := range c.Cells {
		for _, m := range cell.Metrics {
			if m.Change == nil || !strings.Contains(m.Reason, "spans ±") {
				continue
			}
			if m.Change.High < -d[m.Metric] || m.Change.Low > d[m.Metric] {
				t.Errorf("%s %s: %q, but the interval lies wholly beyond ±δ", cell.Cell, m.Metric, m.Reason)
			}
		}
	}
}

// passes reports whether v lets the check pass (compare exits 0).
func passes(v results.Verdict) bool { return results.OutcomeOf(v).Exit == results.ExitPass }

// TestWholeShiftNeverPasses: every decode cell 10 % slower, in a head whose run happened to be
// 3 % faster (so the phase reads 7 % slower), under run drift (a factor per run, CV 2 %) or
// bimodal runs, with ten history runs. The shift test against the runs' spread does not reach
// the family's level there; a phase 7 % slower at p ≈ 10⁻³ by itself is suspected, so the
// matrix is unproven (exit 4), never inconclusive (12 of 12 passed before, under each model).
// Before, the independent generator's files passed with exit 0 in 59 % (drift) and 67 %
// (bimodal runs), "Decode total tok/s −11.3 %" printed above a passing verdict.
func TestWholeShiftNeverPasses(t *testing.T) {
	for _, w := range []calibrate.WorldModel{calibrate.WorldDrift, calibrate.WorldBimodal} {
		passed := 0
		const n = 12
		for seed := range uint64(n) {
			c := worldCase(t, w, seed, calibrate.ShapeMatrix, 1.03)
			if passes(c.Verdict) {
				passed++
				t.Logf("%s seed %d: %s (decode geomean %+.1f %%)", w, seed, c.Verdict, 100*c.Summary.DecodeTotalGeomean.Change)
			}
		}
		if passed > 0 {
			t.Errorf("%s: %d of %d heads whose whole decode phase is 7 %% slower passed, want none", w, passed, n)
		}
	}
}

// TestAmbiguousRunDoesNotPass: the rows at 32K and longer 10 % slower in a head whose run
// happened to be 4.5 % faster (run drift): the short rows read 4.5 % faster, the long ones
// 5 % slower. One head run explains that as well by a slower run whose short rows improved;
// compare must not pass it as an improvement: the long rows are unproven (exit 4) or slower.
// Before, 2–4 % of such comparisons passed as an improvement of the short rows.
func TestAmbiguousRunDoesNotPass(t *testing.T) {
	passed := 0
	const n = 40
	for seed := range uint64(n) {
		c := worldCase(t, calibrate.WorldDrift, seed, calibrate.ShapeRowsFrom32K, 1.045)
		if passes(c.Verdict) {
			passed++
			t.Logf("seed %d: %s, %d improved, %d unproven", seed, c.Verdict, c.Summary.CellCounts.Improvement, c.Summary.CellCounts.Unproven)
		}
	}
	if passed > 0 {
		t.Errorf("%d of %d heads with the long rows 10 %% slower in a 4.5 %% faster run passed, want none", passed, n)
	}
}

// readGz reads a gzipped results file of testdata.
func readGz(t *testing.T, path string) *results.File {
	t.Helper()
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	zr, err := gzip.NewReader(fh)
	if err != nil {
		t.Fatal(err)
	}
	f, err := results.Read(zr)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return f
}

// TestUnmeasuredRowsSlowdownDoesNotPass: files of the independent generator
// (internal/e2e/worldcheck: `worldrun.py --models t3 --procs trials3 --shapes rows --first N
// --pairs 1 --regen DIR`, seed 21), one file a side holding three trials of one server run,
// Student-t noise (3 d.o.f., SD 2 %), the head's rows at 32K and longer 10 % slower. Nothing
// measured the runs' spread, so nothing can block; the long rows, 8–10 % slower at one-sided
// p = 0.0009 (world 15) and 0.0034 (world 167) by themselves, must leave the matrix unproven
// (exit 4), not pass as inconclusive: both passed before (14 % of such comparisons did).
func TestUnmeasuredRowsSlowdownDoesNotPass(t *testing.T) {
	for _, world := range []string{"0015", "0167"} {
		base := readGz(t, "testdata/worldcheck/t3-trials3-"+world+"-base.json.gz")
		head := readGz(t, "testdata/worldcheck/t3-trials3-"+world+"-head-rows.json.gz")
		c, err := compare.Compare(compare.Input{Base: []*results.File{base}, Head: []*results.File{head}}, compare.DefaultThresholds())
		if err != nil {
			t.Fatal(err)
		}
		checkSpans(t, c)
		if passes(c.Verdict) {
			t.Errorf("world %s: %s, want unproven: the long rows moved 8-10 %% slower", world, c.Verdict)
			for _, g := range c.Groups {
				t.Logf("%s: %s", g.Verdict, g.Reason)
			}
		}
		if c.Verdict == results.VerdictRegression {
			t.Errorf("world %s: regression, but no run-to-run noise was measured", world)
		}
	}
}
