#!/usr/bin/env bash
# A server that holds the (fake) GPU while it runs: it adds itself to the fake nvidia-smi's
# compute apps, then serves through the command in "$@".
echo "$$, python3, 70000" >> "${FAKE_SMI_APPS:?}"
exec "$@"
