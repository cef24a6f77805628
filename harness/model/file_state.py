"""The state of one workspace path after a scenario (``FileState``): what final ``files:`` checks
compare. One place describes a path: ``describe_path`` on the host (local and ``cmd:`` backends),
``FileState.from_json`` for an implementation's ``fs_read`` answer (the docker backend).

``tools_impl/server`` keeps its own copy of the description (``describe_path`` in its dispatch
module, which answers ``fs_read``): tools_impl is standalone — it is shipped into containers and
run as a server without the harness — so it cannot import this module.
"""

from __future__ import annotations

import base64
import hashlib
import os
import stat
from dataclasses import dataclass
from typing import Any

FILE_KINDS: tuple[str, ...] = ("file", "dir", "symlink", "fifo", "other")
ABSENT = "absent"


@dataclass(frozen=True)
class FileState:
    """A workspace path after a scenario: ``kind`` is one of ``FILE_KINDS`` or ``absent``; ``data``
    is set for regular files; ``mode`` is the permission bits; ``target`` is a symlink's target."""

    path: str
    kind: str
    mode: int | None = None
    data: bytes | None = None
    target: str | None = None

    @property
    def exists(self) -> bool:
        return self.kind != ABSENT

    @classmethod
    def from_json(cls, path: str, obj: dict[str, Any]) -> FileState:
        """From one entry of an ``fs_read`` answer (``kind``, ``mode``, base64 ``data``, ``target``)."""
        data = obj.get("data")
        return cls(path=path, kind=str(obj.get("kind", ABSENT)), mode=obj.get("mode"),
                   data=base64.b64decode(data) if isinstance(data, str) else None, target=obj.get("target"))


def describe_path(path: str, name: str | None = None) -> FileState:
    """The state of host path ``path`` (symlinks not followed), reported under ``name``
    (default: ``path``)."""
    name = path if name is None else name
    try:
        info = os.lstat(path)
    except OSError:
        return FileState(name, ABSENT)
    mode = stat.S_IMODE(info.st_mode)
    if stat.S_ISLNK(info.st_mode):
        return FileState(name, "symlink", mode, target=os.readlink(path))
    if stat.S_ISDIR(info.st_mode):
        return FileState(name, "dir", mode)
    if stat.S_ISFIFO(info.st_mode):
        return FileState(name, "fifo", mode)
    if stat.S_ISREG(info.st_mode):
        try:
            with open(path, "rb") as fh:
                return FileState(name, "file", mode, fh.read())
        except OSError:
            return FileState(name, "file", mode)
    return FileState(name, "other", mode)


# -- a workspace tree, as ``toolproof diff`` compares it ----------------------------------------

TREE_OPAQUE_DIRS = (".git",)
"""Directories whose contents are listed by kind only: a repository's objects and logs hold
commit times and hashes that differ on every run even when the tools behave the same."""

TREE_HASH_WHOLE_BYTES = 64 << 20
TREE_HASH_END_BYTES = 1 << 20
"""A regular file up to 64 MiB is listed with the ``sha256`` of all its bytes; a larger one (the
hostile scenarios' multi-GiB sparse files) with its size and ``sha256_ends``, the digest of its
first and last MiB, so listing a tree stays bounded on a loaded machine."""


def tree_entry(path: str) -> dict[str, Any]:
    """One path of a tree listing: ``kind``, ``mode``, a regular file's ``size`` and ``sha256``, a
    symlink's ``target`` (symlinks not followed). The in-container supervisor lists trees in the
    same format (``fs_tree``)."""
    try:
        info = os.lstat(path)
    except OSError:
        return {"kind": ABSENT}
    mode = stat.S_IMODE(info.st_mode)
    if stat.S_ISLNK(info.st_mode):
        return {"kind": "symlink", "mode": mode, "target": os.readlink(path)}
    if stat.S_ISDIR(info.st_mode):
        return {"kind": "dir", "mode": mode}
    if stat.S_ISFIFO(info.st_mode):
        return {"kind": "fifo", "mode": mode}
    if stat.S_ISREG(info.st_mode):
        digest = hashlib.sha256()
        try:
            with open(path, "rb") as fh:
                if info.st_size <= TREE_HASH_WHOLE_BYTES:
                    for chunk in iter(lambda: fh.read(1 << 20), b""):
                        digest.update(chunk)
                else:
                    digest.update(fh.read(TREE_HASH_END_BYTES))
                    fh.seek(info.st_size - TREE_HASH_END_BYTES)
                    digest.update(fh.read(TREE_HASH_END_BYTES))
        except OSError as exc:
            return {"kind": "file", "mode": mode, "size": info.st_size, "error": exc.strerror or str(exc)}
        if info.st_size > TREE_HASH_WHOLE_BYTES:
            return {"kind": "file", "mode": mode, "size": info.st_size, "sha256_ends": digest.hexdigest()}
        return {"kind": "file", "mode": mode, "size": info.st_size, "sha256": digest.hexdigest()}
    return {"kind": "other", "mode": mode}


def list_tree(root: str) -> dict[str, dict[str, Any]]:
    """Every path under ``root`` (relative, ``/``-separated, sorted) with its ``tree_entry``;
    inside ``TREE_OPAQUE_DIRS`` only the kind of each path."""
    out: dict[str, dict[str, Any]] = {}
    for top, dirs, files in os.walk(root, followlinks=False):
        dirs.sort()
        rel_top = os.path.relpath(top, root).replace(os.sep, "/")
        opaque = any(rel_top == d or rel_top.startswith(d + "/") for d in TREE_OPAQUE_DIRS)
        for name in [*dirs, *sorted(files)]:
            rel = name if rel_top == "." else f"{rel_top}/{name}"
            entry = tree_entry(os.path.join(top, name))
            out[rel] = {"kind": entry["kind"]} if opaque else entry
    return dict(sorted(out.items()))
