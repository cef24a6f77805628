"""``--impl`` names → backends: ``reference`` (the reference server), ``upstream`` (the reference
server emulating upstream pi, patches off), ``pi@VERSION`` (a published pi release through the pi
driver, installed on demand by ``adapters/pi/pi_setup.py``) and ``cmd:COMMAND`` (any protocol
server). ``--backend`` picks where the implementation runs (``local`` by default; ``docker``
runs the reference in its container, with the upstream profile for ``upstream``).

The names are resolved by the shared ``--impl``/``--backend`` resolution
(harness/backends/registry.py), so every implementation runs on every backend here too.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from harness.backends.base import Backend, HelloInfo
from harness.backends.registry import backend_selection

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


def resolve_impl(spec: str, backend: str = "local") -> Impl:
    """Map an ``--impl`` value (and ``--backend``) to an ``Impl``; ``UsageError`` for bad values."""
    selection = backend_selection(backend, spec.strip())
    label = selection.impl.label if backend == "local" else f"{selection.impl.label}@{backend}"
    return Impl(label, selection.factory)
