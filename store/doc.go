// Package store keeps results files between runs, so that a comparison finds its true baseline
// and the default branch's history measures the machine's real noise. It must not measure,
// compare or render; it stores, indexes, resolves baselines and prunes.
//
//	s := store.NewDir("results-store")                           // the CLI and tests
//	s := store.NewBranch(client.GitHub(), "o", "r")              // the bot: a data branch
//	e, _ := s.Put(ctx, store.Entry{Commit: sha}, file)           // default-branch result
//	b, _ := store.Resolve(ctx, store.GitHubCommits{…}, s, store.Query{ConfigID: store.ConfigID(head), Head: headSHA, Base: "main"})
//	hist, _, note, skipped, _ := store.History(ctx, s, id, store.HistoryOptions{Exclude: []string{headSHA}})
//	line, _ := commits.Ancestors(ctx, tip, store.LineageDepth(100))
//	s.Prune(ctx, store.Policy{Keep: 100, PRAge: 30 * 24 * time.Hour, Lineage: line})
//
// # Layout
//
// Both implementations lay a store out the same way, so a Dir can be a checkout of the data
// branch:
//
//	index.json                                    every entry: commit, config_id, kind, pr, time, path, run_id (blob)
//	results/<engine-commit>/<config-id>.json      default-branch results: baselines and history
//	pr/<number>/<engine-commit>/<config-id>.json  a pull request's results, kept apart, never a baseline
//	aa/<engine-commit>/<config-id>/<run-id>.json  A/A reruns of a default-branch commit
//	bisect/<engine-commit>/<config-id>/<run-id>.json  a bisection's steps (real measurements of
//	                                              default-branch commits; not history, see KindBisect)
//
// The engine commit is a full SHA. The config id (ConfigID) is a short SHA-256 of what makes
// two results comparable (model, GPU model and count, the matrix, the launch command without
// secrets, the simulator's time scale); results of one config id form one series.
//
// # The data branch
//
// Branch writes through the Git Data API (contents: write): the results blob, then a tree on
// the tip's tree (base_tree) holding it and the rewritten index, then a commit whose parent is
// the tip, then a fast-forward update of refs/heads/<branch> (force=false). Two writers racing
// both build on the same tip; GitHub takes the first update and answers the second 422 ("not a
// fast forward"); the loser reads the new tip, applies its entry to the new index and retries
// with backoff (8 attempts, 250 ms doubling to 8 s), so both results end up stored and neither
// index entry is lost. On first use the branch does not exist: the first commit is an orphan
// (no parent) created with POST /git/refs; a racing creator gets 422 "Reference already
// exists" and retries as an update. The repository must hold at least one commit (the Git Data
// API refuses an empty repository with 409).
//
// Every commit message ends in "[skip ci]", so GitHub starts no push or pull_request workflow
// for the bot's writes; and a workflow running speedmatrix must not list the data branch in its
// on.push.branches (the example workflow filters pushes to the default branch only), so that a
// store write can never trigger a benchmark even where [skip ci] is not honoured.
//
// # Baselines
//
// Resolve takes the PR's merge-base (the compare API's merge_base_commit, or git merge-base) if
// the store holds default-branch results of it for the config id, else the nearest first-parent
// ancestor that has them, at most 200 steps back (Query.MaxDepth). Comparing with the latest
// default branch instead would blame the PR for everyone else's merges. Only commits on the
// walk count: results of a commit a force push removed from the default branch are never
// picked, whatever their age. The Baseline says which commit was used and how far back
// (Describe), or, when there is none, why (Reason): a neutral result, not an error.
//
// # History
//
// History returns the newest default-branch results of a config id (at least
// DefaultMinHistory, else none) for compare.Input.History: compare then takes each cell's
// run-to-run noise from their spread instead of its prior (compare/doc.go, "Noise").
//
// # Damage
//
// History and Repeats read optional evidence: a stored file the index names that is missing or
// cannot be decoded (Unreadable: ErrNotFound, *DamagedError) is skipped and returned as a
// warning naming it and how to repair it where the store is kept; Get of such a file, a
// baseline, fails. A damaged index.json of a Dir is rebuilt from the files by Dir.Reindex
// (`speedmatrix store reindex`); a data branch's is restored from the branch's history.
//
// # Retention
//
// Prune keeps the newest Policy.Keep default-branch results and Policy.KeepAA A/A reruns per
// config id, and PR results for Policy.PRAge. Newest is along the default branch when
// Policy.Lineage gives its first-parent commits (Commits.Ancestors of the tip, or of the commit
// a push just measured): a result is as new as its commit's place there, so a baseline of an old
// commit measured last (speedmatrix baseline --commit OLD) is old, and results of commits not on
// the line (force-pushed away, or beyond the walk) rank after every one that is, by time.
// Without a lineage, newest is the last measured. Prune never removes the newest default-branch
// result of a config id (the current baseline), the results of Policy.Protect commits, nor the
// baseline a kept PR result cites (Entry.Base: the bot records, with each PR result, the
// default-branch commit it was compared with). On a branch, pruning is one commit that deletes
// the files (tree entries with sha null) and rewrites the index; the history of the branch still
// holds them.
package store
