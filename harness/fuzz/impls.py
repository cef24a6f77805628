"""``--impl`` names → backends: ``reference`` (the reference server), ``upstream`` (the reference
server emulating upstream pi, patches off), ``pi@VERSION`` (a published pi release through the pi
driver, installed on demand by ``adapters/pi/pi_setup.py``) and ``cmd:COMMAND`` (any protocol
server). ``--backend`` picks where the implementation runs (``local`` by default; ``docker``
runs the reference in its container, with the upstream profile for ``upstream``).

This is the one place that maps implementation names to backends for ``properties`` and
``fuzz``; it is meant to be swapped for the shared ``--impl`` resolution once that exists.
"""

from __future__ import annotations

import dataclasses
import shlex
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.backends.base import Backend, HelloInfo
from harness.backends.cmd import CmdBackend
from harness.backends.local import LocalBackend
from harness.backends.registry import backend_factory
from harness.errors import InfrastructureError, UsageError

REPO_ROOT = Path(__file__).resolve().parents[2]
PI_SETUP = REPO_ROOT / "adapters" / "pi" / "pi_setup.py"
PI_DRIVER = REPO_ROOT / "adapters" / "pi" / "driver.mjs"
PI_SETUP_TIMEOUT_S = 600
IMPL_HELP = "reference | upstream | pi@VERSION | cmd:COMMAND"
UPSTREAM_PROFILE = {"base": "upstream"}


@dataclass(frozen=True)
class Impl:
    """A resolved implementation: how to make a backend for it, its label, and the profile
    overlay every workspace must carry (the docker backend's ``upstream``)."""

    label: str
    factory: Callable[[], Backend]
    profile: dict[str, Any] | None = field(default=None)

    def effective_hello(self, hello: HelloInfo) -> HelloInfo:
        """``hello`` as the workspaces will see the implementation: a server started with the
        reference profile and given the upstream overlay per workspace speaks the pi surface
        without patches."""
        if self.profile == UPSTREAM_PROFILE:
            return dataclasses.replace(hello, surface="pi", patches=())
        return hello


def pi_backend_command(version: str) -> str:
    """The ``cmd:`` command line of the pi driver for ``version``, installing it when needed."""
    if not PI_SETUP.is_file():
        raise InfrastructureError(f"pi@{version} needs {PI_SETUP.relative_to(REPO_ROOT)} (a toolproof checkout)")
    try:
        proc = subprocess.run([sys.executable, str(PI_SETUP), version], cwd=str(REPO_ROOT),
                              capture_output=True, text=True, timeout=PI_SETUP_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise InfrastructureError(f"installing pi {version} took longer than {PI_SETUP_TIMEOUT_S} s") from None
    if proc.returncode != 0:
        detail = (proc.stderr or proc.stdout).strip().splitlines()
        raise InfrastructureError(f"cannot set up pi {version}: {detail[-1] if detail else 'pi_setup failed'}")
    line = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else ""
    if not line.startswith("cmd:"):
        raise InfrastructureError(f"pi_setup printed no backend command for {version}")
    argv = shlex.split(line[4:])
    # the printed command names the driver relative to the checkout: make it work from any cwd
    argv = [str(PI_DRIVER) if a == "adapters/pi/driver.mjs" else a for a in argv]
    return shlex.join(argv)


def resolve_impl(spec: str, backend: str = "local") -> Impl:
    """Map an ``--impl`` value (and ``--backend``) to an ``Impl``; ``UsageError`` for bad values."""

    spec = spec.strip()
    if backend not in ("local", "docker") and not backend.startswith("docker:"):
        raise UsageError(f"--backend {backend!r}: expected local, docker or docker:IMAGE")
    if spec in ("reference", "upstream"):
        if backend == "local":
            extra = ["--upstream"] if spec == "upstream" else []
            return Impl(spec, lambda: LocalBackend(extra))

        factory, label = backend_factory(backend)
        return Impl(f"{spec}@{label}", factory, UPSTREAM_PROFILE if spec == "upstream" else None)
    if backend != "local":
        raise UsageError(f"--impl {spec} runs on the host; --backend {backend} takes reference or upstream")
    if spec.startswith("pi@"):
        version = spec[3:]
        if not version:
            raise UsageError("--impl pi@VERSION needs a version, e.g. pi@0.79.1")
        command = pi_backend_command(version)
        return Impl(spec, lambda: CmdBackend(command))
    if spec.startswith("cmd:"):
        command = spec[4:].strip()
        if not command:
            raise UsageError('--impl cmd: needs a command line, e.g. --impl "cmd:node adapter.js"')
        return Impl(spec, lambda: CmdBackend(command))
    raise UsageError(f"unknown implementation {spec!r}; expected {IMPL_HELP}")
