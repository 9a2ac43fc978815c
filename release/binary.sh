#!/usr/bin/env bash
# binary.sh names the speedmatrix binary of this action's source for the steps of action.yml
# that follow, and makes it available when it can without Go: it writes path=… and found=true or
# false to $GITHUB_OUTPUT. Run by action.yml in the action's folder (github.action_path).
#
#   found=true   the binary is there: made by an earlier use of the action in this job, or a
#                release binary whose SHA-256 matches release/SHA256SUMS of this source
#   found=false  action.yml builds it from source with Go at path
#
# The binary lives under RUNNER_TEMP, which the runner empties at the start of every job: no
# binary crosses jobs, so nothing a pull request's job wrote there is run by a later job. Its
# folder is named by a hash of the action's source tree, since a composite action does not know
# its own commit.
set -euo pipefail
: "${RUNNER_TEMP:?RUNNER_TEMP is not set: this script is run by action.yml on an Actions runner}"
: "${GITHUB_OUTPUT:?GITHUB_OUTPUT is not set: this script is run by action.yml on an Actions runner}"

# The source that makes the binary (release/sourcehash.sh): every file but git's, tests, test
# data, prose, the workflows and release/.
source_hash=$(bash "$(dirname "$0")/sourcehash.sh")
hash=${source_hash:0:16}
dir="$RUNNER_TEMP/speedmatrix-bin-$hash"
bin="$dir/speedmatrix"
mkdir -p "$dir"
echo "path=$bin" >>"$GITHUB_OUTPUT"
if [ -x "$bin" ]; then
  echo "speedmatrix: reusing $bin, made earlier in this job from the same source"
  echo "found=true" >>"$GITHUB_OUTPUT"
  exit 0
fi

# A release binary, when this source is a release: release/SHA256SUMS (committed with the
# release, so the checksum is part of the ref the workflow pinned) names the file and its sum,
# release/TAG the release it is attached to.
case "$(uname -s)/$(uname -m)" in
Linux/x86_64) name=speedmatrix_linux_amd64 ;;
Linux/aarch64 | Linux/arm64) name=speedmatrix_linux_arm64 ;;
*) name="" ;;
esac
want=""
if [ -n "$name" ] && [ -f release/SHA256SUMS ] && [ -f release/TAG ]; then
  # Only for the source the release was built from: a later commit that still carries the
  # release's sums (its code changed, release/ did not) builds its own binary.
  released=$(awk '$1 == "#" && $2 == "source" { print $3 }' release/SHA256SUMS)
  if [ "$released" = "$source_hash" ]; then
    want=$(awk -v n="$name" '$2 == n { print $1 }' release/SHA256SUMS)
  else
    echo "speedmatrix: this source is not the one release/SHA256SUMS was made from (release/sourcehash.sh); building from source"
  fi
fi
if [ -n "$want" ]; then
  tag=$(tr -d ' \n\r' <release/TAG)
  repo="${ACTION_REPOSITORY:-speedmatrix/speedmatrix}"
  url="${GITHUB_SERVER_URL:-https://github.com}/$repo/releases/download/$tag/$name"
  if curl -fsSL --retry 3 --max-time 120 -o "$bin.download" "$url"; then
    got=$(sha256sum "$bin.download" | cut -d' ' -f1)
    if [ "$got" = "$want" ]; then
      chmod 0755 "$bin.download"
      mv "$bin.download" "$bin"
      echo "speedmatrix: release binary $name of $tag, SHA-256 $got as release/SHA256SUMS says"
      echo "found=true" >>"$GITHUB_OUTPUT"
      exit 0
    fi
    echo "::warning title=speedmatrix::the release binary at $url has SHA-256 $got, not the $want of release/SHA256SUMS; it is not used, the action builds from source"
    rm -f "$bin.download"
  else
    echo "speedmatrix: no release binary at $url; building from source"
  fi
fi
echo "found=false" >>"$GITHUB_OUTPUT"
