"""The bash tool wrapper (spec bash.2, spec bash.3, spec bash.10, spec bash.env.4) through ``tools_impl.bash.tool.execute``
with real processes: returned vs raised outcomes, timeout clamps, the 24 KiB head+tail cap,
``envSanitized`` reporting, and the direct and managed paths."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tools_impl.bash import tool as bash
from tools_impl.core.arguments import validate_args
from tools_impl.core.context import ToolContext, make_context
from tools_impl.core.errors import ArgumentError, ToolAborted
from tools_impl.core.profile import REFERENCE, Profile
from tools_impl.core.result import text_result
from tools_impl.js.text import utf8_len

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX shell needed")

DIRECT = REFERENCE.replace(can_consume_background_output=False)


def ctx_for(tmp_path: Path, profile: Profile = REFERENCE, env: dict[str, str | None] | None = None) -> ToolContext:
    base: dict[str, str | None] = {"TMPDIR": str(tmp_path), "CI": None, "GITHUB_ACTIONS": None,
                                   "MAVIS_BASH_ENV_SANITIZE": None}
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    return make_context(str(ws), {**base, **(env or {})}, profile)


@pytest.fixture(params=["managed", "direct"])
def profile(request: pytest.FixtureRequest) -> Profile:
    return REFERENCE if request.param == "managed" else DIRECT


# -- declaration ----------------------------------------------------------------------------

def test_schema_and_mode_of_the_bash_tool() -> None:
    schema = bash.TOOL.surface_schema(REFERENCE)
    assert schema["required"] == ["command"]
    props = schema["properties"]
    assert props["command"] == {"type": "string"}
    assert props["timeout"]["type"] == "number" and props["timeout"]["maximum"] == 2147483
    assert props["run_in_background"] == {"type": "boolean"}
    assert set(props) == {"command", "timeout", "run_in_background"}
    assert bash.TOOL.mode == "sequential"


# -- outcomes -------------------------------------------------------------------------------

def test_nonzero_exit_is_returned_as_error_with_engine_text(tmp_path: Path, profile: Profile) -> None:
    res = bash.execute({"command": "printf 'done\\n'; exit 5"}, ctx_for(tmp_path, profile))
    assert res.is_error
    assert res.text == "done\n\n\nCommand exited with code 5"


def test_bare_exit_is_returned_with_no_output_prefix(tmp_path: Path, profile: Profile) -> None:
    res = bash.execute({"command": "exit 5"}, ctx_for(tmp_path, profile))
    assert (res.is_error, res.text) == (True, "(no output)\n\nCommand exited with code 5")


def test_timeout_is_returned_as_error(tmp_path: Path, profile: Profile) -> None:
    res = bash.execute({"command": "sleep 9", "timeout": 0.25}, ctx_for(tmp_path, profile))
    assert (res.is_error, res.text) == (True, "Command timed out after 0.25 seconds")


def test_success_without_output(tmp_path: Path, profile: Profile) -> None:
    res = bash.execute({"command": "true"}, ctx_for(tmp_path, profile))
    assert (res.is_error, res.text) == (False, "(no output)")


def test_signal_death_is_success(tmp_path: Path, profile: Profile) -> None:
    res = bash.execute({"command": "kill -9 $$"}, ctx_for(tmp_path, profile))
    assert (res.is_error, res.text) == (False, "(no output)")


def test_command_runs_in_workspace_root(tmp_path: Path, profile: Profile) -> None:
    ctx = ctx_for(tmp_path, profile)
    assert bash.execute({"command": "pwd"}, ctx).text == ctx.root + "\n"


def test_managed_completion_details_carry_status_and_task_id(tmp_path: Path) -> None:
    res = bash.execute({"command": "echo hi"}, ctx_for(tmp_path))
    assert res.details is not None
    assert res.details["status"] == "completed"
    assert res.details["task_id"].startswith("bash-")


def test_direct_success_details_are_engine_details(tmp_path: Path) -> None:
    res = bash.execute({"command": "echo hi"}, ctx_for(tmp_path, DIRECT))
    assert res.details is not None and "status" not in res.details
    assert res.details["processOutput"]["stdout"] == "hi\n"


def test_preset_abort_raises_operation_aborted(tmp_path: Path) -> None:
    ctx = ctx_for(tmp_path)
    ctx.abort.set()
    with pytest.raises(ToolAborted) as info:
        bash.execute({"command": "true"}, ctx)
    assert info.value.message == "Operation aborted"


def test_abort_during_run_is_raised_not_returned(tmp_path: Path, profile: Profile) -> None:
    ctx = ctx_for(tmp_path, profile)
    marker = tmp_path / "started"  # abort only once "started" was printed (a fixed delay races under load)

    def abort_once_started() -> None:
        deadline = time.monotonic() + 30
        while not marker.exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        ctx.abort.set()

    threading.Thread(target=abort_once_started, daemon=True).start()
    with pytest.raises(ToolAborted) as info:
        bash.execute({"command": f"echo started; touch {marker}; sleep 30"}, ctx)
    assert info.value.message == "started\n\n\nCommand aborted"


def test_missing_workspace_is_returned_error(tmp_path: Path) -> None:
    ctx = make_context(str(tmp_path / "gone"), {"TMPDIR": str(tmp_path)}, DIRECT)
    res = bash.execute({"command": "true"}, ctx)
    assert res.is_error
    assert res.text == f"Working directory does not exist: {tmp_path / 'gone'}\nCannot execute commands."


def test_background_without_task_output_is_refused(tmp_path: Path) -> None:
    res = bash.execute({"command": "true", "run_in_background": True}, ctx_for(tmp_path, DIRECT))
    assert res.is_error
    assert res.text == ("<bash_error>Background Bash requires native task_output. This Turn is missing "
                        "task_output, so asynchronous Bash cannot be executed. Run the command in the "
                        "foreground instead.</bash_error>")
    assert res.details == {"status": "background_output_unavailable",
                           "error_code": "BASH_BACKGROUND_OUTPUT_UNAVAILABLE"}


# -- timeouts -------------------------------------------------------------------------------

def test_timeout_argument_is_coerced_or_rejected_by_host_validation() -> None:
    schema = bash.TOOL.surface_schema(REFERENCE)
    assert validate_args("bash", schema, {"command": "x", "timeout": "5"})["timeout"] == 5
    with pytest.raises(ArgumentError) as info:
        validate_args("bash", schema, {"command": "x", "timeout": "abc"})
    assert "  - timeout: must be number" in info.value.message
    with pytest.raises(ArgumentError) as info:
        validate_args("bash", schema, {"command": "x", "timeout": 1e9})
    assert "  - timeout: must be <= 2147483" in info.value.message


def test_clamped_timeout_of_huge_value_still_runs(tmp_path: Path) -> None:
    res = bash.execute({"command": "echo ok", "timeout": 1e9}, ctx_for(tmp_path))
    assert res.text == "ok\n"


# -- 24 KiB cap -----------------------------------------------------------------------------

def _first_tail_line(last: int, suffix: str, max_bytes: int) -> int:
    """First line number kept when whole lines ``<n><suffix>`` are taken from the end within ``max_bytes``."""
    used = -1
    n = last
    while n >= 1 and used + len(f"{n}{suffix}") + 1 <= max_bytes:
        used += len(f"{n}{suffix}") + 1
        n -= 1
    return n + 1


PAD_CMD = "seq 1 100000 | sed 's/$/ padding-padding-padding/'"


def test_huge_output_keeps_head_and_tail_with_full_output_notice(tmp_path: Path, profile: Profile) -> None:
    ctx = ctx_for(tmp_path, profile)
    res = bash.execute({"command": PAD_CMD}, ctx)
    details = res.details or {}
    path = details["fullOutputPath"]
    assert path.startswith(f"{tmp_path}/pi-bash-")
    meta = details["desktop_output_truncation"]
    original = meta["original_bytes"]
    notice = (f"[desktop bash output truncated: original_bytes={original}; head+tail shown; boundary lines may "
              f"be UTF-8 byte-truncated; Full output: {path}]")
    assert f"\n\n{notice}\n\n" in res.text
    assert utf8_len(res.text) <= 24 * 1024
    first = _first_tail_line(100_000, " padding-padding-padding", 51_200)
    assert res.text.endswith(f"100000 padding-padding-padding\n\n[Showing lines {first}-100000 of 100000 "
                             f"(50.0KB limit). Full output: {path}]")
    assert res.text.startswith(f"{first} padding-padding-padding\n")
    assert meta == {"truncated": True, "has_more": True, "strategy": "head_tail_lines",
                    "original_bytes": original, "returned_bytes": utf8_len(res.text), "max_bytes": 24576,
                    "continuation_hint": {"tool": "read", "preserve_args": ["path"],
                                          "instruction": f"Read the full output at {path}; continue long "
                                                         "reads with the returned next_offset."}}
    assert "next_offset" not in meta and "offset_unit" not in meta
    assert details["desktop_output_continuation"] == {"has_more": True,
                                                      "continuation_hint": meta["continuation_hint"]}
    expected = subprocess.run(["bash", "-c", PAD_CMD], capture_output=True, check=True).stdout
    assert Path(path).read_bytes() == expected


def test_cap_without_full_output_path_suggests_narrower_command(tmp_path: Path, profile: Profile) -> None:
    res = bash.execute({"command": "head -c 30000 /dev/zero | tr '\\0' 'a'; echo; echo end"},
                       ctx_for(tmp_path, profile))
    details = res.details or {}
    assert "fullOutputPath" not in details
    notice = ("[desktop bash output truncated: original_bytes=30005; head+tail shown; boundary lines may be "
              "UTF-8 byte-truncated; rerun with a narrower command or redirect output to a file and use read.]")
    body = 24 * 1024 - len(notice) - 4
    head, tail = body * 45 // 100, body - body * 45 // 100
    assert res.text == "a" * head + "\n\n" + notice + "\n\n" + "a" * (tail - len("end") - 1) + "\nend"
    assert details["desktop_output_truncation"]["continuation_hint"] == {
        "tool": "bash", "preserve_args": [],
        "instruction": "Do not blindly rerun a potentially side-effecting command; narrow it or redirect "
                       "output to a file, then use read."}


def test_error_results_are_capped_too(tmp_path: Path, profile: Profile) -> None:
    res = bash.execute({"command": f"{PAD_CMD}; exit 3"}, ctx_for(tmp_path, profile))
    assert res.is_error
    assert res.text.endswith("Full output: " + (res.details or {})["fullOutputPath"]
                             + "]\n\nCommand exited with code 3")
    assert utf8_len(res.text) <= 24 * 1024


def test_full_output_path_is_parsed_from_the_last_match() -> None:
    text = "x\n\n[Showing lines 1-2 of 9. Full output: /a/one.log]\nmore\n[Full output: /b/two.log]"
    assert bash.full_output_path_from_text(text) == "/b/two.log"
    assert bash.full_output_path_from_text("Command exited with code 1") is None


_line = st.text(alphabet=st.sampled_from(["a", "é", "€", "𝄞", " "]), max_size=120)


@given(st.lists(_line, max_size=60), st.integers(min_value=400, max_value=3000), st.booleans())
def test_head_tail_output_never_exceeds_its_budget_and_never_cuts_inside_a_utf8_sequence(
        lines: list[str], max_bytes: int, with_path: bool) -> None:
    """The capped text fits ``max_bytes`` and every retained piece is intact UTF-8 from the input."""
    text = "\n".join(lines)
    details = {"fullOutputPath": "/tmp/pi-bash-0123456789abcdef.log"} if with_path else None
    res = bash.cap_bash_result(text_result("bash", text, details), max_bytes)
    out = res.text
    assert utf8_len(out) <= max_bytes
    assert "\ufffd" not in out
    if utf8_len(text) <= max_bytes:
        assert out == text
    else:
        path = details["fullOutputPath"] if details else None
        template = bash.CAP_NOTICE_WITH_PATH if path else bash.CAP_NOTICE_NO_PATH
        notice = template.format(original_bytes=utf8_len(text), path=path)
        idx = out.index(notice)  # max_bytes >= 400 always leaves room for the whole notice
        head, tail = out[:idx], out[idx + len(notice):]
        assert head == "" or head.endswith("\n\n")
        assert tail == "" or tail.startswith("\n\n")
        assert text.startswith(head[:-2])
        assert text.rstrip("\n").endswith(tail[2:])


# -- envSanitized ---------------------------------------------------------------------------

def test_env_sanitized_names_are_reported_once_per_session(tmp_path: Path, profile: Profile) -> None:
    ctx = ctx_for(tmp_path, profile, {"CI": "true", "OPENAI_API_KEY": "sk-secret"})
    first = bash.execute({"command": 'echo "[$OPENAI_API_KEY]"'}, ctx)
    assert first.text == "[]\n"
    assert (first.details or {})["envSanitized"] == ["OPENAI_API_KEY"]
    second = bash.execute({"command": "true"}, ctx)
    assert "envSanitized" not in (second.details or {})
    assert "sk-secret" not in str(first.details)


def test_env_sanitized_absent_when_nothing_removed(tmp_path: Path) -> None:
    res = bash.execute({"command": "true"}, ctx_for(tmp_path, DIRECT))
    assert "envSanitized" not in (res.details or {})


def test_engine_bin_dir_is_prepended_to_path(tmp_path: Path, profile: Profile) -> None:
    ctx = ctx_for(tmp_path, profile, {"PI_CODING_AGENT_DIR": str(tmp_path / "agent")})
    res = bash.execute({"command": 'echo "${PATH%%:*}"'}, ctx)
    assert res.text == f"{tmp_path / 'agent' / 'bin'}\n"


# -- upstream engine ------------------------------------------------------------------------

def test_upstream_profile_raises_engine_errors(tmp_path: Path) -> None:
    from tools_impl.core.errors import ToolError
    from tools_impl.core.profile import UPSTREAM_PI

    ctx = make_context(str(tmp_path), {"TMPDIR": str(tmp_path)}, UPSTREAM_PI)
    with pytest.raises(ToolError) as info:
        bash.execute({"command": "exit 5"}, ctx)
    assert info.value.message == "(no output)\n\nCommand exited with code 5"
    assert bash.execute({"command": "echo hi"}, ctx).details is None
    assert os.path.isdir(ctx.root)


# -- refused spawn (rm-shim preflight) --------------------------------------------------------

def _broken_shim_ctx(tmp_path: Path, profile: Profile) -> tuple[ToolContext, str]:
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    (data_dir / "shims").write_text("not a directory")  # re-seeding the shim must fail
    ctx = ctx_for(tmp_path, profile.replace(data_dir=str(data_dir)))
    message = (f"The recoverable-delete rm shim at {data_dir}/shims/rm is missing or not executable and could "
               "not be re-seeded. Refusing to start bash, because deletes would bypass the trash and become "
               "unrecoverable. Check that the MiniMax Code data directory is writable, then restart the app "
               "to re-seed the shim.")
    return ctx, message


def test_refused_spawn_is_the_returned_error_text(tmp_path: Path, profile: Profile) -> None:
    ctx, message = _broken_shim_ctx(tmp_path, profile)
    marker = tmp_path / "ran"
    res = bash.execute({"command": f"touch {marker}"}, ctx)
    assert (res.is_error, res.text) == (True, message)
    assert not marker.exists()


def test_refused_background_spawn_is_a_start_failure(tmp_path: Path) -> None:
    ctx, message = _broken_shim_ctx(tmp_path, REFERENCE)
    res = bash.execute({"command": "true", "run_in_background": True}, ctx)
    assert (res.is_error, res.text) == (True, f"<bash_error>{message}</bash_error>")
    assert res.details == {"status": "failed"}


def test_rm_shim_is_first_on_path_when_data_dir_is_set(tmp_path: Path, profile: Profile) -> None:
    data_dir = tmp_path / "data"
    ctx = ctx_for(tmp_path, profile.replace(data_dir=str(data_dir)))
    res = bash.execute({"command": "command -v rm"}, ctx)
    assert res.text == f"{data_dir}/shims/rm\n"
