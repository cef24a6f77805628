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


def queue_key(resolved: str) -> str:
    """``realpath(resolved)``; the resolved path for ENOENT/ENOTDIR; other failures raise
    ``ToolError`` (``ELOOP: too many symbolic links encountered, realpath '<path>'``)."""
    try:
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
