// Package ghtest is a fake GitHub REST API for tests: an httptest server that implements the
// endpoints the bot uses, keeps their state in memory (comments, reactions, check runs, pull
// requests, repositories, permissions) and records every call, so a test asserts what GitHub
// ended up holding rather than which functions ran.
//
//	s := ghtest.New(t)                       // github.com paths: give the client s.Transport()
//	                                         // or ghtest.New(t, ghtest.Enterprise()): /api/v3 at s.URL
//	s.AddToken("tok", ghtest.ActionsLogin)   // a GITHUB_TOKEN; or s.AddApp(app)
//	s.AddRepo(ghtest.Repo{Owner: "o", Name: "r", DefaultBranch: "main"})
//	s.AddPull(ghtest.Pull{Repo: "o/r", Number: 1, HeadSHA: sha, …})
//	… run the code under test against s.URL …
//	st := s.State()                          // st.Comments, st.CheckRuns, st.Reactions, st.Calls
//
// It behaves like GitHub where the bot depends on it: comment pagination with Link headers,
// the 65,536-character body limit, check-run output limits (65,535 bytes) and button limits
// (422), a PATCH that sends "name": "" renames the run, a status of in_progress clears the
// conclusion, reactions are idempotent per user and content, tokens and App JWTs are checked
// (401 otherwise), an installation token minted with "repositories" reaches those only (403
// elsewhere) and State.Tokens records what each token request asked for. Fail injects errors (a 502, a secondary rate limit) in front of any route.
//
// It records the workflow_dispatch events asked for (State.Dispatches; it runs nothing).
//
// It also serves the Git Data API (gitdata.go: blobs, trees with base_tree and deletions,
// commits, refs with GitHub's fast-forward check on update), the compare API's
// merge_base_commit and the commit listing by sha, over an object store seeded with AddCommit
// and SetRef and read back with Ref, Commit and Files; OnGit lets a test hold a request to
// force an interleaving of concurrent writers.
package ghtest
