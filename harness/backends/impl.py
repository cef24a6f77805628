"""Which implementation is under test (``--impl``), independent of where it runs (``--backend``).

``reference`` (default) is ``python -m tools_impl.server``; ``upstream`` is the same with every
patch off (``--upstream``); ``pi@VERSION`` is the published pi tools behind the pi driver
(``adapters/pi/driver.mjs``), installed on demand into the cache as ``ci/pi-setup.sh`` does;
``cmd:COMMAND`` is any program speaking the protocol on stdin/stdout. On the local backend the
command runs on the host; on the docker backend it is resolved and run inside the container.
"""

from __future__ import annotations

import re
import shlex
import sys
from dataclasses import dataclass

from harness.errors import UsageError
from harness.install.pi import PiInstall, install_pi, node_runtime, pi_adapter_dir, pi_driver

IMPL_CHOICES = "reference | upstream | pi@VERSION | cmd:COMMAND"
# the pi tools the local pi driver offers: the four the corpus calls and pi's own grep and find
PI_TOOLS = "read,write,edit,bash,grep,find"
VERSION_RE = re.compile(r"^v?\d+\.\d+\.\d+$")


@dataclass(frozen=True)
class Implementation:
    """One ``--impl`` value: ``kind`` is ``reference``, ``upstream``, ``pi`` or ``cmd``."""

    kind: str
    version: str = ""
    command: str = ""

    @property
    def label(self) -> str:
        if self.kind == "pi":
            return f"pi@{self.version}"
        if self.kind == "cmd":
            return f"cmd:{self.command}"
        return self.kind

    @property
    def is_reference(self) -> bool:
        return self.kind in ("reference", "upstream")

    def command_argv(self) -> list[str]:
        """``cmd:`` only: the command line as words."""
        argv = shlex.split(self.command)
        if not argv:
            raise UsageError("--impl cmd: needs a command line, e.g. --impl \"cmd:node adapter.js\"")
        return argv


REFERENCE = Implementation("reference")
UPSTREAM = Implementation("upstream")


def parse_impl(text: str) -> Implementation:
    """``--impl`` text → ``Implementation``; ``UsageError`` naming the choices otherwise."""
    value = text.strip()
    if value in ("reference", "upstream"):
        return Implementation(value)
    if value.startswith("pi@"):
        version = value[3:].strip()
        if not VERSION_RE.match(version):
            raise UsageError(f"--impl {value!r}: expected pi@MAJOR.MINOR.PATCH, e.g. pi@0.79.1")
        return Implementation("pi", version=version.removeprefix("v"))
    if value.startswith("cmd:"):
        impl = Implementation("cmd", command=value[4:].strip())
        impl.command_argv()
        return impl
    raise UsageError(f"unknown implementation {text!r}; expected {IMPL_CHOICES}")


def local_argv(impl: Implementation) -> list[str]:
    """The host command line of ``impl`` for the local backend."""
    if impl.kind == "reference":
        return [sys.executable, "-m", "tools_impl.server"]
    if impl.kind == "upstream":
        return [sys.executable, "-m", "tools_impl.server", "--upstream"]
    if impl.kind == "pi":
        pi = install_pi(impl.version)
        return [pi.node, str(pi_driver()), "--pi-dir", str(pi.directory), "--tools", PI_TOOLS]
    return impl.command_argv()


__all__ = ["IMPL_CHOICES", "REFERENCE", "UPSTREAM", "Implementation", "PiInstall", "install_pi",
           "local_argv", "node_runtime", "parse_impl", "pi_adapter_dir", "pi_driver"]
