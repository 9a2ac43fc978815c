package compare

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"reflect"
	"strings"

	"github.com/speedmatrix/speedmatrix/internal/textout"
	"github.com/speedmatrix/speedmatrix/results"
)

// Input is what a comparison compares. Base and Head each hold one or more results files of the
// same commit; several files on one side pool their trials cell by cell (the second look after a
// rerun, or repeated runs). History holds earlier results of the base, for history noise.
type Input struct {
	Base, Head         []*results.File
	BasePath, HeadPath string
	History            []*results.File
	// HistoryByCommit says History is newest first along the base's first parents (store.History
	// with a commit graph): compare reads it in that order. Otherwise it orders it by run start.
	HistoryByCommit bool
	// Force compares files of different models, hardware or time scales (simulator speedups),
	// with a warning.
	Force bool
	// Cells, when not empty, limits the comparison to these cells (the second look compares
	// only the cells it re-measured).
	Cells []results.CellID
	// AcceptPartial compares a partial head (a run that stopped early) on the cells it holds:
	// the cells it did not reach are not compared, and a warning says so. Without it a partial
	// head is incomplete, which never passes.
	AcceptPartial bool
	// MeasuredNoise is the run-to-run CV of cell-metrics measured on this machine (A/A reruns
	// of one commit: MeasuredNoise, `speedmatrix calibrate --store`). Where it exceeds the
	// prior, it replaces the prior (noise source NoiseMeasured, and the floor of within+prior).
	MeasuredNoise map[NoiseKey]float64
}

// NoiseKey names one cell-metric.
type NoiseKey struct {
	Cell   results.CellID
	Metric results.Metric
}

// MismatchError says that the two sides measured different models, hardware or time scales.
type MismatchError struct {
	Differences []string
}

func (e *MismatchError) Error() string {
	return "the files measured different setups (" + strings.Join(e.Differences, "; ") + "); compare them anyway with --force"
}

// ErrNoInput is returned when a side has no file.
var ErrNoInput = errors.New("compare needs at least one base and one head results file")

// Compare compares in.Head with in.Base under th and returns the comparison. Problems that do
// not stop it are in the result's Warnings.
func Compare(in Input, th Thresholds) (*results.Comparison, error) {
	in, disturbed := undisturbed(in, th) // disturbed.go
	c, re, err := compareWith(in, th, nil)
	if err != nil {
		return nil, err
	}
	if err := checkAmbiguity(c, in, th, re); err != nil { // ambiguity.go
		return nil, err
	}
	checkExcursions(c, in, re, th) // excursion.go
	checkLoneCells(c, in)          // lonecell.go
	checkStretch(c, in)            // stretch.go
	c.Warnings = append(c.Warnings, disturbed...)
	// One number per cell-metric: the base every report shows is the reference the change was
	// taken against.
	c.SetReferences()
	return c, nil
}

// compareWith is Compare, with override as the head's factor where it holds a phase; it returns
// the run effects it estimated too (nil for a paired comparison).
func compareWith(in Input, th Thresholds, override map[results.Phase]float64) (*results.Comparison, *runEffects, error) {
	if len(in.Base) == 0 || len(in.Head) == 0 {
		return nil, nil, ErrNoInput
	}
	if err := th.check(); err != nil {
		return nil, nil, err
	}
	th = withAcceptanceDefaults(th)
	spec := specDecodeOf(in)
	th = withSpecDecodePrior(th, spec) // specprior.go
	plan, err := th.plan()
	if err != nil {
		return nil, nil, err
	}
	level := plan.Level1
	if th.Look == 2 {
		level = plan.Level2
	}
	c := &results.Comparison{
		Schema: results.ComparisonSchemaV1,
		Base:   describe(in.Base[0], in.BasePath),
		Head:   describe(in.Head[0], in.HeadPath),
		Settings: results.ComparisonSettings{
			FDR: th.FDR, FalseAlarm: th.FalseAlarm, Look: th.Look, MinimumEffect: th.MinimumEffect, Level: level, Spending: string(th.Spending),
			EquivalenceAlpha: th.EquivalenceAlpha, Power: th.Power, ConfidenceLevel: th.ConfidenceLevel,
			HistoryFiles: len(in.History), Forced: in.Force, SpecDecode: spec,
		},
	}
	for _, m := range allMetrics {
		c.Settings.Metrics = append(c.Settings.Metrics, results.MetricSettings{Metric: m, Delta: th.Delta[m], HigherIsBetter: m.HigherIsBetter()})
	}
	if diffs := setupDifferences(in.Base[0], in.Head[0]); len(diffs) > 0 {
		if !in.Force {
			return nil, nil, &MismatchError{Differences: diffs}
		}
		c.Warnings = append(c.Warnings, "compared with --force although the files measured different setups: "+strings.Join(diffs, "; "))
	}
	if w := sameRun(in); w != "" {
		c.Warnings = append(c.Warnings, w)
	}
	c.Warnings = append(c.Warnings, FingerprintWarnings(in.Base[0].Hardware, in.Head[0].Hardware)...)
	c.Warnings = append(c.Warnings, pinWarnings(in.Base[0], in.Head[0])...)
	for _, side := range [][]*results.File{in.Base[1:], in.Head[1:]} {
		for _, f := range side {
			if d := setupDifferences(in.Base[0], f); len(d) > 0 {
				c.Warnings = append(c.Warnings, "a pooled file measured a different setup: "+strings.Join(d, "; "))
			}
		}
	}
	var history []*results.File
	isBase := func(h *results.File) bool {
		for _, b := range in.Base {
			if h == b || (h.Run.ID != "" && h.Run.ID == b.Run.ID) {
				return true
			}
		}
		return false
	}
	for i, h := range in.History {
		if isBase(h) {
			// The base's own results in its history (the store's history starts at the baseline
			// commit): the base side already holds them, and the pooled baseline must not count
			// them twice.
			continue
		}
		if d := setupDifferences(in.Base[0], h); len(d) > 0 {
			c.Warnings = append(c.Warnings, fmt.Sprintf("history file %d ignored: %s", i+1, strings.Join(d, "; ")))
			continue
		}
		history = append(history, h)
	}
	if err := degenerateHistory(history); err != nil { // failclosed.go
		return nil, nil, err
	}
	history = historyOrder(history, in.HistoryByCommit) // oldest first: the series noiseOfHistory splits into levels
	c.Settings.HistoryFiles = len(history)
	pairing, pairs, w := pairingOf(in) // paired.go
	if w != "" {
		c.Warnings = append(c.Warnings, w)
	}
	c.Settings.Pairing = pairing

	base, baseOrder := collect(in.Base)
	head, headOrder := collect(in.Head)
	blocksOf := func(files []*results.File) []bool {
		out := make([]bool, len(files))
		for i, f := range files {
			out[i] = f.Run.Pairing != nil
		}
		return out
	}
	for _, s := range base {
		s.blocks = blocksOf(in.Base)
	}
	for _, s := range head {
		s.blocks = blocksOf(in.Head)
	}
	var re *runEffects
	if pairs == nil {
		re = estimateRunEffects(in.Base, in.Head, history, th, override) // runeffect.go
		for _, s := range base {
			s.fx = re.base
		}
		for _, s := range head {
			s.fx = re.head
		}
	} else {
		re = pairEffects(base, head, pairs, len(history), th) // paired.go
	}
	attachAcceptance(base, in.Base)
	attachAcceptance(head, in.Head)
	order := mergeOrder(baseOrder, headOrder)
	all := order
	if len(in.Cells) > 0 {
		want := map[results.CellID]bool{}
		for _, id := range in.Cells {
			want[id] = true
		}
		var kept []results.CellID
		for _, id := range order {
			if want[id] {
				kept = append(kept, id)
				delete(want, id)
			}
		}
		for _, id := range in.Cells {
			if want[id] {
				c.Warnings = append(c.Warnings, fmt.Sprintf("cell %s was asked for but is in neither file", id))
				delete(want, id)
			}
		}
		order = kept
	}

	var tests []*pending
	var missing []string
	hists := map[results.CellID][]float64{} // the deciding metric's history, for groups.go
	for _, id := range order {
		b, h := base[id], head[id]
		cc := results.CellComparison{Cell: id.String(), Phase: id.Phase, ContextLabel: id.ContextLabel, Concurrency: id.Concurrency}
		if b != nil {
			cc.BaseStatus = b.status
			cc.Context = contextOf(b)
		}
		if h != nil {
			cc.HeadStatus = h.status
			if cc.Context == 0 {
				cc.Context = contextOf(h)
			}
		}
		c.Cells = append(c.Cells, cc)
		cell := &c.Cells[len(c.Cells)-1]
		switch {
		case b == nil || h == nil:
			which := "head"
			if b == nil {
				which = "base"
			}
			missing = append(missing, id.String()+" (not in "+which+")")
			cell.Reason = "missing in " + which
			for _, m := range results.Metrics(id.Phase) {
				cell.Metrics = append(cell.Metrics, results.MetricComparison{Metric: m, Delta: th.Delta[m], Verdict: results.VerdictNotComparable, Reason: "cell missing in " + which})
			}
			continue
		}
		if r := stalledWindow(h.decode); r != "" { // failclosed.go
			cell.Reason = r + " (in head)"
			for _, m := range results.Metrics(id.Phase) {
				cell.Metrics = append(cell.Metrics, results.MetricComparison{Metric: m, Delta: th.Delta[m], Verdict: results.VerdictIncomplete, Reason: cell.Reason})
			}
			continue
		}
		if r := stalledWindow(b.decode); r != "" { // failclosed.go
			cell.Reason = r + " (in base)"
			for _, m := range results.Metrics(id.Phase) {
				cell.Metrics = append(cell.Metrics, results.MetricComparison{Metric: m, Delta: th.Delta[m], Verdict: results.VerdictNotComparable, Reason: cell.Reason})
			}
			continue
		}
		if v, reason, decided := statusVerdict(b.status, h.status); decided {
			cell.Reason = reason
			for _, m := range results.Metrics(id.Phase) {
				bs, hs := b.sample(m), h.sample(m)
				cell.Metrics = append(cell.Metrics, results.MetricComparison{Metric: m, Base: bs.summary, Head: hs.summary, Delta: th.Delta[m], Verdict: v, Reason: reason})
			}
			continue
		}
		if b.status == results.StatusQueued {
			cell.Reason = "requests queued in both runs"
		}
		ms := cellMetrics(id, b, h)
		for _, m := range ms {
			cell.Metrics = append(cell.Metrics, results.MetricComparison{Metric: m, Delta: th.Delta[m]})
		}
		for i, m := range ms {
			p := &pending{id: id, metric: m, out: &cell.Metrics[i], pairs: pairs}
			p.withShift(re)
			logs, commits := historyOf(history, id, m, re)
			extraBase := 0 // the base's runs that count toward min_history without being in the series
			if bl := b.sample(m).logs; len(logs) > 0 && len(bl) == 1 && h.sample(m).logs != nil && len(h.sample(m).logs) == 1 {
				// One run a side: the base's run is the series' newest, a run of the default branch
				// like the history's (the store's history starts with it), at its newest level.
				// (Where a side has several runs, they are trials for trialsnoise.go, which pools
				// them with the history itself.)
				logs, commits = append(logs, bl[0]), append(commits, in.Base[0].Engine.Commit)
			} else if len(logs) > 0 {
				extraBase = len(b.sample(m).logs)
			}
			if m == results.DecidingMetric(id.Phase) {
				hists[id] = logs
			}
			if p.estimate(b, h, noiseOfHistory(logs, commits, id, m, th).withBase(extraBase), in.MeasuredNoise[NoiseKey{id, m}], th) {
				tests = append(tests, p)
			}
		}
	}
	if len(missing) > 0 {
		c.Warnings = append(c.Warnings, fmt.Sprintf("the matrices differ in shape: %s %s in only one file: %s", textout.Plural(len(missing), "cell", "cells"), isAre(len(missing)), strings.Join(missing, ", ")))
	}

	if w := historyLevelsWarning(tests); w != "" { // histnoise.go
		c.Warnings = append(c.Warnings, w)
	}
	c.Warnings = append(c.Warnings, empiricalNull(tests, th)...)
	// A cell is decided on its deciding metric; its other metrics are notes, tested in a family
	// of their own that never decides a verdict.
	var deciding, notes []*pending
	for _, t := range tests {
		if decides(t.metric, t.id.Phase) {
			deciding = append(deciding, t)
		} else {
			notes = append(notes, t)
		}
	}
	moderateHistory(deciding, th) // moderate.go
	// The history's noise is the history's, whichever cells this comparison tests: a second
	// look of three cells scores the whole matrix's history, as the first look did.
	for _, id := range all {
		if _, ok := hists[id]; ok || base[id] == nil {
			continue
		}
		m := results.DecidingMetric(id.Phase)
		logs, _ := historyOf(history, id, m, re)
		if bl := base[id].sample(m).logs; len(logs) > 0 && len(bl) == 1 {
			logs = append(logs, bl[0])
		}
		hists[id] = logs
	}
	scores := historyScores(hists) // groups.go
	if heavyTails(scores) {        // groups.go
		for _, t := range deciding {
			if t.out.Noise != nil && t.out.Noise.Source == results.NoiseHistory && t.est.DF > heavyTailDF {
				t.est.DF = heavyTailDF
				t.out.Noise.DF = ptr(t.est.DF)
				t.finish(th)
			}
		}
		c.Warnings = append(c.Warnings, fmt.Sprintf("the history's own runs scatter with heavier tails than normal noise (their leave-one-out scores fit a Student-t better than a normal, or fall beyond ±2 too often): each cell is tested with a t distribution of %d degrees of freedom, and the rows and columns carry the detection", heavyTailDF))
	}
	rows := rowTests(deciding, th)
	groups := groupTests(deciding, re, scores) // groups.go
	qs, rowQs, groupQs := adjustAll(deciding, rows, groups)
	decide(deciding, qs, len(deciding)+len(rows)+len(groups), th, level)
	noteQs, _, _ := adjustAll(notes, nil, nil)
	decide(notes, noteQs, len(notes), th, level)
	decideRows(rows, rowQs, th, level)
	decideGroups(groups, groupQs, th, level)
	groups = append(groups, phaseGroups(deciding, groups, th)...) // groups.go
	for _, r := range rows {
		c.Rows = append(c.Rows, *r.out)
	}
	for _, g := range groups {
		c.Groups = append(c.Groups, *g.out)
	}
	if acceptanceTested(c.Cells) {
		c.Settings.Metrics = append(c.Settings.Metrics, results.MetricSettings{Metric: results.MetricSpecAcceptance, Delta: th.Delta[results.MetricSpecAcceptance], HigherIsBetter: true})
	}
	c.Summary.Tests = len(tests)
	c.Summary.DecodeTotalGeomean = geomean(tests, th.ConfidenceLevel)
	tally(c, in)
	closeVerdict(c, in.Head, in.AcceptPartial) // failclosed.go
	if c.Verdict == results.VerdictUnproven && c.VerdictReason == "" && c.Summary.CellCounts.Unproven == 0 {
		// Only a group keeps the matrix from passing: say which.
		for _, g := range c.Groups {
			if g.Verdict == results.VerdictUnproven {
				c.VerdictReason = g.Reason
				break
			}
		}
	}
	c.Rerun = advise(deciding, th, plan)
	pairedAdvice(c.Rerun, pairing) // paired.go
	return c, re, nil
}

// describe returns the identity of one side.
func describe(f *results.File, path string) results.ComparedRun {
	return results.ComparedRun{
		Path: path, RunID: f.Run.ID, ServedModel: f.Run.ServedModel, Engine: f.Engine.Name,
		EngineVersion: f.Engine.Version, Commit: f.Engine.Commit, GPU: f.Hardware.GPU,
		GPUCount: f.Hardware.GPUCount, Source: f.Run.Source, Start: f.Run.Start,
		TimeScale: timeScale(f),
	}
}

// sameRun returns a warning when base and head are one run: the same file named twice, files of
// the same run id, or files with identical contents. Such a comparison measures nothing but
// itself; it is empty otherwise.
func sameRun(in Input) string {
	const tail = ": both sides are one run, so the comparison measures nothing; compare a run of the base with a run of the head"
	if in.BasePath != "" && filepath.Clean(in.BasePath) == filepath.Clean(in.HeadPath) {
		return fmt.Sprintf("base and head are the same file (%s)%s", filepath.Clean(in.BasePath), tail)
	}
	for _, b := range in.Base {
		for _, h := range in.Head {
			switch {
			case b == h:
				return "base and head are the same results" + tail
			case b.Run.ID != "" && b.Run.ID == h.Run.ID:
				return fmt.Sprintf("base and head are the same run (run id %s)%s", b.Run.ID, tail)
			case reflect.DeepEqual(b, h):
				return "base and head hold identical results" + tail
			}
		}
	}
	return ""
}

// timeScale returns f's time scale for its ComparedRun: the simulator's speedup, 0 (absent)
// for a real server.
func timeScale(f *results.File) float64 {
	if s := f.TimeScale(); s != 1 {
		return s
	}
	return 0
}

// setupDifferences lists how two files' model, hardware and time scale differ (model and
// hardware fields empty on either side are not compared).
func setupDifferences(a, b *results.File) []string {
	var d []string
	diff := func(what, x, y string) {
		if x != "" && y != "" && x != y {
			d = append(d, fmt.Sprintf("%s %q vs %q", what, x, y))
		}
	}
	diff("model", a.Run.ServedModel, b.Run.ServedModel)
	diff("GPU", a.Hardware.GPU, b.Hardware.GPU)
	if a.Hardware.GPUCount > 0 && b.Hardware.GPUCount > 0 && a.Hardware.GPUCount != b.Hardware.GPUCount {
		d = append(d, fmt.Sprintf("GPU count %d vs %d", a.Hardware.GPUCount, b.Hardware.GPUCount))
	}
	// A simulator's numbers are its profile's sped up: sides at different speeds (or a simulator
	// against a real server) measured different things, whatever the model's name.
	if x, y := a.TimeScale(), b.TimeScale(); x != y {
		d = append(d, fmt.Sprintf("time scale %g× vs %g× (simulator speedup)", x, y))
	}
	// What a decode cell measures depends on its window and on how often a stream restarts
	// (max_tokens), and the endpoint decides what a token is (a chat template or not): the
	// config id hashes them for the same reason. Unknown on either side (an import) is no
	// difference.
	if a.Run.Settings == nil || b.Run.Settings == nil {
		return d
	}
	sa, sb := a.Run.Settings, b.Run.Settings
	if x, y := sa.DurationSeconds, sb.DurationSeconds; x > 0 && y > 0 && x != y {
		d = append(d, fmt.Sprintf("decode window %gs vs %gs", x, y))
	}
	if x, y := sa.MaxTokens, sb.MaxTokens; x > 0 && y > 0 && x != y {
		d = append(d, fmt.Sprintf("max_tokens %d vs %d", x, y))
	}
	diff("endpoint", sa.Endpoint, sb.Endpoint)
	return d
}

// collect indexes the cells of one side's files; later files pool into the first file's cells.
func collect(files []*results.File) (map[results.CellID]*sideData, []results.CellID) {
	out := map[results.CellID]*sideData{}
	var order []results.CellID
	put := func(file int, id results.CellID, st results.Status, d *results.DecodeCell, p *results.PrefillCell) {
		s := out[id]
		if s == nil {
			out[id] = &sideData{status: st, decode: d, prefill: p, file: file}
			order = append(order, id)
			return
		}
		if st.Measured() && s.status.Measured() {
			s.extra = append(s.extra, sideValueSource{decode: d, prefill: p, file: file})
			if st == results.StatusQueued {
				s.status = st
			}
		} else if !s.status.Measured() && st.Measured() {
			// A later file measured what the first could not: keep the measurement.
			*s = sideData{status: st, decode: d, prefill: p, extra: s.extra, file: file}
		}
	}
	for fi, f := range files {
		for i := range f.Prefill {
			c := &f.Prefill[i]
			put(fi, c.ID(), c.Status, nil, c)
		}
		for i := range f.Decode {
			c := &f.Decode[i]
			put(fi, c.ID(), c.Status, c, nil)
		}
	}
	return out, order
}

func contextOf(s *sideData) int {
	if s.decode != nil {
		return s.decode.Context
	}
	if s.prefill != nil {
		return s.prefill.Context
	}
	return 0
}

// mergeOrder returns the base's cells in order, then the head's cells the base lacks.
func mergeOrder(a, b []results.CellID) []results.CellID {
	seen := map[results.CellID]bool{}
	var out []results.CellID
	for _, l := range [][]results.CellID{a, b} {
		for _, id := range l {
			if !seen[id] {
				seen[id] = true
				out = append(out, id)
			}
		}
	}
	return out
}

// statusRank orders the statuses from best to worst; skipped has no place.
func statusRank(s results.Status) int {
	switch s {
	case results.StatusValid:
		return 0
	case results.StatusQueued:
		return 1
	case results.StatusOverCapacity, results.StatusError:
		return 2
	}
	return -1
}

// statusVerdict decides a cell from its statuses when they alone decide it: a change from
// valid to queued, over capacity or error (or queued to over capacity or error) is a regression,
// the reverse an improvement; a cell measured in base and skipped in head is incomplete; two
// statuses without numbers, or skipped on the base, are not comparable. decided is false when both are measured with the same status.
func statusVerdict(b, h results.Status) (v results.Verdict, reason string, decided bool) {
	change := fmt.Sprintf("status %s → %s", b, h)
	if b == h {
		if b.Measured() {
			return "", "", false
		}
		return results.VerdictNotComparable, fmt.Sprintf("%s in both runs", strings.ReplaceAll(string(b), "_", " ")), true
	}
	rb, rh := statusRank(b), statusRank(h)
	switch {
	case b.Measured() && h == results.StatusSkipped:
		// Measured on the base and not run on the head (its context no longer fits): missing
		// data never passes.
		return results.VerdictIncomplete, change + ": measured in base, not run in head", true
	case rb < 0 || rh < 0 || rb == rh:
		return results.VerdictNotComparable, change, true
	case rh > rb:
		return results.VerdictRegression, change, true
	}
	return results.VerdictImprovement, change, true
}

// historyOf returns the log values of metric m of cell id in the history files where the cell
// was measured, in the files' order, and the engine commit of each.
func historyOf(files []*results.File, id results.CellID, m results.Metric, re *runEffects) (logs []float64, commits []string) {
	for j, f := range files {
		a := 0.0
		if re != nil {
			a = adjustment(re.hist[j], id.Phase, m)
		}
		for _, l := range historyValues(f, id, m) {
			logs, commits = append(logs, l-a), append(commits, f.Engine.Commit)
		}
	}
	return logs, commits
}

// historyValues returns the log values of metric m of cell id in one history file.
func historyValues(f *results.File, id results.CellID, m results.Metric) []float64 {
	var out []float64
	add := func(v *float64) {
		if l, ok := logOf(v); ok {
			out = append(out, l)
		}
	}
	switch {
	case m == results.MetricSpecAcceptance:
		if c := f.AcceptanceCell(id); c != nil {
			add(acceptanceOf(&c.DecodeMetrics))
		}
	case id.Phase == results.PhasePrefill:
		if c := f.FindPrefill(id); c != nil && c.Status.Measured() {
			add(c.Value(m))
		}
	default:
		if c := f.FindDecode(id); c != nil && c.Status.Measured() {
			add(c.Value(m))
		}
	}
	return out
}

// cellVerdict is the verdict of the cell's deciding metric, or worse: a regression of any metric
// (a lost number, a status change) or an incomplete one.
func cellVerdict(phase results.Phase, ms []results.MetricComparison) results.Verdict {
	rank := map[results.Verdict]int{
		results.VerdictRegression: 7, results.VerdictIncomplete: 6, results.VerdictUnproven: 5, results.VerdictImprovement: 4,
		results.VerdictInconclusive: 3, results.VerdictUnchanged: 2, results.VerdictNotComparable: 1,
	}
	best := results.VerdictNotComparable
	for _, m := range ms {
		v := m.Verdict
		if !decides(m.Metric, phase) && v != results.VerdictRegression && v != results.VerdictIncomplete {
			continue
		}
		if rank[v] > rank[best] {
			best = v
		}
	}
	return best
}

// tally gives each cell its verdict from its metrics' (missing data counted), counts them, and
// gives the matrix its verdict from the counts, the rows and the groups.
func tally(c *results.Comparison, in Input) {
	c.Summary.CellCounts, c.Summary.Counts = results.VerdictCounts{}, results.VerdictCounts{}
	for i := range c.Cells {
		cell := &c.Cells[i]
		cell.Verdict = closedCell(cell, cellVerdict(cell.Phase, cell.Metrics), acceptedPartial(in)) // failclosed.go
		c.Summary.CellCounts.Add(cell.Verdict)
		for _, m := range cell.Metrics {
			c.Summary.Counts.Add(m.Verdict)
		}
	}
	c.Verdict = overall(c.Summary.CellCounts, c.Rows, c.Groups)
}

// overall is the whole matrix's verdict from the cell counts and the row tests.
func overall(c results.VerdictCounts, rows []results.RowComparison, groups []results.GroupComparison) results.Verdict {
	add := func(v results.Verdict) { // a row or group adds only what it decides
		if v == results.VerdictRegression || v == results.VerdictImprovement || v == results.VerdictUnproven {
			c.Add(v)
		}
	}
	for _, r := range rows {
		add(r.Verdict)
	}
	for _, g := range groups {
		add(g.Verdict)
	}
	switch {
	case c.Regression > 0:
		return results.VerdictRegression
	case c.Incomplete > 0:
		return results.VerdictIncomplete
	case c.Unproven > 0:
		return results.VerdictUnproven
	case c.Improvement > 0:
		return results.VerdictImprovement
	case c.Inconclusive > 0:
		return results.VerdictInconclusive
	case c.Unchanged > 0:
		return results.VerdictUnchanged
	}
	return results.VerdictNotComparable
}

// ptr returns a pointer to v.
func ptr[T any](v T) *T { return &v }

// MeasuredNoise returns the run-to-run CV of every cell-metric measured in groups, each group
// the runs (files, and trials in them) of one commit: the within-commit variance of the log
// values, pooled across groups (Σ(nᵢ − 1)·sᵢ² / Σ(nᵢ − 1)), with its degrees of freedom.
// Groups with fewer than two runs of a cell add nothing to it. The CVs are compare's
// Input.MeasuredNoise.
func MeasuredNoise(groups [][]*results.File) (cv map[NoiseKey]float64, df map[NoiseKey]int) {
	ss := map[NoiseKey]float64{}
	df = map[NoiseKey]int{}
	for _, g := range groups {
		if len(g) == 0 {
			continue
		}
		cells, _ := collect(g)
		for id, s := range cells {
			if !s.status.Measured() {
				continue
			}
			for _, m := range results.Metrics(id.Phase) {
				logs := s.sample(m).logs
				if len(logs) < 2 {
					continue
				}
				k := NoiseKey{id, m}
				ss[k] += varianceOf(logs) * float64(len(logs)-1)
				df[k] += len(logs) - 1
			}
		}
	}
	cv = map[NoiseKey]float64{}
	for k, s := range ss {
		cv[k] = math.Sqrt(s / float64(df[k]))
	}
	return cv, df
}

// decides reports whether metric m decides a cell of phase p: its deciding metric (decode total
// tok/s, prefill prompt tok/s), and speculative acceptance length where it is compared (a pinned
// run's matrix hides what its acceptance pass shows). The others are notes.
func decides(m results.Metric, p results.Phase) bool {
	return m == results.DecidingMetric(p) || m == results.MetricSpecAcceptance
}
