package history

import (
	"cmp"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/speedmatrix/speedmatrix/compare"
	"github.com/speedmatrix/speedmatrix/compare/changepoint"
	"github.com/speedmatrix/speedmatrix/results"
)

// Options are the tunables of an analysis. Start from DefaultOptions and change fields.
type Options struct {
	// Delta is the minimum relative change reported per metric (compare's δ).
	Delta map[results.Metric]float64
	// ChangePoint are the detector's settings; MinChange and HigherIsBetter are set per metric
	// from Delta and the metric's direction.
	ChangePoint changepoint.Settings
	// Seed seeds the permutations; each series draws from its own stream of it.
	Seed uint64
}

// DefaultOptions returns compare's default δ per metric, changepoint.DefaultSettings and seed 1.
func DefaultOptions() Options {
	return Options{Delta: compare.DefaultThresholds().Delta, ChangePoint: changepoint.DefaultSettings(), Seed: 1}
}

// Settings returns the detector's settings for metric m.
func (o Options) Settings(m results.Metric) changepoint.Settings {
	s := o.ChangePoint
	s.MinChange = o.Delta[m]
	s.HigherIsBetter = m.HigherIsBetter()
	return s
}

// Point is one results file's value of a cell-metric.
type Point struct {
	// Commit is the engine commit the file measured ("" when it does not say).
	Commit string
	RunID  string
	// Date is when the run started (zero when the file does not say).
	Date time.Time
	// Status is the cell's status in the file, "" when the file lacks the cell.
	Status results.Status
	// Value is the summary value in the profile's time; nil when there is none.
	Value *float64
}

// Shift is a sustained change of a series.
type Shift struct {
	changepoint.ChangePoint
	// Commit is the first commit of the new level, Previous the last of the old one; Date is
	// the date of the first run at the new level.
	Commit, Previous string
	Date             time.Time
}

// Series is one cell-metric over the history, with its shifts once detected.
type Series struct {
	Cell   results.CellID
	Metric results.Metric
	Points []Point
	// Shifts are the change points in order, with Index pointing into Points.
	Shifts []Shift
	// Delta is the minimum change the detection used.
	Delta float64
	// Settings are the detector's settings the shifts came from.
	Settings changepoint.Settings
}

// MainMetric returns the metric a cell's trend is drawn for: prompt tok/s for prefill, total
// tok/s for decode.
func MainMetric(p results.Phase) results.Metric {
	if p == results.PhasePrefill {
		return results.MetricPromptTokPerS
	}
	return results.MetricTotalTokPerS
}

// ParseMetric reads a metric name as compare names them ("total_tok_per_s", "ttft_ms") or by a
// short alias ("total", "prompt", "per_request", "ttft", "tbt").
func ParseMetric(s string) (results.Metric, error) {
	aliases := map[string]results.Metric{
		"prompt": results.MetricPromptTokPerS, "total": results.MetricTotalTokPerS,
		"per_request": results.MetricPerRequestTokPerS, "ttft": results.MetricTTFT, "tbt": results.MetricTBT,
	}
	name := strings.ToLower(strings.TrimSpace(s))
	if m, ok := aliases[name]; ok {
		return m, nil
	}
	all := []results.Metric{results.MetricPromptTokPerS, results.MetricTotalTokPerS, results.MetricPerRequestTokPerS, results.MetricTTFT, results.MetricTBT}
	for _, m := range all {
		if string(m) == name {
			return m, nil
		}
	}
	names := make([]string, len(all))
	for i, m := range all {
		names[i] = string(m)
	}
	return "", fmt.Errorf("metric %q: want one of %s (or prompt, total, per_request, ttft, tbt)", s, strings.Join(names, ", "))
}

// Order sorts files by run start, oldest first (stable: files without a start keep their place
// relative to each other, before the dated ones).
func Order(files []*results.File) {
	slices.SortStableFunc(files, func(a, b *results.File) int { return a.Run.Start.Compare(b.Run.Start) })
}

// Cells returns every cell any file holds: prefill by context, then decode by context and
// concurrency.
func Cells(files []*results.File) []results.CellID {
	seen := map[results.CellID]bool{}
	var ids []results.CellID
	add := func(id results.CellID) {
		if !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	for _, f := range files {
		for i := range f.Prefill {
			add(f.Prefill[i].ID())
		}
		for i := range f.Decode {
			add(f.Decode[i].ID())
		}
	}
	tokens := func(id results.CellID) int { n, _ := results.ParseContext(id.ContextLabel); return n }
	slices.SortFunc(ids, func(a, b results.CellID) int {
		if a.Phase != b.Phase {
			if a.Phase == results.PhasePrefill {
				return -1
			}
			return 1
		}
		return cmp.Or(cmp.Compare(tokens(a), tokens(b)), cmp.Compare(a.Concurrency, b.Concurrency))
	})
	return ids
}

// NewSeries collects cell-metric (cell, m) from files, in their order. It detects nothing.
func NewSeries(files []*results.File, cell results.CellID, m results.Metric) *Series {
	s := &Series{Cell: cell, Metric: m, Points: make([]Point, len(files))}
	for i, f := range files {
		p := Point{Commit: f.Engine.Commit, RunID: f.Run.ID, Date: f.Run.Start}
		p.Status, p.Value = valueOf(f, cell, m)
		p.Value = m.InProfileTime(p.Value, f.TimeScale()) // in the profile's time
		s.Points[i] = p
	}
	return s
}

// valueOf returns cell's status in f ("" when f lacks it) and the summary value of m, nil when
// the cell was not measured or has no usable value.
func valueOf(f *results.File, cell results.CellID, m results.Metric) (results.Status, *float64) {
	var st results.Status
	var v *float64
	switch cell.Phase {
	case results.PhasePrefill:
		if c := f.FindPrefill(cell); c != nil {
			st, v = c.Status, c.Value(m)
		}
	case results.PhaseDecode:
		if c := f.FindDecode(cell); c != nil {
			st, v = c.Status, c.Value(m)
		}
	}
	if !st.Measured() || v == nil || !(*v > 0) {
		return st, nil
	}
	x := *v
	return st, &x
}

// Detect finds the series' shifts with the options' settings for its metric, replacing any
// found before.
func (s *Series) Detect(o Options) error {
	s.Settings = o.Settings(s.Metric)
	s.Delta = s.Settings.MinChange
	s.Shifts = nil
	var xs []float64
	var at []int
	for i, p := range s.Points {
		if p.Value != nil {
			xs = append(xs, *p.Value)
			at = append(at, i)
		}
	}
	h := fnv.New64a()
	fmt.Fprintf(h, "%s %s", s.Cell, s.Metric)
	cps, err := changepoint.Detect(xs, s.Settings, rand.New(rand.NewPCG(o.Seed, h.Sum64())))
	if err != nil {
		return fmt.Errorf("%s %s: %w", s.Cell, s.Metric, err)
	}
	for _, cp := range cps {
		i := at[cp.Index]
		sh := Shift{ChangePoint: cp, Commit: s.Points[i].Commit, Date: s.Points[i].Date}
		if cp.Index > 0 {
			sh.Previous = s.Points[at[cp.Index-1]].Commit
		}
		sh.Index = i
		s.Shifts = append(s.Shifts, sh)
	}
	return nil
}

// Values returns how many points hold a value.
func (s *Series) Values() int {
	n := 0
	for _, p := range s.Points {
		if p.Value != nil {
			n++
		}
	}
	return n
}

// History is the analysis of every cell-metric of an ordered series of results files.
type History struct {
	// Files are the results files, oldest first.
	Files []*results.File
	// Series holds every cell's metrics, cells in matrix order, metrics in display order.
	Series []*Series
	// Warnings are things a reader must know (files of different setups mixed).
	Warnings []string
	// Order says how the files were ordered (along the default branch's commits, or by the
	// time they were measured), for the page; the caller that ordered them sets it.
	Order string
}

// Config is one configuration's history, named by its config id (store.ConfigID): a store
// that measured several configurations is analyzed one Config at a time and shown as one site
// of pages (package history/pages).
type Config struct {
	// ID is the config id: the site's folder of its page.
	ID string
	// History is its analyzed history, oldest first.
	History *History
}

// Analyze collects and detects every cell-metric of files, which must be in commit order, oldest
// first.
func Analyze(files []*results.File, o Options) (*History, error) {
	h := &History{Files: files, Warnings: mixedSetups(files)}
	for _, id := range Cells(files) {
		for _, m := range results.Metrics(id.Phase) {
			s := NewSeries(files, id, m)
			if err := s.Detect(o); err != nil {
				return nil, err
			}
			h.Series = append(h.Series, s)
		}
	}
	return h, nil
}

// Find returns the series of (cell, m), or nil.
func (h *History) Find(cell results.CellID, m results.Metric) *Series {
	for _, s := range h.Series {
		if s.Cell == cell && s.Metric == m {
			return s
		}
	}
	return nil
}

// Regressions returns every shift that is a regression, with its series.
func (h *History) Regressions() []SeriesShift {
	var out []SeriesShift
	for _, s := range h.Series {
		for _, sh := range s.Shifts {
			if sh.Direction == changepoint.Regression {
				out = append(out, SeriesShift{Series: s, Shift: sh})
			}
		}
	}
	return out
}

// SeriesShift is one shift with the series it belongs to.
type SeriesShift struct {
	Series *Series
	Shift  Shift
}

// mixedSetups warns when the files do not all measure one model on one kind of hardware: their
// history mixes results that are not comparable.
func mixedSetups(files []*results.File) []string {
	setups := map[string]int{}
	var order []string
	for _, f := range files {
		hw := cmp.Or(f.Hardware.GPU, "(GPU not stated)")
		if f.Hardware.GPUCount > 0 {
			hw = fmt.Sprintf("%d× %s", f.Hardware.GPUCount, hw)
		}
		k := cmp.Or(f.Run.ServedModel, "(model not stated)") + " on " + hw
		if setups[k] == 0 {
			order = append(order, k)
		}
		setups[k]++
	}
	if len(order) < 2 {
		return nil
	}
	parts := make([]string, len(order))
	for i, k := range order {
		parts[i] = fmt.Sprintf("%s (%d runs)", k, setups[k])
		if setups[k] == 1 {
			parts[i] = k + " (1 run)"
		}
	}
	return []string{"the history mixes setups whose results are not comparable: " + strings.Join(parts, "; ") + "; pass one setup's results only"}
}
