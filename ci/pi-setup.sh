#!/bin/sh
# Install published pi releases for the pi driver and print the --backend value for each:
#   ci/pi-setup.sh 0.79.1 0.73.1            -> cmd:<node> adapters/pi/driver.mjs --pi-dir <dir>
#   ci/pi-setup.sh --print env 0.79.1       -> export TOOLPROOF_PI_DIR=… / TOOLPROOF_PI_NODE=…
# Cached under $TOOLPROOF_PI_CACHE (default ~/.cache/toolproof/pi); a cached version is instant.
set -eu
cd "$(dirname "$0")/.."
exec "${PYTHON:-python3}" adapters/pi/pi_setup.py "$@"
