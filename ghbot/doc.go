// Package ghbot is speedmatrix's GitHub layer: it turns a webhook event into a decision (run,
// accept, help, refuse, ask for approval, or nothing, and why), and keeps what the bot shows on
// GitHub — one PR comment per check name, one check run per commit and check name, reactions
// and replies to /bench commands — through a client that authenticates, masks and retries.
//
// It must not render markdown (package report owns the comment's and the check's text; this
// package only adds its hidden marker and cuts at GitHub's limits as a last resort), must not
// measure or compare, and must not run anything: the decision says which commit to build and the
// caller does it. Nothing from a payload or a comment reaches a shell through this package: a
// Decision to run carries only full commit ids (ValidSHA) and PR numbers.
//
// The API in short:
//
//	c, _ := ghbot.NewClient(ctx, auth, os.Getenv("GITHUB_API_URL"), ghbot.WithActions(action))
//	ev, _ := ghbot.ParseEvent(os.Getenv("GITHUB_EVENT_NAME"), payload)
//	d, _ := c.Decide(ctx, ev, ghbot.Policy{CheckName: "speedmatrix", TrustLabel: "benchmark"})
//	c.Respond(ctx, ev.Repo, d)               // eyes reaction, or the reply to help/refusals
//	c.StartCheck / c.CompleteCheck / c.CompleteStale, c.UpsertComment
//
// # Authentication
//
// A token (GITHUB_TOKEN: its comments are github-actions[bot]'s) or a GitHub App through
// ghinstallation (its comments are "<slug>[bot]"'s, the slug read from GET /app). Enterprise
// Server URLs go through go-github's WithEnterpriseURLs, which appends api/v3/ unless present;
// ghinstallation is given go-github's resolved base so that its token requests use the same
// /api/v3 prefix. Every token, and each line of an App's private key, is masked with
// ::add-mask:: before a request can use it; installation tokens are masked again when renewed.
// An App's installation tokens are narrowed by Auth.Scope (the repositories and permissions the
// caller's step needs), sent as the body of the token request.
//
// # Retries
//
// Each request is sent at most RetryPolicy.MaxAttempts times: after a 5xx (backoff doubling from
// BaseDelay, or the response's Retry-After), after a network error of an idempotent method, after
// a secondary rate limit (403/429 with Retry-After, or a body naming it: 60 s) and after an
// exhausted primary limit (X-RateLimit-Remaining: 0) whose X-RateLimit-Reset is within MaxWait.
// Longer waits are not taken: go-github then returns *github.RateLimitError or
// *github.AbuseRateLimitError. A POST answered with a 5xx is retried although GitHub may have
// acted on it, so whatever creates things first looks for its own: UpsertComment deletes
// duplicate comments of ours, StartCheck and CompleteCheck update the newest of ours.
//
// # Routing and trust
//
//   - pull_request opened, synchronize, reopened: run at the payload's head for a PR from this
//     repository whose author has write or admin permission (GetPermissionLevel). Otherwise
//     DoActionRequired: the check completes as action_required and says how a maintainer starts
//     it. A label on the PR does not make later pushes trusted.
//   - pull_request labeled with Policy.TrustLabel by a user with write or admin: run at the
//     payload's head, the commit at labelling time, pinned as a comment's (see Pinning);
//     otherwise DoActionRequired, naming the /bench <full id> to post.
//   - issue_comment created on a PR with a /bench command (ParseCommand; comments on issues,
//     edits, bot comments and comments without a /bench line are ignored). The commenter's
//     permission is asked first: a user without write or admin gets a -1 reaction and no reply,
//     whatever the command (a reply mentions them, so anyone could make the bot post); a
//     writer's help or malformed command gets the help as a reply, never a run; see Pinning.
//   - check_run rerequested, and requested_action with our buttons (ActionIDRerun,
//     ActionIDAccept), for a run named Policy.CheckName, pressed by a writer. GitHub sends these
//     only to the App that made the run.
//   - push to the default branch: a baseline run at "after"; tags, deletions and other branches
//     are ignored with the reason.
//   - merge_group checks_requested: run (or reuse a verdict — the caller's policy) on the
//     group's head SHA under the same check name, so the queue gets its required check.
//   - workflow_dispatch: a run at Event.RunSHA (GITHUB_SHA, set by the caller) with the inputs.
//
// # Pinning (the /bench rule)
//
// An issue_comment payload does not say at which commit the commenter read the PR. A command
// can name it — /bench <sha>, /bench accept <sha> <reason> — and Decide then pins the head it
// fetches if the named commit is the head, and refuses otherwise with a reply naming the
// current head by its full id. A full id pins the head whenever it is the head. A prefix (at
// least 7 hex digits) is not a pin on its own — a fork can make another commit with the same
// 7-digit prefix in about a minute and force-push it after the comment — so a prefix, like the
// bare form, is taken only if the head Decide fetches is provably the one present when the
// comment was written: the head repository's pushed_at (GitHub's time of the last push to
// any of its refs) must be strictly before the comment's created_at. A push after the comment
// — to the PR or, conservatively, to any branch of the head repository — refuses the command
// with a reply asking to read the new commits and comment again. Commit dates are not used:
// whoever pushes sets them. PR events pin the head in their payload, which is a snapshot at
// event time; a trust label pins it as a comment does, against the label's time from the issue
// events API, and the head GitHub has now must be the payload's. In every case the caller calls VerifyHead right before the build
// starts and refuses with ErrHeadMoved if the head changed since the decision, and it builds the
// pinned SHA, never a branch.
//
// # The comment and the check
//
// UpsertComment finds the bot's comment by author login and Marker(checkName) as the body's first
// line (IsOurs), across all pages,
// edits it in place or creates it; the body is cut at MaxCommentChars (counted in UTF-16 units)
// at a line, closing open fences and <details>, with a link to the full report, as a last resort.
// Check runs are found with ListCheckRunsForRef filtered by name (and App id for an App) and
// marked with CheckExternalID, so a workflow job of the same name is never mistaken for ours;
// StartCheck and CompleteCheck update ours or create it, always sending Name (go-github v66's
// UpdateCheckRunOptions.Name has no omitempty). Title, summary and text are cut to 65,535 bytes
// at a UTF-8 boundary. Buttons are sent only as an App, at most 3, labels ≤ 20 characters.
// CompleteStale completes runs of ours left queued or in_progress on a SHA.
package ghbot
