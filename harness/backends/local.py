"""The ``local`` backend: the reference server ``python -m tools_impl.server`` as one host
subprocess reused across scenarios; each scenario gets a fresh temp dir, delivered in-band as the
``workspace`` op's ``archive`` (the server extracts it)."""

from __future__ import annotations

import sys

from harness.backends.process import ProcessBackend

REFERENCE_SERVER_ARGV = [sys.executable, "-m", "tools_impl.server"]


class LocalBackend(ProcessBackend):
    name = "local"

    def __init__(self, extra_args: list[str] | None = None, env: dict[str, str] | None = None) -> None:
        super().__init__([*REFERENCE_SERVER_ARGV, *(extra_args or [])], inband=True, label="local", env=env)
