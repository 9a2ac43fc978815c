package action

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/speedmatrix/speedmatrix/compare/changepoint"
	"github.com/speedmatrix/speedmatrix/ghbot"
	"github.com/speedmatrix/speedmatrix/history"
	"github.com/speedmatrix/speedmatrix/internal/textout"
	"github.com/speedmatrix/speedmatrix/results"
	"github.com/speedmatrix/speedmatrix/store"
)

// The change-point issue: one open issue, found by its marker among the label's.
const (
	changePointTitle  = "speedmatrix: performance change point"
	changePointLabel  = "speedmatrix"
	changePointMarker = "<!-- speedmatrix:change-point -->"
	// changePointStatePrefix starts the hidden line that keeps the regressions the issue reports
	// (cpState), which a later push reads back to see whether they recovered.
	changePointStatePrefix = "<!-- speedmatrix:change-point-state "
)

// changePointConfigMarker names the config a change-point issue is about, so that only a push of
// that config closes it.
func changePointConfigMarker(configID string) string {
	return "<!-- speedmatrix:change-point-config " + configID + " -->"
}

// cpSeries is one regression the issue reports: its series, the first commit of the worse level
// and the last of the old one (full ids), the means before and after, and the change.
type cpSeries struct {
	Cell   string  `json:"cell"`
	Metric string  `json:"metric"`
	First  string  `json:"first"`
	Last   string  `json:"last,omitempty"`
	Before float64 `json:"before"`
	After  float64 `json:"after"`
	Change float64 `json:"change"`
}

func (s cpSeries) key() string { return s.Cell + " " + s.Metric }

// cpState is the issue's hidden state: the config and its regressions. Only values this package
// made (cell ids, metric names, commit ids, numbers) are in it, so it cannot hold "-->".
type cpState struct {
	Config string     `json:"config"`
	Series []cpSeries `json:"series"`
}

// parseCPState reads the state line of an issue body; ok is false when there is none or it is
// not one this package wrote (the body can be edited: every cell, metric and commit must be
// one, and cells are kept in their canonical form, so that only strings this package makes
// reach the issue).
func parseCPState(body string) (cpState, bool) {
	_, rest, ok := strings.Cut(body, changePointStatePrefix)
	if !ok {
		return cpState{}, false
	}
	js, _, ok := strings.Cut(rest, " -->")
	if !ok {
		return cpState{}, false
	}
	var st cpState
	if err := json.Unmarshal([]byte(js), &st); err != nil {
		return cpState{}, false
	}
	for i, s := range st.Series {
		id, err := results.ParseCellID(s.Cell)
		if err != nil || !ghbot.ValidSHA(s.First) || (s.Last != "" && !ghbot.ValidSHA(s.Last)) {
			return cpState{}, false
		}
		m, err := history.ParseMetric(s.Metric)
		if err != nil || string(m) != s.Metric {
			return cpState{}, false
		}
		st.Series[i].Cell = id.String()
	}
	return st, true
}

// regression is where a series stands against its latest regression.
type regression struct {
	// reg is the series' latest shift that is a regression; now its latest shift (reg itself
	// while nothing followed it).
	reg, now history.Shift
	// regressed is false once a later change point brought the series back to within the
	// minimum change of its level before reg, or better.
	regressed bool
}

// regressionOf returns where s stands against its latest regression; ok is false when none of
// its shifts is one. The level now is the mean since the series' latest change point: a series
// stays regressed while that level is worse than the one before the regression by the minimum
// change or more.
func regressionOf(s *history.Series) (r regression, ok bool) {
	last := -1
	for i, sh := range s.Shifts {
		if sh.Direction == changepoint.Regression {
			last = i
		}
	}
	if last < 0 {
		return r, false
	}
	r = regression{reg: s.Shifts[last], now: s.Shifts[len(s.Shifts)-1]}
	r.regressed = last == len(s.Shifts)-1 || !within(s.Metric, r.now.After, r.reg.Before, s.Delta)
	return r, true
}

// within reports whether v is within the relative change delta of level, or better.
func within(m results.Metric, v, level, delta float64) bool {
	if m.HigherIsBetter() {
		return v >= level*(1-delta)
	}
	return v <= level*(1+delta)
}

// recoveredAt returns the index of the first point of the series' trailing run of values back
// within delta of level (or better), when that run holds at least minSize values (the detector's
// minimum segment: a level lasts that long before it counts); ok is false otherwise.
func recoveredAt(s *history.Series, level, delta float64, minSize int) (int, float64, bool) {
	first, n, sum := -1, 0, 0.0
	for i := len(s.Points) - 1; i >= 0; i-- {
		v := s.Points[i].Value
		if v == nil {
			continue
		}
		if !within(s.Metric, *v, level, delta) {
			break
		}
		first, n, sum = i, n+1, sum+*v
	}
	if n < minSize {
		return 0, 0, false
	}
	return first, sum / float64(n), true
}

// changePoint analyses the stored default-branch series of head's config on a push of sha (at
// most the retention's Keep results, along sha's first parents: a baseline measured later than
// its commit takes its commit's place, and results of commits a force push removed are left out;
// by measurement time where the commit graph cannot be read), and keeps the one change-point
// issue in step with it:
//
//   - a series whose latest regression still holds (its level now is worse than before it by
//     the minimum change or more) is reported: the issue is opened or updated, naming the first
//     commit of the worse level and the size of the shift;
//   - a regression the open issue reports that no longer holds has recovered: a later change
//     point brought it back to within the minimum change of its old level (or better), or its
//     last values have been back there for the detector's minimum segment. When every one has,
//     the issue is closed with a comment naming the commit each recovered at (the first of the
//     level that brought it back).
//
// A change point needs changepoint's MinSize (3) results on either side, so a shift is reported
// on the 3rd push at its new level at the earliest, and a recovery likewise. Failures are
// logged: the results are stored.
func (j *job) changePoint(ctx context.Context, c *ghbot.Client, rs resultStore, sha string, head *results.File) {
	if c == nil {
		return
	}
	id := store.ConfigID(head)
	files, entries, err := j.series(ctx, rs, id, sha)
	if err != nil || len(files) < 2 {
		if err != nil {
			j.log.Warn("reading the history for change points", "err", err)
		}
		return
	}
	commit := func(i int) string { // the store's commit of point i (the file may not say)
		if i >= 0 && i < len(entries) {
			return entries[i].Commit
		}
		return ""
	}
	opts := history.DefaultOptions()
	h, err := history.Analyze(files, opts)
	if err != nil {
		j.log.Warn("change points", "err", err)
		return
	}
	minSize := opts.ChangePoint.MinSize

	now := cpState{Config: id}
	reported := map[string]bool{}
	backAt := map[string]int{} // series key → the first point of the level it recovered at
	for _, s := range h.Series {
		r, ok := regressionOf(s)
		if !ok {
			continue
		}
		k := cpSeries{Cell: s.Cell.String(), Metric: string(s.Metric)}.key()
		if !r.regressed {
			backAt[k] = r.now.Index
			continue
		}
		sh := r.reg
		now.Series = append(now.Series, cpSeries{Cell: s.Cell.String(), Metric: string(s.Metric), First: commit(sh.Index),
			Last: commit(sh.Index - 1), Before: sh.Before, After: sh.After, Change: sh.Change})
		reported[k] = true
	}

	issue, body, open, err := c.FindOpenIssue(ctx, j.repo, changePointLabel, changePointConfigMarker(id))
	if err != nil {
		j.log.Warn("the change-point issue", "err", err)
		return
	}
	var back []string // the recovered series, as table rows of the closing comment
	if prev, ok := parseCPState(body); open && ok {
		for _, ps := range prev.Series {
			if reported[ps.key()] {
				continue
			}
			s := h.Find(mustCell(ps.Cell), results.Metric(ps.Metric))
			at, level, ok := -1, 0.0, false
			if i, found := backAt[ps.key()]; found && s != nil {
				at, ok = i, true
				level = s.Shifts[len(s.Shifts)-1].After
			} else if s != nil {
				at, level, ok = recoveredAt(s, ps.Before, s.Delta, minSize)
			}
			if !ok { // not back yet: the issue keeps reporting it
				now.Series = append(now.Series, ps)
				reported[ps.key()] = true
				continue
			}
			back = append(back, fmt.Sprintf("| %s | %s | %s | %s | %.4g → %.4g → %.4g |", ps.Cell, ps.Metric,
				code(ghbot.ShortSHA(commit(at))), code(ghbot.ShortSHA(ps.First)), ps.Before, ps.After, level))
		}
	}
	newest := code(ghbot.ShortSHA(head.Engine.Commit))
	if len(now.Series) == 0 {
		if open {
			j.closeChangePoint(ctx, c, issue, id, back, len(files), newest)
		}
		return
	}
	j.upsertChangePoint(ctx, c, now, len(files), newest, minSize)
	j.regressed = now // bisect.go
}

// series returns the stored default-branch results of config id along sha's first parents,
// oldest first, at most the retention's Keep (by measurement time where the commit graph cannot
// be read), and their entries.
func (j *job) series(ctx context.Context, rs resultStore, id, sha string) ([]*results.File, []store.Entry, error) {
	keep := j.cfg.Store.Retention.Keep
	if keep <= 0 {
		keep = 100
	}
	// Every result the retention keeps may be on the walk: look back as far as pruning does
	// (the same walk: rs.commits remembers it).
	opts := store.SeriesOptions{Tip: sha, Limit: keep, Depth: store.LineageDepth(keep)}
	ord, files, skipped, err := store.SeriesFiles(ctx, rs.commits, rs.s, id, opts)
	if err != nil && rs.commits != nil {
		j.log.Warn("the default branch's commits could not be read: the change points are searched in the order the results were measured", "err", err)
		ord, files, skipped, err = store.SeriesFiles(ctx, nil, rs.s, id, opts)
	}
	if err != nil {
		return nil, nil, err
	}
	for _, w := range skipped {
		j.log.Warn(w.Error())
	}
	if n := len(ord.Off); n > 0 {
		j.log.Info("change points: left out results of commits not on the pushed commit's first parents (force-pushed away, or older than the commits walked)", "results", n)
	}
	return files, ord.Entries, nil
}

// mustCell parses a cell id this package wrote; the zero id (found nowhere) when it is not one.
func mustCell(s string) results.CellID {
	id, _ := results.ParseCellID(s)
	return id
}

// upsertChangePoint opens or updates the change-point issue with st's regressions.
func (j *job) upsertChangePoint(ctx context.Context, c *ghbot.Client, st cpState, points int, newest string, minSize int) {
	stateJSON, err := json.Marshal(st)
	if err != nil {
		j.log.Warn("the change-point issue", "err", err)
		return
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n%s\n%s%s -->\nThe default branch's results of config `%s` shifted to a worse level (change points over the last %d pushes, newest %s):\n\n",
		changePointMarker, changePointConfigMarker(st.Config), changePointStatePrefix, stateJSON, st.Config, points, newest)
	for _, s := range st.Series {
		fmt.Fprintf(&b, "- %s %s: the first commit of the new level is %s (the last at the old level %s); mean %.4g → %.4g, %+.1f %%.\n",
			s.Cell, s.Metric, code(ghbot.ShortSHA(s.First)), code(orDash(ghbot.ShortSHA(s.Last))), s.Before, s.After, 100*s.Change)
	}
	b.WriteString("\n| Cell | Metric | First commit | Last before | Mean before → after | Change |\n|---|---|---|---|---|---|\n")
	for _, s := range st.Series {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %.4g → %.4g | %+.1f %% |\n", s.Cell, s.Metric,
			code(ghbot.ShortSHA(s.First)), code(orDash(ghbot.ShortSHA(s.Last))), s.Before, s.After, 100*s.Change)
	}
	fmt.Fprintf(&b, "\nA change point needs %d results at the new level (E-divisive means, minimum segment %d), so a shift is reported on the %d%s push after it at the earliest. The issue is closed when every series is back within the minimum change of its old level (or better) for %d results, saying at which commit.\n",
		minSize, minSize, minSize, textout.Ordinal(minSize), minSize)
	if j.runURL != "" {
		fmt.Fprintf(&b, "\n[The run](%s)\n", j.runURL)
	}
	n, created, err := c.UpsertIssue(ctx, j.repo, changePointLabel, changePointMarker, changePointTitle, b.String())
	if err != nil {
		j.log.Warn("the change-point issue", "err", err)
		return
	}
	j.log.Warn("a change point that is a regression", "issue", n, "created", created, "series", len(st.Series))
}

// closeChangePoint closes the change-point issue of config id with a comment saying which series
// came back at which commit (back: table rows; none when the issue held no state to check).
func (j *job) closeChangePoint(ctx context.Context, c *ghbot.Client, issue int, id string, back []string, points int, newest string) {
	var b strings.Builder
	if len(back) > 0 {
		fmt.Fprintf(&b, "The default branch's results of config `%s` recovered: every regression this issue reports is back within the minimum change of its old level, or better (newest push %s).\n\n", id, newest)
		b.WriteString("| Cell | Metric | Recovered at (first commit back) | Regressed at | Mean before → regressed → now |\n|---|---|---|---|---|\n")
		b.WriteString(strings.Join(back, "\n") + "\n")
	} else {
		fmt.Fprintf(&b, "The default branch's results of config `%s` recovered: no regression remains in its last %d results (newest push %s).\n", id, points, newest)
	}
	if j.runURL != "" {
		fmt.Fprintf(&b, "\n[The run](%s)\n", j.runURL)
	}
	n, err := c.CloseIssue(ctx, j.repo, changePointLabel, changePointConfigMarker(id), b.String())
	if err != nil {
		j.log.Warn("closing the change-point issue", "issue", issue, "err", err)
		return
	}
	j.log.Info("the change point recovered; issue closed", "issue", n, "config_id", id)
}
