package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/speedmatrix/speedmatrix/history"
	"github.com/speedmatrix/speedmatrix/history/pages"
	"github.com/speedmatrix/speedmatrix/internal/textout"
	"github.com/speedmatrix/speedmatrix/results"
	"github.com/speedmatrix/speedmatrix/store"
)

// storeHistoryQuery is what `history` reads from a store: a config (or, with all, every one
// when there are several), ordered along the commits of gitDir's or the repository's ref.
type storeHistoryQuery struct {
	configID, gitDir, ref string
	all                   bool
}

// historySet is one configuration's results, oldest first, and how they were ordered.
type historySet struct {
	id, order string
	files     []*results.File
	// skipped says which stored results could not be read and were left out (for the page).
	skipped []string
}

// readStoreHistory reads the default-branch results of the configurations q asks for from the
// store sf names, each as a series over commits where a commit graph is at hand (--git, or the
// repository of --branch), else by measurement time.
func readStoreHistory(ctx context.Context, env *Env, sf *storeFlags, q storeHistoryQuery) ([]historySet, error) {
	c, err := sf.config()
	if err != nil {
		return nil, err
	}
	a, err := sf.openAlong(ctx, env, c, q.gitDir, q.ref, true, store.DefaultSeriesDepth) // storeprune.go
	if err != nil {
		return nil, err
	}
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
	case q.configID != "":
		if _, ok := by[q.configID]; !ok {
			return nil, usagef("--config-id %s: the store holds no default-branch results of it; it holds %s", q.configID, describeConfigs(ctx, st, ids, by))
		}
		pick = []string{q.configID}
	case len(ids) > 1 && !q.all:
		return nil, usagef("the store holds %d configurations; pick one with --config-id (--html DIR without --cell writes a page for each): %s", len(ids), describeConfigs(ctx, st, ids, by))
	}
	if commits == nil {
		env.Log.Info("ordering the results by the time they were measured; give --git DIR (a clone of the engine) to order them along the default branch's commits")
	}
	var sets []historySet
	for _, id := range pick {
		ord, files, skipped, err := store.SeriesFiles(ctx, commits, st, id, store.SeriesOptions{Tip: tip})
		if err != nil {
			return nil, err
		}
		var left []string
		for _, w := range skipped {
			env.Log.Warn(w.Error())
			left = append(left, w.Error())
		}
		env.Log.Info(ord.Describe(tipName), "config", id)
		if n := len(ord.Off); n > 0 {
			env.Log.Warn("left out results of commits that are not on the default branch's first-parent line", "config", id, "results", n,
				"commits", store.ShortCommits(ord.Off, 5), "along", tipName)
		}
		if len(ord.Entries) == 0 {
			err := fmt.Errorf("config %s: none of its %s is of a commit on the first parents of %s (check --ref and --git)", id, textout.Plural(len(ord.Off), "result", "results"), tipName)
			if len(pick) == 1 {
				return nil, err
			}
			env.Log.Warn(err.Error())
			continue
		}
		sets = append(sets, historySet{id: id, order: ord.Describe(tipName), files: files, skipped: left})
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
			setup = history.SetupLine(f) + ", "
		}
		parts = append(parts, fmt.Sprintf("%s (%s%s, newest %s)", id, setup, textout.Plural(len(es), "result", "results"), history.ShortCommit(es[0].Commit)))
	}
	return strings.Join(parts, "; ")
}

// writeSites analyzes each configuration's history, prints its change points, and writes a
// page for each and an index of them into htmlDir.
func writeSites(env *Env, sets []historySet, o history.Options, htmlDir string) error {
	configs := make([]history.Config, 0, len(sets))
	for i, set := range sets {
		h, err := history.Analyze(set.files, o)
		if err != nil {
			return usagef("%v", err)
		}
		h.Order = set.order
		h.Warnings = append(h.Warnings, set.skipped...)
		for _, w := range h.Warnings {
			env.Log.Warn(w, "config", set.id)
		}
		if i > 0 {
			fmt.Fprintln(env.Stdout)
		}
		fmt.Fprintf(env.Stdout, "Config %s\n", set.id)
		if err := history.WriteSummary(env.Stdout, h); err != nil {
			return err
		}
		configs = append(configs, history.Config{ID: set.id, History: h})
	}
	site, err := pages.SiteOf(configs)
	if err != nil {
		return err
	}
	return writeSite(env, htmlDir, site)
}
