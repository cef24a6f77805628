"""The in-container entry point of the docker backend: the reference tool server plus two
container-housekeeping ops, ``ps`` (processes other than the container's own) and ``reap``
(SIGKILL them). Shipped into the container next to ``tools_impl`` as ``toolproof_agent.py`` and
run by the container's python3, so it uses the standard library only. The two ops are registered
handlers on the reference server (``Server.register``).

A container runs exactly one scenario at a time, so after a workspace is dropped every process
that was not there when the agent started (apart from the agent itself) was left behind by that
scenario: a backgrounded ``sleep``, a TERM-ignoring child, a fork bomb's remains.
"""

from __future__ import annotations

import os
import signal
import time
from dataclasses import dataclass
from typing import Any

from tools_impl.server.dispatch import Server, serve_stdio

REAP_ROUNDS = 50
REAP_PAUSE_S = 0.02


def _proc_pids() -> list[int]:
    return [int(n) for n in os.listdir("/proc") if n.isdigit()]


def _describe(pid: int) -> dict[str, Any] | None:
    """pid, state and command line of a live (non-zombie) process; ``None`` if gone/zombie."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read().decode("utf-8", "replace")
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            argv = [a.decode("utf-8", "replace") for a in fh.read().split(b"\0") if a]
    except OSError:
        return None
    state = stat[stat.rfind(")") + 2:].split(" ", 1)[0]
    if state in ("Z", "X"):
        return None
    return {"pid": pid, "state": state, "cmdline": " ".join(argv)}


def _has_marker(pid: int, marker: str) -> bool:
    try:
        with open(f"/proc/{pid}/environ", "rb") as fh:
            entries = fh.read().split(b"\0")
    except OSError:
        return False
    needle = marker.encode("utf-8", "surrogateescape")
    return any(e == needle or e.partition(b"=")[2] == needle for e in entries)


class Housekeeper:
    """Knows which processes belong to the container itself (init, its main command, the agent)."""

    def __init__(self) -> None:
        self.protected = set(_proc_pids()) | {os.getpid()}

    def strays(self, marker: str | None = None) -> list[dict[str, Any]]:
        """Live processes not protected; with ``marker``, only those whose environment has an
        entry equal to it or a variable whose value equals it."""
        out = []
        for pid in _proc_pids():
            if pid in self.protected:
                continue
            info = _describe(pid)
            if info is not None and (marker is None or _has_marker(pid, marker)):
                out.append(info)
        return out

    def reap(self) -> list[dict[str, Any]]:
        """SIGKILL every stray, repeatedly (a fork bomb keeps forking); return what was found."""
        found: dict[int, dict[str, Any]] = {}
        for _ in range(REAP_ROUNDS):
            current = self.strays()
            if not current:
                break
            for info in current:
                found.setdefault(info["pid"], info)
                try:
                    os.kill(info["pid"], signal.SIGKILL)
                except OSError:
                    pass
            time.sleep(REAP_PAUSE_S)
        return list(found.values())


@dataclass(frozen=True)
class ProcessesResult:
    """The answer to ``ps`` and ``reap``: the processes found."""

    processes: list[dict[str, Any]]

    def to_json(self) -> dict[str, Any]:
        return {"processes": self.processes}


def register_housekeeping(server: Server, keeper: Housekeeper) -> None:
    """Add ``ps {marker?}`` and ``reap`` to ``server`` (a non-string ``marker`` means none)."""

    def marker_of(fields: dict[str, Any]) -> str | None:
        marker = fields.get("marker")
        return marker if isinstance(marker, str) else None

    server.register("ps", marker_of, lambda marker, _rid: ProcessesResult(keeper.strays(marker)))
    server.register("reap", lambda _fields: None, lambda _msg, _rid: ProcessesResult(keeper.reap()))


def main() -> int:
    keeper = Housekeeper()
    return serve_stdio(extend=lambda server: register_housekeeping(server, keeper))
