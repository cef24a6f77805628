"""The bash engine with real processes (spec bash.5–9): outcomes and exact texts, the kill
sequence, process groups, completion with lingering descendants, decoding, emergency cleanup."""

from __future__ import annotations

import os
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.support.processes import alive, group_members, proc_available, read_pid, wait_until
from tools_impl.bash import engine
from tools_impl.bash.engine import (
    PROCESSES,
    EngineResult,
    run_command,
    taskkill_argv,
    timeout_armed,
    timer_delay_ms,
)
from tools_impl.core.errors import ToolAborted, ToolError
from tools_impl.core.profile import REFERENCE, Profile

pytestmark = pytest.mark.skipif(sys.platform == "win32" or not proc_available(),
                                reason="POSIX process groups and /proc needed")

UPSTREAM_KILL = REFERENCE.with_patches({"bash.graceful-kill": False})


def run(command: str, cwd: Path, *, timeout: float | None = None, profile: Profile = REFERENCE,
        abort: threading.Event | None = None, pids: list[int] | None = None,
        env: dict[str, str] | None = None) -> EngineResult:
    return run_command(command, cwd=str(cwd), env=dict(os.environ if env is None else env), profile=profile,
                       timeout=timeout, abort=abort or threading.Event(),
                       on_spawn=(pids.append if pids is not None else None))


def error_of(command: str, cwd: Path, **kw: object) -> ToolError:
    with pytest.raises(ToolError) as info:
        run(command, cwd, **kw)  # type: ignore[arg-type]
    return info.value


# -- exact texts ----------------------------------------------------------------------------

def test_nonzero_exit_after_output_raises_output_blank_line_status(tmp_path: Path) -> None:
    err = error_of("printf 'done\\n'; exit 5", tmp_path)
    assert err.message == "done\n\n\nCommand exited with code 5"
    assert getattr(err, "exit_code", None) == 5


def test_bare_nonzero_exit_raises_no_output_status(tmp_path: Path) -> None:
    assert error_of("exit 5", tmp_path).message == "(no output)\n\nCommand exited with code 5"


def test_timeout_message_uses_javascript_number_format(tmp_path: Path) -> None:
    start = time.monotonic()
    err = error_of("sleep 9", tmp_path, timeout=0.25)
    assert err.message == "Command timed out after 0.25 seconds"
    assert not isinstance(err, ToolAborted)
    assert time.monotonic() - start < 8  # killed at the timeout, not after sleep's 9 s (generous under load)


def test_true_returns_no_output(tmp_path: Path) -> None:
    res = run("true", tmp_path)
    assert res.text == "(no output)"
    assert res.exit_code == 0


def test_shell_killed_by_signal_counts_as_success(tmp_path: Path) -> None:
    res = run("echo before; kill -9 $$", tmp_path)
    assert res.text == "before\n"
    assert res.exit_code is None


def test_stdin_is_at_eof_so_cat_returns_immediately(tmp_path: Path) -> None:
    start = time.monotonic()
    assert run("cat; echo after", tmp_path, timeout=5).text == "after\n"
    assert time.monotonic() - start < 4.5  # well below the 5 s timeout: cat did not wait for input


def test_stdout_and_stderr_share_one_output(tmp_path: Path) -> None:
    assert run("echo out; echo err >&2", tmp_path).text in ("out\nerr\n", "err\nout\n")


def test_command_runs_in_given_cwd_with_given_env(tmp_path: Path) -> None:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "ONLY_ME": "yes"}
    res = run('pwd; echo "$ONLY_ME"', tmp_path, env=env)
    assert res.text == f"{tmp_path}\nyes\n"


def test_missing_cwd_message_reference_and_upstream(tmp_path: Path) -> None:
    missing = tmp_path / "nope"
    assert error_of("true", missing).message == f"Working directory does not exist: {missing}\nCannot execute commands."
    upstream = REFERENCE.with_patches({"shell.windows-powershell": False})
    assert (error_of("true", missing, profile=upstream).message
            == f"Working directory does not exist: {missing}\nCannot execute bash commands.")


def test_spawn_failure_uses_node_message(tmp_path: Path) -> None:
    shell = tmp_path / "notexec"
    shell.write_text("x")
    shell.chmod(0o644)
    err = error_of("true", tmp_path, profile=REFERENCE.replace(shell_path=str(shell)))
    assert err.message == f"spawn {shell} EACCES"


def test_already_aborted_signal_raises_command_aborted_without_spawning(tmp_path: Path) -> None:
    abort = threading.Event()
    abort.set()
    marker = tmp_path / "ran"
    with pytest.raises(ToolAborted) as info:
        run(f"touch {marker}", tmp_path, abort=abort)
    assert info.value.message == "Command aborted"
    assert not marker.exists()


def test_abort_raises_output_then_command_aborted(tmp_path: Path) -> None:
    abort = threading.Event()
    marker = tmp_path / "started"  # abort once "started" was printed (a fixed delay races under load)

    def abort_once_started() -> None:
        wait_until(marker.exists, 30)
        abort.set()

    threading.Thread(target=abort_once_started, daemon=True).start()
    with pytest.raises(ToolAborted) as info:
        run(f"echo started; touch {marker}; sleep 30", tmp_path, abort=abort)
    assert info.value.message == "started\n\n\nCommand aborted"


# -- decoding -------------------------------------------------------------------------------

def test_multibyte_character_split_across_writes_decodes(tmp_path: Path) -> None:
    res = run("printf '\\342'; sleep 0.1; printf '\\202\\254\\n'", tmp_path)
    assert res.text == "€\n"


def test_interleaved_partial_characters_on_two_streams_decode_with_separate_decoders(tmp_path: Path) -> None:
    cmd = "printf '\\342' >&2; sleep 0.05; printf '\\342'; sleep 0.05; printf '\\202\\254' >&2; sleep 0.05; printf '\\202\\254'"
    assert run(cmd, tmp_path).text == "€€"
    shared = REFERENCE.with_patches({"bash.parent-death-guard": False})
    assert "\ufffd" in run(cmd, tmp_path, profile=shared).text


def test_output_that_ends_inside_a_character_ends_in_a_replacement_character(tmp_path: Path) -> None:
    """Node's decoder flushes an incomplete last sequence as U+FFFD on both decoders, also when
    it is the whole output (a lone 0xEF could have been a BOM until the stream ended)."""
    for profile in (REFERENCE, REFERENCE.with_patches({"bash.parent-death-guard": False})):
        assert run("printf '\\357'", tmp_path, profile=profile).text == "\ufffd"
        assert run("printf 'ok\\342\\202'", tmp_path, profile=profile).text == "ok\ufffd"
        assert run("printf '\\360\\237' >&2", tmp_path, profile=profile).text == "\ufffd"


def test_a_flushed_character_past_the_byte_limit_gets_a_full_output_file(tmp_path: Path) -> None:
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    small = REFERENCE.replace(engine_max_bytes=10)
    res = run("printf '123456789\\342'", tmp_path, env=env, profile=small)
    assert res.details is not None
    path = res.details["fullOutputPath"]
    assert path is not None and res.text.endswith(f"Full output: {path}]")
    assert Path(path).read_bytes() == b"123456789\xe2"


# -- truncation through the engine ------------------------------------------------------------

def test_2500_lines_show_last_2000_with_full_output_file(tmp_path: Path) -> None:
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    res = run("seq 1 2500", tmp_path, env=env)
    assert res.details is not None
    path = res.details["fullOutputPath"]
    assert path.startswith(f"{tmp_path}/pi-bash-") and path.endswith(".log")
    assert res.text.startswith("501\n")
    assert res.text.endswith(f"2500\n\n[Showing lines 501-2500 of 2500. Full output: {path}]")
    assert Path(path).read_bytes() == "".join(f"{i}\n" for i in range(1, 2501)).encode()


def test_single_60kb_line_shows_last_line_partial_notice(tmp_path: Path) -> None:
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    res = run("head -c 60000 /dev/zero | tr '\\0' 'a'", tmp_path, env=env)
    assert res.details is not None
    path = res.details["fullOutputPath"]
    assert res.text == "a" * 51200 + f"\n\n[Showing last 50.0KB of line 1 (line is 58.6KB). Full output: {path}]"


def test_exec_facts_patch_adds_process_output_on_success(tmp_path: Path) -> None:
    res = run("echo out; echo err >&2", tmp_path)
    assert res.details is not None
    facts = res.details["processOutput"]
    assert facts["stdout"] == "out\n" and facts["stderr"] == "err\n" and facts["exitCode"] == 0
    off = REFERENCE.with_patches({"engine.exec-facts": False})
    assert run("echo out", tmp_path, profile=off).details is None


def test_output_already_in_the_pipes_at_the_exit_grace_is_not_lost(tmp_path: Path) -> None:
    """bash.7/bash.8: totals cover the whole stream. With a zero exit grace and a grandchild holding the
    pipes (no EOF), the last chunks the shell wrote before exiting are still in the pipe when the
    exit is seen; they must be taken, not dropped."""
    ws = tmp_path / "ws"
    ws.mkdir()
    home = tmp_path / "home"
    (home / "tmp").mkdir(parents=True)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "LANG": "C.UTF-8",
           "TMPDIR": str(home / "tmp")}
    prof = REFERENCE.replace(bash_exit_stdio_grace_ms=0)
    for _ in range(3):
        res = run_command("sleep 2 & head -c 300000 /dev/zero | tr '\\0' a", cwd=str(ws),
                          env=env, profile=prof, timeout=None, abort=threading.Event())
        assert res.details is not None and res.details["truncation"]["totalBytes"] == 300000


# -- kill sequence --------------------------------------------------------------------------

@pytest.mark.slow
def test_timeout_runs_term_trap_before_status(tmp_path: Path) -> None:
    pids: list[int] = []
    err = error_of("trap 'echo cleanup' TERM; sleep 60", tmp_path, timeout=1, pids=pids)
    assert "cleanup\n" in err.message
    assert err.message.endswith("cleanup\n\n\nCommand timed out after 1 seconds")
    assert err.message.index("cleanup") < err.message.index("Command timed out")
    assert wait_until(lambda: group_members(pids[0]) == [], 10.0)


@pytest.mark.slow
def test_term_ignoring_command_is_killed_after_grace_period(tmp_path: Path) -> None:
    start = time.monotonic()
    pids: list[int] = []
    err = error_of("trap '' TERM; sleep 60", tmp_path, timeout=1, pids=pids)
    elapsed = time.monotonic() - start
    assert err.message == "Command timed out after 1 seconds"
    assert 3.7 <= elapsed < 20.0  # the lower bound is the point: SIGKILL only after the 3 s grace
    assert wait_until(lambda: group_members(pids[0]) == [], 10.0)


@pytest.mark.slow
def test_background_child_in_group_dies_with_the_timeout(tmp_path: Path) -> None:
    pidfile = tmp_path / "child.pid"
    pids: list[int] = []
    error_of(f"sleep 60 & echo $! > {pidfile}; wait", tmp_path, timeout=1, pids=pids)
    child = read_pid(str(pidfile))
    assert wait_until(lambda: not alive(child), 10.0)
    assert group_members(pids[0]) == []


@pytest.mark.slow
def test_term_ignoring_child_of_promptly_exiting_shell_is_still_sigkilled(tmp_path: Path) -> None:
    pidfile = tmp_path / "child.pid"
    start = time.monotonic()
    err = error_of(f"(trap '' TERM; exec sleep 60) & echo $! > {pidfile}; sleep 60", tmp_path, timeout=1)
    returned = time.monotonic() - start
    child = read_pid(str(pidfile))
    assert err.message == "Command timed out after 1 seconds"
    # The shell exited on TERM; the child holding the pipes does not block: the call returns (and
    # the child is still alive) well before the SIGKILL escalation at 1 s + 3 s grace.
    assert returned < 3.5
    assert alive(child)  # SIGTERM is ignored by it ...
    assert wait_until(lambda: not alive(child), 15.0)  # ... until the SIGKILL escalation
    assert time.monotonic() - start >= 3.5


def test_upstream_kill_is_immediate_sigkill_without_cleanup(tmp_path: Path) -> None:
    start = time.monotonic()
    pids: list[int] = []
    err = error_of("trap 'echo cleanup' TERM; sleep 60", tmp_path, timeout=0.5, profile=UPSTREAM_KILL, pids=pids)
    assert err.message == "Command timed out after 0.5 seconds"
    assert time.monotonic() - start < 3.4  # immediate kill: no 3 s grace after the 0.5 s timeout
    assert wait_until(lambda: group_members(pids[0]) == [], 10.0)


def test_finished_call_leaves_no_process_in_its_group(tmp_path: Path) -> None:
    pids: list[int] = []
    run("sleep 0.1 | cat; echo done", tmp_path, pids=pids)
    assert group_members(pids[0]) == []
    assert pids[0] not in PROCESSES.pids()


def test_lingering_grandchild_does_not_block_and_is_not_killed(tmp_path: Path) -> None:
    pidfile = tmp_path / "bg.pid"
    start = time.monotonic()
    res = run(f"sleep 30 & echo $! > {pidfile}; echo started", tmp_path)
    assert res.text == "started\n"
    assert time.monotonic() - start < 15  # not blocked by the 30 s grandchild
    bg = read_pid(str(pidfile))
    try:
        assert alive(bg)
    finally:
        os.kill(bg, 9)


def test_emergency_cleanup_sigkills_tracked_groups(tmp_path: Path) -> None:
    pids: list[int] = []
    results: list[object] = []

    def target() -> None:
        try:
            results.append(run("trap '' TERM; sleep 60", tmp_path, pids=pids))
        except ToolError as exc:
            results.append(exc)

    t = threading.Thread(target=target)
    t.start()
    assert wait_until(lambda: bool(pids), 5)
    assert pids[0] in PROCESSES.pids()
    PROCESSES.kill_all()
    t.join(5)
    assert not t.is_alive()
    res = results[0]
    assert isinstance(res, EngineResult) and res.text == "(no output)" and res.exit_code is None


# -- waiting for the exit -------------------------------------------------------------------

pidfd_needed = pytest.mark.skipif(engine._open_pidfd(os.getpid()) is None, reason="no pidfd on this kernel")


@pidfd_needed
def test_the_shells_exit_wakes_the_reader_while_a_grandchild_holds_the_pipes(tmp_path: Path) -> None:
    """With a pidfd the reader's wait ends at the exit itself, not when a pipe next has news."""
    pidfile = tmp_path / "bg.pid"
    proc, fds = engine._spawn(["/bin/sh", "-c", f"sleep 60 & echo $! > {pidfile}; exit 3"], str(tmp_path),
                              dict(os.environ), None)
    assert fds is not None
    reader = engine._PosixReader(proc, fds)
    try:
        bg = read_pid(str(pidfile))
        start = time.monotonic()
        assert reader.read(20.0) == []  # nothing is written to the pipes: only the exit can end the wait
        assert time.monotonic() - start < 20  # woken by the exit, not by the 20 s wait running out
        assert reader.may_have_exited
        assert proc.poll() == 3
        assert reader.open_streams == 2  # the grandchild still holds both pipes
        assert alive(bg)
    finally:
        reader.close()
        os.killpg(proc.pid, 9)
        proc.wait()


@pidfd_needed
def test_a_run_leaves_no_descriptor_open(tmp_path: Path) -> None:
    """The pipes' read ends, the pidfd and the waiter are closed on success, failure and spawn errors."""
    before = set(os.listdir("/proc/self/fd"))
    run("true", tmp_path)
    run("sleep 0.05 | cat; echo done", tmp_path)
    error_of("exit 4", tmp_path)
    error_of("sleep 5", tmp_path, timeout=0.2)
    with pytest.raises(ToolError):
        run("true", tmp_path / "missing")
    with pytest.raises(ToolError):
        run_command("true", cwd=str(tmp_path), env=dict(os.environ), profile=REFERENCE.replace(shell_path=str(tmp_path)),
                    timeout=None, abort=threading.Event())
    assert set(os.listdir("/proc/self/fd")) <= before


def test_without_pidfds_the_exit_is_still_collected(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Kernels and platforms without pidfds (macOS, Linux before 5.3) wait on the exit status instead."""
    monkeypatch.setattr(engine, "_open_pidfd", lambda _pid: None)
    assert run("true", tmp_path).text == "(no output)"
    assert run("printf 'a\\n'; printf 'b\\n'", tmp_path).text == "a\nb\n"
    assert error_of("exit 7", tmp_path).message == "(no output)\n\nCommand exited with code 7"
    pidfile = tmp_path / "bg.pid"
    res = run(f"sleep 30 & echo $! > {pidfile}; echo started", tmp_path)
    assert res.text == "started\n"
    os.kill(read_pid(str(pidfile)), 9)


# -- pure parts -----------------------------------------------------------------------------

def test_timer_is_armed_only_for_positive_timeouts() -> None:
    assert not timeout_armed(None)
    assert not timeout_armed(0)
    assert not timeout_armed(-1)
    assert not timeout_armed(float("nan"))
    assert timeout_armed(0.25)


def test_timer_delay_overflow_fires_after_one_millisecond() -> None:
    assert timer_delay_ms(2) == 2000
    assert timer_delay_ms(2_147_483.647) == pytest.approx(2_147_483_647)
    assert timer_delay_ms(3_000_000) == 1


def test_taskkill_argv_resolution() -> None:
    env = {"SystemRoot": "C:\\Windows"}
    hardened = engine.TASKKILL.of(REFERENCE).executable
    bare = engine.TASKKILL.of(REFERENCE.with_patches({"bash.win-taskkill": False})).executable
    assert taskkill_argv(42, force=False, exe=hardened(env)) == [
        "C:\\Windows\\System32\\taskkill.exe", "/T", "/PID", "42"]
    assert taskkill_argv(42, force=True, exe=bare(env)) == ["taskkill", "/F", "/T", "/PID", "42"]
    assert hardened({"windir": "D:\\W\\"}) == "D:\\W\\System32\\taskkill.exe"
    assert hardened({}) == "taskkill"


def test_pwsh_type_shell_gets_powershell_arguments(tmp_path: Path) -> None:
    fake = tmp_path / "pwsh"
    fake.write_text('#!/bin/sh\nprintf "%s|" "$@"\n')
    fake.chmod(0o755)
    res = run("Write-Output hi", tmp_path, profile=REFERENCE.replace(shell_path=str(fake)))
    assert res.text == "-NoProfile|-NonInteractive|-Command|Write-Output hi|"


def test_streaming_updates_start_empty_and_are_throttled(tmp_path: Path) -> None:
    updates: list[EngineResult] = []
    start = time.monotonic()
    res = run_command("for i in 1 2 3 4 5 6; do echo $i; sleep 0.05; done", cwd=str(tmp_path),
                      env=dict(os.environ), profile=REFERENCE, timeout=None, abort=threading.Event(),
                      on_update=updates.append)
    assert res.text == "1\n2\n3\n4\n5\n6\n"
    assert updates[0].text == ""
    texts = [u.text for u in updates[1:]]
    assert texts and all(t and res.text.startswith(t) for t in texts)
    # At most one update per 100 ms (the first one 100 ms after the start at the earliest); bounded by
    # the measured run time, because a loaded machine stretches the 6 x 50 ms of output.
    elapsed = time.monotonic() - start
    assert 1 <= len(texts) <= max(1, int(elapsed / 0.1))
    assert texts == sorted(texts, key=len)


def test_a_raising_process_observer_never_affects_the_command(tmp_path: Path) -> None:
    seen: list[str] = []

    def observer(event: dict[str, object]) -> None:
        seen.append(str(event["event"]))
        raise RuntimeError("observer bug")

    res = run_command("echo ok", cwd=str(tmp_path), env=dict(os.environ), profile=REFERENCE, timeout=None,
                      abort=threading.Event(), observer=observer)
    assert res.text == "ok\n"
    assert seen == ["spawned", "command_dispatched"]


def test_the_process_observer_is_silent_without_its_patch(tmp_path: Path) -> None:
    seen: list[dict[str, object]] = []
    run_command("echo ok", cwd=str(tmp_path), env=dict(os.environ),
                profile=REFERENCE.with_patches({"bash.process-events": False}), timeout=None,
                abort=threading.Event(), observer=seen.append)
    assert seen == []
