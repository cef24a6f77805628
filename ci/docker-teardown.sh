#!/usr/bin/env bash
# Undoes ci/docker-setup.sh: removes toolproof worker containers of runs no longer alive (by label),
# then stops the dockerd that docker-setup.sh started (and only that one: an engine that was
# already running is left alone). Never fails the job.
set -uo pipefail
cd "$(dirname "$0")/.."

STATE_DIR="${TOOLPROOF_CI_STATE:-${TMPDIR:-/tmp}/toolproof-ci}"
PYTHON="${PYTHON:-.venv/bin/python}"
STOP_SECONDS="${TOOLPROOF_DOCKERD_STOP_WAIT:-30}"

as_root() {
    if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

if docker info >/dev/null 2>&1; then
    "$PYTHON" -c 'from harness.backends.docker.cleanup import cleanup; print(f"docker-teardown: removed {cleanup()} container(s) of dead runs")' \
        || echo "docker-teardown: container cleanup failed" >&2
fi

pidfile="$STATE_DIR/dockerd.pid"
if [ -f "$pidfile" ]; then
    pid="$(cat "$pidfile")"
    if as_root kill -0 "$pid" 2>/dev/null; then
        echo "docker-teardown: stopping dockerd (pid $pid)"
        as_root kill -TERM "$pid" 2>/dev/null || true
        for _ in $(seq 1 "$STOP_SECONDS"); do
            as_root kill -0 "$pid" 2>/dev/null || break
            sleep 1
        done
        if as_root kill -0 "$pid" 2>/dev/null; then
            echo "docker-teardown: dockerd ignored TERM; sending KILL" >&2
            as_root kill -KILL "$pid" 2>/dev/null || true
        fi
    fi
    rm -f "$pidfile"
fi
exit 0
