"""No leaks: SIGTERM (what ``timeout`` and CI cancellations send), SIGINT and SIGHUP end a
``toolproof run --backend docker`` with its containers removed; after SIGKILL of the harness its
containers remove themselves (the ``docker run -i`` lifeline), long before their scenarios would
have ended; a concurrent run is
untouched either way; ``docker cleanup`` leaves live runs alone unless ``--all``.
Skipped without an engine unless TOOLPROOF_REQUIRE_DOCKER=1."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.backends.docker.hardening import LABEL_RUN_ID
from tests.support.docker import docker_engine, docker_image  # noqa: F401  (fixtures)
from tests.support.repo import REPO

pytestmark = [pytest.mark.docker, pytest.mark.slow]

SLOW = """\
id: lifeline/slow-{n}
surface: pi
steps:
  - tool: bash
    args: {{command: "sleep {seconds}; echo done", timeout: 120}}
    timeout: 150
    expect: {{text: "done\\n"}}
"""
RUN_ID_RE = re.compile(r"toolproof: run ([0-9a-f]{12}): ")
# How long a test waits for containers to go: generous, because a deadline inside a test must hold
# on a loaded CI machine (issue 21 item 13: 10 s failed once at load 8 on 2 cores). The wait ends as
# soon as they are gone; what is asserted is that they go, not how fast.
GONE_BOUND_S = 120.0


def corpus(directory: Path, count: int, seconds: int) -> Path:
    directory.mkdir()
    for n in range(count):
        (directory / f"slow-{n}.yaml").write_text(SLOW.format(n=n, seconds=seconds), encoding="utf-8")
    return directory


def containers_of(run_id: str) -> list[str]:
    out = subprocess.run(["docker", "ps", "-aq", "--filter", f"label={LABEL_RUN_ID}={run_id}"],
                         capture_output=True, text=True, check=True).stdout
    return out.split()


def wait_until_gone(run_id: str, bound_s: float = GONE_BOUND_S) -> list[str]:
    """Wait for the containers of ``run_id`` to be removed: the engine's wait for the condition
    ``removed`` returns when each one is (the event itself, not a polling deadline), all within
    ``bound_s``. Returns the containers still there (none, unless the bound was reached)."""
    import docker
    from docker.errors import NotFound

    client = docker.from_env(timeout=int(bound_s) + 10)
    deadline = time.monotonic() + bound_s
    try:
        for cid in containers_of(run_id):
            left = deadline - time.monotonic()
            if left <= 0:
                break
            try:
                client.api.wait(cid, timeout=left, condition="removed")
            except NotFound:
                pass  # already gone
            except Exception:  # the bound reached (a read timeout): reported by what is left
                break
    finally:
        client.close()
    return containers_of(run_id)


class Run:
    """A ``toolproof run`` subprocess whose run id is read from its first stderr line."""

    def __init__(self, paths: Path, jobs: int = 2) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "harness.cli", "run", str(paths), "--backend", "docker", "-j", str(jobs)],
            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env=dict(os.environ, CI="true"))
        assert self.proc.stderr is not None
        first = self.proc.stderr.readline()
        match = RUN_ID_RE.match(first)
        assert match, first
        self.run_id = match.group(1)

    def wait_for_containers(self, at_least: int = 1, timeout_s: float = 90.0) -> None:
        deadline = time.monotonic() + timeout_s
        while len(containers_of(self.run_id)) < at_least:
            assert self.proc.poll() is None, self.proc.communicate()
            assert time.monotonic() < deadline, "the run never started its containers"
            time.sleep(0.2)
        time.sleep(1.0)  # the scenarios are now inside their `sleep`

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.communicate(timeout=30)


@pytest.fixture
def bystander(tmp_path: Path, docker_image: str) -> Iterator[Run]:  # noqa: F811
    """A concurrent run that must finish unharmed (four 8-second scenarios on two workers)."""
    run = Run(corpus(tmp_path / "bystander", 4, 8))
    yield run
    run.kill()


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP], ids=["TERM", "INT", "HUP"])
def test_a_terminating_signal_ends_the_run_with_its_containers_removed(
        tmp_path: Path, bystander: Run, signum: int) -> None:
    victim = Run(corpus(tmp_path / "victim", 6, 60))
    try:
        victim.wait_for_containers(at_least=2)
        bystander.wait_for_containers()
        t0 = time.monotonic()
        victim.proc.send_signal(signum)
        _, err = victim.proc.communicate(timeout=60)
        took = time.monotonic() - t0
        assert victim.proc.returncode == 2
        assert f"toolproof: interrupted by {signal.Signals(signum).name}" in err
        assert containers_of(victim.run_id) == []
        assert took < 30
    finally:
        victim.kill()
    out, _ = bystander.proc.communicate(timeout=180)
    assert bystander.proc.returncode == 0, out
    assert "toolproof: 4 pass" in out
    assert containers_of(bystander.run_id) == []


def test_after_sigkill_of_the_harness_its_containers_remove_themselves(tmp_path: Path, bystander: Run) -> None:
    victim = Run(corpus(tmp_path / "victim", 6, 60))
    try:
        victim.wait_for_containers(at_least=2)
        bystander.wait_for_containers()
        assert len(containers_of(victim.run_id)) >= 2
        victim.proc.kill()  # SIGKILL: no handler runs, only the lifeline is left
        victim.proc.wait(timeout=60)
        # the scenarios sleep 60 s: containers gone well before that went by the lifeline
        started = time.monotonic()
        assert wait_until_gone(victim.run_id) == []
        assert time.monotonic() - started < GONE_BOUND_S
    finally:
        victim.kill()
    out, _ = bystander.proc.communicate(timeout=180)
    assert bystander.proc.returncode == 0, out
    assert containers_of(bystander.run_id) == []


def test_cleanup_keeps_containers_of_a_live_run_unless_all(tmp_path: Path, docker_image: str) -> None:  # noqa: F811
    live = Run(corpus(tmp_path / "live", 2, 60), jobs=1)
    try:
        live.wait_for_containers()
        proc = subprocess.run([sys.executable, "-m", "harness.cli", "docker", "cleanup", "--run-id", live.run_id],
                              cwd=REPO, capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.startswith(f"toolproof: removed 0 leftover container(s) of run {live.run_id}\n"
                                      "toolproof: kept ")
        assert containers_of(live.run_id) != []
        proc = subprocess.run([sys.executable, "-m", "harness.cli", "docker", "cleanup", "--run-id", live.run_id,
                               "--all"], cwd=REPO, capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0, proc.stderr
        assert not proc.stdout.startswith("toolproof: removed 0 ")
    finally:
        live.kill()
    assert wait_until_gone(live.run_id) == []
