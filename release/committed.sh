#!/usr/bin/env bash
# committed.sh checks, in a git checkout, that the files release/sourcehash.sh hashes are the
# commit's: no change that is not committed and no file git does not track among them (the
# binary that `go build -o speedmatrix ./cmd/speedmatrix` leaves in the root, a scratch file).
# Any such file changes the source hash, so release/SHA256SUMS made from that tree would name a
# source that no checkout of the tagged commit has, and `release/make.sh --verify` would fail
# there. It lists them and exits 1. Outside a git checkout, or before the first commit, it has
# no commit to compare with and exits 0. Run it in the repository's root.
set -euo pipefail
git rev-parse --is-inside-work-tree >/dev/null 2>&1 || exit 0
git rev-parse -q --verify HEAD >/dev/null || exit 0
# The paths sourcehash.sh leaves out: .git, .github, release, dist, testdata, tests and prose.
stray=$(git status --porcelain=v1 --ignored=traditional --untracked-files=all -- . \
  ':(exclude).github' ':(exclude)release' ':(exclude)dist' ':(exclude,glob)**/testdata/**' \
  ':(exclude)*_test.go' ':(exclude)*.md')
if [ -n "$stray" ]; then
  echo "release: the tree differs from the commit in files the source hash counts (?? untracked, !! ignored, M modified, D deleted):" >&2
  echo "$stray" >&2
  echo "release: commit them or move them out (a clean clone of the commit is safest), then run release/make.sh again" >&2
  exit 1
fi
