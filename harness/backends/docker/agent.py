"""The in-container entry point of the docker backend: the reference tool server plus two
container-housekeeping ops, ``ps`` (processes other than the container's own) and ``reap``
(SIGKILL them). Shipped into the container next to ``tools_impl`` as ``toolproof_agent.py`` and
run by the container's python3, so it uses the standard library only.

A container runs exactly one scenario at a time, so after a workspace is dropped every process
that was not there when the agent started (apart from the agent itself) was left behind by that
scenario: a backgrounded ``sleep``, a TERM-ignoring child, a fork bomb's remains.
"""

from __future__ import annotations

import json
import os
import signal
import time
from typing import Any

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


def main() -> int:
    from tools_impl.server import dispatch as tool_server
    keeper = Housekeeper()

    class AgentServer(tool_server.Server):
        def handle_line(self, line: str) -> None:
            try:
                req = json.loads(line)
            except json.JSONDecodeError:
                req = None
            if isinstance(req, dict) and req.get("op") in ("ps", "reap"):
                rid = req.get("id")
                try:
                    marker = req.get("marker")
                    if req["op"] == "ps":
                        procs = keeper.strays(marker if isinstance(marker, str) else None)
                    else:
                        procs = keeper.reap()
                    self.ok(rid, {"processes": procs})
                except Exception as exc:
                    self.fail(rid, f"internal error: {type(exc).__name__}: {exc}", "internal")
                return
            super().handle_line(line)

    return tool_server.serve_stdio(server_class=AgentServer)
