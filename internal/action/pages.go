package action

import (
	"context"
	"fmt"

	"github.com/speedmatrix/speedmatrix/ghbot"
	"github.com/speedmatrix/speedmatrix/history"
	"github.com/speedmatrix/speedmatrix/history/pages"
	"github.com/speedmatrix/speedmatrix/internal/sitedir"
	"github.com/speedmatrix/speedmatrix/store"
)

// pagesMode writes the store's history page into the artifact directory, for
// actions/upload-pages-artifact and actions/deploy-pages: every configuration's default-branch
// results along the repository's default branch (pages.SiteOf: one configuration's page at
// the root, or a page each and an index), with the change points, every cell's trend and the
// latest matrix, as `speedmatrix history --branch … --html` writes it. It reads the store only
// (contents: read) and runs no engine; the output site names the folder.
func (j *job) pagesMode(ctx context.Context) error {
	defer j.flushOutputs()
	c, err := j.client(ctx)
	if err != nil {
		return err
	}
	rs := j.openStore(c)
	gc := store.GitHubCommits{GH: c.GitHub(), Owner: j.repo.Owner, Repo: j.repo.Name}
	tip, err := gc.Tip(ctx, "")
	if err != nil {
		return fmt.Errorf("mode pages: %w", err)
	}
	ids, _, err := store.Configs(ctx, rs.s)
	if err != nil {
		return fmt.Errorf("mode pages: the store: %w", err)
	}
	var configs []history.Config
	for _, id := range ids {
		ord, files, skipped, err := store.SeriesFiles(ctx, gc, rs.s, id, store.SeriesOptions{Tip: tip})
		if err != nil {
			return fmt.Errorf("mode pages: %w", err)
		}
		var left []string
		for _, w := range skipped {
			j.log.Warn(w.Error())
			left = append(left, w.Error())
		}
		if len(files) == 0 {
			j.log.Info("pages: a configuration without results on the default branch's first parents is left out", "config", id, "results", len(ord.Off))
			continue
		}
		h, err := history.Analyze(files, history.DefaultOptions())
		if err != nil {
			return fmt.Errorf("mode pages: config %s: %w", id, err)
		}
		h.Order = ord.Describe("the default branch (" + ghbot.ShortSHA(tip) + ")")
		h.Warnings = append(h.Warnings, left...)
		configs = append(configs, history.Config{ID: id, History: h})
	}
	site, err := pages.SiteOf(configs)
	if err != nil {
		return fmt.Errorf("mode pages: %w", err)
	}
	dir := j.in.ArtifactDir
	if err := sitedir.Write(dir, site); err != nil {
		return fmt.Errorf("mode pages: %w", err)
	}
	j.setOutput("site", dir)
	j.log.Info("wrote the history page", "dir", dir, "configs", len(configs), "files", len(site))
	return nil
}
