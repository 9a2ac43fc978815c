package history

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/speedmatrix/speedmatrix/internal/textout"
	"github.com/speedmatrix/speedmatrix/internal/usage"
	"github.com/speedmatrix/speedmatrix/results"
	"github.com/speedmatrix/speedmatrix/store"
)

// This file reads the results a history is made of: a store's default-branch results, each
// configuration a series along the default branch's commits, or a folder of results files.

// StoreQuery is what `history` reads from a store: a config (or, with all, every one
// when there are several), ordered along the commits of gitDir's or the repository's ref.
type StoreQuery struct {
	ConfigID string
	All      bool
}

// Set is one configuration's results, oldest first, and how they were ordered.
type Set struct {
	ID, Order string
	Files     []*results.File
	// Skipped says which stored results could not be read and were left out (for the page).
	Skipped []string
}

// FromStore reads the default-branch results of the configurations q asks for from the store
// a, each as a series over commits where a has a commit graph (--git, or the repository of
// --branch), else by measurement time.
func FromStore(ctx context.Context, log *slog.Logger, a store.Along, q StoreQuery) ([]Set, error) {
	st, commits, tip, tipName := a.Store, a.Commits, a.Tip, a.Name
	ids, by, err := store.Configs(ctx, st)
	if err != nil {
		return nil, err
	}
	if len(ids) == 0 {
		return nil, errors.New("the store holds no default-branch results: `speedmatrix baseline --commit SHA` stores one, as the bot does on every push to the default branch")
	}
	pick := ids
	switch {
	case q.ConfigID != "":
		if _, ok := by[q.ConfigID]; !ok {
			return nil, usage.Errorf("--config-id %s: the store holds no default-branch results of it; it holds %s", q.ConfigID, describeConfigs(ctx, st, ids, by))
		}
		pick = []string{q.ConfigID}
	case len(ids) > 1 && !q.All:
		return nil, usage.Errorf("the store holds %d configurations; pick one with --config-id (--html DIR without --cell writes a page for each): %s", len(ids), describeConfigs(ctx, st, ids, by))
	}
	if commits == nil {
		log.Info("ordering the results by the time they were measured; give --git DIR (a clone of the engine) to order them along the default branch's commits")
	}
	var sets []Set
	for _, id := range pick {
		ord, files, skipped, err := store.SeriesFiles(ctx, commits, st, id, store.SeriesOptions{Tip: tip})
		if err != nil {
			return nil, err
		}
		var left []string
		for _, w := range skipped {
			log.Warn(w.Error())
			left = append(left, w.Error())
		}
		log.Info(ord.Describe(tipName), "config", id)
		if n := len(ord.Off); n > 0 {
			log.Warn("left out results of commits that are not on the default branch's first-parent line", "config", id, "results", n,
				"commits", store.ShortCommits(ord.Off, 5), "along", tipName)
		}
		if len(ord.Entries) == 0 {
			err := fmt.Errorf("config %s: none of its %s is of a commit on the first parents of %s (check --ref and --git)", id, textout.Plural(len(ord.Off), "result", "results"), tipName)
			if len(pick) == 1 {
				return nil, err
			}
			log.Warn(err.Error())
			continue
		}
		sets = append(sets, Set{ID: id, Order: ord.Describe(tipName), Files: files, Skipped: left})
	}
	if len(sets) == 0 {
		return nil, fmt.Errorf("no configuration has results on the first parents of %s (check --ref and --git)", tipName)
	}
	return sets, nil
}

// describeConfigs names each config id with its model and GPU (from its newest result) and its
// count of results, for an error that asks to pick one.
func describeConfigs(ctx context.Context, st store.Store, ids []string, by map[string][]store.Entry) string {
	parts := make([]string, 0, len(ids))
	for _, id := range ids {
		es := by[id]
		setup := ""
		if f, err := st.Open(ctx, es[0]); err == nil {
			setup = SetupLine(f) + ", "
		}
		parts = append(parts, fmt.Sprintf("%s (%s%s, newest %s)", id, setup, textout.Plural(len(es), "result", "results"), ShortCommit(es[0].Commit)))
	}
	return strings.Join(parts, "; ")
}

// ReadDir reads every *.json results file in dir; other files are skipped with a warning.
func ReadDir(log *slog.Logger, dir string) ([]*results.File, error) {
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		if err == nil {
			err = fmt.Errorf("%s is not a folder", dir)
		}
		return nil, usage.Errorf("--dir: %v", err)
	}
	paths, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	sort.Strings(paths)
	var files []*results.File
	for _, p := range paths {
		f, err := results.ReadFile(p)
		if err != nil {
			if errors.Is(err, fs.ErrPermission) {
				return nil, err
			}
			log.Warn("skipped a file that is not a valid results file", "path", p, "err", err)
			continue
		}
		files = append(files, f)
	}
	if len(files) == 0 {
		return nil, usage.Errorf("--dir %s holds no results file (*.json)", dir)
	}
	return files, nil
}

// AnalyzeSets analyzes each configuration's history (Analyze, the set's order and skipped files
// among its warnings, each logged), and prints each one's change points on w under "Config ID";
// an analysis that cannot be made is a *usage.Error.
func AnalyzeSets(w io.Writer, log *slog.Logger, sets []Set, o Options) ([]Config, error) {
	configs := make([]Config, 0, len(sets))
	for i, set := range sets {
		h, err := Analyze(set.Files, o)
		if err != nil {
			return nil, usage.Errorf("%v", err)
		}
		h.Order = set.Order
		h.Warnings = append(h.Warnings, set.Skipped...)
		for _, warn := range h.Warnings {
			log.Warn(warn, "config", set.ID)
		}
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "Config %s\n", set.ID)
		if err := WriteSummary(w, h); err != nil {
			return nil, err
		}
		configs = append(configs, Config{ID: set.ID, History: h})
	}
	return configs, nil
}
