"""Process-liveness helpers for the bash tests (Linux /proc; a zombie counts as dead)."""

from __future__ import annotations

import os
import time


def proc_available() -> bool:
    return os.path.isdir("/proc/self")


def _stat_fields(pid: int) -> list[str] | None:
    try:
        with open(f"/proc/{pid}/stat") as f:
            data = f.read()
    except OSError:
        return None
    # comm may contain spaces; fields after the closing parenthesis are well-formed
    return data[data.rindex(")") + 2:].split()


def alive(pid: int) -> bool:
    """True while ``pid`` runs (not a zombie)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    fields = _stat_fields(pid)
    return fields is not None and fields[0] != "Z"


def group_members(pgid: int) -> list[int]:
    """Live (non-zombie) processes whose process group is ``pgid``."""
    out: list[int] = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        fields = _stat_fields(int(name))
        if fields is not None and fields[0] != "Z" and int(fields[2]) == pgid:
            out.append(int(name))
    return out


def wait_until(predicate: object, timeout: float, interval: float = 0.02) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():  # type: ignore[operator]
            return True
        time.sleep(interval)
    return bool(predicate())  # type: ignore[operator]


def read_pid(path: str, timeout: float = 5.0) -> int:
    def ready() -> bool:
        try:
            with open(path) as f:
                return f.read().strip().isdigit()
        except OSError:
            return False

    assert wait_until(ready, timeout), f"pid file {path} never appeared"
    with open(path) as f:
        return int(f.read().strip())
