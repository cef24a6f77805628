"""Backends by name: ``--impl`` and ``--backend`` (``--toolproof-impl`` / ``--toolproof-backend``)
strings → a factory that makes one backend per worker, and the label that names the pair in
reports.

``--impl``: ``reference`` | ``upstream`` | ``pi@VERSION`` | ``cmd:COMMAND`` (harness/backends/impl.py);
``--backend``: ``local`` | ``docker`` | ``docker:IMAGE``. ``--backend cmd:COMMAND`` stays as an
alias of ``--impl cmd:COMMAND --backend local`` (docs/cli.md, "Backends").
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass

from harness.backends.base import Backend
from harness.backends.cmd import PREFIX as CMD_PREFIX
from harness.backends.cmd import CmdBackend
from harness.backends.impl import IMPL_CHOICES, REFERENCE, Implementation, local_argv, parse_impl
from harness.backends.local import LocalBackend
from harness.backends.process import ProcessBackend
from harness.backends.search_tools import search_env
from harness.errors import InfrastructureError, UsageError

BackendFactory = Callable[[], Backend]
DEFAULT_BACKEND = "local"
DEFAULT_IMPL = "reference"
DOCKER_PREFIX = "docker:"
BACKEND_CHOICES_TEXT = "local | docker[:IMAGE] (cmd:COMMAND = --impl cmd:COMMAND on local)"
IMPL_CHOICES_TEXT = IMPL_CHOICES


@dataclass(frozen=True)
class Selection:
    """What ``backend_selection`` resolved: the factory, the report label and the run id."""

    factory: BackendFactory
    label: str
    run_id: str
    impl: Implementation
    backend: str


def backend_selection(spec: str, impl_text: str = DEFAULT_IMPL, *, run_id: str | None = None) -> Selection:
    """``--backend`` and ``--impl`` → a ``Selection`` (``UsageError`` for a bad combination)."""
    rid = run_id or uuid.uuid4().hex[:12]  # one id per invocation labels every worker's container
    impl = parse_impl(impl_text) if isinstance(impl_text, str) else impl_text
    if spec.startswith(CMD_PREFIX):
        command = spec[len(CMD_PREFIX):].strip()
        if not command:
            raise UsageError("--backend cmd: needs a command line, e.g. --backend \"cmd:node adapter.js\"")
        if impl != REFERENCE:
            raise UsageError(f"--backend {spec!r} already names the implementation; use --impl {impl.label} "
                             "with --backend local or docker instead")
        return Selection(lambda: CmdBackend(command), spec, rid, parse_impl(spec), "local")
    label = spec if impl == REFERENCE else f"{spec} --impl {impl.label}"
    if spec == "local":
        return Selection(_local_factory(impl), label, rid, impl, spec)
    if spec == "docker" or spec.startswith(DOCKER_PREFIX):
        image = spec[len(DOCKER_PREFIX):] or None if spec.startswith(DOCKER_PREFIX) else None
        if impl.kind == "cmd" and image is None:
            raise UsageError(f"--impl {impl.label} --backend docker: name the image that holds the command, "
                             "e.g. --backend docker:my-adapter:1 (toolproof docs docker: \"Your own adapter in an image\")")
        # Optional: the docker backend drives the docker SDK and an engine; it is imported only when
        # asked for, so local runs work (and start fast) on hosts without either.
        try:
            from harness.backends.docker.backend import DockerBackend  # optional: needs the docker SDK
        except ImportError as exc:
            raise InfrastructureError(f"the docker backend is not available: {exc}") from None
        return Selection(lambda: DockerBackend(image=image, run_id=rid, impl=impl), label, rid, impl, spec)
    raise UsageError(f"unknown backend {spec!r}; expected local, docker or docker:IMAGE "
                     "(or cmd:COMMAND, an alias of --impl cmd:COMMAND)")


def _local_factory(impl: Implementation) -> BackendFactory:
    if impl.kind == "reference":
        return LocalBackend
    if impl.kind == "cmd":
        return lambda: CmdBackend(impl.command)
    env = search_env()  # pi's own grep and find (upstream, pi@VERSION): the same rg and fd
    if impl.kind == "upstream":
        return lambda: LocalBackend(["--upstream"], env=env)
    argv = local_argv(impl)  # pi@VERSION: installed now, once, not in every worker
    return lambda: ProcessBackend(argv, inband=False, label=impl.label, env=env)


def backend_factory(spec: str, impl: str = DEFAULT_IMPL) -> tuple[BackendFactory, str]:
    """(factory, label) for ``--backend spec --impl impl``."""
    selection = backend_selection(spec, impl)
    return selection.factory, selection.label
