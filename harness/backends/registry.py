"""Backends by name: ``--backend`` / ``--toolproof-backend`` strings → a factory that makes one
backend per worker, and the label that names the backend in reports.

``local`` | ``cmd:COMMAND`` | ``docker`` | ``docker:IMAGE`` (docs/cli.md, "Backends").
"""

from __future__ import annotations

import uuid
from collections.abc import Callable

from harness.backends.base import Backend
from harness.backends.cmd import PREFIX as CMD_PREFIX
from harness.backends.cmd import CmdBackend
from harness.backends.local import LocalBackend
from harness.errors import InfrastructureError, UsageError

BackendFactory = Callable[[], Backend]
DEFAULT_BACKEND = "local"
DOCKER_PREFIX = "docker:"
BACKEND_CHOICES_TEXT = "local | cmd:COMMAND | docker[:IMAGE]"


def backend_factory(spec: str) -> tuple[BackendFactory, str]:
    """``local`` | ``cmd:COMMAND`` | ``docker`` | ``docker:IMAGE`` → (factory, label)."""
    if spec == "local":
        return LocalBackend, "local"
    if spec.startswith(CMD_PREFIX):
        command = spec[len(CMD_PREFIX):].strip()
        if not command:
            raise UsageError("--backend cmd: needs a command line, e.g. --backend \"cmd:node adapter.js\"")
        return (lambda: CmdBackend(command)), spec
    if spec == "docker" or spec.startswith(DOCKER_PREFIX):
        image = spec[len(DOCKER_PREFIX):] or None if spec.startswith(DOCKER_PREFIX) else None
        # Optional: the docker backend drives the docker SDK and an engine; it is imported only when
        # asked for, so local and cmd: runs work (and start fast) on hosts without either.
        try:
            from harness.backends.docker.backend import DockerBackend
        except ImportError as exc:
            raise InfrastructureError(f"the docker backend is not available: {exc}") from None
        run_id = uuid.uuid4().hex[:12]  # one id per invocation labels every worker's container
        return (lambda: DockerBackend(image=image, run_id=run_id)), spec
    raise UsageError(f"unknown backend {spec!r}; expected local, cmd:COMMAND, docker or docker:IMAGE")
