package store

import (
	"context"
	"fmt"
	"slices"

	"github.com/speedmatrix/speedmatrix/results"
)

// DefaultMinHistory is the fewest default-branch results History hands to compare (compare's
// Thresholds.MinHistory): with fewer, a variance has so few degrees of freedom that the first
// look detects far less than with the prior (`speedmatrix calibrate --history N`: a 2δ row
// slowdown is flagged at the first look in 1.2 % of comparisons with 3 results, 13.2 % with 5,
// 61.3 % with 10), so compare keeps its prior until there are 10.
const DefaultMinHistory = 10

// HistoryOptions bounds History.
type HistoryOptions struct {
	// Max is how many of the newest default-branch results to read (default 10).
	Max int
	// Min is the fewest that count as a history (default DefaultMinHistory); with fewer,
	// History returns none and says why.
	Min int
	// Exclude lists commits whose results are left out (the head under test: a run must not
	// be its own noise).
	Exclude []string
	// Commits and Tip, when both are set, take the history along Tip's first parents (the
	// baseline commit: the results of it and of its nearest measured ancestors), newest first
	// in commit order, instead of the newest measured: a baseline measured later than its commit
	// then takes its commit's place, results of commits after the baseline or off the default
	// branch are not its history, and compare can split the series at its change points
	// (compare.Input.HistoryByCommit).
	Commits Commits
	Tip     string
}

// History returns the newest default-branch results of configID (along opts.Tip's first parents
// when opts.Commits is set, else by measurement time), newest first, for compare's
// history input (compare.Input.History): each cell's spread across them is its run-to-run
// noise. With fewer than opts.Min it returns none, and a note saying so that the caller can
// show; PR results and A/A reruns are never history. History is optional evidence: a stored
// file that is missing or damaged (Unreadable) is skipped, the next older result read in its
// place, and returned in warnings, each naming the file and how to remove or restore it; only a
// store that cannot be read at all is an error.
func History(ctx context.Context, s Store, configID string, opts HistoryOptions) ([]*results.File, []Entry, string, []error, error) {
	if opts.Max <= 0 {
		opts.Max = 10
	}
	if opts.Min <= 0 {
		opts.Min = DefaultMinHistory
	}
	var all []Entry // newest first
	along := ""
	if opts.Commits != nil && opts.Tip != "" {
		ord, err := Series(ctx, opts.Commits, s, configID, SeriesOptions{Tip: opts.Tip, Depth: LineageDepth(opts.Max)})
		if err != nil {
			return nil, nil, "", nil, fmt.Errorf("history: %w", err)
		}
		all = ord.Entries
		slices.Reverse(all) // newest commit first
		along = fmt.Sprintf(" along the first parents of %s", results.ShortCommit(opts.Tip))
	} else {
		var err error
		if all, err = s.List(ctx, Filter{ConfigID: configID, Kind: KindDefault}); err != nil {
			return nil, nil, "", nil, err
		}
	}
	var (
		files    []*results.File
		use      []Entry
		warnings []error
	)
	for _, e := range all {
		if len(use) == opts.Max {
			break
		}
		if slices.Contains(opts.Exclude, e.Commit) {
			continue
		}
		f, err := s.Open(ctx, e)
		if Unreadable(err) {
			warnings = append(warnings, fmt.Errorf("history: skipped a stored result: %w", err))
			continue
		}
		if err != nil {
			return nil, nil, "", warnings, fmt.Errorf("history: %w", err)
		}
		files, use = append(files, f), append(use, e)
	}
	if len(use) < opts.Min {
		return nil, nil, fmt.Sprintf("history: %d default-branch results of config %s%s, fewer than %d; the noise prior applies", len(use), configID, along, opts.Min), warnings, nil
	}
	return files, use, fmt.Sprintf("history: noise from %d default-branch results of config %s%s", len(files), configID, along), warnings, nil
}
