// Package action is `speedmatrix action`: the GitHub Action's orchestration. It reads the event
// and the inputs, routes with ghbot.Decide, and for a run keeps GitHub informed from start to
// end — the check run in_progress on the pinned commit and the PR comment in a "measuring…"
// state with the run's link, the head verified right before measuring, then the measurement,
// the comparison with the baseline, the comment, the completed check, the job summary and the
// step's outputs.
//
// Modes (input mode):
//
//   - full (default): everything in one job. For repositories whose runs are trusted.
//   - decide: route the event, react or reply, start the check and the measuring comment, and
//     say in the outputs (run, sha, base-sha, pr, cells) what the measuring job should check out
//     and measure; on a push, aa says whether it is an A/A rerun's turn (store.aa_every,
//     counted in the store before the measurement: the push is the next result of the config
//     the newest stored default-branch result measured). Holds a token; runs no pull-request
//     code.
//   - measure: no token, no API: measure, compare with the local baseline, and write the
//     artifact directory (results.json, base.json, comparison.json, comment.md, meta.json).
//     The job that runs pull-request code on the GPU machine uses it. With input aa (a push),
//     it measures the commit a second time into aa.json.
//   - report: no pull-request code: read the artifact as untrusted data (validated files;
//     the comparison is recomputed from results.json and base.json under this configuration;
//     the commit must be the one the decide job pinned, or the PR's current head; kind
//     baseline only on a push to the default branch), post the comment and complete the
//     check, and keep the results in the store (aa.json as an A/A rerun).
//   - cleanup (or input cleanup: true): for an `if: always()` step; completes every check run
//     of ours left queued or in_progress on the commit as cancelled, with the reason.
//
// Each mode is a file: mode_decide.go (full and decide: route, plan, run), mode_measure.go,
// mode_report.go and mode_cleanup.go; publish.go measures and compares a run and posts its
// comment and check, accept.go records /bench accept, and action.go holds the job itself.
//
// Shards (shards.go): decide with input shards N also outputs the job matrix of N shards of
// whole context rows (matrix, shards, plan); each measure job with inputs shard K/N and plan
// measures its shard and compares nothing; report with input shard-artifacts (a glob of their
// artifact directories) merges them (package merge) into its artifact directory first, and
// completes the check as a failure that says why when they do not make one run.
//
// Bisection (bisect.go, bisectsplit.go): /bench bisect on the change-point issue, or
// bisect.auto on a push whose change point is a regression, bisects the range between the last
// good and the first bad measured commit. Mode full measures every step in its job; the split
// workflow runs a round per workflow run: a bot comment on the issue keeps the bisection's
// record, decide replays it (bisect.Next) and outputs the round's GPU job matrix (bisect,
// bisect-matrix), report with the bisect and bisect-artifacts inputs records the round and
// dispatches the next (workflow_dispatch, input bisect) or posts the culprit. Only commits of
// the default branch's first-parent line reach the GPU jobs, whatever the record says.
//
// Whatever happens after the check started, a deferred completion leaves nothing in_progress:
// cancelled (timed_out when the context's deadline passed) with the error as the summary.
//
// Results are kept in the store (package store): the repository's data branch (store.branch)
// written with the run's token, or the directory store.dir when the configuration names one.
// A push to the default branch stores its results as kind default-branch, then looks for a
// change point on that config's series (history.Analyze, oldest first, at most
// store.retention.keep results): when a series' latest change point is a regression, it opens
// or updates the one issue "speedmatrix: performance change point" (label speedmatrix, found
// by the hidden marker <!-- speedmatrix:change-point -->), and closes it with a comment naming
// the commit each series recovered at once every regression it reports is back within δ of its
// old level for 3 results. It then prunes the store by store.retention (store.Plan: never the
// current baseline), a commit of its own on the data branch. A PR's results are stored as kind
// pr, never a baseline; its baseline is store.Resolve's (the merge-base, or its nearest
// first-parent ancestor with results of the same config id; the comparison warns how far back
// it went), with store.History (at least store.min_history results) as compare's noise. Without
// a token (the measure mode), or when the store has no baseline, the local baseline directory
// (input baseline-dir, <sha>.json) is the fallback. The resolution fails closed: the
// merge-base's own results need no commit listing, and an error of the compare API or the
// listing (a 5xx, a timeout) fails the check (baseline_error) with the reason and what to do,
// never "no baseline" and never neutral.
//
// The check's conclusion of a comparison is its verdict's row of results.Outcomes (the table of
// docs/verdicts.md, whose row the check's summary quotes): regression fails
// (github.fail_on_regression: false, neutral; an acceptance, success), incomplete fails always,
// unproven as github.undecided says (failure by default), inconclusive, unchanged and
// improvement succeed, not_comparable and no baseline as github.no_baseline says.
//
// Paired A/B (paired.go): a maintainer's /bench paired, or paired.mode (always; auto: when the
// stored baseline cannot decide — none at the merge-base, a history shorter than
// store.min_history, or cells the first comparison left slower or inconclusive) measures the head
// and the merge-base alternately in ABBA blocks through measure.Run with paired enabled (the code
// path of run --paired), the base checked out as a git worktree of engine.source; the check and
// the comment say so, why, and the GPU time of each build. The decide mode says it in the output
// paired (base-sha the merge-base), the measure mode takes it as the input paired, and the
// report mode compares the artifact's paired-head.json and paired-base.json.
//
// The state of the PR's comment — the commit measured, its verdict, the cells it could not
// decide — is kept in the comment as a hidden line, <!-- speedmatrix:state {json} -->, the line
// after the marker, which the next event reads back: /bench rerun without cells reruns the
// undecided ones. It is not proof: with GITHUB_TOKEN any workflow of the repository comments as
// the same github-actions[bot]. What can turn a check green — the verdict at a commit and an
// acceptance (who, when, which commit, why) — lives in the bot's own check run on that commit,
// <!-- speedmatrix:check {json} --> as the first line of its summary (checkState), carried over
// every later write of that check: /bench accept records an acceptance only when that run says
// regression, a new head (a new check run) voids it, and an acceptance in comment text is
// never read.
//
// The report mode reads the artifact as untrusted data: the commit (the required sha input),
// the pull request and the base come from the inputs, never from meta.json; the baseline comes
// from the store alone, never from the artifact's base.json (a paired run's base is the one
// exception, and its comparison says the pull request's job measured it); a head whose config
// id differs from the stored baseline's at its base fails the check (config_changed); files
// over 16 MiB are refused; what it stores is indexed at the job's clock.
//
// Outputs carry only values this package makes (verdict words, counts, paths given by the
// workflow, GitHub's comment URL, validated commit ids): go-githubactions writes them with a
// fixed heredoc delimiter, so no text from an event, a comment or an artifact may reach them.
//
// The package must not parse flags or measure by itself: it measures through package measure
// (Run, Plan, Rerun: what `speedmatrix run`, plan --shards and run --shard do), with the outside
// world the caller gives (Deps.Measure), and the go-githubactions Action (inputs, outputs,
// summary) is injected too.
package action
