package report

import (
	"fmt"
	"math"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/speedmatrix/speedmatrix/calibrate"
	"github.com/speedmatrix/speedmatrix/compare"
	"github.com/speedmatrix/speedmatrix/compare/stats"
	"github.com/speedmatrix/speedmatrix/results"
)

// propertyCase is one generated comparison: its files as compare reads them.
type propertyCase struct {
	name       string
	base, head *results.File
	hist       []*results.File
}

// propertyCases draws n comparisons from the calibration's generators: every noise model of
// the world, quick-sized or full matrices, 0, 1, 3 or 10 history runs, A/A pairs or heads with
// rows, columns, single cells or the whole decode matrix slowed by up to 20 % (prefill rows
// by up to 15 %), and now and then a head cell lost (missing, skipped, an error, or no number).
func propertyCases(n int) []propertyCase {
	models := calibrate.WorldModels()
	quick := []string{"8K", "32K"}
	out := make([]propertyCase, 0, n)
	for i := range n {
		seed := uint64(1000 + i)
		r := rand.New(rand.NewPCG(seed, 7))
		m := calibrate.NewMatrix(seed, 1)
		w := models[r.IntN(len(models))]
		full := r.IntN(5) == 0
		pick := func(f *results.File) *results.File {
			if full {
				return f
			}
			return keep(f, quick, 32)
		}
		none := func(results.CellID) float64 { return 1 }
		var hist []*results.File
		nh := []int{0, 1, 3, 10}[r.IntN(4)]
		for j := range nh {
			hist = append(hist, pick(m.SlowedRun(r, w, fmt.Sprintf("hist%d", j), nil, none)))
		}
		base := pick(m.SlowedRun(r, w, "base", nil, none))
		factor := 1 - 0.2*r.Float64()
		rows := []string{"8K", "32K"}
		var slow func(results.CellID) float64
		what := "aa"
		switch r.IntN(5) {
		case 0: // A/A
			slow = none
		case 1:
			row := rows[r.IntN(len(rows))]
			what = "row " + row
			slow = func(id results.CellID) float64 {
				if id.Phase == results.PhaseDecode && id.ContextLabel == row {
					return factor
				}
				return 1
			}
		case 2:
			c := []int{1, 2, 4, 8, 16, 32}[r.IntN(6)]
			what = fmt.Sprintf("column %d", c)
			slow = func(id results.CellID) float64 {
				if id.Phase == results.PhaseDecode && id.Concurrency == c {
					return factor
				}
				return 1
			}
		case 3:
			what = "matrix"
			slow = func(id results.CellID) float64 {
				if id.Phase == results.PhaseDecode {
					return factor
				}
				return 1
			}
		default:
			what = "one cell"
			slow = func(id results.CellID) float64 {
				if id.Phase == results.PhaseDecode && id.ContextLabel == "32K" && id.Concurrency == 4 {
					return factor
				}
				return 1
			}
		}
		head := pick(m.SlowedRun(r, w, "head", nil, slow))
		if r.IntN(4) == 0 && len(head.Prefill) > 0 { // a prefill row slower
			k := r.IntN(len(head.Prefill))
			f := 1 - 0.15*r.Float64()
			for t := range head.Prefill[k].Trials {
				head.Prefill[k].Trials[t].PromptTokPerS *= f
			}
			if head.Prefill[k].PromptTokPerS != nil {
				v := *head.Prefill[k].PromptTokPerS * f
				head.Prefill[k].PromptTokPerS = &v
			}
			what += fmt.Sprintf(", prefill %s %+.1f %%", head.Prefill[k].ContextLabel, (f-1)*100)
		}
		if r.IntN(8) == 0 && len(head.Decode) > 1 { // a head cell lost
			k := r.IntN(len(head.Decode))
			switch r.IntN(3) {
			case 0:
				head.Decode = append(head.Decode[:k:k], head.Decode[k+1:]...)
				what += ", a cell missing"
			case 1:
				head.Decode[k].Status = results.StatusSkipped
				head.Decode[k].Error = "does not fit"
				what += ", a cell skipped"
			default:
				head.Decode[k].Status = results.StatusError
				head.Decode[k].Error = "streams failed"
				what += ", a cell errored"
			}
		}
		out = append(out, propertyCase{name: fmt.Sprintf("#%d %s, %d history, full %v: %s", i, w, nh, full, what), base: base, head: head, hist: hist})
	}
	return out
}

// TestVerdictProperties holds, over thousands of generated comparisons (a few hundred with
// -short), what every report of a comparison promises (issue 33):
//   - one number per cell-metric: change = head/base − 1 of the two numbers comparison.json
//     shows (within 0.5 pp), and of the two numbers the comment's tables show (within 0.5 pp
//     beyond their rounding to three digits);
//   - no pass over a shown slowdown: a comparison that passes (exit 0) holds no deciding
//     cell-metric (its phase's deciding metric, or speculative acceptance) whose interval at
//     its table's (phase and metric) false coverage level, no row, column or shift
//     whose interval at the groups' level, and no phase whose 95 % interval (the geometric
//     mean compare prints) lies wholly on the slow side of δ;
//   - every cell counted once: by the summary's cell counts, by the comment's model and by
//     the demo's summary words; a cell measured on the base and lost on the head never passes.
func TestVerdictProperties(t *testing.T) {
	n := 2000
	if testing.Short() {
		n = 300
	}
	th := compare.DefaultThresholds()
	th.HeadOnlyReruns = true
	passes, blocked := 0, 0
	for _, pc := range propertyCases(n) {
		c, err := compare.Compare(compare.Input{Base: []*results.File{pc.base}, Head: []*results.File{pc.head}, History: pc.hist}, th)
		if err != nil {
			t.Fatalf("%s: %v", pc.name, err)
		}
		// comparison.json as written and read back.
		data, err := results.EncodeComparison(c)
		if err != nil {
			t.Fatalf("%s: %v", pc.name, err)
		}
		c, err = results.DecodeComparison(data)
		if err != nil {
			t.Fatalf("%s: %v", pc.name, err)
		}
		checkOneNumber(t, pc.name, c)
		pass := results.OutcomeOf(c.Verdict).Exit == results.ExitPass
		if pass {
			passes++
			checkNoShownSlowdown(t, pc.name, c, th)
		} else {
			blocked++
		}
		checkCounts(t, pc.name, c, pass)
		x := testContext()
		x.Base, x.Head = pc.base, pc.head
		cm, err := NewComment(c, x)
		if err != nil {
			t.Fatalf("%s: %v", pc.name, err)
		}
		checkCommentNumbers(t, pc.name, cm.Full)
	}
	t.Logf("%d comparisons: %d pass, %d do not", n, passes, blocked)
}

// checkOneNumber: change = head/base − 1 of comparison.json's numbers.
func checkOneNumber(t *testing.T, name string, c *results.Comparison) {
	t.Helper()
	for _, cell := range c.Cells {
		for _, m := range cell.Metrics {
			if m.Change == nil || m.Base == nil || m.Head == nil {
				continue
			}
			if m.BaseRun == nil {
				t.Errorf("%s: %s %s has no base_run", name, cell.Cell, m.Metric)
			}
			if d := *m.Head / *m.Base - 1 - m.Change.Change; math.Abs(d) > 0.005 {
				t.Errorf("%s: %s %s: head/base − 1 = %.4f, change %.4f", name, cell.Cell, m.Metric, *m.Head / *m.Base - 1, m.Change.Change)
			}
		}
	}
}

// checkNoShownSlowdown: a passing comparison shows no slowdown beyond δ (see
// TestVerdictProperties), the intervals recomputed from comparison.json's.
func checkNoShownSlowdown(t *testing.T, name string, c *results.Comparison, th compare.Thresholds) {
	t.Helper()
	conf := c.Settings.ConfidenceLevel
	slowBeyond := func(high, d float64) bool { return high < -d }
	type table struct {
		phase  results.Phase
		metric results.Metric
	}
	type tested struct {
		phase         table
		m             *results.MetricComparison
		cell          string
		diff, se, df  float64
		selected      bool
		delta, margHi float64
	}
	var ts []tested
	n, r := map[table]int{}, map[table]int{}
	for _, cell := range c.Cells {
		for _, metric := range []results.Metric{results.DecidingMetric(cell.Phase), results.MetricSpecAcceptance} {
			m := cell.Metric(metric)
			if m == nil || m.Change == nil || m.Noise == nil {
				continue
			}
			df := math.Inf(1)
			if m.Noise.DF != nil {
				df = *m.Noise.DF
			}
			q := stats.TQuantile(1-(1-conf)/2, df)
			lo, hi := math.Log1p(m.Change.Low), math.Log1p(m.Change.High)
			x := tested{phase: table{cell.Phase, metric}, m: m, cell: cell.Cell, diff: math.Log1p(m.Change.Change), se: (hi - lo) / (2 * q), df: df, delta: m.Delta, margHi: m.Change.High}
			x.selected = slowBeyond(m.Change.High, m.Delta)
			n[x.phase]++
			if x.selected {
				r[x.phase]++
			}
			ts = append(ts, x)
		}
	}
	for _, x := range ts {
		if !x.selected {
			continue
		}
		fam := 1 - float64(max(r[x.phase], 1))*(1-conf)/float64(max(n[x.phase], 1))
		famHi := math.Expm1(x.diff + stats.TQuantile(1-(1-fam)/2, x.df)*x.se)
		// 1e-9: the same number computed two ways.
		if famHi < -x.delta-1e-9 {
			t.Errorf("%s: passes (%s) over %s %s %+.1f %% whose interval at its table's level (%d of %d cells, %.4g %%) reaches only %+.1f %%",
				name, c.Verdict, x.cell, x.m.Metric, x.m.Change.Change*100, r[x.phase], n[x.phase], fam*100, famHi*100)
		}
	}
	var groups []results.GroupComparison
	for _, g := range c.Groups {
		if g.Kind != results.GroupPhase {
			groups = append(groups, g)
		}
	}
	rg := 0
	for _, g := range groups {
		if slowBeyond(g.High, deltaOf(c, results.DecidingMetric(g.Phase))) {
			rg++
		}
	}
	for _, g := range groups {
		d := deltaOf(c, results.DecidingMetric(g.Phase))
		if !slowBeyond(g.High, d) {
			continue
		}
		df := g.DF
		if df == 0 {
			df = math.Inf(1)
		}
		q := stats.TQuantile(1-(1-conf)/2, df)
		lo, hi := math.Log1p(g.Low), math.Log1p(g.High)
		se, mid := (hi-lo)/(2*q), (hi+lo)/2
		fam := 1 - float64(max(rg, 1))*(1-conf)/float64(len(groups))
		if famHi := math.Expm1(mid + stats.TQuantile(1-(1-fam)/2, df)*se); famHi < -d-1e-9 {
			t.Errorf("%s: passes (%s) over %s %+.1f %% whose interval at the groups' level reaches only %+.1f %%", name, c.Verdict, g.Name(), g.Change*100, famHi*100)
		}
	}
	if g := c.Summary.DecodeTotalGeomean; g != nil && g.Cells >= 2 && slowBeyond(g.High, deltaOf(c, results.MetricTotalTokPerS)) {
		t.Errorf("%s: passes (%s) over a decode geometric mean %+.1f %% (%+.1f … %+.1f %%)", name, c.Verdict, g.Change*100, g.Low*100, g.High*100)
	}
	_ = th
}

// checkCounts: every cell is counted once, by the summary, the comment's model and the demo's
// words; a cell measured on the base and lost on the head keeps a comparison from passing.
func checkCounts(t *testing.T, name string, c *results.Comparison, pass bool) {
	t.Helper()
	if got := c.Summary.CellCounts.Total(); got != len(c.Cells) {
		t.Errorf("%s: the summary counts %d cells of %d", name, got, len(c.Cells))
	}
	m := newModel(c, CommentContext{})
	nc := 0
	for _, ids := range m.notCompared {
		nc += len(ids)
	}
	if got := len(m.slower) + len(m.faster) + len(m.unchanged) + len(m.noisy) + len(m.unproven) + nc; got != len(c.Cells) {
		t.Errorf("%s: the comment counts %d cells of %d", name, got, len(c.Cells))
	}
	if w := CellCountWords(c.Summary.CellCounts); !strings.HasSuffix(w, fmt.Sprintf("(%d cells)", len(c.Cells))) {
		t.Errorf("%s: the demo's summary says %q of %d cells", name, w, len(c.Cells))
	}
	if !pass {
		return
	}
	for _, cell := range c.Cells {
		if !cell.BaseStatus.Measured() {
			continue
		}
		lost := cell.HeadStatus == "" || cell.HeadStatus == results.StatusSkipped || cell.HeadStatus == results.StatusError
		if m := cell.Metric(results.DecidingMetric(cell.Phase)); m != nil && m.BaseRun != nil && m.Head == nil && cell.HeadStatus.Measured() {
			lost = true
		}
		if lost {
			t.Errorf("%s: passes (%s) with %s measured on the base and lost on the head (%q)", name, c.Verdict, cell.Cell, cell.HeadStatus)
		}
	}
}

// tableValues is one row of the comment's cell tables: change, then base → head with units.
var tableValues = regexp.MustCompile(`\| [^|]+ \| ([−+][0-9.]+) % \| [^|]+ \| ([0-9.]+K?) (tok/s|ms|s|tokens/step)(?: \((?:history|runs pooled)\))? → ([0-9.]+K?) (tok/s|ms|s|tokens/step) \|`)

// checkCommentNumbers: in the comment's tables, change = head/base − 1 of the two numbers
// shown, within 0.5 pp beyond what rounding them to three digits allows.
func checkCommentNumbers(t *testing.T, name, body string) {
	t.Helper()
	for _, mm := range tableValues.FindAllStringSubmatch(body, -1) {
		ch, err := strconv.ParseFloat(strings.ReplaceAll(mm[1], "−", "-"), 64)
		if err != nil {
			t.Fatalf("%s: %q: %v", name, mm[0], err)
		}
		b, bu := shownNumber(mm[2])
		h, hu := shownNumber(mm[4])
		if mm[3] != mm[5] {
			continue // a latency across a unit (ms → s): compared below only in one unit
		}
		// The largest and smallest ratio the rounded numbers allow.
		hiR := (h+hu/2)/(b-bu/2) - 1
		loR := (h-hu/2)/(b+bu/2) - 1
		if c := ch / 100; c > hiR+0.005+0.0005 || c < loR-0.005-0.0005 {
			t.Errorf("%s: the comment shows %q: %s %% is not head/base − 1 (%.2f … %.2f %%)", name, mm[0], mm[1], loR*100, hiR*100)
		}
	}
}

// shownNumber reads a number as sig3 writes it ("142", "61.2", "1.18K") and the unit of its
// last digit.
func shownNumber(s string) (v, unit float64) {
	scale := 1.0
	if strings.HasSuffix(s, "K") {
		scale, s = 1000, strings.TrimSuffix(s, "K")
	}
	v, _ = strconv.ParseFloat(s, 64)
	unit = 1
	if i := strings.IndexByte(s, '.'); i >= 0 {
		unit = math.Pow(10, -float64(len(s)-i-1))
	}
	return v * scale, unit * scale
}
