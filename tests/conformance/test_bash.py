"""Black-box conformance of the ``bash`` tool against the spec's common rules, the head+tail cap
of its output (limits.2), bash.*, the bash ``patch.*`` toggles and versions.

Every expected value below is derived from the spec text alone (its templates, constants and own
examples), not from the implementation. The tool is driven the way an outside test would: through
``execute(args, ctx)`` with ``tools_impl.core.context.make_context`` (or a session with a pinned
environment, so that the caller's own variables cannot change ``envSanitized``), and for a
representative subset through ``python -m tools_impl.server`` over real pipes.

Checks of pure functions (truncation against the models in ``tests.support.spec_models``, timeout
clamps, shell selection, PowerShell launchers, the sanitiser, Claude Code classification) live
beside their modules' tests under ``tests/tools_impl/``.
"""

from __future__ import annotations

import json
import os
import re
import signal
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.repo import REPO
from tests.support.spec_models import KIB24, spec_head_tail, utf8
from tools_impl.bash import tasks
from tools_impl.bash import tool as bash
from tools_impl.core.context import ToolContext, WorkspaceState
from tools_impl.core.errors import ToolAborted, ToolError
from tools_impl.core.profile import REFERENCE, UPSTREAM_PI, Profile
from tools_impl.protocol.messages import REQUESTS_BY_OP, TaskOutputRequest

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX bash conformance")


TASK_ID_RE = r"[A-Za-z0-9_-]+"
FULL_PATH_RE = r"(/[^\]\n]*/pi-bash-[0-9a-f]{16}\.log)"

# Spec spec bash.tasks.4, verbatim.
BACKGROUND_TAIL = (" The owning conversation will automatically resume when it finishes; use "
                   "task_query/task_output to inspect incremental output and task_stop to cancel it.\n"
                   "</bash_background>")
LEAD_STARTED = "Started local background bash task."
LEAD_PROMOTED = ("The command is still running and was yielded to a managed background task without "
                 "restarting it.")

# Spec spec bash.env.1, verbatim.
SCRUB_24 = [
    "MCODE_PROVIDER_API_KEY", "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN",
    "ANTHROPIC_FOUNDRY_API_KEY", "ANTHROPIC_CUSTOM_HEADERS", "OPENAI_API_KEY", "OTEL_EXPORTER_OTLP_HEADERS",
    "OTEL_EXPORTER_OTLP_LOGS_HEADERS", "OTEL_EXPORTER_OTLP_METRICS_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
    "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_BEARER_TOKEN_BEDROCK", "GOOGLE_APPLICATION_CREDENTIALS",
    "AZURE_CLIENT_SECRET", "AZURE_CLIENT_CERTIFICATE_PATH", "ACTIONS_ID_TOKEN_REQUEST_TOKEN",
    "ACTIONS_ID_TOKEN_REQUEST_URL", "ACTIONS_RUNTIME_TOKEN", "ACTIONS_RUNTIME_URL", "FIGMA_API_TOKEN",
    "FIGMA_TOKEN", "E2E_AUTH_TOKEN",
]
MANAGED_RUNTIME_KEYS = ["MAVIS_ACCESS_TOKEN", "MAVIS_REGION", "MAVIS_BUILD_ENV", "__MAVIS_DISABLE_SAFETY",
                        "MAVIS_SQLITE3_MODULE_PATH", "ELECTRON_RUN_AS_NODE"]
LEGACY_RUNTIME_ENV_KEYS = [
    "__MAVIS_RUNTIME_PORT", "__MAVIS_RUNTIME_DATA_DIR", "__MAVIS_RUNTIME_PROFILE",
    "__MAVIS_RUNTIME_DISABLE_GIT_AUTO_CONFIG", "__MAVIS_RUNTIME_SKIP_PID_PORT", "__MAVIS_RUNTIME_MANAGED",
    "__MAVIS_RUNTIME_AGENT_NAME", "__MAVIS_RUNTIME_SESSION_ID", "__MAVIS_RUNTIME_DAEMON_URL", "MAVIS_PORT",
    "MINIMAX_DATA_DIR", "MAVIS_DATA_DIR", "MAVIS_PROFILE", "MAVIS_SKIP_PID_PORT", "MAVIS_MANAGED_RUNTIME",
    "AGENTARCHON_PORT", "AGENTARCHON_DATA_DIR", "AGENTARCHON_PROFILE",
]
PARENT_HINT_KEYS = [
    "__MAVIS_PARENT_DAEMON_URL", "__MAVIS_PARENT_DATA_DIR", "__MAVIS_PARENT_SESSION_ID",
    "__MAVIS_PARENT_AGENT_NAME", "__MAVIS_PARENT_MANAGED", "__MAVIS_PARENT_ACCESS_TOKEN",
    "__MAVIS_PARENT_REAL_USER_ID", "__MAVIS_PARENT_USER_EMAIL", "__MAVIS_PARENT_USER_NAME",
    "__MAVIS_PARENT_SUB_USER_NAME", "__MAVIS_PARENT_AUTH_SECRET",
]
ASR_KEYS = ["ASR_PROXY_JWT_SECRET", "ASR_PROXY_TOKEN", "ASR_TENANT_ID"]

DIRECT = REFERENCE.replace(can_consume_background_output=False)  # no task_output: direct foreground


# ---------------------------------------------------------------- helpers


def task_op(ctx: ToolContext, op: str, fields: dict[str, Any]) -> dict[str, Any]:
    """One task protocol op as the server runs it: fields parsed into the message, result as JSON."""
    run = {"task_output": tasks.task_output, "task_stop": tasks.task_stop, "task_query": tasks.task_query}[op]
    result = run(ctx.workspace, REQUESTS_BY_OP[op].from_fields(fields)).to_json()  # type: ignore[operator]
    assert isinstance(result, dict)
    return result


def clean_env(home: Path, **extra: str) -> dict[str, str]:
    """A pinned tool environment: nothing of the caller's leaks into envSanitized."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "LANG": "C.UTF-8",
           "TMPDIR": str(home / "tmp")}
    (home / "tmp").mkdir(parents=True, exist_ok=True)
    env.update(extra)
    return env


def pinned(root: Path, profile: Profile = REFERENCE, **extra: str) -> ToolContext:
    home = root.parent / f"{root.name}-home"
    return ToolContext(WorkspaceState(root=str(root), env=clean_env(home, **extra), profile=profile))


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


def outcome(args: dict[str, Any], ctx: ToolContext) -> tuple[str, str, dict[str, Any], bool]:
    """('result', text, details, is_error) or ('raised', message, {}, True)."""
    try:
        res = bash.execute(args, ctx)
    except ToolError as exc:
        return "raised", exc.message, {}, True
    return "result", res.text, dict(res.details or {}), res.is_error


def run_text(args: dict[str, Any], ctx: ToolContext) -> str:
    _kind, text, _, _ = outcome(args, ctx)
    return text


def wait_for(cond: Callable[[], bool], timeout_s: float = 30.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(0.02)
    return cond()


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is dead for our purposes.
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return True


# ---------------------------------------------------------------- expected cap notices (spec limits.2)


def cap_notice_no_path(original: int) -> str:
    return (f"[desktop bash output truncated: original_bytes={original}; head+tail shown; boundary lines may be "
            "UTF-8 byte-truncated; rerun with a narrower command or redirect output to a file and use read.]")


def cap_notice_with_path(original: int, path: str) -> str:
    return (f"[desktop bash output truncated: original_bytes={original}; head+tail shown; boundary lines may be "
            f"UTF-8 byte-truncated; Full output: {path}]")


# ---------------------------------------------------------------- spec bash.3 dispatch


def test_abort_already_set_raises_operation_aborted(ws: Path) -> None:
    ctx = pinned(ws)
    ctx.abort.set()
    with pytest.raises(ToolAborted) as exc:
        bash.execute({"command": "echo never"}, ctx)
    assert str(exc.value) == "Operation aborted"


def test_background_without_task_output_returns_the_exact_bash_error(ws: Path) -> None:
    ctx = pinned(ws, DIRECT)
    assert outcome({"command": "echo hi", "run_in_background": True}, ctx) == (
        "result",
        "<bash_error>Background Bash requires native task_output. This Turn is missing task_output, so "
        "asynchronous Bash cannot be executed. Run the command in the foreground instead.</bash_error>",
        {"status": "background_output_unavailable", "error_code": "BASH_BACKGROUND_OUTPUT_UNAVAILABLE"},
        True,
    )


def test_explicit_background_returns_the_started_text_and_details(ws: Path) -> None:
    ctx = pinned(ws)
    kind, text, details, is_error = outcome({"command": "echo bg-out", "run_in_background": True}, ctx)
    assert (kind, is_error) == ("result", False)
    m = re.fullmatch(f'<bash_background task_id="({TASK_ID_RE})">\n' + re.escape(LEAD_STARTED + BACKGROUND_TAIL),
                     text)
    assert m is not None, text
    assert details == {"status": "started", "task_id": m.group(1)}
    out = tasks.task_output(ctx.workspace, TaskOutputRequest(m.group(1), block=True, timeout_ms=30000)).to_json()
    assert (out["status"], out["output"], out["done"], out["exit_code"]) == ("succeeded", "bg-out\n", True, 0)


def test_explicit_background_keeps_the_timeout_untouched_and_sizes_the_watchdog(ws: Path) -> None:
    ctx = pinned(ws)
    _, _, no_timeout, _ = outcome({"command": "true", "run_in_background": True}, ctx)
    _, _, long_timeout, _ = outcome({"command": "true", "run_in_background": True, "timeout": 4000}, ctx)
    meta_none = task_op(ctx, "task_query", {"task_id": no_timeout["task_id"]})["metadata"]
    meta_long = task_op(ctx, "task_query", {"task_id": long_timeout["task_id"]})["metadata"]
    assert "timeoutSeconds" not in meta_none
    assert (meta_none["maxRunMs"], meta_none["executionMode"], meta_none["command"]) == (
        1_800_000, "explicit_background", "true")
    # No 300 s clamp on explicit background; the watchdog is the larger of 30 min and the timeout.
    assert (meta_long["timeoutSeconds"], meta_long["maxRunMs"]) == (4000, 4_000_000)


def test_explicit_background_has_no_default_command_timeout(ws: Path) -> None:
    # The 120 s default does not apply: only the watchdog bounds it (shrunk here to observe it).
    ctx = pinned(ws, REFERENCE.replace(bash_default_timeout_s=0.2))
    _, _, details, _ = outcome({"command": "sleep 0.6; echo survived", "run_in_background": True}, ctx)
    out = task_op(ctx, "task_output", {"task_id": details["task_id"], "block": True, "timeout_ms": 30000})
    assert (out["status"], out["output"]) == ("succeeded", "survived\n")


def test_managed_foreground_completion_carries_status_and_task_id(ws: Path) -> None:
    ctx = pinned(ws)
    kind, text, details, is_error = outcome({"command": "echo managed"}, ctx)
    assert (kind, text, is_error) == ("result", "managed\n", False)
    assert details["status"] == "completed" and re.fullmatch(TASK_ID_RE, details["task_id"])
    meta = task_op(ctx, "task_query", {"task_id": details["task_id"]})["metadata"]
    assert (meta["executionMode"], meta["completionOrigin"], meta["timeoutSeconds"], meta["maxRunMs"]) == (
        "managed_foreground", "foreground", 120, 1_800_000)


def test_managed_foreground_timeout_is_clamped_to_300_seconds(ws: Path) -> None:
    ctx = pinned(ws)
    _, _, details, _ = outcome({"command": "true", "timeout": 1000}, ctx)
    meta = task_op(ctx, "task_query", {"task_id": details["task_id"]})["metadata"]
    assert (meta["timeoutSeconds"], meta["maxRunMs"]) == (300, 1_800_000)


def test_managed_foreground_non_zero_exit_is_a_returned_error_with_the_engine_text(ws: Path) -> None:
    ctx = pinned(ws)
    kind, text, details, is_error = outcome({"command": "printf 'done\\n'; exit 5"}, ctx)
    assert (kind, text, is_error, details["status"]) == ("result", "done\n\n\nCommand exited with code 5", True,
                                                         "completed")


def test_soft_yield_promotes_the_same_process_to_a_background_task(ws: Path) -> None:
    ctx = pinned(ws, REFERENCE.replace(bash_soft_yield_ms=300))
    marker = ws / "runs.txt"
    gate = ws / "go"  # the command cannot finish before the test releases it: no soft-yield race
    cmd = f"echo run >> {marker}; echo first; while [ ! -e {gate} ]; do sleep 0.02; done; echo second"
    kind, text, details, is_error = outcome({"command": cmd}, ctx)
    gate.touch()
    assert (kind, is_error, details["status"]) == ("result", False, "auto_promoted")
    assert text == (f'<bash_background task_id="{details["task_id"]}">\n{LEAD_PROMOTED}{BACKGROUND_TAIL}')
    meta = task_op(ctx, "task_query", {"task_id": details["task_id"]})["metadata"]
    assert (meta["executionMode"], meta["foregroundSoftYieldMs"]) == ("auto_promoted", 300)
    out = task_op(ctx, "task_output", {"task_id": details["task_id"], "block": True, "timeout_ms": 30000})
    assert (out["status"], out["output"]) == ("succeeded", "first\nsecond\n")
    assert marker.read_text() == "run\n"  # no restart


def test_direct_foreground_result_has_no_task_details(ws: Path) -> None:
    kind, text, details, is_error = outcome({"command": "echo direct"}, pinned(ws, DIRECT))
    details.pop("processOutput")  # engine.exec-facts (spec patches), model-invisible
    assert (kind, text, details, is_error) == ("result", "direct\n", {}, False)


def test_direct_foreground_engine_error_is_returned_with_the_full_output_path(ws: Path) -> None:
    kind, text, details, is_error = outcome({"command": "seq 1 2500; exit 3"}, pinned(ws, DIRECT))
    assert (kind, is_error) == ("result", True)
    m = re.search(r"\n\n\[Showing lines 501-2500 of 2500\. Full output: " + FULL_PATH_RE + r"\]"
                  r"\n\nCommand exited with code 3$", text)
    assert m is not None, text[-300:]
    assert details == {"fullOutputPath": m.group(1)}


def test_engine_errors_are_raised_without_the_wrapper(ws: Path) -> None:
    assert outcome({"command": "exit 5"}, pinned(ws, UPSTREAM_PI)) == (
        "raised", "(no output)\n\nCommand exited with code 5", {}, True)


# ---------------------------------------------------------------- spec bash.4 / spec bash.5 shell, env, cwd


def test_missing_custom_shell_path_message(ws: Path) -> None:
    prof = DIRECT.replace(shell_path="/nonexistent/bin/bash")
    assert outcome({"command": "true"}, pinned(ws, prof)) == (
        "result", "Custom shell path not found: /nonexistent/bin/bash", {}, True)


def test_spawn_failure_is_node_text(ws: Path, tmp_path: Path) -> None:
    shell = tmp_path / "brokenshell"
    shell.write_text("#!/nonexistent/interpreter\n")
    shell.chmod(0o755)
    prof = UPSTREAM_PI.replace(shell_path=str(shell))
    assert outcome({"command": "true"}, pinned(ws, prof))[:2] == ("raised", f"spawn {shell} ENOENT")


def test_custom_shell_path_is_used_with_dash_c(ws: Path, tmp_path: Path) -> None:
    shell = tmp_path / "myshell"
    shell.write_text('#!/bin/sh\nprintf "%s|" "$@"\n')
    shell.chmod(0o755)
    assert run_text({"command": "echo x"}, pinned(ws, DIRECT.replace(shell_path=str(shell)))) == "-c|echo x|"


def test_agent_bin_dir_is_put_in_front_of_path_once(ws: Path, tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    ctx = pinned(ws, DIRECT, PI_CODING_AGENT_DIR=str(agent))
    first = run_text({"command": 'printf %s "$PATH"'}, ctx)
    assert first == f"{agent}/bin:{ctx.env['PATH']}"
    listed = pinned(ws, DIRECT, PI_CODING_AGENT_DIR=str(agent), PATH=f"/usr/bin:{agent}/bin:/bin")
    assert run_text({"command": 'printf %s "$PATH"'}, listed) == f"/usr/bin:{agent}/bin:/bin"


def test_default_agent_dir_is_under_home(ws: Path) -> None:
    ctx = pinned(ws, DIRECT)
    assert run_text({"command": 'printf %s "$PATH"'}, ctx).startswith(f"{ctx.env['HOME']}/.pi/agent/bin:")


def test_command_runs_in_its_own_process_group_and_session(ws: Path) -> None:
    text = run_text({"command": "ps -o pid=,pgid=,sid= -p $$"}, pinned(ws, DIRECT))
    pid, pgid, sid = text.split()
    assert pid == pgid == sid


# ---------------------------------------------------------------- spec bash.6 / spec bash.7 kill sequence, completion


@pytest.mark.slow
def test_term_ignoring_group_is_killed_after_the_grace_period(ws: Path) -> None:
    pidfile = ws / "pid"
    cmd = f"trap '' TERM; sh -c 'echo $$ > {pidfile}; trap \"\" TERM; sleep 60'"
    start = time.monotonic()
    text = run_text({"command": cmd, "timeout": 1.5}, pinned(ws, DIRECT))
    assert text == "Command timed out after 1.5 seconds"
    assert time.monotonic() - start >= 1.5 + 3.0 - 0.2  # SIGKILL only after the 3 s grace
    pid = int(pidfile.read_text())
    assert wait_for(lambda: not pid_alive(pid), 30)


def test_exit_code_null_from_a_signal_counts_as_success(ws: Path) -> None:
    kind, text, details, is_error = outcome({"command": "echo before; kill -9 $$"}, pinned(ws, DIRECT))
    assert (kind, text, is_error) == ("result", "before\n", False)
    assert (details["processOutput"]["exitCode"], details["processOutput"]["interrupted"]) == (None, True)


def test_background_grandchild_holding_the_pipes_does_not_block_and_is_not_killed(ws: Path) -> None:
    start = time.monotonic()
    text = run_text({"command": "sleep 20 & echo $!"}, pinned(ws, DIRECT))
    assert time.monotonic() - start < 15
    pid = int(text)
    try:
        assert pid_alive(pid)
    finally:
        os.kill(pid, signal.SIGKILL)


def test_abort_while_running_raises_output_then_command_aborted(ws: Path) -> None:
    ctx = pinned(ws, DIRECT)
    started = ws / "started"

    def abort_once_started() -> None:
        wait_for(started.exists)
        ctx.abort.set()

    threading.Thread(target=abort_once_started, daemon=True).start()
    with pytest.raises(ToolAborted) as exc:
        bash.execute({"command": f"echo partial; touch {started}; sleep 30"}, ctx)
    assert str(exc.value) == "partial\n\n\nCommand aborted"


def test_abort_while_managed_run_raises_command_aborted(ws: Path) -> None:
    ctx = pinned(ws)
    threading.Timer(0.7, ctx.abort.set).start()
    with pytest.raises(ToolAborted) as exc:
        bash.execute({"command": "sleep 30"}, ctx)
    assert str(exc.value).endswith("Command aborted")


# ---------------------------------------------------------------- spec bash.8 / spec bash.9 output and result text


def test_spec_result_text_examples(ws: Path) -> None:
    ctx = pinned(ws, DIRECT)
    assert run_text({"command": "printf 'done\\n'; exit 5"}, ctx) == "done\n\n\nCommand exited with code 5"
    assert run_text({"command": "exit 5"}, ctx) == "(no output)\n\nCommand exited with code 5"
    assert run_text({"command": "true"}, ctx) == "(no output)"
    assert run_text({"command": "printf 'x'; exit 1"}, ctx) == "x\n\nCommand exited with code 1"


def test_line_truncation_notice_and_full_output_file(ws: Path) -> None:
    ctx = pinned(ws, DIRECT)
    kind, text, details, is_error = outcome({"command": "seq 1 2500"}, ctx)
    assert (kind, is_error) == ("result", False)
    expected_body = "\n".join(str(i) for i in range(501, 2501))  # truncateTail: no trailing newline
    m = re.fullmatch(re.escape(expected_body) + r"\n\n\[Showing lines 501-2500 of 2500\. Full output: "
                     + FULL_PATH_RE + r"\]", text)
    assert m is not None, text[-200:]
    path = m.group(1)
    assert os.path.dirname(path) == ctx.env["TMPDIR"]  # honours TMPDIR
    assert Path(path).read_text() == "".join(f"{i}\n" for i in range(1, 2501))
    assert details["fullOutputPath"] == path
    tr = details["truncation"]
    assert (tr["truncated"], tr["truncatedBy"], tr["totalLines"], tr["outputLines"], tr["maxLines"],
            tr["maxBytes"], tr["lastLinePartial"]) == (True, "lines", 2500, 2000, 2000, 51200, False)


def test_byte_truncation_notice_then_the_24k_cap_with_a_read_hint(ws: Path) -> None:
    ctx = pinned(ws, DIRECT)
    cmd = "for i in $(seq 1 1000); do printf '%0100d\\n' $i; done"
    kind, text, details, is_error = outcome({"command": cmd}, ctx)
    assert kind == "result"
    path = details["fullOutputPath"]
    # 100-byte lines joined with newlines: the largest n with 100n + (n - 1) <= 51200.
    n = max(k for k in range(1, 1001) if 100 * k + (k - 1) <= 51200)
    engine_text = ("\n".join(f"{i:0100d}" for i in range(1001 - n, 1001)) + "\n\n"
                   f"[Showing lines {1001 - n}-1000 of 1000 (50.0KB limit). Full output: {path}]")
    original = utf8(engine_text)
    notice = cap_notice_with_path(original, path)
    assert text == spec_head_tail(engine_text, KIB24, notice)
    assert is_error is False
    hint = {"tool": "read", "preserve_args": ["path"],
            "instruction": f"Read the full output at {path}; continue long reads with the returned next_offset."}
    assert details["desktop_output_truncation"] == {
        "truncated": True, "has_more": True, "strategy": "head_tail_lines", "original_bytes": original,
        "returned_bytes": utf8(text), "max_bytes": KIB24, "continuation_hint": hint}
    assert details["desktop_output_continuation"] == {"has_more": True, "continuation_hint": hint}
    assert details["truncation"]["truncatedBy"] == "bytes"


def test_24k_cap_without_full_output_path_keeps_is_error_and_uses_the_bash_hint(ws: Path) -> None:
    ctx = pinned(ws, DIRECT)
    cmd = "for i in $(seq 1 300); do printf '%0100d\\n' $i; done; exit 2"
    kind, text, details, is_error = outcome({"command": cmd}, ctx)
    engine_text = "".join(f"{i:0100d}\n" for i in range(1, 301)) + "\n\nCommand exited with code 2"
    original = utf8(engine_text)
    assert text == spec_head_tail(engine_text, KIB24, cap_notice_no_path(original))
    assert (kind, is_error) == ("result", True)
    hint = {"tool": "bash", "preserve_args": [],
            "instruction": "Do not blindly rerun a potentially side-effecting command; narrow it or redirect "
                           "output to a file, then use read."}
    meta = details["desktop_output_truncation"]
    assert meta == {"truncated": True, "has_more": True, "strategy": "head_tail_lines", "original_bytes": original,
                    "returned_bytes": utf8(text), "max_bytes": KIB24, "continuation_hint": hint}
    assert "next_offset" not in meta and "offset_unit" not in meta


def test_output_at_exactly_24k_is_not_capped(ws: Path) -> None:
    kind, text, details, _ = outcome({"command": f"head -c {KIB24} /dev/zero | tr '\\0' y"}, pinned(ws, DIRECT))
    assert kind == "result"
    assert text == "y" * KIB24 and "desktop_output_truncation" not in details


def test_last_line_partial_notice_with_open_line_size(ws: Path) -> None:
    ctx = pinned(ws, DIRECT)
    text = run_text({"command": "head -c 60000 /dev/zero | tr '\\0' a"}, ctx)
    assert re.search(r"\[Showing last 50\.0KB of line 1 \(line is 58\.6KB\)\. Full output: " + FULL_PATH_RE
                     + r"\]$", text), text[-200:]


def test_last_line_partial_after_a_final_newline_shows_line_is_0b(ws: Path) -> None:
    text = run_text({"command": "head -c 60000 /dev/zero | tr '\\0' a; echo"}, pinned(ws, DIRECT))
    assert re.search(r"\[Showing last 50\.0KB of line 1 \(line is 0B\)\. Full output: " + FULL_PATH_RE + r"\]$",
                     text), text[-200:]


def test_full_output_file_is_not_created_for_small_output(ws: Path) -> None:
    ctx = pinned(ws, DIRECT)
    before = set(os.listdir(ctx.env["TMPDIR"]))
    assert run_text({"command": "seq 1 2000"}, ctx) == "".join(f"{i}\n" for i in range(1, 2001))
    assert set(os.listdir(ctx.env["TMPDIR"])) == before


def test_exec_facts_patch_adds_process_output_details(ws: Path) -> None:
    _, _, details, _ = outcome({"command": "echo o; echo e >&2"}, pinned(ws, DIRECT))
    assert details["processOutput"]["stdout"] == "o\n" and details["processOutput"]["stderr"] == "e\n"
    assert details["processOutput"]["exitCode"] == 0
    off = DIRECT.with_patches({"engine.exec-facts": False})
    assert outcome({"command": "echo o"}, pinned(ws, off)) == ("result", "o\n", {}, False)


# ---------------------------------------------------------------- spec bash.env environment sanitisation


def env_of(ctx: ToolContext) -> tuple[dict[str, str], dict[str, Any]]:
    kind, text, details, is_error = outcome({"command": "env -0"}, ctx)
    assert (kind, is_error) == ("result", False), text
    pairs = [item.split("=", 1) for item in text.split("\0") if item]
    return {k: v for k, v in pairs}, details


LAYER_A_SAMPLE = {
    "__MAVIS_RUNTIME_ANYTHING": "1", "__mavis_parent_x": "1", "__MAVIS_ORIGIN_XDG_CONFIG_HOME": "1",
    "AGENTARCHON_X": "1", "AGENT_ARCHON_Y": "1", "MAVIS_AGENT": "1", "MAVIS_SESSION": "1",
    **{k: "1" for k in MANAGED_RUNTIME_KEYS + LEGACY_RUNTIME_ENV_KEYS + PARENT_HINT_KEYS + ASR_KEYS},
}


def test_layer_a_is_removed_even_in_off_mode_and_reported_sorted(ws: Path) -> None:
    ctx = pinned(ws, MAVIS_BASH_ENV_SANITIZE="off", ANTHROPIC_API_KEY="keep", MAVIS_OTHER="keep",
                 **LAYER_A_SAMPLE)
    env, details = env_of(ctx)
    assert not set(LAYER_A_SAMPLE) & set(env)
    assert env["ANTHROPIC_API_KEY"] == "keep" and env["MAVIS_OTHER"] == "keep"
    assert details["envSanitized"] == sorted(LAYER_A_SAMPLE)


def test_scrub_mode_removes_the_24_names_and_their_input_aliases_only(ws: Path) -> None:
    secrets = {**{k: "s" for k in SCRUB_24}, **{f"INPUT_{k}": "s" for k in SCRUB_24}}
    keep = {"GH_TOKEN": "k", "GITHUB_TOKEN": "k", "NPM_TOKEN": "k", "anthropic_api_key": "k", "MY_SECRET": "k"}
    env, details = env_of(pinned(ws, MAVIS_BASH_ENV_SANITIZE="scrub", **secrets, **keep))
    assert not set(secrets) & set(env)
    assert {k: env[k] for k in keep} == keep
    assert details["envSanitized"] == sorted(secrets)


def test_scrub_without_the_provider_key_fix_keeps_mcode_provider_api_key(ws: Path) -> None:
    prof = REFERENCE.with_patches({"wrap.scrub-provider-key": False})
    env, details = env_of(pinned(ws, prof, CI="true", MCODE_PROVIDER_API_KEY="p",
                                 INPUT_MCODE_PROVIDER_API_KEY="p", OPENAI_API_KEY="o"))
    assert env["MCODE_PROVIDER_API_KEY"] == "p" and env["INPUT_MCODE_PROVIDER_API_KEY"] == "p"
    assert details["envSanitized"] == ["OPENAI_API_KEY"]
    strict, _ = env_of(pinned(ws, prof, MAVIS_BASH_ENV_SANITIZE="strict", MCODE_PROVIDER_API_KEY="p"))
    assert "MCODE_PROVIDER_API_KEY" not in strict


def test_strict_mode_removes_segment_bounded_credential_names(ws: Path) -> None:
    names = {"GITHUB_TOKEN": "x", "MY_KEYS": "x", "db_password": "x", "AWS_CREDENTIALS": "x", "APIKEY": "x",
             "SSH_PRIVATEKEY": "x", "X_SECRETS_Y": "x", "PASSWD": "x",
             "MONKEY": "x", "TOKENIZER": "x", "KEYBOARD": "x", "OTEL_EXPORTER_OTLP_HEADERS": "x",
             "LC_TOKEN": "x", "TMPDIR_KEY": "x"}
    env, details = env_of(pinned(ws, MAVIS_BASH_ENV_SANITIZE="strict", **names))
    removed = ["APIKEY", "AWS_CREDENTIALS", "GITHUB_TOKEN", "MY_KEYS", "PASSWD", "SSH_PRIVATEKEY", "TMPDIR_KEY",
               "X_SECRETS_Y", "db_password"]
    assert details["envSanitized"] == removed
    assert {k for k in names if k not in env} == set(removed)
    assert env["PATH"] and env["HOME"]


def test_strict_mode_allowlist_is_case_insensitive(ws: Path) -> None:
    prof = REFERENCE.replace(env_allowlist=("github_token",))
    env, details = env_of(pinned(ws, prof, MAVIS_BASH_ENV_SANITIZE="strict", GITHUB_TOKEN="t", NPM_TOKEN="n"))
    assert env["GITHUB_TOKEN"] == "t" and "NPM_TOKEN" not in env
    assert details["envSanitized"] == ["NPM_TOKEN"]


def test_env_sanitized_is_reported_once_per_tool_instance(ws: Path) -> None:
    ctx = pinned(ws, MAVIS_BASH_ENV_SANITIZE="scrub", OPENAI_API_KEY="o")
    _, _, first, _ = outcome({"command": "true"}, ctx)
    _, _, second, _ = outcome({"command": "true"}, ctx)
    _, _, background, _ = outcome({"command": "true", "run_in_background": True}, ctx)
    assert first["envSanitized"] == ["OPENAI_API_KEY"]
    assert "envSanitized" not in second and "envSanitized" not in background
    fresh = pinned(ws, MAVIS_BASH_ENV_SANITIZE="scrub", OPENAI_API_KEY="o")
    _, _, bg_first, _ = outcome({"command": "true", "run_in_background": True}, fresh)
    assert bg_first["envSanitized"] == ["OPENAI_API_KEY"]


def test_env_sanitized_empty_list_does_not_use_up_the_first_report(ws: Path) -> None:
    ctx = pinned(ws, DIRECT)
    _, _, plain, _ = outcome({"command": "true"}, ctx)
    assert "envSanitized" not in plain
    ctx.workspace.env["MAVIS_PORT"] = "9"
    _, _, later, _ = outcome({"command": "true"}, ctx)
    assert later["envSanitized"] == ["MAVIS_PORT"]


def test_values_are_never_reported(ws: Path) -> None:
    _, text, details, _ = outcome({"command": "true"}, pinned(ws, MAVIS_PORT="secret-value-123"))
    assert "secret-value-123" not in json.dumps(details) + text


# ---------------------------------------------------------------- spec bash.trash.1 rm shim


def test_rm_shim_is_installed_and_rm_goes_to_the_trash(ws: Path, tmp_path: Path) -> None:
    data = tmp_path / "data"
    ctx = pinned(ws, DIRECT.replace(data_dir=str(data)))
    (ws / "victim.txt").write_text("v")
    kind, text, _, is_error = outcome({"command": "rm victim.txt && command -v rm"}, ctx)
    assert (kind, text, is_error) == ("result", f"{data}/shims/rm\n", False)
    assert not (ws / "victim.txt").exists()
    shim = data / "shims" / "rm"
    assert stat.S_IMODE(shim.stat().st_mode) == 0o755
    trashed = [p.name for p in (data / "trash").rglob("victim.txt")]
    assert trashed == ["victim.txt"]  # recoverable: the file was moved, not unlinked


def test_rm_shim_applies_after_xargs_but_absolute_bin_rm_bypasses_it(ws: Path, tmp_path: Path) -> None:
    data = tmp_path / "data"
    ctx = pinned(ws, DIRECT.replace(data_dir=str(data)))
    (ws / "a.txt").write_text("a")
    (ws / "b.txt").write_text("b")
    assert outcome({"command": "echo a.txt | xargs rm; /bin/rm b.txt"}, ctx)[3] is False
    assert not (ws / "a.txt").exists() and not (ws / "b.txt").exists()
    assert [p.name for p in (data / "trash").rglob("*.txt")] == ["a.txt"]


def test_rm_shim_refuses_without_the_trash_program(ws: Path, tmp_path: Path) -> None:
    data = tmp_path / "data"
    ctx = pinned(ws, DIRECT.replace(data_dir=str(data)))
    assert run_text({"command": "true"}, ctx) == "(no output)"  # seeds shim and program
    program = data / "bin" / "mavis-trash"
    program.unlink()
    (ws / "keep.txt").write_text("k")
    text = run_text({"command": "rm keep.txt 2>&1"}, ctx)
    assert text == (f"rm: recoverable-delete runtime is missing at {program}\n"
                    "rm: refusing to fall back to an unrecoverable delete\n\n\nCommand exited with code 1")
    assert (ws / "keep.txt").read_text() == "k"


def test_rm_shim_is_rewritten_when_changed_and_its_mode_reapplied(ws: Path, tmp_path: Path) -> None:
    data = tmp_path / "data"
    ctx = pinned(ws, DIRECT.replace(data_dir=str(data)))
    run_text({"command": "true"}, ctx)
    shim = data / "shims" / "rm"
    original = shim.read_text()
    assert re.search(r"managed", "\n".join(original.splitlines()[:4]), re.IGNORECASE)
    shim.write_text("#!/bin/sh\nexit 0\n")
    shim.chmod(0o644)
    run_text({"command": "true"}, ctx)
    assert shim.read_text() == original and stat.S_IMODE(shim.stat().st_mode) == 0o755


def test_preflight_blocks_the_spawn_when_the_shim_cannot_be_reseeded(ws: Path, tmp_path: Path) -> None:
    data = tmp_path / "data"
    (data / "shims" / "rm").mkdir(parents=True)  # a directory where the shim belongs: not re-seedable
    marker = ws / "ran"
    expected = (f"The recoverable-delete rm shim at {data}/shims/rm is missing or not executable and could not "
                "be re-seeded. Refusing to start bash, because deletes would bypass the trash and become "
                "unrecoverable. Check that the MiniMax Code data directory is writable, then restart the app to "
                "re-seed the shim.")
    direct = outcome({"command": f"touch {marker}"}, pinned(ws, DIRECT.replace(data_dir=str(data))))
    assert direct == ("result", expected, {}, True)
    managed = outcome({"command": f"touch {marker}"}, pinned(ws, REFERENCE.replace(data_dir=str(data))))
    assert (managed[1], managed[3]) == (expected, True)
    assert not marker.exists()


# ---------------------------------------------------------------- spec bash.trash.2 Windows host trash


def trash_ctx(ws: Path, runtime: dict[str, str] | None, targets: list[str] | None) -> ToolContext:
    ctx = pinned(ws)
    ctx.workspace.state["host_trash"] = {"runtime": runtime,
                                       "execution": None if targets is None else {"targets": targets}}
    return ctx


WIN_RUNTIME = {"platform": "win32", "script_path": "C:\\app\\mavis-trash.js", "node_path": "/nonexistent/node"}


@pytest.mark.parametrize(
    ("runtime", "targets", "args", "text", "status"),
    [
        (None, None, {"command": "mavis-trash --"}, "Host trash runtime is unavailable.", None),
        (WIN_RUNTIME, None, {"command": "mavis-trash --"}, "Windows trash runtime is unavailable.", None),
        ({"platform": "darwin", "script_path": "/x/mavis-trash.js"}, None, {"command": "mavis-trash --"},
         "Host trash runtime is unavailable on platform darwin.", None),
        (None, ["a"], {"command": "mavis-trash --"}, "Host trash runtime is unavailable.", "host_trash_unavailable"),
        ({"platform": "linux", "script_path": "/x/mavis-trash.js"}, ["a"], {"command": "mavis-trash --"},
         "Host trash runtime is unavailable on platform linux.", None),
        ({**WIN_RUNTIME, "script_path": "app\\mavis-trash.js"}, ["a"], {"command": "mavis-trash --"},
         "Windows trash runtime is unavailable.", "windows_trash_unavailable"),
        ({**WIN_RUNTIME, "script_path": "C:\\app\\trash.js"}, ["a"], {"command": "mavis-trash --"},
         "Windows trash runtime is unavailable.", "windows_trash_unavailable"),
        (WIN_RUNTIME, ["a"], {"command": "mavis-trash -- a"},
         "Windows trash execution rejected an invalid effective input.", "windows_trash_input_rejected"),
        (WIN_RUNTIME, ["a"], {"command": "mavis-trash --", "run_in_background": True},
         "Windows trash execution rejected an invalid effective input.", "windows_trash_input_rejected"),
        (WIN_RUNTIME, ["..\\outside.txt"], {"command": "mavis-trash --"},
         "Windows trash execution rejected a target outside the workspace.", "windows_trash_target_rejected"),
    ],
)
def test_host_trash_outcomes(ws: Path, runtime: dict[str, str] | None, targets: list[str] | None,
                             args: dict[str, Any], text: str, status: str | None) -> None:
    ctx = trash_ctx(ws, runtime, targets)
    kind, got_text, details, is_error = outcome(args, ctx)
    assert (kind, got_text, is_error) == ("result", text, True)
    assert details["execution"] in ("windows-trash", "host-trash")
    if status is not None:
        assert details["status"] == status


def test_host_trash_runs_node_with_script_and_targets(ws: Path, tmp_path: Path) -> None:
    node = tmp_path / "fake-node"
    node.write_text('#!/bin/sh\nprintf "args:%s\\n" "$*"\nprintf "electron:%s\\n" "$ELECTRON_RUN_AS_NODE" >&2\n')
    node.chmod(0o755)
    ctx = trash_ctx(ws, {**WIN_RUNTIME, "node_path": str(node)}, ["a.txt", "sub\\b.txt"])
    assert outcome({"command": "mavis-trash --"}, ctx) == (
        "result", "args:C:\\app\\mavis-trash.js -- a.txt sub\\b.txt\n\nelectron:1",
        {"status": "exited", "execution": "windows-trash"}, False)
    node.write_text("#!/bin/sh\necho failing\nexit 3\n")
    assert outcome({"command": "mavis-trash --"}, ctx) == (
        "result", "failing", {"status": "windows_trash_failed", "execution": "windows-trash"}, True)
    node.write_text("#!/bin/sh\nsleep 30\n")
    assert outcome({"command": "mavis-trash --", "timeout": 0.5}, ctx) == (
        "result", "Command timed out after 0.5 seconds", {"status": "timed_out", "execution": "windows-trash"},
        True)


def test_a_plain_command_is_not_a_trash_call(ws: Path) -> None:
    ctx = trash_ctx(ws, None, None)
    kind, text, _, is_error = outcome({"command": "echo mavis-trash --"}, ctx)
    assert (kind, text, is_error) == ("result", "mavis-trash --\n", False)


# ---------------------------------------------------------------- spec bash.tasks background tasks


def finished(ctx: ToolContext, task_id: str) -> dict[str, Any]:
    return task_op(ctx, "task_output", {"task_id": task_id, "block": True, "timeout_ms": 60000})


def test_watchdog_fails_the_task_with_timeout_code_and_text(ws: Path) -> None:
    ctx = pinned(ws, REFERENCE.replace(bash_background_max_run_ms=400))
    _, _, details, _ = outcome({"command": "echo started; sleep 30", "run_in_background": True}, ctx)
    out = finished(ctx, details["task_id"])
    status_text = "Background bash timed out after 400ms (exceeded maxRunMs): started\n\n\nCommand aborted"
    assert out["status"] == "failed"
    assert out["error"] == {"message": "Background bash exceeded maxRunMs (400ms)", "code": "TIMEOUT"}
    assert out["output"] == f"started\n\n<bash_status>{status_text}</bash_status>\n"


def test_task_stop_cancels_with_the_graceful_kill_sequence(ws: Path) -> None:
    ctx = pinned(ws)
    _, _, details, _ = outcome({"command": "trap 'echo trapped; exit 0' TERM; echo ready; sleep 30 & wait",
                                "run_in_background": True}, ctx)
    tid = details["task_id"]
    assert wait_for(lambda: "ready" in task_op(ctx, "task_output", {"task_id": tid})["output"])
    stopped = task_op(ctx, "task_stop", {"task_id": tid})
    assert (stopped["status"], stopped["stopped"]) == ("canceled", True)
    out = finished(ctx, tid)
    assert out["error"] == {"message": "ready\ntrapped\n\n\nCommand aborted", "code": "BASH_CANCELED"}
    assert out["output"] == ("ready\ntrapped\n\n<bash_status>Background bash canceled: ready\ntrapped\n\n\n"
                             "Command aborted</bash_status>\n")


def test_background_failure_texts_with_and_without_streamed_output(ws: Path) -> None:
    ctx = pinned(ws)
    _, _, quiet, _ = outcome({"command": "exit 4", "run_in_background": True}, ctx)
    _, _, loud, _ = outcome({"command": "echo x; exit 3", "run_in_background": True}, ctx)
    q, lo = finished(ctx, quiet["task_id"]), finished(ctx, loud["task_id"])
    assert (q["status"], q["output"], q["error"]) == (
        "failed", "Background bash failed: (no output)\n\nCommand exited with code 4",
        {"message": "(no output)\n\nCommand exited with code 4", "code": "BASH_FAILED"})
    assert lo["output"] == "x\n\n<bash_status>Background bash failed: x\n\n\nCommand exited with code 3</bash_status>\n"


def test_explicit_background_timeout_applies_to_the_command(ws: Path) -> None:
    ctx = pinned(ws)
    _, _, details, _ = outcome({"command": "sleep 30", "run_in_background": True, "timeout": 0.5}, ctx)
    out = finished(ctx, details["task_id"])
    assert (out["status"], out["output"]) == ("failed", "Background bash failed: Command timed out after 0.5 seconds")


def test_promoted_command_keeps_its_foreground_timeout(ws: Path) -> None:
    ctx = pinned(ws, REFERENCE.replace(bash_soft_yield_ms=200))
    _, _, details, _ = outcome({"command": "sleep 30", "timeout": 2}, ctx)
    assert details["status"] == "auto_promoted"
    out = finished(ctx, details["task_id"])
    assert (out["status"], out["output"]) == ("failed", "Background bash failed: Command timed out after 2 seconds")


def test_task_ops_reject_bad_requests_and_unknown_ids(ws: Path) -> None:
    from tools_impl.core.errors import ProtocolError

    ctx = pinned(ws)
    with pytest.raises(ProtocolError):
        task_op(ctx, "task_output", {"task_id": 5})
    with pytest.raises(ToolError):
        task_op(ctx, "task_stop", {"task_id": "bash-00000000"})


# ---------------------------------------------------------------- over the protocol server


class Served:
    """``python -m tools_impl.server`` over real pipes."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "tools_impl.server"], cwd=REPO,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self._next = 0

    def send(self, **req: Any) -> dict[str, Any]:
        assert self.proc.stdin and self.proc.stdout
        self._next += 1
        req.setdefault("id", self._next)
        self.proc.stdin.write((json.dumps(req) + "\n").encode())
        self.proc.stdin.flush()
        while True:
            resp = json.loads(self.proc.stdout.readline())
            if resp.get("id") == req["id"]:
                return resp

    def close(self) -> None:
        if self.proc.poll() is None:
            self.send(op="shutdown")
        self.proc.wait(timeout=30)


@pytest.fixture
def served(ws: Path) -> Iterator[Served]:
    s = Served()
    home = ws.parent / "home"
    s.send(op="workspace", root=str(ws), env={**{k: None for k in os.environ}, **clean_env(home)})
    yield s
    s.close()


def test_server_returned_error_and_raised_error_are_distinct(served: Served, ws: Path) -> None:
    resp = served.send(op="call", tool="bash", args={"command": "printf 'done\\n'; exit 5"})
    assert resp["ok"] is True
    assert resp["result"]["content"] == [{"type": "text", "text": "done\n\n\nCommand exited with code 5"}]
    assert resp["result"]["is_error"] is True and resp["result"]["details"]["status"] == "completed"
    served.send(op="workspace", root=str(ws), profile={"base": "upstream"},
                env={**{k: None for k in os.environ}, **clean_env(ws.parent / "home")})
    raised = served.send(op="call", tool="bash", args={"command": "exit 5"})
    assert raised["ok"] is False and raised["error"]["message"] == "(no output)\n\nCommand exited with code 5"


def test_server_timeout_and_background_task_round_trip(served: Served) -> None:
    resp = served.send(op="call", tool="bash", args={"command": "sleep 9", "timeout": 0.25})
    assert resp["result"]["content"][0]["text"] == "Command timed out after 0.25 seconds"
    bg = served.send(op="call", tool="bash", args={"command": "echo from-bg", "run_in_background": True})
    tid = bg["result"]["details"]["task_id"]
    assert bg["result"]["details"]["status"] == "started"
    out = served.send(op="task_output", task_id=tid, block=True, timeout_ms=30000)
    assert (out["ok"], out["result"]["status"], out["result"]["output"]) == (True, "succeeded", "from-bg\n")
    bad = served.send(op="task_output", task_id=7)
    assert bad["ok"] is False and bad["error"]["kind"] == "protocol"


def test_server_validates_the_timeout_maximum(served: Served) -> None:
    resp = served.send(op="call", tool="bash", args={"command": "true", "timeout": 2147484})
    assert resp["ok"] is False


# ---------------------------------------------------------------- remaining corners


def test_explicit_background_start_failure_is_a_bash_error_with_status(ws: Path, tmp_path: Path) -> None:
    data = tmp_path / "data"
    (data / "shims" / "rm").mkdir(parents=True)
    kind, text, details, is_error = outcome({"command": "true", "run_in_background": True},
                                            pinned(ws, REFERENCE.replace(data_dir=str(data))))
    assert (kind, is_error, details) == ("result", True, {"status": "failed"})
    assert text == (f"<bash_error>The recoverable-delete rm shim at {data}/shims/rm is missing or not executable "
                    "and could not be re-seeded. Refusing to start bash, because deletes would bypass the trash and "
                    "become unrecoverable. Check that the MiniMax Code data directory is writable, then restart the "
                    "app to re-seed the shim.</bash_error>")


def test_upstream_engine_timer_above_the_32_bit_limit_fires_at_once(ws: Path) -> None:
    start = time.monotonic()
    assert outcome({"command": "sleep 20", "timeout": 2_200_000}, pinned(ws, UPSTREAM_PI))[:2] == (
        "raised", "Command timed out after 2200000 seconds")
    assert time.monotonic() - start < 15


def test_upstream_engine_has_no_default_timeout_and_no_cap(ws: Path) -> None:
    # 0 and negative timeouts arm no timer at all (no 120 s default either).
    assert outcome({"command": "sleep 0.3; echo ok", "timeout": 0}, pinned(ws, UPSTREAM_PI))[:2] == ("result", "ok\n")
    assert UPSTREAM_PI.with_patches({}).wrapper is False and "maximum" not in str(bash.TOOL.surface_schema(UPSTREAM_PI))


def test_server_cancel_raises_the_engine_abort_text(served: Served, ws: Path) -> None:
    assert served.proc.stdin and served.proc.stdout
    started = ws / "started"
    call = {"id": "run", "op": "call", "tool": "bash", "args": {"command": f"echo partial; touch {started}; sleep 30"}}
    served.proc.stdin.write((json.dumps(call) + "\n").encode())
    served.proc.stdin.flush()
    assert wait_for(started.exists)
    served.proc.stdin.write((json.dumps({"id": "stop", "op": "cancel", "target": "run"}) + "\n").encode())
    served.proc.stdin.flush()
    responses = {}
    while len(responses) < 2:
        resp = json.loads(served.proc.stdout.readline())
        responses[resp["id"]] = resp
    assert responses["stop"]["result"] == {"cancelled": True}
    assert responses["run"]["ok"] is False
    assert responses["run"]["error"]["kind"] == "aborted"
    assert responses["run"]["error"]["message"] == "partial\n\n\nCommand aborted"
