"""The Windows kill path on a POSIX host (spec patch.bash.win-taskkill, spec bash.6): with
``Profile.taskkill_standin_root`` a timeout or abort ends the tree through a stand-in taskkill,
resolved exactly as on Windows (the hardened ``<SystemRoot>\\System32\\taskkill.exe``, else a bare
``taskkill`` on PATH), with the hardening's fallback to killing the root process alone."""

from __future__ import annotations

import os
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.support.processes import alive, group_members, proc_available, read_pid, wait_until
from tools_impl.bash.engine import PROCESSES, run_command, standin_path
from tools_impl.core.errors import ToolAborted, ToolError
from tools_impl.core.profile import REFERENCE, UPSTREAM_PI, Profile

pytestmark = pytest.mark.skipif(sys.platform == "win32" or not proc_available(),
                                reason="POSIX process groups and /proc needed")

# Logs its arguments (pid masked) next to itself, then signals the group: /F is KILL, else TERM.
STANDIN = """#!/bin/sh
sig=TERM pid= prev=
for arg in "$@"; do
  [ "$prev" = /PID ] && pid=$arg
  [ "$arg" = /F ] && sig=KILL
  prev=$arg
done
printf '%s\\n' "$*" | sed 's/[0-9][0-9]*$/<pid>/' >> "${0%/*}/taskkill.log"
kill -s "$sig" -- "-$pid"
"""
ENV_C = {**os.environ, "SystemRoot": "C:\\Windows"}


def _install(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(STANDIN)
    path.chmod(0o755)
    return path.parent / "taskkill.log"


def _profile(root: Path, *, hardened: bool = True, graceful: bool = False, grace_ms: int = 3000) -> Profile:
    return REFERENCE.replace(taskkill_standin_root=str(root), bash_term_grace_ms=grace_ms).with_patches(
        {"bash.win-taskkill": hardened, "bash.graceful-kill": graceful})


def _timed_out(command: str, cwd: Path, profile: Profile, env: dict[str, str], timeout: float = 0.5,
               pids: list[int] | None = None) -> tuple[str, float]:
    start = time.monotonic()
    with pytest.raises(ToolError) as info:
        run_command(command, cwd=str(cwd), env=env, profile=profile, timeout=timeout, abort=threading.Event(),
                    on_spawn=(pids.append if pids is not None else None))
    return info.value.message, time.monotonic() - start


# -- the path mapping -------------------------------------------------------------------------

def test_standin_path_maps_windows_paths_under_the_root_and_leaves_bare_names() -> None:
    assert standin_path("C:\\Windows\\System32\\taskkill.exe", "/r") == "/r/C/Windows/System32/taskkill.exe"
    assert standin_path("D:\\W\\\\System32\\taskkill.exe", "/r") == "/r/D/W/System32/taskkill.exe"
    assert standin_path("\\\\host\\share\\taskkill.exe", "/r") == "/r/host/share/taskkill.exe"
    assert standin_path("Windows\\System32\\taskkill.exe", "/r") == "/r/Windows/System32/taskkill.exe"
    assert standin_path("taskkill", "/r") == "taskkill"


# -- patch on: SystemRoot's System32\taskkill.exe ----------------------------------------------

def test_hardened_timeout_kills_the_tree_through_system_roots_taskkill(tmp_path: Path) -> None:
    root = tmp_path / "win"
    log = _install(root / "C" / "Windows" / "System32" / "taskkill.exe")
    pids: list[int] = []
    message, took = _timed_out("sleep 30 & sleep 30; echo finished", tmp_path, _profile(root), ENV_C, pids=pids)
    assert message == "Command timed out after 0.5 seconds"
    assert took < 10  # killed at the timeout, not after 30 s (generous under load)
    assert log.read_text() == "/F /T /PID <pid>\n"
    assert wait_until(lambda: not group_members(pids[0]), 5)  # the whole tree, background child too


def test_windir_is_used_when_system_root_is_unset(tmp_path: Path) -> None:
    root = tmp_path / "win"
    log = _install(root / "D" / "W" / "System32" / "taskkill.exe")
    env = {k: v for k, v in os.environ.items() if k.lower() not in ("systemroot", "windir")}
    message, _ = _timed_out("sleep 30", tmp_path, _profile(root), {**env, "windir": "D:\\W\\"})
    assert message == "Command timed out after 0.5 seconds"
    assert log.read_text() == "/F /T /PID <pid>\n"


def test_graceful_windows_sequence_asks_first_then_forces_after_the_grace(tmp_path: Path) -> None:
    root = tmp_path / "win"
    log = _install(root / "C" / "Windows" / "System32" / "taskkill.exe")
    pids: list[int] = []
    # the command ignores the polite request (taskkill without /F: SIGTERM here)
    message, took = _timed_out("trap '' TERM; sleep 30", tmp_path, _profile(root, graceful=True, grace_ms=300),
                               ENV_C, pids=pids)
    assert message == "Command timed out after 0.5 seconds"
    assert took < 10
    assert log.read_text() == "/T /PID <pid>\n/F /T /PID <pid>\n"
    assert wait_until(lambda: pids[0] not in PROCESSES.pids(), 5)  # untracked once the escalation ran


def test_abort_takes_the_same_taskkill_path(tmp_path: Path) -> None:
    root = tmp_path / "win"
    log = _install(root / "C" / "Windows" / "System32" / "taskkill.exe")
    abort = threading.Event()
    threading.Timer(0.3, abort.set).start()
    with pytest.raises(ToolAborted) as info:
        run_command("sleep 30", cwd=str(tmp_path), env=ENV_C, profile=_profile(root), timeout=None, abort=abort)
    assert info.value.message == "Command aborted"
    assert log.read_text() == "/F /T /PID <pid>\n"


def test_failed_hardened_spawn_falls_back_to_killing_the_root_process_only(tmp_path: Path) -> None:
    marker = tmp_path / "child.pid"
    pids: list[int] = []
    # no stand-in under the root: the spawn of <root>/C/Windows/System32/taskkill.exe fails
    message, took = _timed_out(f"(echo $BASHPID > {marker}; exec sleep 30); echo finished", tmp_path,
                               _profile(tmp_path / "win"), ENV_C, pids=pids)
    assert message == "Command timed out after 0.5 seconds"
    assert took < 10
    child = read_pid(str(marker))
    try:
        assert not alive(pids[0]) and alive(child)  # the root only: its child lives on
    finally:
        os.kill(child, 9)


# -- patch off: a bare taskkill from PATH ------------------------------------------------------

def test_unhardened_bare_taskkill_missing_from_path_lets_the_command_run_to_its_end(tmp_path: Path) -> None:
    root = tmp_path / "win"
    log = _install(root / "C" / "Windows" / "System32" / "taskkill.exe")
    message, took = _timed_out("sleep 1.5; echo finished", tmp_path, _profile(root, hardened=False), ENV_C)
    assert message == "finished\n\n\nCommand timed out after 0.5 seconds"
    assert took >= 1.4
    assert not log.exists()


def test_unhardened_bare_taskkill_found_on_path_is_used(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    log = _install(bin_dir / "taskkill")
    env = {**ENV_C, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
    message, took = _timed_out("sleep 30", tmp_path, _profile(tmp_path / "win", hardened=False), env)
    assert message == "Command timed out after 0.5 seconds"
    assert took < 10
    assert log.read_text() == "/F /T /PID <pid>\n"


def test_upstream_emulation_takes_the_unhardened_path(tmp_path: Path) -> None:
    root = tmp_path / "win"
    log = _install(root / "C" / "Windows" / "System32" / "taskkill.exe")
    profile = UPSTREAM_PI.replace(taskkill_standin_root=str(root))
    message, took = _timed_out("sleep 1.5; echo finished", tmp_path, profile, ENV_C)
    assert message == "finished\n\n\nCommand timed out after 0.5 seconds"
    assert took >= 1.4 and not log.exists()


def test_without_the_knob_the_posix_kill_sequence_is_used(tmp_path: Path) -> None:
    log = _install(tmp_path / "win" / "C" / "Windows" / "System32" / "taskkill.exe")
    message, took = _timed_out("sleep 30", tmp_path, REFERENCE.with_patches({"bash.graceful-kill": False}), ENV_C)
    assert message == "Command timed out after 0.5 seconds"
    assert took < 10 and not log.exists()
