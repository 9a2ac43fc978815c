// Package actrunner runs the shipped workflows (.github/workflows/example-gpu.yml,
// example-gpu-sharded.yml, selftest.yml, release.yml) and the composite action (action.yml) under a real
// GitHub Actions runner, nektos/act, on the host: every other test of the bot calls
// `speedmatrix action` directly, and none of them would see a workflow that never finishes.
//
// The test is behind the build tag realrunner (it needs act, git and minutes, not seconds) and
// runs as its own step of .ci/run:
//
//	go install github.com/nektos/act@v0.2.89
//	ACT=$(go env GOPATH)/bin/act go test -tags realrunner ./internal/e2e/actrunner -v -timeout 40m
//
// For each workflow it makes a scratch repository with the workflow copied unchanged (read from
// this repository at test time), a speedmatrix.yaml that serves the built-in simulator, and the
// commits of its scenarios; serves it, and the fake GitHub API of ghbot/ghtest, from one
// process (ghbot/ghtest/ghfake) on 127.0.0.1, reached as http://github.localhost:PORT as
// upload-artifact v4 requires; runs act once per scenario with the event a real repository would
// deliver (the workflow's own on: keys choose pull_request or pull_request_target); and asserts
// what the fake holds afterwards: the comments, the check runs with their status and
// conclusion, the data branch. It ends with a workflow × scenario table and each job's wall time.
//
// The release scenario (release_test.go) runs release.yml for the push of tag v1.0.0 on a
// scratch repository holding this module's source, its release/SHA256SUMS made by
// `release/make.sh v1.0.0` there first: make.sh --verify must pass and `gh release create`
// (a stand-in gh, testdata/gh, making gh's REST calls against the fake's releases API) must
// publish the release with both binaries and SHA256SUMS; then the action's release/binary.sh
// must download and use the binary (found=true, `speedmatrix version` v1.0.0) and refuse a
// tampered one. Run it alone with -run 'TestWorkflows/release'.
//
// The daemon-escape scenario (daemon_test.go) is issue 34's acceptance under a real runner: a
// pull request whose engine.build and serve.sh each leave a detached (setsid) daemon that reads
// every ACTIONS_RUNTIME_TOKEN in /proc and rewrites the artifact's results.json and meta.json.
// After the run no process of the daemon is alive, it read no token, and the uploaded files are
// speedmatrix's; with engine.sandbox none (and the step's allow-unsandboxed) every one of those
// assertions fails. Run it alone with -run 'TestWorkflows/^example-gpu$/daemon' (2 min).
//
// The bisection scenarios (bisect_test.go) run a default-branch regression's bisection through
// the split workflow: a push's change point on a seeded history, then each workflow_dispatch the
// report job asks the fake for is run under act as GitHub would start it, round after round,
// until the culprit is posted; and /bench bisect on the change-point issue.
//
// GitHub's own actions (checkout, setup-go, upload- and download-artifact) cannot be downloaded
// in CI: where a git-ignored folder tmp/actions/NAME of the repository holds the real one, it
// is used; otherwise the stand-in of testdata/actions/NAME (small composite actions that do to
// the file system what the workflows use of the real ones), and the output says which. The
// stand-ins of upload- and download-artifact keep artifacts in a folder per run with v4's rules
// (the name's characters, one upload per name and run); act's own artifact server also runs,
// for the real ones. Where the real setup-go is absent, every use of it must say cache: false
// (checked in the files); where it ran, its log must not warn "Restore cache failed".
//
// The action under test, speedmatrix/speedmatrix@v1, is a copy of this repository's working
// tree: as source (action.yml builds the binary) for the example's push and pull request and
// for selftest, and as a release (release/SHA256SUMS names a binary ghfake serves at the
// release's download URL) for the other scenarios, whose measure jobs would otherwise spend a
// minute of 2 cores each building in a Go cache of their own. Every run asserts the token is
// not in the runner's log and no job built the binary more than once (a go on the tool cache's
// PATH logs each build with the job's RUNNER_TEMP).
//
// The package must not be imported; it has no code outside its test.
package actrunner
