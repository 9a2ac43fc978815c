#!/usr/bin/env bash
# make.sh builds speedmatrix's release binaries, reproducibly (CGO off, -trimpath, no VCS stamp,
# the Go toolchain of go.mod), into dist/.
#
#   release/make.sh vX.Y.Z     build, write release/SHA256SUMS and release/TAG: commit both, then
#                              tag that commit vX.Y.Z and move v1 to it (docs/install.md)
#   release/make.sh --verify   rebuild (the version release/TAG names) and check the binaries against the committed
#                              release/SHA256SUMS (the release workflow does this before it
#                              attaches them, so a release binary is always the one its ref's
#                              checksums name)
set -euo pipefail
cd "$(dirname "$0")/.."
case "${1:-}" in
--verify) verify=true ;;
v[0-9]*) verify=false tag="$1" ;;
*)
  echo "usage: release/make.sh vX.Y.Z | --verify" >&2
  exit 2
  ;;
esac
if $verify; then
  tag=$(tr -d ' \n\r' <release/TAG)
fi
# The sums name the commit's source (release/sourcehash.sh): a file the commit does not hold
# would put a hash into release/SHA256SUMS that no checkout of the tag reproduces.
bash release/committed.sh
rm -rf dist
mkdir -p dist
# Everything that could change the bytes is fixed here: no cgo, no paths (-trimpath), no VCS
# stamp of the checkout's state (-buildvcs=false), no build id, the version from the tag, the
# default instruction sets, and no GOFLAGS or GOEXPERIMENT of the caller's environment.
ldflags="-buildid= -X github.com/speedmatrix/speedmatrix/internal/cli/cmdutil.releaseVersion=$tag"
for target in linux/amd64 linux/arm64; do
  os=${target%/*} arch=${target#*/}
  GOOS=$os GOARCH=$arch CGO_ENABLED=0 GOAMD64=v1 GOARM64=v8.0 GOFLAGS= GOEXPERIMENT= \
    go build -trimpath -buildvcs=false -ldflags="$ldflags" \
    -o "dist/speedmatrix_${os}_${arch}" ./cmd/speedmatrix
done
{
  echo "# $(go env GOVERSION)"
  echo "# source $(bash release/sourcehash.sh)"
  (cd dist && sha256sum speedmatrix_*)
} >dist/SHA256SUMS
if $verify; then
  if ! diff -u release/SHA256SUMS dist/SHA256SUMS; then
    echo "release/make.sh: the binaries built here differ from release/SHA256SUMS: build them with $(go env GOVERSION) again and commit the sums before tagging" >&2
    exit 1
  fi
  echo "release/make.sh: dist/ matches release/SHA256SUMS"
  exit 0
fi
cp dist/SHA256SUMS release/SHA256SUMS
echo "$tag" >release/TAG
echo "release/make.sh: wrote release/SHA256SUMS and release/TAG for $tag with $(go env GOVERSION); commit them, then tag that commit $tag"
