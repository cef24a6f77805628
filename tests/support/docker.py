"""Docker test support: the ``TOOLPROOF_REQUIRE_DOCKER`` switch and shared fixtures.

Without a reachable engine, Docker tests skip with the reason; with ``TOOLPROOF_REQUIRE_DOCKER=1``
a missing engine (or an image that cannot be built) is a test failure instead, so CI that is
meant to exercise Docker cannot silently pass by skipping.

Test modules import the fixtures they use: ``from docker_support import docker_image, ...``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

REQUIRE_ENV = "TOOLPROOF_REQUIRE_DOCKER"


def docker_required() -> bool:
    return os.environ.get(REQUIRE_ENV, "").strip().lower() in ("1", "true", "yes")


def unavailable(reason: str) -> None:
    """Skip (or, when Docker is required, fail) the current test with ``reason``."""
    if docker_required():
        pytest.fail(f"{REQUIRE_ENV}=1 but {reason}", pytrace=False)
    pytest.skip(reason)


def engine_problem() -> str | None:
    """Why no Docker engine can be used, or None when one answers."""
    try:
        import docker
    except ImportError:
        return "the docker Python package is not installed"
    try:
        client = docker.from_env(timeout=10)
        client.ping()
        client.close()
    except Exception as exc:
        return f"no Docker engine reachable ({type(exc).__name__})"
    import shutil

    if shutil.which("docker") is None:
        return "the docker command-line client is not installed"
    return None


@pytest.fixture(scope="session")
def docker_engine() -> None:
    problem = engine_problem()
    if problem:
        unavailable(problem)


@pytest.fixture(scope="session")
def docker_image(docker_engine: None) -> str:
    """The linux-bash image tag, built (or found cached) once per session."""
    from harness.images.build import build_image
    from harness.images.recipes import ImageBuildError

    try:
        return build_image("linux-bash").tag
    except ImageBuildError as exc:
        unavailable(f"the linux-bash image cannot be built here: {exc}")
        raise  # unreachable: unavailable() always raises


@pytest.fixture
def run_id() -> Iterator[str]:
    """A fresh run id whose labelled containers are removed after the test, whatever happens."""
    import uuid

    from harness.backends.docker.backend import cleanup

    rid = "test-" + uuid.uuid4().hex[:10]
    yield rid
    cleanup(rid)
