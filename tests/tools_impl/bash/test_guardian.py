"""The parent-death guardian (patch bash.parent-death-guard, spec bash.15): what YAML cannot say —
killing the host process. A background command's group is ended by the guardian once the
server dies (SIGTERM, then SIGKILL after 3 s); without the patch it survives the server."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from tests.support.processes import alive, group_members, proc_available, read_pid, wait_until
from tools_impl.bash.guardian import (
    GUARD_SCRIPT,
    GUARD_SHELL,
    GUARDIAN_ARGV0_TAG,
    GUARDIAN_ENV,
    GUARDIAN_SCRIPT,
    REGISTRATION_TIMED_OUT,
    ParentDeathGuardian,
    guarded_argv,
)
from tools_impl.core.errors import ToolError

pytestmark = pytest.mark.skipif(sys.platform == "win32" or not proc_available(), reason="POSIX /proc only")


class _Server:
    def __init__(self, root: Path) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "tools_impl.server"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                                     start_new_session=True)
        self._next = 0

    def request(self, op: str, **fields: Any) -> dict[str, Any]:
        self._next += 1
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps({"id": self._next, "op": op, **fields}) + "\n")
        self.proc.stdin.flush()
        while True:
            line = json.loads(self.proc.stdout.readline())
            if line.get("id") == self._next:
                return dict(line)


def _start_background(tmp_path: Path, guard: bool) -> tuple[_Server, int]:
    server = _Server(tmp_path)
    pid_file = tmp_path / "sleep.pid"
    ws = server.request("workspace", root=str(tmp_path), profile={"patches": {"bash.parent-death-guard": guard}})
    assert ws["ok"], ws
    resp = server.request("call", tool="bash", args={
        "command": f"trap '' TERM; sleep 60 & echo $! > {pid_file}; wait", "run_in_background": True})
    assert resp["ok"] and resp["result"]["details"]["status"] == "started", resp
    return server, read_pid(str(pid_file))


def test_the_guardian_ends_a_background_group_when_the_host_is_killed(tmp_path: Path) -> None:
    server, sleeper = _start_background(tmp_path, guard=True)
    pgid = os.getpgid(sleeper)
    try:
        assert alive(sleeper)
        t0 = time.monotonic()
        server.proc.kill()  # no atexit cleanup: only the guardian can end the group now
        server.proc.wait()
        # the command ignores SIGTERM, so it dies from the SIGKILL 3000 ms later
        assert wait_until(lambda: not group_members(pgid), 8.0)
        assert 2.5 <= time.monotonic() - t0 <= 8.0
    finally:
        for pid in group_members(pgid):
            os.kill(pid, signal.SIGKILL)


def test_without_the_guard_a_background_group_outlives_a_killed_host(tmp_path: Path) -> None:
    server, sleeper = _start_background(tmp_path, guard=False)
    pgid = os.getpgid(sleeper)
    try:
        server.proc.kill()
        server.proc.wait()
        time.sleep(1.0)
        assert alive(sleeper)
    finally:
        for pid in group_members(pgid):
            os.kill(pid, signal.SIGKILL)


def test_the_launcher_runs_the_command_only_after_ready(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    argv = guarded_argv(["/bin/sh", "-c", f"touch {marker}"], "mavis-guarded-shell")
    assert argv[:4] == ["/bin/sh", "-c", GUARD_SCRIPT, "mavis-guarded-shell"]
    closed = subprocess.Popen(argv, stdin=subprocess.PIPE)
    assert closed.stdin is not None
    closed.stdin.close()  # no ready line: the launcher exits 125 and the command never starts
    assert closed.wait(5) == 125
    assert not marker.exists()
    ready = subprocess.Popen(argv, stdin=subprocess.PIPE)
    ready.communicate(b"ready\n", timeout=5)
    assert ready.returncode == 0 and marker.exists()


def test_registration_times_out_when_the_guardian_does_not_acknowledge(monkeypatch: pytest.MonkeyPatch) -> None:
    guardian = ParentDeathGuardian()
    guardian._running()  # start it, then stop its acknowledgements from arriving
    monkeypatch.setattr(guardian, "_send", lambda proc, line: True)
    proc = guardian._proc
    assert proc is not None
    t0 = time.monotonic()
    with pytest.raises(ToolError) as err:
        guardian.arm(os.getpid(), timeout_ms=200)
    assert err.value.message == REGISTRATION_TIMED_OUT
    assert 0.15 <= time.monotonic() - t0 < 2.0
    assert proc.wait(5) == 0  # the failed lease was dropped: nothing armed, the guardian is gone
    assert guardian.pid() is None


def test_an_armed_group_is_disarmed_when_its_command_is_over() -> None:
    guardian = ParentDeathGuardian()
    child = subprocess.Popen(["sleep", "30"], start_new_session=True)
    try:
        first = guardian.arm(child.pid)
        second = guardian.arm(child.pid)
        proc = guardian._proc
        assert proc is not None and guardian.pid() == proc.pid
        guardian.disarm(first)
        assert guardian.pid() == proc.pid  # one lease still armed: the guardian stays
        guardian.disarm(second)
        assert guardian.pid() is None
        done = threading.Event()
        threading.Thread(target=lambda: (proc.wait(), done.set()), daemon=True).start()
        assert done.wait(5)  # the last disarm closed the channel: it exited at once
        assert alive(child.pid)  # disarmed: the guardian left the group alone
    finally:
        child.kill()
        child.wait()


def test_the_guardian_acknowledges_well_formed_leases_only_and_ends_what_is_still_armed() -> None:
    """The guardian program itself: malformed lines are ignored; on end-of-file the groups still
    armed get SIGTERM (and SIGKILL after the grace when they ignore it), disarmed ones nothing."""
    # "ready" once TERM is ignored: arming before that would let the SIGTERM end it (a loaded machine)
    kept = subprocess.Popen(["sh", "-c", "trap '' TERM; echo ready; sleep 60"], stdout=subprocess.PIPE,
                            start_new_session=True)
    released = subprocess.Popen(["sleep", "60"], start_new_session=True)
    guardian = subprocess.Popen([GUARD_SHELL, "-c", GUARDIAN_SCRIPT, GUARDIAN_ARGV0_TAG], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, env=GUARDIAN_ENV, start_new_session=True)
    try:
        assert kept.stdout is not None and kept.stdout.readline() == b"ready\n"
        assert guardian.stdin is not None and guardian.stdout is not None
        lines = ["arm XYZ 1", f"arm abc {kept.pid}x", f"arm abc {kept.pid} extra", "hello",
                 f"arm 0a1b {kept.pid}", f"arm 2c3d {released.pid}", "disarm 2c3d"]
        guardian.stdin.write("".join(line + "\n" for line in lines).encode())
        guardian.stdin.close()
        t0 = time.monotonic()
        out = guardian.stdout.read().decode()
        assert guardian.wait(10) == 0
        assert out == "ack 0a1b\nack 2c3d\n"
        assert kept.wait(30) == -signal.SIGKILL  # TERM ignored: killed after the grace period
        assert 2.9 <= time.monotonic() - t0 < 30
        assert alive(released.pid)  # disarmed before the end: left alone
    finally:
        for proc in (kept, released, guardian):
            if proc.poll() is None:
                proc.kill()
            proc.wait()
        if kept.stdout is not None:
            kept.stdout.close()
