#!/usr/bin/env bash
# Prepares a Docker engine for toolproof's docker backend and tests: installs docker.io and
# debootstrap when missing, starts dockerd in the background unless an engine already answers
# (its pid is recorded for ci/docker-teardown.sh), waits for `docker info`, and builds the
# linux-bash image (a no-op "cached" report when its recipe is unchanged).
# Exit status: 0 when the engine answers and the image exists; non-zero otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."

STATE_DIR="${TOOLPROOF_CI_STATE:-${TMPDIR:-/tmp}/toolproof-ci}"
PYTHON="${PYTHON:-.venv/bin/python}"
WAIT_SECONDS="${TOOLPROOF_DOCKERD_WAIT:-60}"
mkdir -p "$STATE_DIR"

as_root() {
    if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

missing=()
command -v docker >/dev/null 2>&1 && command -v dockerd >/dev/null 2>&1 || missing+=(docker.io)
command -v debootstrap >/dev/null 2>&1 || missing+=(debootstrap)
if [ "${#missing[@]}" -gt 0 ]; then
    echo "docker-setup: installing ${missing[*]}"
    as_root apt-get update -q
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}"
fi

if docker info >/dev/null 2>&1; then
    echo "docker-setup: a Docker engine already answers; not starting dockerd"
else
    echo "docker-setup: starting dockerd (log: $STATE_DIR/dockerd.log)"
    # $! must be dockerd itself (setsid does not fork here: a background job is no group leader).
    if [ "$(id -u)" -eq 0 ]; then
        setsid dockerd >"$STATE_DIR/dockerd.log" 2>&1 </dev/null &
    else
        sudo setsid dockerd >"$STATE_DIR/dockerd.log" 2>&1 </dev/null &
    fi
    echo $! >"$STATE_DIR/dockerd.pid"
    for _ in $(seq 1 "$WAIT_SECONDS"); do
        docker info >/dev/null 2>&1 && break
        sleep 1
    done
    if ! docker info >/dev/null 2>&1; then
        echo "docker-setup: dockerd did not answer within ${WAIT_SECONDS}s; last log lines:" >&2
        tail -n 30 "$STATE_DIR/dockerd.log" >&2 || true
        exit 1
    fi
fi

"$PYTHON" -m harness.images.build linux-bash
