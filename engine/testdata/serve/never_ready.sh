#!/usr/bin/env bash
# A server that never gets ready: it and a child it started run until they are stopped. The
# pids go to $PIDFILE so that the test can check none is left.
sleep 300 &
echo "$$ $!" >> "${PIDFILE:?}"
echo "INFO loading forever"
wait
