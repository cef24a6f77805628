"""The per-file mutation queue shared by write and edit (spec write.4).

Key = ``realpath(resolved)`` (the resolved path when realpath fails with ENOENT/ENOTDIR; any
other realpath failure, e.g. a symlink loop, raises the Node-style ``realpath`` error), so
symlink aliases share one queue. Operations on one key run one after another; different keys run
in parallel. In-process only: there is no cross-process locking.
"""

from __future__ import annotations

import errno
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TypeVar

from tools_impl.core.errors import ToolError
from tools_impl.js.node_errors import error_code, node_error_message

T = TypeVar("T")

# realpath failures that mean "no such file yet": the resolved path is the key.
FALLBACK_ERRNOS = frozenset({errno.ENOENT, errno.ENOTDIR})


# Where the kernel names an open file's real path (Linux): one open and one readlink instead of
# an lstat per path component.
PROC_FD_DIR = "/proc/self/fd"
_O_PATH = getattr(os, "O_PATH", 0)
_USE_PROC_FD = bool(_O_PATH) and os.path.isdir(PROC_FD_DIR)


def _kernel_realpath(resolved: str) -> str | None:
    """The real path the kernel resolves ``resolved`` to; OSError as ``realpath`` would raise it
    (ENOENT, ENOTDIR, ELOOP, EACCES); ``None`` when the kernel cannot tell."""
    fd = os.open(resolved, _O_PATH)
    try:
        target = os.readlink(f"{PROC_FD_DIR}/{fd}")
    except OSError:
        return None
    finally:
        os.close(fd)
    return target if target.startswith("/") and not target.endswith(" (deleted)") else None


def queue_key(resolved: str) -> str:
    """``realpath(resolved)``; the resolved path for ENOENT/ENOTDIR; other failures raise
    ``ToolError`` (``ELOOP: too many symbolic links encountered, realpath '<path>'``)."""
    try:
        if _USE_PROC_FD:
            real = _kernel_realpath(resolved)
            if real is not None:
                return real
        return os.path.realpath(resolved, strict=True)
    except OSError as exc:
        if exc.errno in FALLBACK_ERRNOS:
            return resolved
        raise ToolError(node_error_message(exc, "realpath", resolved), code=error_code(exc)) from exc


class MutationQueue:
    """One lock per queue key; keys are computed under the "global chain" lock, in call order."""

    def __init__(self) -> None:
        self._chain = threading.Lock()
        self._locks: dict[str, threading.Lock] = {}

    @contextmanager
    def hold(self, resolved: str) -> Iterator[None]:
        """Hold the queue for ``resolved`` for the duration of the block."""
        with self._chain:
            lock = self._locks.setdefault(queue_key(resolved), threading.Lock())
        with lock:
            yield


# One per process, like pi's: every write and edit of this process shares it.
MUTATIONS = MutationQueue()
