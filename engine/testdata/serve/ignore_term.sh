#!/usr/bin/env bash
# A server whose process group ignores SIGTERM: the shell (and the sleeps it starts) ignore it,
# so only SIGKILL ends the group. It serves through the command in "$@".
trap '' TERM
echo "$$" >> "${PIDFILE:?}"
"$@" &
echo "$!" >> "$PIDFILE"
while :; do sleep 1; done
