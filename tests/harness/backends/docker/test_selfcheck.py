"""The backend self-check suite (harness.run.selfcheck) passes on the docker backend: no check
fails or errors, and each skip carries its reason. Skipped without an engine unless
TOOLPROOF_REQUIRE_DOCKER=1."""

from __future__ import annotations

import uuid

import pytest

from harness.backends.docker.backend import DockerBackend, cleanup
from harness.run.selfcheck import CHECKS, run_selfcheck
from tests.support.docker import docker_engine, docker_image  # noqa: F401  (fixtures)

pytestmark = [pytest.mark.docker, pytest.mark.slow]


def test_selfcheck_suite_passes_on_docker(docker_image: str) -> None:  # noqa: F811
    rid = "test-selfcheck-" + uuid.uuid4().hex[:8]
    try:
        report = run_selfcheck(lambda: DockerBackend(docker_image, run_id=rid), "docker")
    finally:
        assert cleanup(rid) == 0
    bad = [(r.name, r.status, r.message) for r in report.results if r.status not in ("pass", "skip", "xfail")]
    assert bad == []
    assert [r.name for r in report.results] == list(CHECKS)
    assert all(r.message for r in report.results if r.status == "skip")
    assert report.exit_code == 0
