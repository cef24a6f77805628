"""The per-file mutation queue shared by write and edit (spec §3.4).

Key = ``realpath(resolved)`` (the resolved path when realpath fails with ENOENT/ENOTDIR), so
symlink aliases share one queue. Operations on one key run one after another; different keys run
in parallel. In-process only: there is no cross-process locking.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar

T = TypeVar("T")

_registry_lock = threading.Lock()  # the "global chain": keys are computed in call order
_locks: dict[str, threading.Lock] = {}


def queue_key(resolved: str) -> str:
    try:
        return os.path.realpath(resolved, strict=True)
    except OSError:
        return resolved


@contextmanager
def file_mutation(resolved: str) -> Iterator[None]:
    """Hold the queue for ``resolved`` for the duration of the block."""
    with _registry_lock:
        key = queue_key(resolved)
        lock = _locks.setdefault(key, threading.Lock())
    with lock:
        yield


def with_file_mutation(resolved: str, fn: Callable[[], T]) -> T:
    with file_mutation(resolved):
        return fn()
