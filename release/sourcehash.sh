#!/usr/bin/env bash
# sourcehash.sh prints the SHA-256 of the source that makes the speedmatrix binary, run in the
# action's (or the repository's) root: every file but git's, tests, test data, prose, the
# workflows and release/ itself (whose SHA256SUMS names this hash). release/make.sh writes it into
# release/SHA256SUMS as "# source HASH"; release/binary.sh uses a release binary only for a
# source with the same hash, so a later commit that still carries the release's sums builds its
# own binary instead of running the release's.
set -euo pipefail
find . \( -path ./.git -o -path ./.github -o -path ./release -o -path ./dist -o -name testdata \) -prune -o \
  -type f ! -name '*_test.go' ! -name '*.md' -print0 |
  LC_ALL=C sort -z | xargs -0 sha256sum | sha256sum | cut -d' ' -f1
