"""The server's allocator thresholds: taken on Linux with glibc, a no-op elsewhere."""

from __future__ import annotations

import os
import sys

import pytest

from tools_impl.server.allocator import keep_freed_memory


def _glibc() -> bool:
    try:
        return (os.confstr("CS_GNU_LIBC_VERSION") or "").startswith("glibc")
    except (ValueError, OSError):
        return False


@pytest.mark.skipif(not (sys.platform.startswith("linux") and _glibc()), reason="glibc's mallopt only")
def test_glibc_takes_the_thresholds_and_memory_still_works() -> None:
    assert keep_freed_memory() is True
    block = bytearray(40 * 1024 * 1024)  # above the mmap threshold: still served
    block[-1] = 1
    assert sum(block[-2:]) == 1
