"""Keep the C allocator from handing large freed blocks back to the system between calls.

glibc serves a large allocation with its own ``mmap`` and unmaps it when freed, and trims the
top of its heap once enough is free there. A call on a large file allocates several buffers of
the file's size (bytes, text, normalised text, the new text, its encoding); when each of them is
fresh memory from the system, every page is faulted in and zeroed again on every call, which
costs more per byte the larger the file. Raising the two thresholds lets those blocks come from
the heap and be reused by the next call. Linux with glibc only; elsewhere nothing changes.
"""

from __future__ import annotations

import ctypes
import os
import sys

# mallopt parameters (malloc.h)
M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3
# Blocks up to this size come from the heap (glibc's largest dynamic threshold on 64-bit).
MMAP_THRESHOLD_BYTES = 32 * 1024 * 1024
# Free memory at the top of the heap is returned to the system beyond this.
TRIM_THRESHOLD_BYTES = 256 * 1024 * 1024


def _glibc() -> bool:
    try:
        return (os.confstr("CS_GNU_LIBC_VERSION") or "").startswith("glibc")
    except (ValueError, OSError):
        return False


def keep_freed_memory() -> bool:
    """Apply the thresholds; True when the allocator took them."""
    if not sys.platform.startswith("linux") or not _glibc():
        return False
    try:
        libc = ctypes.CDLL(None)
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    return bool(mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES)) and bool(mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD_BYTES))
