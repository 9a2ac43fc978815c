// Command ghfake serves the fake GitHub of package ghtest as a process, for tests that run the
// shipped workflows under a real Actions runner (internal/e2e/actrunner): one HTTP server on
// loopback that is, like github.com for a runner, both the REST API (under /api/v3, as GitHub
// Enterprise Server serves it) and the git origin of the repositories below -git (git's smart
// HTTP through `git http-backend`) and the host of release downloads (the releases created through the API, and the files of -releases), with two control endpoints for the test:
//
//	POST /_setup   a JSON Setup: repositories, tokens, permissions, commits, refs, pull
//	               requests and comments to add; answers {"comment_ids":[…]}
//	GET  /_state   the fake's State as JSON, with the files of ?ref=heads/NAME of every repository
//
// It must not be reachable from anywhere but the machine: it listens on loopback only and keeps
// no secret (its tokens are the test's made-up ones).
//
//	ghfake -listen 127.0.0.1:0 -addr-file addr -git /srv/git -setup setup.json
package main
