"""The workspace tar builder: a scenario's ``workspace`` section → tar bytes in memory (files with
modes and relative mtimes, dirs, symlinks, FIFO members), and for ``git: true`` a repository with
one initial commit made with a fixed author, committer and date so the commit is reproducible.
"""

from __future__ import annotations

import functools
import io
import os
import shutil
import subprocess
import tarfile
import tempfile
import time

from harness.errors import InfrastructureError
from harness.model.scenario import Workspace, WorkspaceEntry

DEFAULT_FILE_MODE = 0o644
DEFAULT_DIR_MODE = 0o755
GIT_AUTHOR = "toolproof"
GIT_EMAIL = "toolproof@example.invalid"
GIT_DATE = "2026-01-01T00:00:00+00:00"
GIT_TIMEOUT_S = 60
INITIAL_COMMIT_MESSAGE = "initial"
GIT_ARCHIVE_CACHE = 16


def _info(entry: WorkspaceEntry, base_time: float) -> tarfile.TarInfo:
    info = tarfile.TarInfo(entry.path)
    info.mtime = int(base_time + (entry.mtime or 0))
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    if entry.kind == "dir":
        info.type = tarfile.DIRTYPE
        info.mode = DEFAULT_DIR_MODE if entry.mode is None else entry.mode
    elif entry.kind == "symlink":
        info.type = tarfile.SYMTYPE
        info.linkname = entry.target or ""
        info.mode = 0o777
    elif entry.kind == "fifo":
        info.type = tarfile.FIFOTYPE
        info.mode = DEFAULT_FILE_MODE if entry.mode is None else entry.mode
    else:
        info.type = tarfile.REGTYPE
        info.size = len(entry.data)
        info.mode = DEFAULT_FILE_MODE if entry.mode is None else entry.mode
    return info


def _parents(path: str) -> list[str]:
    parts = path.split("/")[:-1]
    return ["/".join(parts[: i + 1]) for i in range(len(parts))]


def build_plain_archive(workspace: Workspace, base_time: float) -> bytes:
    """Tar the declared entries in order, with implicit parent directories first."""
    buf = io.BytesIO()
    declared = {e.path for e in workspace.entries}
    added: set[str] = set()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for entry in workspace.entries:
            for parent in _parents(entry.path):
                if parent not in added and parent not in declared:
                    tar.addfile(_info(WorkspaceEntry(parent, "dir"), base_time))
                    added.add(parent)
            info = _info(entry, base_time)
            tar.addfile(info, io.BytesIO(entry.data) if entry.kind == "file" else None)
            added.add(entry.path)
    return buf.getvalue()


def _git(args: list[str], cwd: str) -> None:
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": cwd,
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_AUTHOR_NAME": GIT_AUTHOR,
        "GIT_AUTHOR_EMAIL": GIT_EMAIL,
        "GIT_AUTHOR_DATE": GIT_DATE,
        "GIT_COMMITTER_NAME": GIT_AUTHOR,
        "GIT_COMMITTER_EMAIL": GIT_EMAIL,
        "GIT_COMMITTER_DATE": GIT_DATE,
    }
    try:
        proc = subprocess.run(["git", "-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false",
                               "-c", "core.autocrlf=false", *args],
                              cwd=cwd, env=env, capture_output=True, timeout=GIT_TIMEOUT_S)
    except FileNotFoundError:
        raise InfrastructureError("workspace.git: true needs the git executable on the host") from None
    except subprocess.TimeoutExpired:
        raise InfrastructureError(f"git {args[0]} did not finish within {GIT_TIMEOUT_S} s") from None
    if proc.returncode != 0:
        msg = proc.stderr.decode("utf-8", "replace").strip()
        raise InfrastructureError(f"git {args[0]} failed: {msg}")


@functools.lru_cache(maxsize=GIT_ARCHIVE_CACHE)
def build_git_archive(workspace: Workspace, base_time: float) -> bytes:
    """Materialise the entries in a temp dir, ``git init`` + commit them, and tar the tree
    (including ``.git``) with the declared mtimes kept and every other member at ``base_time``.
    The last few archives are kept: two runs of one workspace in the same second (the two sides
    of a fuzz case, a scenario on two backends) run git once."""
    plain = build_plain_archive(workspace, base_time)
    tmp = tempfile.mkdtemp(prefix="toolproof-git-")
    try:
        with tarfile.open(fileobj=io.BytesIO(plain)) as tar:
            tar.extractall(tmp, filter="fully_trusted")
        _git(["init", "-q", "--template="], tmp)
        _git(["add", "-A"], tmp)
        _git(["commit", "-q", "--allow-empty", "-m", INITIAL_COMMIT_MESSAGE], tmp)
        declared = {e.path: e for e in workspace.entries}
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as out:
            for dirpath, dirnames, filenames in os.walk(tmp):
                dirnames.sort()
                for name in [*dirnames, *sorted(filenames)]:
                    full = os.path.join(dirpath, name)
                    rel = os.path.relpath(full, tmp).replace(os.sep, "/")
                    info = out.gettarinfo(full, arcname=rel)
                    info.uid = info.gid = 0
                    info.uname = info.gname = ""
                    entry = declared.get(rel)
                    info.mtime = int(base_time + (entry.mtime or 0)) if entry else int(base_time)
                    if info.isreg():
                        with open(full, "rb") as fh:
                            out.addfile(info, fh)
                    else:
                        out.addfile(info)
        return buf.getvalue()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def build_archive(workspace: Workspace, base_time: float | None = None) -> bytes:
    """The scenario's starting workspace as tar bytes. ``base_time`` (default: now) is the time
    relative ``mtime`` values count from."""
    now = time.time() if base_time is None else base_time
    if workspace.git:
        now = float(int(now))  # tar mtimes are whole seconds: equal archives within one second
        return build_git_archive(workspace, now)
    return build_plain_archive(workspace, now)
