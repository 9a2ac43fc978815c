package action

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/speedmatrix/speedmatrix/compare"
	"github.com/speedmatrix/speedmatrix/ghbot"
	"github.com/speedmatrix/speedmatrix/internal/textout"
	"github.com/speedmatrix/speedmatrix/measure"
	"github.com/speedmatrix/speedmatrix/results"
	"github.com/speedmatrix/speedmatrix/store"
)

// `/bench rerun CELLS` is the second look of the comparison it follows: the head alone is
// measured again on the cells, with the configured trials, and those trials pool with the
// earlier head run's (the pull request's result at this head in the store) at look 2, as
// `compare --look 2 --cells` does; every other cell keeps the first look's verdict
// (compare.MergeLooks), so that no cell is tested twice on the same data. Where the store holds
// no earlier head run, the rerun is compared alone, as a first look, and a warning says why.

// rerun reports whether p measures cells of the head again (`/bench rerun`): a command that
// names cells and is not paired.
func (p plan) rerun() bool {
	return p.Kind == ghbot.RunCommand && len(p.Cells) > 0 && p.Paired == ""
}

// seriesFile returns head as the store's lookups read it: a rerun's file names its cells in its
// settings (store.ConfigID counts them), so its series is the configured matrix's, found by the
// configured cells in their place; any other run's file is head itself.
func (j *job) seriesFile(p plan, head *results.File) *results.File {
	if !p.rerun() || head == nil || head.Run.Settings == nil {
		return head
	}
	f := *head
	s := *head.Run.Settings
	s.Cells = nil
	for _, c := range j.cfg.Cells {
		if id, err := results.ParseCellID(c); err == nil {
			s.Cells = append(s.Cells, id.String())
		} else {
			s.Cells = append(s.Cells, c)
		}
	}
	f.Run.Settings = &s
	return &f
}

// earlierHead returns the pull request's stored result at its head from before this rerun (the
// first pass the rerun pools with), nil when the store holds none or cannot be read.
func (j *job) earlierHead(ctx context.Context, rs resultStore, p plan, head *results.File) *results.File {
	if rs.s == nil || p.PR == 0 {
		return nil
	}
	entries, err := rs.s.List(ctx, store.Filter{Kind: store.KindPR, Commit: p.HeadSHA, PR: p.PR, ConfigID: store.ConfigID(j.seriesFile(p, head)), Limit: 1})
	if err != nil || len(entries) == 0 {
		if err != nil {
			j.log.Warn("/bench rerun: listing the pull request's earlier result", "err", err)
		}
		return nil
	}
	f, err := rs.s.Open(ctx, entries[0])
	if err != nil {
		j.log.Warn("/bench rerun: reading the pull request's earlier result", "path", entries[0].Path, "err", err)
		return nil
	}
	return f
}

// noEarlierWarning is the comparison's warning when a rerun has no earlier head run to pool with.
const noEarlierWarning = "the store holds no earlier run of this head to pool the rerun with, so the rerun was compared alone, as a first look"

// compareRerun is the second look of a `/bench rerun`: earlier (the first pass at this head)
// compared whole at look 1, then earlier and out.Head (the rerun) pooled on the cells the rerun
// measured at look 2, merged by compare.MergeLooks. The thresholds are the configuration's with
// head-only reruns, as the advice was made for them.
func (j *job) compareRerun(out outcome, earlier, base *results.File, hist []*results.File, warnings []string) (outcome, error) {
	th := measure.Thresholds(j.cfg)
	th.HeadOnlyReruns = true
	th.Look = 1
	in, err := j.compareInput(earlier, base, hist, nil)
	if err != nil {
		return out, err
	}
	first, err := compare.Compare(in, th)
	if err == nil {
		var again []results.CellID
		for _, c := range out.Head.Decode {
			again = append(again, c.ID())
		}
		for _, c := range out.Head.Prefill {
			again = append(again, c.ID())
		}
		in.Head = []*results.File{earlier, out.Head}
		in.HeadPath = "head + rerun"
		in.Cells = again
		th.Look = 2
		var second *results.Comparison
		if second, err = compare.Compare(in, th); err == nil {
			first = compare.MergeLooks(first, second)
			warnings = append(slices.Clone(warnings), fmt.Sprintf("second look: the rerun's %d %s pooled with the earlier run of this head (%s); every other cell keeps the first look's verdict",
				len(again), textout.Pick(len(again), "cell", "cells"), earlierWhen(earlier)))
		}
	}
	return j.keepComparison(out, first, err, warnings)
}

// earlierWhen names the earlier run by its run id, else its start.
func earlierWhen(f *results.File) string {
	switch {
	case f.Run.ID != "":
		return "run " + f.Run.ID
	case !f.Run.Start.IsZero():
		return "measured " + f.Run.Start.UTC().Format("2006-01-02 15:04 UTC")
	}
	return "its stored result"
}

// keepComparison finishes a comparison the bot made: a setup mismatch is said as no baseline, an
// error returned, else the warnings added and the comparison written to the artifact directory.
func (j *job) keepComparison(out outcome, cmp *results.Comparison, err error, warnings []string) (outcome, error) {
	var mm *compare.MismatchError
	if errors.As(err, &mm) {
		out.NoBaseline = "The baseline measured a different setup, so nothing was compared: " + code(strings.Join(mm.Differences, "; ")) + "."
		return out, nil
	}
	if err != nil {
		return out, fmt.Errorf("compare: %w", err)
	}
	cmp.Warnings = append(cmp.Warnings, warnings...)
	out.Comparison = cmp
	out.ComparisonPath = filepath.Join(j.in.ArtifactDir, artifactComparison)
	if err := results.WriteComparisonFile(out.ComparisonPath, cmp); err != nil {
		return out, fmt.Errorf("write the comparison: %w", err)
	}
	return out, nil
}
