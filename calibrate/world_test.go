package calibrate

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/speedmatrix/speedmatrix/compare"
	"github.com/speedmatrix/speedmatrix/results"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// sdOf returns the sample SD of xs.
func sdOf(xs []float64) float64 {
	var m float64
	for _, x := range xs {
		m += x
	}
	m /= float64(len(xs))
	var v float64
	for _, x := range xs {
		v += (x - m) * (x - m)
	}
	return math.Sqrt(v / float64(len(xs)-1))
}

// TestWorldDrawMagnitudes checks each model's draws over many samples: the per-cell SD on the
// log scale, the run factor's, and the bimodal share of slow runs.
func TestWorldDrawMagnitudes(t *testing.T) {
	const n = 40000
	cases := []struct {
		model       WorldModel
		concurrency int
		decode      bool
		cellSD      float64
		runSD       float64
	}{
		{WorldGaussian, 8, true, 0.01, 0},
		{WorldGaussian, 1, false, 0.01, 0},
		{WorldT3, 8, true, 0.02, 0},
		{WorldSpec, 1, true, 0.10, 0},
		{WorldSpec, 2, true, 0.20, 0},
		{WorldSpec, 4, true, 0.075, 0},
		{WorldSpec, 8, true, 0.005, 0},
		{WorldSpec, 1, false, 0.01, 0},
		{WorldSpecNoCounters, 2, true, 0.20, 0},
		{WorldDrift, 8, true, 0.005, 0.02},
		{WorldBimodal, 8, true, 0.01, math.Sqrt(0.2*0.8) * -math.Log(0.94)},
	}
	for _, tc := range cases {
		r := rand.New(rand.NewPCG(7, 7))
		cell, run := make([]float64, n), make([]float64, n)
		slow := 0
		for i := range n {
			cell[i] = math.Log(tc.model.cellFactor(r, tc.concurrency, tc.decode))
			f := tc.model.runFactor(r)
			run[i] = math.Log(f)
			if f < 1 && tc.model == WorldBimodal {
				slow++
			}
		}
		// t₃'s sample SD converges slowly (infinite kurtosis but for the clip): a looser bound.
		tol := 0.05
		if tc.model == WorldT3 {
			tol = 0.15
		}
		if got := sdOf(cell); math.Abs(got/tc.cellSD-1) > tol {
			t.Errorf("%s C=%d decode=%v: cell SD %.4f, want %.4f ± %.0f %%", tc.model, tc.concurrency, tc.decode, got, tc.cellSD, tol*100)
		}
		got := sdOf(run)
		if tc.runSD == 0 && got != 0 || tc.runSD > 0 && math.Abs(got/tc.runSD-1) > 0.05 {
			t.Errorf("%s: run-factor SD %.4f, want %.4f", tc.model, got, tc.runSD)
		}
		if tc.model == WorldBimodal {
			if share := float64(slow) / n; math.Abs(share-0.2) > 0.01 {
				t.Errorf("bimodal: %.3f of runs slow, want 0.20", share)
			}
		}
	}
}

// TestWorldT3Tails checks that t₃'s tails are heavier than the Gaussian's: beyond 4 SDs, a
// Gaussian has 6e-5 of its draws and t₃ about 0.6 %.
func TestWorldT3Tails(t *testing.T) {
	const n = 100000
	beyond := func(w WorldModel, sd float64) float64 {
		r := rand.New(rand.NewPCG(3, 3))
		k := 0
		for range n {
			if math.Abs(math.Log(w.cellFactor(r, 8, true))) > 4*sd {
				k++
			}
		}
		return float64(k) / n
	}
	g, h := beyond(WorldGaussian, 0.01), beyond(WorldT3, 0.02)
	if g > 0.0005 {
		t.Errorf("gaussian: %.5f of draws beyond 4 SD, want about 6e-5", g)
	}
	if h < 0.003 || h < 20*g {
		t.Errorf("t3: %.5f of draws beyond 4 SD (gaussian %.5f), want about 0.006", h, g)
	}
}

// logTotal returns log total tok/s of cell id in each trial of f.
func logTotal(f *results.File, id results.CellID) []float64 {
	var out []float64
	for i := range f.Decode {
		if f.Decode[i].ID() != id {
			continue
		}
		for _, tr := range f.Decode[i].Trials {
			out = append(out, math.Log(*tr.TotalTokPerS))
		}
	}
	return out
}

// TestWorldFileMagnitudes checks the written files: the run-to-run SD of a cell's total tok/s
// (level and in-window jitter together) is the model's, within sampling tolerance.
func TestWorldFileMagnitudes(t *testing.T) {
	if testing.Short() {
		t.Skip("draws 600 full matrices a model")
	}
	const n = 600
	m := NewMatrix(11, 1)
	c1 := results.CellID{Phase: results.PhaseDecode, ContextLabel: "8K", Concurrency: 1}
	c8 := results.CellID{Phase: results.PhaseDecode, ContextLabel: "8K", Concurrency: 8}
	cases := []struct {
		model  WorldModel
		sd1    float64 // SD of log total tok/s at C=1, 8K
		sd8    float64 // at C=8
		maxErr float64
	}{
		{WorldGaussian, 0.01, 0.01, 0.12},
		{WorldSpec, 0.10, 0.005, 0.12},
		{WorldDrift, math.Hypot(0.02, 0.005), math.Hypot(0.02, 0.005), 0.12},
	}
	for _, tc := range cases {
		r := rand.New(rand.NewPCG(5, 5))
		var x1, x8 []float64
		for i := range n {
			f := m.WorldRun(r, tc.model, "r", 1, "")
			if i == 0 {
				if err := results.Validate(f); err != nil {
					t.Fatalf("%s: %v", tc.model, err)
				}
			}
			x1 = append(x1, logTotal(f, c1)...)
			x8 = append(x8, logTotal(f, c8)...)
		}
		for _, g := range []struct {
			name      string
			got, want float64
		}{{"C=1", sdOf(x1), tc.sd1}, {"C=8", sdOf(x8), tc.sd8}} {
			if math.Abs(g.got/g.want-1) > tc.maxErr {
				t.Errorf("%s %s: SD of log total tok/s %.4f, want %.4f ± %.0f %%", tc.model, g.name, g.got, g.want, tc.maxErr*100)
			}
		}
	}
}

// TestWorldDriftSharedWithinFile checks that a drift run's trials share its factor: the
// matrix-wide mean of a file's log rates varies between files by the run's CV 2 %, while two
// trials of one file differ only by the cells' own 0.5 %; without drift the file means hardly
// move.
func TestWorldDriftSharedWithinFile(t *testing.T) {
	const n = 200
	m := NewMatrix(13, 1)
	fileMeans := func(w WorldModel) (between, within float64) {
		r := rand.New(rand.NewPCG(9, 9))
		var means, diffs []float64
		for range n {
			f := m.WorldRun(r, w, "r", 2, "")
			var sum float64
			var k int
			for i := range f.Decode {
				c := &f.Decode[i]
				if !c.Status.Measured() {
					continue
				}
				a, b := math.Log(*c.Trials[0].TotalTokPerS), math.Log(*c.Trials[1].TotalTokPerS)
				sum += a + b
				k += 2
				diffs = append(diffs, (a-b)/math.Sqrt2)
			}
			means = append(means, sum/float64(k))
		}
		return sdOf(means), sdOf(diffs)
	}
	between, within := fileMeans(WorldDrift)
	if math.Abs(between/0.02-1) > 0.2 {
		t.Errorf("drift: SD of a file's mean log rate %.4f, want 0.02 (the run factor)", between)
	}
	if math.Abs(within/0.005-1) > 0.15 {
		t.Errorf("drift: SD between trials of one file %.4f, want 0.005 (the cells' own noise)", within)
	}
	if between, _ := fileMeans(WorldGaussian); between > 0.004 {
		t.Errorf("gaussian: SD of a file's mean log rate %.4f, want about 0.01/√43 (no shared factor)", between)
	}
}

// TestWorldSpecCounters checks that under spec the window's acceptance length carries the draw
// that moved its rate (so counters could remove that noise), and that spec-nocounters' files
// hold no spec-decode counter at all while its rates are as noisy.
func TestWorldSpecCounters(t *testing.T) {
	const n = 300
	m := NewMatrix(17, 1)
	id := results.CellID{Phase: results.PhaseDecode, ContextLabel: "8K", Concurrency: 1}
	r := rand.New(rand.NewPCG(1, 2))
	var rates, lengths []float64
	for range n {
		f := m.WorldRun(r, WorldSpec, "r", 1, "")
		if got := f.SpecDecodeState(); got != results.SpecDecodeUnpinned {
			t.Fatalf("spec: SpecDecodeState %q, want %q", got, results.SpecDecodeUnpinned)
		}
		c := f.AcceptanceCell(id)
		rates = append(rates, math.Log(*c.TotalTokPerS))
		lengths = append(lengths, math.Log(*c.Trials[0].Telemetry.SpecAcceptanceLength))
	}
	if corr := correlation(rates, lengths); corr < 0.8 {
		t.Errorf("spec: correlation of log rate and log acceptance length %.3f, want ≥ 0.8 (√0.75 of the variance is the acceptance)", corr)
	}
	f := m.WorldRun(r, WorldSpecNoCounters, "r", 3, "")
	if got := f.SpecDecodeState(); got != results.SpecDecodeOff {
		t.Errorf("spec-nocounters: SpecDecodeState %q, want %q (counters read, none speculative)", got, results.SpecDecodeOff)
	}
	for _, c := range f.Decode {
		for _, tr := range append([]results.DecodeTrial{{DecodeMetrics: c.DecodeMetrics}}, c.Trials...) {
			if tm := tr.Telemetry; tm != nil && (tm.SpecAcceptanceLength != nil || tm.SpecAcceptancePct != nil) {
				t.Fatalf("spec-nocounters: cell %s holds spec-decode counters", c.ContextLabel)
			}
		}
	}
}

func correlation(x, y []float64) float64 {
	var mx, my float64
	for i := range x {
		mx += x[i]
		my += y[i]
	}
	mx /= float64(len(x))
	my /= float64(len(y))
	var sxy, sxx, syy float64
	for i := range x {
		sxy += (x[i] - mx) * (y[i] - my)
		sxx += (x[i] - mx) * (x[i] - mx)
		syy += (y[i] - my) * (y[i] - my)
	}
	return sxy / math.Sqrt(sxx*syy)
}

// TestWorldFilesValidate checks that every procedure's files under every model pass
// results.Validate, hold the trials and runs the procedure says, and that a paired procedure's
// files are compared as pairs.
func TestWorldFilesValidate(t *testing.T) {
	s := DefaultWorldSettings()
	for _, w := range WorldModels() {
		for _, p := range Procedures() {
			j := job{model: w, proc: p, shape: ShapeRowsFrom32K}
			in, _ := s.sides(j)
			for _, f := range append(append(append([]*results.File(nil), in.Base...), in.Head...), in.History...) {
				if err := results.Validate(f); err != nil {
					t.Fatalf("%s/%s: %s: %v", w, p, f.Run.ID, err)
				}
			}
			wantFiles, wantTrials, wantHistory := 1, 1, 0
			switch p {
			case ProcHistory, ProcBudget:
				wantHistory = historyRuns
			case ProcTrials3:
				wantTrials = runsPerSide
			case ProcRuns3:
				wantFiles = runsPerSide
			case ProcPaired:
				wantTrials = pairedBlocks
			}
			if len(in.Base) != wantFiles || len(in.Head) != wantFiles || len(in.History) != wantHistory {
				t.Errorf("%s/%s: %d base, %d head, %d history files; want %d, %d, %d", w, p, len(in.Base), len(in.Head), len(in.History), wantFiles, wantFiles, wantHistory)
			}
			if got := len(in.Head[0].Decode[0].Trials); got != wantTrials {
				t.Errorf("%s/%s: %d trials a cell, want %d", w, p, got, wantTrials)
			}
			if p != ProcPaired || w != WorldGaussian {
				continue
			}
			c, err := compare.Compare(in, compare.DefaultThresholds())
			if err != nil {
				t.Fatal(err)
			}
			if c.Settings.Pairing == nil {
				t.Errorf("paired: compare did not pair the files (warnings %q)", c.Warnings)
			}
		}
	}
}

// TestWorldShapes checks which cells each slowdown shape slows, and by how much.
func TestWorldShapes(t *testing.T) {
	d := func(ctx, c int) results.CellID {
		return results.CellID{Phase: results.PhaseDecode, ContextLabel: results.ContextLabel(ctx), Concurrency: c}
	}
	pre := results.CellID{Phase: results.PhasePrefill, ContextLabel: "32K"}
	cases := []struct {
		shape Shape
		id    results.CellID
		ctx   int
		want  float64
	}{
		{ShapeRowsFrom32K, d(32<<10, 8), 32 << 10, 0.9},
		{ShapeRowsFrom32K, d(1019<<10, 1), 1019 << 10, 0.9},
		{ShapeRowsFrom32K, d(16<<10, 8), 16 << 10, 1},
		{ShapeRowsFrom32K, pre, 32 << 10, 1},
		{ShapeRow32K, d(32<<10, 4), 32 << 10, 0.9},
		{ShapeRow32K, d(64<<10, 4), 64 << 10, 1},
		{ShapeColumn8, d(8<<10, 8), 8 << 10, 0.9},
		{ShapeColumn8, d(8<<10, 16), 8 << 10, 1},
		{ShapeColumn1, d(512<<10, 1), 512 << 10, 0.8},
		{ShapeColumn1, d(512<<10, 2), 512 << 10, 1},
		{ShapeMatrix, d(8<<10, 128), 8 << 10, 0.9},
		{ShapeMatrix, pre, 32 << 10, 1},
		{"", d(32<<10, 8), 32 << 10, 1},
	}
	for _, tc := range cases {
		if got := tc.shape.Factor(tc.id, tc.ctx); got != tc.want {
			t.Errorf("%s on %s: factor %g, want %g", tc.shape, tc.id, got, tc.want)
		}
	}
}

// TestParseWorldLists checks the CLI lists: empty is all, unknown names say what is known.
func TestParseWorldLists(t *testing.T) {
	if got, err := ParseWorldModels(""); err != nil || len(got) != 10 {
		t.Errorf("ParseWorldModels(\"\") = %v, %v; want all 10", got, err)
	}
	got, err := ParseShapes("rows>=32K, matrix,matrix")
	if err != nil || !cmp.Equal(got, []Shape{ShapeRowsFrom32K, ShapeMatrix}) {
		t.Errorf("ParseShapes = %v, %v", got, err)
	}
	if _, err := ParseProcedures("one,twice"); err == nil || !bytes.Contains([]byte(err.Error()), []byte("one, history, trials3, runs3, paired")) {
		t.Errorf("ParseProcedures(twice) error %v, want one naming the procedures", err)
	}
}

// TestRunWorldSmall runs a few comparisons: the report has a row per (model, procedure) with
// n = pairs everywhere, is the same with 1 worker and with 4, and a matrix slowed by 10 %
// with 10 history runs under Gaussian noise is always found while A/A almost never blocks.
func TestRunWorldSmall(t *testing.T) {
	s := DefaultWorldSettings()
	s.Models = []WorldModel{WorldGaussian, WorldDrift}
	s.Procedures = []Procedure{ProcHistory, ProcPaired}
	s.Shapes = []Shape{ShapeMatrix, ShapeRowsFrom32K}
	s.Pairs = 6
	if testing.Short() {
		s.Pairs = 3
	}
	s.Workers = 1
	one, err := RunWorld(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	s.Workers = 4
	calls := 0
	s.Progress = func(done, total int) {
		calls++
		if total != s.Pairs*3*4 {
			t.Errorf("progress total %d, want %d", total, s.Pairs*3*4)
		}
	}
	four, err := RunWorld(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(one, four); diff != "" {
		t.Errorf("report depends on the workers (-1 +4):\n%s", diff)
	}
	if calls != s.Pairs*3*4 {
		t.Errorf("progress called %d times, want once a comparison (%d)", calls, s.Pairs*3*4)
	}
	if len(one.Rows) != 4 {
		t.Fatalf("%d rows, want 4", len(one.Rows))
	}
	for _, row := range one.Rows {
		if row.FalseBlocks.N != s.Pairs || len(row.Detection) != 2 || row.Detection[0].Rate.N != s.Pairs {
			t.Errorf("%s/%s: n = %d A/A, detection %v; want %d each", row.Model, row.Procedure, row.FalseBlocks.N, row.Detection, s.Pairs)
		}
		if row.Unchanged.N == 0 || row.Unchanged.K+row.Unproven.K+row.Inconclusive.K > row.Unchanged.N {
			t.Errorf("%s/%s: cell shares %v %v %v inconsistent", row.Model, row.Procedure, row.Unchanged, row.Unproven, row.Inconclusive)
		}
	}
	g := one.Rows[0]
	if g.Model != WorldGaussian || g.Procedure != ProcHistory {
		t.Fatalf("first row %s/%s, want gaussian/history", g.Model, g.Procedure)
	}
	if g.Detection[0].Rate.K != s.Pairs {
		t.Errorf("gaussian/history: a 10 %% slower matrix found %v, want every time", g.Detection[0].Rate)
	}
	if g.FalseBlocks.K > 1 {
		t.Errorf("gaussian/history: A/A false blocks %v, want at most 1", g.FalseBlocks)
	}
	other := s
	other.Seed = 2
	other.Workers = 2
	two, err := RunWorld(context.Background(), other)
	if err != nil {
		t.Fatal(err)
	}
	if cmp.Equal(one.Rows, two.Rows) && one.Rows[0].Unchanged == two.Rows[0].Unchanged {
		t.Errorf("seed 2 gave the same figures as seed 1: the seed is not used")
	}
}

// TestRunWorldCancel checks that a cancelled context stops the calibration with its error.
func TestRunWorldCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	s := DefaultWorldSettings()
	s.Pairs = 20 // 3600 comparisons: half a minute if the cancellation were ignored
	s.Workers = 2
	last := 0
	s.Progress = func(done, _ int) {
		last = done
		if done == 3 {
			cancel()
		}
	}
	_, err := RunWorld(ctx, s)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("RunWorld after cancel: %v, want context.Canceled", err)
	}
	if last > 3+s.Workers {
		t.Errorf("%d comparisons ran, want at most the %d that were running when ctx was cancelled", last, 3+s.Workers)
	}
}

// TestWorldTableGolden pins the three formats of a fixed report.
func TestWorldTableGolden(t *testing.T) {
	rep := &WorldReport{Seed: 1, Pairs: 1000, Rows: []WorldRow{
		{Model: WorldGaussian, Procedure: ProcHistory, FalseBlocks: rate(4, 1000), AAUndecided: rate(2, 1000),
			Detection: []ShapeRate{{Shape: ShapeRowsFrom32K, Rate: rate(995, 1000), Undecided: rate(3, 1000)}, {Shape: ShapeMatrix, Rate: rate(1000, 1000), Undecided: rate(0, 1000)}},
			Unchanged: rate(36000, 52000), Unproven: rate(0, 52000), Inconclusive: rate(16000, 52000)},
		{Model: WorldBimodal, Procedure: ProcOne, FalseBlocks: rate(168, 1000), AAUndecided: rate(120, 1000),
			Detection: []ShapeRate{{Shape: ShapeRowsFrom32K, Rate: rate(850, 1000), Undecided: rate(100, 1000)}, {Shape: ShapeMatrix, Rate: rate(900, 1000), Undecided: rate(50, 1000)}},
			Unchanged: rate(0, 52000), Unproven: rate(5200, 52000), Inconclusive: rate(46800, 52000)},
	}}
	for i := range rep.Rows {
		rep.Rows[i].Marks = marks(&rep.Rows[i])
	}
	for _, f := range []struct {
		name  string
		write func(*bytes.Buffer) error
	}{
		{"world.txt", func(b *bytes.Buffer) error { return rep.WriteText(b) }},
		{"world.md", func(b *bytes.Buffer) error { return rep.WriteMarkdown(b) }},
		{"world.json", func(b *bytes.Buffer) error { return rep.WriteJSON(b) }},
	} {
		var b bytes.Buffer
		if err := f.write(&b); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join("testdata", f.name)
		if *update {
			if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test -update)", err)
		}
		if diff := cmp.Diff(string(want), b.String()); diff != "" {
			t.Errorf("%s (-want +got):\n%s", f.name, diff)
		}
	}
}

// TestWorldMarks checks the targets: which rows carry which, and the criteria.
func TestWorldMarks(t *testing.T) {
	row := func(w WorldModel, p Procedure, aa, det, unch int) *WorldRow {
		return &WorldRow{Model: w, Procedure: p, FalseBlocks: rate(aa, 1000), AAUndecided: rate(aa*5, 1000),
			Detection: []ShapeRate{{Shape: ShapeRowsFrom32K, Rate: rate(det, 1000), Undecided: rate(0, 1000)},
				{Shape: ShapeDecode5, Rate: rate(det, 1000), Undecided: rate(0, 1000), Passed: rate(1000-det, 1000)}},
			Unchanged: rate(unch/2, 1000), CoreUnchanged: rate(unch, 1000)}
	}
	const (
		aaMark = "A/A false blocks: 95 % upper bound ≤ 2 %"
		aaU    = "A/A undecided ≤ 5 %"
		det80  = "rows>=32K detected ≥ 80 %"
		det90  = "rows>=32K detected ≥ 90 %"
		pass5  = "decode5 passed ≤ 2 %"
		unch   = "A/A prefill and 8+ request cells unchanged ≥ 70 %"
	)
	cases := []struct {
		row  *WorldRow
		want []Mark
	}{
		{row(WorldT3, ProcOne, 9, 0, 0), []Mark{{aaMark, true}}},
		{row(WorldT3, ProcOne, 14, 0, 0), []Mark{{aaMark, false}}},
		{row(WorldBimodal, ProcHistory, 0, 850, 0), []Mark{{aaMark, true}, {aaU, true}, {det80, true}, {pass5, false}}},
		{row(WorldDrift, ProcHistory, 0, 850, 0), []Mark{{aaMark, true}, {aaU, true}, {det90, false}, {pass5, false}}},
		{row(WorldSpec, ProcHistory, 0, 990, 690), []Mark{{aaMark, true}, {aaU, true}, {det90, true}, {pass5, true}, {unch, false}}},
		{row(WorldGaussian, ProcRuns3, 0, 900, 0), []Mark{{aaMark, true}, {aaU, true}, {det90, true}, {pass5, false}}},
		{row(WorldThrottle, ProcRuns3, 14, 100, 0), []Mark{{aaMark, false}, {aaU, false}, {det90, false}, {pass5, false}}},
		{row(WorldStall, ProcPaired, 0, 100, 0), []Mark{{aaMark, true}}},
	}
	for _, tc := range cases {
		if diff := cmp.Diff(tc.want, marks(tc.row)); diff != "" {
			t.Errorf("%s/%s (-want +got):\n%s", tc.row.Model, tc.row.Procedure, diff)
		}
	}
}

// TestWorldBudget checks the budgeted procedure: the bot's adaptive job measures reruns of the
// head (the second look) and still finds a matrix slowed by 10 % under Gaussian noise, which a
// rerun of a few cells once hid by taking its own run factor (the shift fell from −10 % to −2 %).
func TestWorldBudget(t *testing.T) {
	s := DefaultWorldSettings()
	th := s.Thresholds
	th.Look = 1
	second := 0
	for i := range 3 {
		c, err := s.budgeted(job{model: WorldGaussian, proc: ProcBudget, shape: ShapeMatrix, index: i}, th)
		if err != nil {
			t.Fatal(err)
		}
		if c.Settings.Look == 2 {
			second++
		}
		if c.Verdict != results.VerdictRegression {
			t.Errorf("matrix −10 %%, comparison %d: verdict %s at look %d, want regression", i, c.Verdict, c.Settings.Look)
		}
	}
	if second == 0 {
		t.Errorf("no comparison reached the second look: the budget bought no rerun")
	}
}

// pairedWith is WorldPaired under Gaussian noise with the head's blocks at the given run
// factors (the base's at 1) and slowed by shape.
func pairedWith(m *Matrix, r *rand.Rand, factors []float64, shape Shape) (base, head *results.File) {
	order := strings.Repeat("ABBA", len(factors)/2)
	var bf, hf []*results.File
	var bn, hn []int
	for i, side := range order {
		if side == 'A' {
			bf = append(bf, m.WorldRunAt(r, WorldGaussian, fmt.Sprintf("p-base%d", len(bf)+1), 1, "", 1))
			bn = append(bn, i+1)
			continue
		}
		hf = append(hf, m.WorldRunAt(r, WorldGaussian, fmt.Sprintf("p-head%d", len(hf)+1), 1, shape, factors[len(hf)]))
		hn = append(hn, i+1)
	}
	base, head = mergeTrials(bf, bn), mergeTrials(hf, hn)
	base.Run.ID, head.Run.ID = "p-base", "p-head"
	base.Run.Pairing = &results.Pairing{ID: "p", Scheme: results.PairingABBA, Blocks: len(factors), Side: "base", Order: order}
	head.Run.Pairing = &results.Pairing{ID: "p", Scheme: results.PairingABBA, Blocks: len(factors), Side: "head", Order: order}
	return base, head
}

// TestWorldPairedRunContrast: in a paired run, what the two server runs of a pair differ by is
// shared by every cell; it is the shift's to decide, against the spread between runs, not every
// cell's against its own noise. Four head runs each about 4 % slower than their base runs (run
// drift, or the slower kernel pick) once made every cell a regression; a 10 % slowdown of the
// whole matrix, or of the rows from 32K on beside such a drift, still blocks.
func TestWorldPairedRunContrast(t *testing.T) {
	drift := []float64{0.958, 0.962, 0.959, 0.961}
	for _, tc := range []struct {
		name    string
		factors []float64
		shape   Shape
		want    bool // a regression
	}{
		{"head runs 4 % slower, no change", drift, "", false},
		{"every decode cell 10 % slower", []float64{1, 1, 1, 1}, ShapeMatrix, true},
		{"rows from 32K 10 % slower, head runs 4 % slower", drift, ShapeRowsFrom32K, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := NewMatrix(5, 1)
			r := rand.New(rand.NewPCG(5, 1))
			base, head := pairedWith(m, r, tc.factors, tc.shape)
			th := compare.DefaultThresholds()
			th.Look = 1
			c, err := compare.Compare(compare.Input{Base: []*results.File{base}, Head: []*results.File{head}}, th)
			if err != nil {
				t.Fatal(err)
			}
			if c.Settings.Pairing == nil {
				t.Fatal("not compared as paired")
			}
			if got := c.Verdict == results.VerdictRegression; got != tc.want {
				t.Errorf("verdict %s (%d cells regressed), want a regression: %v", c.Verdict, c.Summary.CellCounts.Regression, tc.want)
			}
		})
	}
}
